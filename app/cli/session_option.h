#pragma once
// `--session FILE` for lathe compile and lathe run: a session saved by the workbench (.lathe)
// gives the model and what to compile and run it with.
#include <CLI/CLI.hpp>
#include <string>

namespace lathe::cli {

// What a command takes from a session; each field is filled only when the command line left
// it empty (an option given there wins), except the kept schedules, which have no option.
struct SessionTakes {
  std::string* model = nullptr;
  std::string* target = nullptr; // filled unless targetGiven
  bool targetGiven = false;
  std::string* inputs = nullptr;
  std::string* fill = nullptr;        // random | zeros | ones, when the session has no input file
  std::string* inputShapes = nullptr; // as --input-shapes text
  std::string* tuningRecords = nullptr;
  std::string* schedules = nullptr; // schedule-set text
};

// Reads `file` and fills `takes`; prints the error and returns false when it cannot be read.
// A model changed since the session was saved is said on stderr, not refused.
bool applySessionFile(const std::string& file, const SessionTakes& takes);

// Adds --session to `cmd`, writing the file's path into `file`.
void addSessionOption(CLI::App* cmd, std::string& file);

} // namespace lathe::cli
