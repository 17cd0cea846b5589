// Bundles' tar container and manifest: round trip and hostile archives.
#include "engine/export/bundle.h"
#include "engine/export/manifest_check.h"
#include "engine/export/tar_archive.h"
#include "engine/support/diagnostics.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>

namespace lathe::exporter {
namespace {

std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

TEST(TarArchive, RoundTripsFilesOfAnySize) {
  std::vector<ArchiveEntry> entries{{"a.txt", "hello"},
                                    {"dir/b.bin", std::string(1000, '\x01')},
                                    {"empty", ""},
                                    {"exact", std::string(512, 'x')}};
  writeTar(tempPath("rt.tar"), entries);
  const auto back = readTar(tempPath("rt.tar"));
  ASSERT_EQ(back.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(back[i].path, entries[i].path);
    EXPECT_EQ(back[i].bytes, entries[i].bytes);
  }
}

// A one-file archive whose header names `path`, with a correct checksum.
std::string rawTar(const std::string& path, const std::string& body) {
  std::string header(512, '\0');
  std::memcpy(header.data(), path.data(), path.size());
  std::snprintf(header.data() + 124, 12, "%011o", static_cast<unsigned>(body.size()));
  header[156] = '0';
  std::memset(header.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : header)
    sum += c;
  std::snprintf(header.data() + 148, 8, "%06o", sum);
  std::string data = header + body + std::string((512 - body.size() % 512) % 512, '\0');
  return data + std::string(1024, '\0');
}

TEST(TarArchive, RefusesPathsThatEscape) {
  for (const char* bad : {"../evil.so", "/etc/passwd", "a/../../b"}) {
    std::ofstream(tempPath("bad.tar"), std::ios::binary) << rawTar(bad, "x");
    try {
      readTar(tempPath("bad.tar"));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("outside its folder"), std::string::npos) << e.what();
    }
  }
}

TEST(TarArchive, CorruptAndTruncatedArchives) {
  std::string good = rawTar("f", std::string(600, 'y'));
  std::string corrupt = good;
  corrupt[20] = 'Z'; // breaks the checksum
  std::ofstream(tempPath("corrupt.tar"), std::ios::binary) << corrupt;
  EXPECT_THROW(readTar(tempPath("corrupt.tar")), Error);
  std::ofstream(tempPath("short.tar"), std::ios::binary) << good.substr(0, 700);
  EXPECT_THROW(readTar(tempPath("short.tar")), Error);
  EXPECT_THROW(readTar(tempPath("does_not_exist.tar")), Error);
}

// A bundle whose files do not match its manifest is refused before the library is extracted.
TEST(BundleFiles, ReadBundleChecksTheFilesAgainstTheManifest) {
  BundleManifest m;
  m.model = "m.onnx";
  m.target = "llvm";
  m.triple = "x86_64-pc-linux-gnu";
  m.library = "kernels.so";
  const std::string library = "not really a shared object";
  const std::string weights(16, '\x02');
  m.librarySeal = sealOf(library);
  m.weightsSeal = sealOf(weights);
  m.slots = {{"w", "constant", "f32", {4}, 0, 16}};
  writeBundle(tempPath("sealed.tar"), m, library, weights);
  const auto loaded = readBundle(tempPath("sealed.tar"));
  EXPECT_EQ(loaded->weights, weights);
  std::ifstream extracted(loaded->libraryPath, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(extracted), {}), library);

  const std::pair<std::pair<std::string, std::string>, const char*> swaps[] = {
      {{"not really a shared objecT", weights}, "library_sha256: kernels.so has 26 bytes"},
      {{"not really", weights}, "library_bytes: kernels.so has 10 bytes"},
      {{library, std::string(16, '\x03')}, "weights_sha256: weights.bin has 16 bytes"}};
  for (const auto& [files, reason] : swaps) {
    writeBundle(tempPath("swapped.tar"), m, files.first, files.second);
    try {
      readBundle(tempPath("swapped.tar"));
      ADD_FAILURE() << reason << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("swapped.tar: manifest.json: " + std::string(reason)),
                std::string::npos)
          << e.what();
    }
  }
}

} // namespace
} // namespace lathe::exporter
