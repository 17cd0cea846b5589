// Fuzz target: a bundle's tar container and its manifest (nothing is loaded or run).
#include "engine/export/bundle.h"
#include "engine/export/tar_archive.h"
#include "engine/support/diagnostics.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = lathe::fuzz::writeInput(data, size, ".tar");
  try {
    for (const lathe::exporter::ArchiveEntry& e : lathe::exporter::readTar(path))
      if (e.path == "manifest.json")
        lathe::exporter::manifestFromJson(e.bytes, path);
  } catch (const lathe::Error&) {
  }
  // The manifest parser alone, on the raw input.
  try {
    lathe::exporter::manifestFromJson(std::string(reinterpret_cast<const char*>(data), size),
                                      "fuzz");
  } catch (const lathe::Error&) {
  }
  return 0;
}
