#pragma once
// A minimal POSIX ustar archive of regular files: enough for Lathe's module bundles, which
// hold a shared object, a manifest and the weights. Reading refuses entries whose paths
// would escape the folder they are extracted to.

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::exporter {

struct ArchiveEntry {
  std::string path; // relative, '/'-separated, no ".." parts
  std::string bytes;
};

// Writes `entries` as a tar file at `path` (lathe::Error of kind Io on failure).
void writeTar(const std::string& path, const std::vector<ArchiveEntry>& entries);

// Reads every regular file of a tar file. Corrupt headers, truncated data, absolute or
// ".." paths throw lathe::Error (Invalid) naming the archive.
std::vector<ArchiveEntry> readTar(const std::string& path);

} // namespace lathe::exporter
