#pragma once
// Running another program (a cross compiler, an emulator, Node) and collecting what it
// printed: with a time limit, a cancel flag, and a cap on the output kept.

#include <atomic>
#include <string>
#include <vector>

namespace lathe {

struct ProcessResult {
  bool started = false;  // false: the program could not be run (not installed, ...)
  bool timedOut = false; // killed after the time limit
  bool cancelled = false;
  int exitCode = -1;  // when it exited
  int signal = 0;     // when a signal ended it
  std::string output; // stdout and stderr together, the last `maxOutput` bytes
  bool ok() const { return started && !timedOut && !cancelled && signal == 0 && exitCode == 0; }
  // "exit status 2", "killed by signal 4 (Illegal instruction)", "timed out after 300 s", ...
  std::string describe(int timeoutSeconds) const;
};

struct ProcessOptions {
  std::string workingDir; // empty: this process's
  int timeoutSeconds = 300;
  const std::atomic<bool>* cancel = nullptr; // polled; set: the program is killed
  std::size_t maxOutput = 1 << 20;
};

// Runs argv[0] (looked up in PATH) with argv; stdin is /dev/null.
ProcessResult runProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Whether `program` is an executable in PATH (or a path to one).
bool programInPath(const std::string& program);

// "a b  c" as {"a", "b", "c"} (no quoting: for the commands Lathe itself writes).
std::vector<std::string> splitWords(const std::string& text);

} // namespace lathe
