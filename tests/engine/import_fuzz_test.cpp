// Hostile files: seeded random corruptions (these seeds include cases that crash the ONNX
// library itself, which the importer must contain) of real models must make the importer fail
// cleanly (a lathe::Error) or succeed — never crash, hang or abort. Each import runs in a
// child process so that a crash is reported as a test failure, not a dead test binary.
#include "engine/api/session.h"

#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace lathe {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Flip bytes, cut the tail, or splice in random bytes.
std::string corrupt(std::string bytes, std::mt19937& rng) {
  std::uniform_int_distribution<int> kind(0, 2);
  std::uniform_int_distribution<std::size_t> pos(0, bytes.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  switch (kind(rng)) {
  case 0:
    for (int i = 0; i < 1 + static_cast<int>(rng() % 8); ++i)
      bytes[pos(rng)] = static_cast<char>(byte(rng));
    break;
  case 1:
    bytes.resize(pos(rng));
    break;
  default: {
    std::string junk(1 + rng() % 16, '\0');
    for (char& c : junk)
      c = static_cast<char>(byte(rng));
    bytes.insert(pos(rng), junk);
  }
  }
  return bytes;
}

// Runs the import in a child; returns "" when it ended normally, else what went wrong.
std::string importInChild(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(20); // a hang becomes SIGALRM
    api::Session session;
    const api::OpenResult r = session.openModel(path);
    _exit(r.ok() ? 0 : (r.failure->kind == "internal" ? 3 : 1));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  if (WEXITSTATUS(status) == 3)
    return "an internal error instead of a clear message";
  return "";
}

void fuzz(const std::string& model, int cases, unsigned seed) {
  const std::string original = readFile(std::string(LATHE_MODEL_DIR) + "/" + model);
  ASSERT_FALSE(original.empty());
  std::mt19937 rng(seed);
  const std::string path = ::testing::TempDir() + "/fuzz_" + std::to_string(getpid()) + ".onnx";
  for (int i = 0; i < cases; ++i) {
    const std::string bytes = corrupt(original, rng);
    std::ofstream(path, std::ios::binary) << bytes;
    const std::string problem = importInChild(path);
    if (!problem.empty()) {
      const std::string kept = ::testing::TempDir() + "/fuzz_failure_" +
                               model.substr(0, model.find('.')) + "_" + std::to_string(i) + ".onnx";
      std::ofstream(kept, std::ios::binary) << bytes;
      ADD_FAILURE() << model << " corruption #" << i << ": " << problem << " (kept as " << kept
                    << ")";
    }
  }
  unlink(path.c_str());
}

TEST(ImportFuzz, ConvBnRelu) {
  fuzz("conv_bn_relu.onnx", 800, 11);
}
TEST(ImportFuzz, SampleCnn) {
  fuzz("sample_cnn.onnx", 1100, 12);
}
TEST(ImportFuzz, IfSubgraph) {
  fuzz("if_subgraph.onnx", 500, 13);
}

} // namespace
} // namespace lathe
