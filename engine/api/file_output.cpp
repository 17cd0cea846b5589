// engine/api's file helpers for the front ends (session.h, "files the front ends write").
#include "engine/api/session.h"
#include "engine/api/session_state.h"
#include "engine/support/atomic_file.h"
#include "engine/support/diagnostics.h"
#include "engine/support/text_escape.h"

#include <filesystem>

namespace lathe::api {

WriteResult writeTextFile(const std::string& path, const std::string& text) {
  try {
    writeFileAtomically(path, text);
    return {};
  } catch (const Error& e) {
    return {toFailure(e)};
  }
}

bool isSameFile(const std::string& output, const std::string& input) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(output, ec) && fs::exists(input, ec))
    return fs::equivalent(output, input, ec);
  return fs::weakly_canonical(output, ec) == fs::weakly_canonical(input, ec);
}

void cleanUpTemporaryFilesOnSignals() {
  installTempCleanupOnSignals();
}

std::string escapeText(std::string_view bytes, bool keepLineBreaks) {
  return lathe::escapeText(bytes, keepLineBreaks);
}

} // namespace lathe::api
