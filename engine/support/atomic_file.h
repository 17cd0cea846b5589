#pragma once
// Files written whole or not at all. The bytes go to a temporary file beside the target
// (same folder, so the rename is atomic), are flushed to disk, then renamed over it: a full
// disk, an error or a signal leaves the previous file as it was. Temporary files and
// folders are registered so that SIGINT and SIGTERM remove them too (see
// installTempCleanupOnSignals).

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace lathe {

class AtomicFile {
public:
  // Creates the temporary file; throws lathe::Error (kind Io) naming `target`.
  explicit AtomicFile(std::filesystem::path target);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Without commit(), the temporary file is removed and the target left alone.
  ~AtomicFile();

  void write(std::string_view bytes);
  // Flushes, syncs and renames over the target; throws (kind Io) on failure.
  void commit();
  const std::filesystem::path& temporaryPath() const { return temp_; }

private:
  std::filesystem::path target_, temp_;
  std::FILE* file_ = nullptr;
  int registration_ = -1;
  bool failed_ = false;
};

void writeFileAtomically(const std::filesystem::path& target, std::string_view bytes);

// Paths removed (unlink, or rmdir after unlinking the files directly in it) if the process
// gets SIGINT or SIGTERM while they are registered. Returns a slot for unregisterTemp, or
// -1 when the table is full (the path is then not cleaned up on signals).
int registerTemp(const std::filesystem::path& path, bool isFolder = false);
void unregisterTemp(int slot);
// Installs the handlers (once per process): they remove the registered paths, then die
// of the same signal.
void installTempCleanupOnSignals();

} // namespace lathe
