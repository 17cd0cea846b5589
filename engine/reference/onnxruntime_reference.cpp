#include "engine/reference/onnxruntime_reference.h"

#include "engine/frontend/onnx/expose_values.h"
#include "engine/reference/onnxruntime_script.h"
#include "engine/support/diagnostics.h"
#include "engine/support/temporary_folder.h"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace lathe::reference {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last lines of node's output, for messages.
std::string tail(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  constexpr std::size_t kMax = 2000;
  return text.size() > kMax ? "..." + text.substr(text.size() - kMax) : text;
}

// Runs `node SCRIPT REQUEST` with NODE_PATH set; stdout and stderr go to `log`. The exit
// status, or 127 when node could not be started.
int runNode(const fs::path& script, const fs::path& request, const fs::path& log,
            const std::string& nodeModules, const std::atomic<bool>* cancel) {
  const pid_t pid = ::fork();
  if (pid < 0)
    throw Error(ErrorKind::Internal, "cannot start a process for node");
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    if (!nodeModules.empty())
      ::setenv("NODE_PATH", nodeModules.c_str(), 1);
    std::string node = "node", scriptArg = script.string(), requestArg = request.string();
    char* argv[] = {node.data(), scriptArg.data(), requestArg.data(), nullptr};
    ::execvp("node", argv);
    ::_exit(127);
  }
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, cancel ? WNOHANG : 0);
    if (done == pid)
      break;
    if (done < 0 && errno != EINTR)
      throw Error(ErrorKind::Internal, "lost the node process");
    if (done == 0 && cancel->load()) { // still running, and no longer wanted
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      throw Error(ErrorKind::Cancelled, "the comparison was cancelled");
    }
    if (done == 0)
      ::usleep(20000);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

bool hasOnnxRuntimeNode(const std::string& folder) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(folder) / "onnxruntime-node" / "package.json", ec);
}

std::vector<runtime::NamedTensor>
runOnnxRuntime(const std::string& modelPath,
               const std::vector<std::pair<std::string, graph::DType>>& values,
               std::span<const runtime::NamedTensor> inputs, const OnnxRuntimeOptions& options) {
  if (!options.nodeModules.empty() && !hasOnnxRuntimeNode(options.nodeModules))
    throw Error(ErrorKind::Unsupported,
                "the npm package onnxruntime-node is not installed in '" + options.nodeModules +
                    "' (npm install onnxruntime-node there, or name another node_modules folder)");
  const TemporaryFolder work("lathe-ort");
  const fs::path script = work.path() / "lathe_onnxruntime_values.js";
  std::ofstream(script, std::ios::binary) << kOnnxRuntimeScript;
  const fs::path copy = work.path() / "model_with_values.onnx";
  frontend::writeModelExposingValues(modelPath, values, copy.string());
  nlohmann::json request{{"model", copy.string()},
                         {"threads", options.threads},
                         {"outdir", work.path().string()},
                         {"inputs", nlohmann::json::array()}};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const fs::path file = work.path() / ("in_" + std::to_string(i) + ".npy");
    runtime::writeNpy(file, inputs[i].tensor);
    request["inputs"].push_back({{"name", inputs[i].name}, {"file", file.string()}});
  }
  const fs::path requestFile = work.path() / "request.json";
  // A name that is not UTF-8 cannot reach JavaScript as it is; it is sent replaced (and then
  // not found) rather than aborting the dump.
  std::ofstream(requestFile, std::ios::binary)
      << request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const fs::path log = work.path() / "node.log";
  const int status = runNode(script, requestFile, log, options.nodeModules, options.cancel);
  if (status == 127)
    throw Error(ErrorKind::Unsupported,
                "Node.js ('node') was not found on PATH; the ONNX Runtime reference needs Node.js "
                "and the npm package onnxruntime-node");
  if (status == 3)
    throw Error(ErrorKind::Unsupported,
                "the npm package onnxruntime-node was not found (" + tail(readText(log)) +
                    "); install it with npm and name its node_modules folder");
  if (status != 0)
    throw Error(ErrorKind::Invalid, "ONNX Runtime failed: " + tail(readText(log)),
                {modelPath, {}, {}});
  std::vector<runtime::NamedTensor> outputs;
  const auto written = nlohmann::json::parse(readText(work.path() / "outputs.json"));
  for (const auto& entry : written)
    outputs.push_back({entry.at("name").get<std::string>(),
                       runtime::readNpy(entry.at("file").get<std::string>())});
  return outputs;
}

} // namespace lathe::reference
