// lathe conformance --import-only DIR...: imports every ONNX backend-test model under the
// folders (each in a child process with a time limit, so a crash or hang is a FAIL line,
// not the end of the run) and prints one line per model and a summary line.
#include "app/cli/commands.h"
#include "engine/api/backend_test.h"
#include "engine/api/session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <poll.h>
#include <set>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace lathe::cli {
namespace {

namespace fs = std::filesystem;

struct ConformanceOptions {
  std::vector<std::string> dirs;
  bool importOnly = false;
  int jobs = 2;
  double timeoutSeconds = 60;
  std::string filter;
  bool quiet = false;
  std::string knownFailures; // file: one test label per line, '#' comments
  bool gpuSchedulesOnHost = false;
  std::string target = "llvm";
};

// Labels listed in a known-failures file (one per line; text after '#' ignored).
std::set<std::string> readKnownFailures(const std::string& path) {
  std::set<std::string> labels;
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const auto b = line.find_first_not_of(" \t");
    const auto e = line.find_last_not_of(" \t");
    if (b != std::string::npos)
      labels.insert(line.substr(b, e - b + 1));
  }
  return labels;
}

struct TestCase {
  std::string label; // "node/test_abs"
  std::string model; // path to model.onnx
};

std::vector<TestCase> findModels(const std::string& dir) {
  std::vector<TestCase> cases;
  const fs::path root = fs::path(dir).lexically_normal();
  const std::string top =
      root.filename().empty() ? root.parent_path().filename().string() : root.filename().string();
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".onnx") {
      const fs::path rel = fs::relative(it->path().parent_path(), root);
      std::string label = top + "/" + rel.string();
      if (it->path().filename() != "model.onnx")
        label = top + "/" + fs::relative(it->path(), root).string();
      cases.push_back({label, it->path().string()});
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const TestCase& a, const TestCase& b) { return a.label < b.label; });
  return cases;
}

// Runs in the child: imports and runs the graph pipeline, writes "PASS", "SKIP reason" or
// "FAIL reason" to fd.
[[noreturn]] void childMain(const TestCase& test, const ConformanceOptions& o, int fd) {
  std::string line;
  if (!o.importOnly) {
    api::BackendTestOptions options;
    options.gpuSchedulesOnHost = o.gpuSchedulesOnHost;
    options.target = o.target;
    const api::BackendTestResult r =
        api::runBackendTest(std::filesystem::path(test.model).parent_path().string(), options);
    line = (r.status == "pass" ? "PASS" : r.status == "skip" ? "SKIP " : "FAIL ") + r.message;
    line = line.substr(0, 2000);
    for (char& c : line)
      if (c == '\n')
        c = ' ';
    // What the model was compiled for, on a line of its own before the verdict: the parent
    // checks it against --target.
    if (!r.compiledFor.empty())
      line = "TARGET " + r.compiledFor.substr(0, 500) + "\n" + line;
    (void)!::write(fd, line.data(), line.size());
    ::_exit(0);
  }
  api::Session session;
  api::OpenOptions options;
  options.runPipeline = true;
  const api::OpenResult r = session.openModel(test.model, options);
  if (r.ok()) {
    line = "PASS";
  } else {
    std::string reason = r.failure->message;
    // The label already names the model; drop the path prefix from the message.
    if (reason.rfind(test.model + ": ", 0) == 0)
      reason = reason.substr(test.model.size() + 2);
    line = (r.failure->kind == "unsupported" ? "SKIP " : "FAIL ") + reason;
  }
  line = line.substr(0, 2000);
  for (char& c : line)
    if (c == '\n')
      c = ' ';
  (void)!::write(fd, line.data(), line.size());
  ::_exit(0);
}

struct Running {
  pid_t pid;
  int fd;
  TestCase test;
  std::chrono::steady_clock::time_point start;
  std::string output;
};

std::string describeExit(int status) {
  if (WIFSIGNALED(status))
    return std::string("crashed (signal ") + std::to_string(WTERMSIG(status)) + ", " +
           strsignal(WTERMSIG(status)) + ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
}

int runConformance(const ConformanceOptions& o) {
  if (!api::runsInThisProcess(o.target) || api::isGpuTarget(o.target)) {
    std::cerr << "lathe conformance: error: --target \"" << o.target
              << "\" does not run in this process: the suite runs each model here (see lathe "
                 "targets for the CPUs this machine runs)\n";
    return 2;
  }
  if (o.gpuSchedulesOnHost && o.target != "llvm") {
    std::cerr << "lathe conformance: error: --gpu-schedules-on-host runs the GPU schedules for "
                 "this machine; leave --target out\n";
    return 2;
  }
  const api::ResolvedTarget target = api::resolveTargetText(o.target);
  if (!o.importOnly)
    std::cout << "compiling for " << target.description
              << (o.gpuSchedulesOnHost ? " (GPU schedules run on this CPU)" : "") << "\n";
  std::vector<TestCase> cases;
  for (const std::string& d : o.dirs) {
    if (!fs::is_directory(d)) {
      std::cerr << "lathe conformance: error: " << d << ": not a directory\n";
      return 2;
    }
    for (TestCase& t : findModels(d))
      if (o.filter.empty() || t.label.find(o.filter) != std::string::npos)
        cases.push_back(std::move(t));
  }
  std::set<std::string> known;
  if (!o.knownFailures.empty()) {
    try {
      known = readKnownFailures(o.knownFailures);
    } catch (const std::exception& e) {
      std::cerr << "lathe conformance: error: " << e.what() << "\n";
      return 2;
    }
  }
  int passed = 0, failed = 0, skipped = 0, expectedFailures = 0, unexpectedPasses = 0;
  std::vector<Running> running;
  std::size_t next = 0;
  auto finish = [&](Running& r, const std::string& forced) {
    std::string out = forced.empty() ? r.output : forced;
    if (out.rfind("TARGET ", 0) == 0) {
      const std::size_t end = out.find('\n');
      const std::string compiledFor = out.substr(7, end == std::string::npos ? end : end - 7);
      out = end == std::string::npos ? "" : out.substr(end + 1);
      if (compiledFor != target.canonical)
        out = "FAIL compiled for \"" + compiledFor + "\", not for --target \"" + target.canonical +
              "\"";
    }
    std::string verdict = out.substr(0, 4);
    std::string reason = out.size() > 5 ? out.substr(5) : "";
    if (verdict == "PASS") {
      ++passed;
      if (known.count(r.test.label)) {
        ++unexpectedPasses;
        std::cout << "XPASS " << r.test.label << "  (listed in " << o.knownFailures
                  << " but passes: remove it)\n";
      }
    } else if (verdict == "SKIP") {
      ++skipped;
    } else {
      ++failed;
      verdict = "FAIL";
      if (out.rfind("FAIL", 0) != 0)
        reason = out;
      if (known.count(r.test.label)) {
        ++expectedFailures;
        verdict = "XFAIL";
      }
    }
    if (!o.quiet || verdict != "PASS")
      std::cout << verdict << "  " << r.test.label << (reason.empty() ? "" : "  " + reason) << "\n"
                << std::flush;
  };
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && static_cast<int>(running.size()) < std::max(1, o.jobs)) {
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0) {
        std::cerr << "lathe conformance: pipe failed\n";
        return 2;
      }
      std::cout.flush();
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::close(fds[0]);
        childMain(cases[next], o, fds[1]);
      }
      ::close(fds[1]);
      ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
      running.push_back({pid, fds[0], cases[next], std::chrono::steady_clock::now(), {}});
      ++next;
    }
    std::vector<pollfd> pfds;
    for (const Running& r : running)
      pfds.push_back({r.fd, POLLIN, 0});
    ::poll(pfds.data(), pfds.size(), 20);
    for (auto it = running.begin(); it != running.end();) {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(it->fd, buf, sizeof buf)) > 0)
        it->output.append(buf, static_cast<std::size_t>(n));
      int status = 0;
      const pid_t done = ::waitpid(it->pid, &status, WNOHANG);
      std::string forced;
      if (done == it->pid) {
        while ((n = ::read(it->fd, buf, sizeof buf)) > 0)
          it->output.append(buf, static_cast<std::size_t>(n));
        if (it->output.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
          forced = "FAIL " + describeExit(status);
      } else {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - it->start).count();
        if (seconds < o.timeoutSeconds) {
          ++it;
          continue;
        }
        ::kill(it->pid, SIGKILL);
        ::waitpid(it->pid, &status, 0);
        forced = "FAIL hung: no result after " +
                 std::to_string(static_cast<int>(o.timeoutSeconds)) + " s";
      }
      ::close(it->fd);
      finish(*it, forced);
      it = running.erase(it);
    }
  }
  if (!known.empty())
    std::cout << expectedFailures << " of the failures are known (" << o.knownFailures << "), "
              << unexpectedPasses << " known failures now pass\n";
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  return failed == expectedFailures && unexpectedPasses == 0 ? 0 : 1;
}

} // namespace

void addConformanceCommand(CLI::App& app, int& exitCode) {
  auto options = std::make_shared<ConformanceOptions>();
  options->jobs = std::max(1u, std::thread::hardware_concurrency());
  CLI::App* cmd = app.add_subcommand(
      "conformance",
      "Run the ONNX backend test suite (Debian package libonnx-testdata, e.g. "
      "/usr/share/libonnx-testdata/data/node): each model is imported, compiled and run on its "
      "test_data_set_*/input_N.pb, and its outputs compared with output_N.pb (rtol 1e-3, atol "
      "1e-5). Prints PASS, SKIP (refused as unsupported) or FAIL per model and a last line "
      "'N passed, N failed, N skipped'. Exit status 1 if any model failed.");
  cmd->add_option("dirs", options->dirs, "Folders holding test folders with model.onnx files")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--import-only", options->importOnly,
                "Only import each model and run the graph pipeline; do not compile or run it");
  cmd->add_option("-j,--jobs", options->jobs, "Models checked in parallel (default: cores)");
  cmd->add_option("--timeout", options->timeoutSeconds, "Seconds before a model counts as hung")
      ->capture_default_str();
  cmd->add_flag("--gpu-schedules-on-host", options->gpuSchedulesOnHost,
                "Lower and schedule each model as for a CUDA GPU and run every block and thread in "
                "turn on this CPU: checks the GPU lowering and default schedules without a GPU");
  cmd->add_option("--target", options->target,
                  "Compile for this target, one that runs on this machine: \"llvm -mcpu=x86-64\" "
                  "checks the kernels as a CPU with the narrowest vectors gets them")
      ->capture_default_str();
  cmd->add_option("--filter", options->filter, "Only tests whose label contains this text");
  cmd->add_flag("-q,--quiet", options->quiet, "Print only SKIP and FAIL lines and the summary");
  cmd->add_option("--known-failures", options->knownFailures,
                  "A file listing test labels expected to fail (one per line): they print as XFAIL "
                  "and do not fail the run; listed tests that pass make it fail (keep the list "
                  "current)");
  cmd->callback([options, &exitCode] { exitCode = runConformance(*options); });
}

} // namespace lathe::cli
