#pragma once
// A workbench session as a file (.lathe, JSON): the model and a hash of its bytes, what runs
// are given (input file or fill, shapes typed for symbolic dims, threads, repeats), the target,
// the kept schedules, the tuning records in use, a pinned run and the window's layout. The
// workbench saves and reopens it; `lathe compile/run --session FILE` take the model, target,
// inputs, shapes, schedules and records from it. Paths are stored relative to the session
// file's folder (a folder moved whole still works) and come back absolute.

#include "engine/api/session.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lathe::api {

struct WorkbenchSession {
  std::string model;       // the ONNX file (absolute once read)
  std::string modelSha256; // of its bytes when saved (writeSessionFile fills it when empty)
  std::string target = "llvm";
  std::string inputsNpz; // "" when the inputs are filled
  std::string fill = "random";
  std::map<std::string, std::vector<std::int64_t>> inputShapes;
  int threads = 0; // 0: one per core
  int repeat = 10;
  bool profile = false;
  std::string schedules;     // the kept schedules, schedule-set text
  std::string tuningRecords; // "" when none
  // The run kept as the baseline of later ones: outputs and latencies (not its profile).
  std::shared_ptr<const RunReport> pinnedRun;
  std::string layout; // the window's layout (opaque here: base64 of Qt's state)
};

struct SessionFileResult {
  std::optional<WorkbenchSession> session;
  std::optional<Failure> failure;
  // Empty when the model file is the one saved; else what changed, one sentence
  // ("model.onnx has changed since the session was saved", "... is missing").
  std::string modelChange;
  bool ok() const { return session.has_value(); }
};

// Writes `session` to `path` whole or not at all (temporary file + rename).
WriteResult writeSessionFile(const std::string& path, WorkbenchSession session);
// Reads and checks a session file: a clear message naming the file and the field for
// anything malformed (not JSON, another format, a newer version, wrong types, absurd sizes).
SessionFileResult readSessionFile(const std::string& path);
// SHA-256 (hex) of a file's bytes; empty when it cannot be read.
std::string fileSha256(const std::string& path);

} // namespace lathe::api
