#include "engine/export/tar_archive.h"

#include "engine/support/atomic_file.h"
#include "engine/support/diagnostics.h"

#include <cstring>
#include <filesystem>
#include <fstream>

namespace lathe::exporter {
namespace {

constexpr std::size_t kBlock = 512;

void writeOctal(char* field, std::size_t width, std::uint64_t value) {
  // width - 1 zero-padded octal digits and a terminating NUL, as ustar expects.
  field[width - 1] = '\0';
  for (std::size_t i = width - 1; i-- > 0;) {
    field[i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  LATHE_CHECK(value == 0, "value too large for a tar header field");
}

std::uint64_t readOctal(const char* field, std::size_t width, bool& ok) {
  std::uint64_t value = 0;
  std::size_t i = 0;
  while (i < width && (field[i] == ' ' || field[i] == '\0'))
    ++i;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i)
    value = value * 8 + static_cast<std::uint64_t>(field[i] - '0');
  for (; i < width; ++i)
    if (field[i] != ' ' && field[i] != '\0')
      ok = false;
  return value;
}

bool safeRelativePath(const std::string& p) {
  if (p.empty() || p.front() == '/')
    return false;
  for (const auto& part : std::filesystem::path(p))
    if (part == "..")
      return false;
  return true;
}

} // namespace

void writeTar(const std::string& path, const std::vector<ArchiveEntry>& entries) {
  // Whole or not at all: an interrupted or failed write leaves the previous bundle.
  AtomicFile out(path);
  for (const ArchiveEntry& e : entries) {
    LATHE_CHECK(safeRelativePath(e.path) && e.path.size() < 100, "bad archive path " + e.path);
    char header[kBlock] = {};
    std::memcpy(header, e.path.data(), e.path.size());
    writeOctal(header + 100, 8, 0644);
    writeOctal(header + 108, 8, 0);
    writeOctal(header + 116, 8, 0);
    writeOctal(header + 124, 12, e.bytes.size());
    writeOctal(header + 136, 12, 0);
    std::memset(header + 148, ' ', 8); // the checksum counts its own field as spaces
    header[156] = '0';
    std::memcpy(header + 257, "ustar", 6);
    std::memcpy(header + 263, "00", 2);
    unsigned sum = 0;
    for (unsigned char c : header)
      sum += c;
    writeOctal(header + 148, 7, sum);
    out.write({header, kBlock});
    out.write(e.bytes);
    const std::size_t pad = (kBlock - e.bytes.size() % kBlock) % kBlock;
    static const char zeros[kBlock] = {};
    out.write({zeros, pad});
  }
  static const char end[2 * kBlock] = {};
  out.write({end, sizeof end});
  out.commit();
}

std::vector<ArchiveEntry> readTar(const std::string& path) {
  // A FIFO or a device named x.tar would block or never end: only regular files.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::Io,
                std::filesystem::exists(path, ec) ? "not a regular file" : "no such file",
                {path, {}, {}});
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::Io, "cannot open the archive", {path, {}, {}});
  // Read in one piece: a string stream would hold the bytes twice over (a bundle's weights
  // are most of the file, 118 MiB for ResNet-50).
  std::string data(static_cast<std::size_t>(std::filesystem::file_size(path, ec)), '\0');
  if (ec || !in.read(data.data(), static_cast<std::streamsize>(data.size())))
    throw Error(ErrorKind::Io, "cannot read the archive", {path, {}, {}});
  const ErrorLocation where{path, {}, {}};
  std::vector<ArchiveEntry> entries;
  std::size_t pos = 0;
  while (true) {
    if (pos + kBlock > data.size())
      throw Error(ErrorKind::Invalid, "the archive is truncated (no end marker)", where);
    const char* header = data.data() + pos;
    bool allZero = true;
    for (std::size_t i = 0; i < kBlock && allZero; ++i)
      allZero = header[i] == 0;
    if (allZero)
      break;
    unsigned sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i)
      sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header[i]);
    bool ok = true;
    const std::uint64_t stored = readOctal(header + 148, 8, ok);
    const std::uint64_t size = readOctal(header + 124, 12, ok);
    if (!ok || stored != sum)
      throw Error(ErrorKind::Invalid, "corrupt archive header at byte " + std::to_string(pos),
                  where);
    const std::string name(header, strnlen(header, 100));
    pos += kBlock;
    if (size > data.size() - pos)
      throw Error(ErrorKind::Invalid, "entry '" + name + "' runs past the end of the archive",
                  where);
    const char type = header[156];
    if (type == '0' || type == '\0') {
      if (!safeRelativePath(name))
        throw Error(ErrorKind::Invalid, "entry '" + name + "' would be written outside its folder",
                    where);
      entries.push_back({name, data.substr(pos, size)});
    }
    pos += (size + kBlock - 1) / kBlock * kBlock;
  }
  return entries;
}

} // namespace lathe::exporter
