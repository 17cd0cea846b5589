#include "engine/support/subprocess.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lathe {

std::string ProcessResult::describe(int timeoutSeconds) const {
  if (!started)
    return "could not be started";
  if (timedOut)
    return "timed out after " + std::to_string(timeoutSeconds) + " s";
  if (cancelled)
    return "cancelled";
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "exit status " + std::to_string(exitCode);
}

bool programInPath(const std::string& program) {
  if (program.empty())
    return false;
  if (program.find('/') != std::string::npos)
    return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    struct stat st{};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return true;
  }
  return false;
}

std::vector<std::string> splitWords(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  std::string w;
  while (in >> w)
    words.push_back(w);
  return words;
}

ProcessResult runProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  if (argv.empty() || !programInPath(argv[0]))
    return result;
  int pipes[2];
  if (::pipe2(pipes, O_CLOEXEC) != 0)
    return result;
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (std::string& a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipes[0]);
    ::close(pipes[1]);
    return result;
  }
  if (pid == 0) {
    // The child: its own process group (a timeout kills what it started too), output into
    // the pipe, no input.
    ::setpgid(0, 0);
    ::dup2(pipes[1], 1);
    ::dup2(pipes[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      ::dup2(devnull, 0);
    if (!options.workingDir.empty() && ::chdir(options.workingDir.c_str()) != 0)
      ::_exit(126);
    ::execvp(cargs[0], cargs.data());
    ::_exit(127);
  }
  ::close(pipes[1]);
  result.started = true;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(options.timeoutSeconds);
  bool open = true;
  char buffer[4096];
  while (open) {
    pollfd fd{pipes[0], POLLIN, 0};
    const int ready = ::poll(&fd, 1, 100);
    if (ready > 0) {
      const ssize_t n = ::read(pipes[0], buffer, sizeof buffer);
      if (n > 0) {
        result.output.append(buffer, static_cast<std::size_t>(n));
        if (result.output.size() > options.maxOutput)
          result.output.erase(0, result.output.size() - options.maxOutput);
      } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        open = false;
      }
    }
    const bool late = std::chrono::steady_clock::now() > deadline;
    const bool cancelled = options.cancel && options.cancel->load();
    if (late || cancelled) {
      result.timedOut = late && !cancelled;
      result.cancelled = cancelled;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      break;
    }
  }
  ::close(pipes[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    result.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status) && !result.timedOut && !result.cancelled)
    result.signal = WTERMSIG(status);
  if (result.exitCode == 127 && result.output.empty())
    result.started = false;
  return result;
}

} // namespace lathe
