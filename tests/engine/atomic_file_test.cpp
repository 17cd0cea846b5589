// Files written whole or not at all, and temporary files removed on SIGTERM.
#include "engine/support/atomic_file.h"
#include "engine/support/diagnostics.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lathe {
namespace {

namespace fs = std::filesystem;

fs::path freshFolder(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("lathe_atomic_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

TEST(AtomicFile, ReplacesTheFileAndLeavesNoTemporary) {
  const fs::path dir = freshFolder("replace");
  writeFileAtomically(dir / "out.txt", "first");
  writeFileAtomically(dir / "out.txt", "second");
  EXPECT_EQ(contents(dir / "out.txt"), "second");
  EXPECT_EQ(entries(dir), 1u);
}

TEST(AtomicFile, WithoutCommitTheOldFileStays) {
  const fs::path dir = freshFolder("abandon");
  writeFileAtomically(dir / "out.txt", "good");
  {
    AtomicFile f(dir / "out.txt");
    f.write("half of a new ");
  }
  EXPECT_EQ(contents(dir / "out.txt"), "good");
  EXPECT_EQ(entries(dir), 1u);
}

// A write that fails (here: past RLIMIT_FSIZE, as a full disk would) throws and leaves the
// previous file and no temporary. Run in a child so the limit does not touch the tests.
TEST(AtomicFile, AFailedWriteKeepsThePreviousFile) {
  const fs::path dir = freshFolder("full");
  writeFileAtomically(dir / "out.bin", "previous");
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      writeFileAtomically(dir / "out.bin", std::string(1 << 20, 'x'));
    } catch (const Error& e) {
      const bool named = std::string(e.what()).find("out.bin") != std::string::npos;
      ::_exit(named ? 0 : 2);
    }
    ::_exit(1); // the write must not succeed
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(contents(dir / "out.bin"), "previous");
  EXPECT_EQ(entries(dir), 1u);
}

TEST(AtomicFile, SigtermRemovesTheTemporaryAndRegisteredFolders) {
  const fs::path dir = freshFolder("signal");
  writeFileAtomically(dir / "out.bin", "previous");
  fs::create_directories(dir / "extracted");
  std::ofstream(dir / "extracted" / "kernels.so") << "code";
  const pid_t pid = ::fork();
  if (pid == 0) {
    installTempCleanupOnSignals();
    registerTemp(dir / "extracted", /*isFolder=*/true);
    AtomicFile f(dir / "out.bin");
    f.write("partial");
    std::raise(SIGTERM);
    ::_exit(1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(contents(dir / "out.bin"), "previous");
  EXPECT_EQ(entries(dir), 1u) << "the temporary file or the extracted folder is left";
}

} // namespace
} // namespace lathe
