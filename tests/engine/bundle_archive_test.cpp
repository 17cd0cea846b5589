// Bundles' tar container and manifest: round trip and hostile archives.
#include "engine/export/bundle.h"
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

TEST(BundleManifest, JsonRoundTripAndValidation) {
  BundleManifest m;
  m.model = "m.onnx";
  m.target = "llvm";
  m.triple = "x86_64-pc-linux-gnu";
  m.library = "kernels.so";
  m.slots = {{"x", "input", "f32", {1, 3}, 0, 12},
             {"w", "constant", "f32", {3}, 64, 12},
             {"y", "output", "f32", {1, 3}, 0, 12}};
  m.calls = {{"k0_mul", {0, 1, 2}, {"mul0"}}};
  m.inputs = {0};
  m.outputs = {2};
  const BundleManifest back = manifestFromJson(manifestToJson(m), "test");
  EXPECT_EQ(back.slots.size(), 3u);
  EXPECT_EQ(back.slots[1].weightsOffset, 64u);
  EXPECT_EQ(back.calls[0].nodes, std::vector<std::string>{"mul0"});
  m.calls[0].args = {0, 1, 7}; // no slot 7
  EXPECT_THROW(manifestFromJson(manifestToJson(m), "test"), Error);
  EXPECT_THROW(manifestFromJson("{not json", "test"), Error);
}

} // namespace
} // namespace lathe::exporter
