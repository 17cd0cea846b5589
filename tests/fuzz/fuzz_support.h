#pragma once
// Shared by the fuzz targets: libFuzzer's entry point, and a private temporary file for
// the readers that take a path.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace lathe::fuzz {

// Writes the input to a file of this process (one per target and process) and returns
// its path.
inline std::string writeInput(const std::uint8_t* data, std::size_t size, const char* suffix) {
  const std::string path = "/tmp/lathe-fuzz-" + std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

} // namespace lathe::fuzz
