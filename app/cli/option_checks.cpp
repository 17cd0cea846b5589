#include "app/cli/option_checks.h"

#include <charconv>
#include <iostream>
#include <thread>

namespace lathe::cli {
namespace {

bool parseInt(const std::string& text, long long& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

} // namespace

std::string atLeastOne(const std::string& text) {
  long long v = 0;
  if (!parseInt(text, v))
    return "not a whole number: " + text;
  return v >= 1 ? "" : "must be at least 1, got " + text;
}

std::string threadCount(const std::string& text) {
  long long v = 0;
  if (!parseInt(text, v))
    return "not a whole number: " + text;
  if (v < 0)
    return "must be 0 (one per core) or more, got " + text;
  return v <= 4096 ? "" : "at most 4096, got " + text;
}

int boundedThreads(int requested) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (requested <= cores)
    return requested;
  std::cerr << "lathe: note: --threads " << requested << " is more than the " << cores
            << " cores of this machine; using " << cores << "\n";
  return cores;
}

} // namespace lathe::cli
