#include "engine/support/atomic_file.h"

#include "engine/support/diagnostics.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lathe {
namespace {

// A fixed table that a signal handler can walk: no allocation, no locks.
struct TempSlot {
  std::atomic<bool> claimed{false}; // owned by a registration
  std::atomic<bool> used{false};    // path written: the handler removes it
  bool isFolder = false;
  char path[4096] = {};
};
std::array<TempSlot, 32> gTemps;

void removeRegistered() {
  for (TempSlot& slot : gTemps) {
    if (!slot.used.load(std::memory_order_acquire))
      continue;
    if (!slot.isFolder) {
      ::unlink(slot.path);
      continue;
    }
    // unlink and rmdir are async-signal-safe; opendir is not guaranteed to be, but the
    // process is about to die of the signal anyway.
    if (DIR* d = ::opendir(slot.path)) {
      while (dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0)
          continue;
        ::unlinkat(::dirfd(d), e->d_name, 0);
      }
      ::closedir(d);
    }
    ::rmdir(slot.path);
  }
}

extern "C" void onTerminatingSignal(int sig) {
  removeRegistered();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

} // namespace

int registerTemp(const std::filesystem::path& path, bool isFolder) {
  const std::string text = path.string();
  if (text.size() >= sizeof(TempSlot::path))
    return -1;
  for (std::size_t i = 0; i < gTemps.size(); ++i) {
    TempSlot& slot = gTemps[i];
    bool expected = false;
    if (!slot.claimed.compare_exchange_strong(expected, true))
      continue;
    std::memcpy(slot.path, text.c_str(), text.size() + 1);
    slot.isFolder = isFolder;
    slot.used.store(true, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void unregisterTemp(int slot) {
  if (slot < 0 || static_cast<std::size_t>(slot) >= gTemps.size())
    return;
  TempSlot& s = gTemps[static_cast<std::size_t>(slot)];
  s.used.store(false, std::memory_order_release);
  s.claimed.store(false, std::memory_order_release);
}

void installTempCleanupOnSignals() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true))
    return;
  struct sigaction action{};
  action.sa_handler = onTerminatingSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  const std::filesystem::path folder =
      target_.parent_path().empty() ? std::filesystem::path(".") : target_.parent_path();
  std::string pattern = (folder / ("." + target_.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    throw Error(ErrorKind::Io,
                std::string("cannot write (no temporary file can be made beside it: ") +
                    std::strerror(errno) + ")",
                {target_.string(), {}, {}});
  temp_ = pattern;
  registration_ = registerTemp(temp_);
  ::fchmod(fd, 0644);
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    ::unlink(temp_.c_str());
    unregisterTemp(registration_);
    throw Error(ErrorKind::Io, "cannot open a temporary file", {target_.string(), {}, {}});
  }
}

AtomicFile::~AtomicFile() {
  if (file_) {
    std::fclose(file_);
    ::unlink(temp_.c_str());
  }
  unregisterTemp(registration_);
}

void AtomicFile::write(std::string_view bytes) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    failed_ = true;
}

void AtomicFile::commit() {
  const bool flushed = !failed_ && std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int error = flushed ? 0 : errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    ::unlink(temp_.c_str());
    throw Error(ErrorKind::Io,
                std::string("cannot write (the previous file, if any, is unchanged): ") +
                    std::strerror(error ? error : EIO),
                {target_.string(), {}, {}});
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp_.c_str());
    throw Error(ErrorKind::Io, std::string("cannot replace the file: ") + std::strerror(e),
                {target_.string(), {}, {}});
  }
}

void writeFileAtomically(const std::filesystem::path& target, std::string_view bytes) {
  AtomicFile file(target);
  file.write(bytes);
  file.commit();
}

} // namespace lathe
