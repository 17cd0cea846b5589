// Fuzz target: the .npy decoder (on memory) and the .npz reader (on a file).
#include "engine/runtime/npy.h"
#include "engine/support/diagnostics.h"
#include "tests/fuzz/fuzz_support.h"

#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    lathe::runtime::decodeNpy(std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz");
  } catch (const lathe::Error&) {
  }
  try {
    const std::string path = lathe::fuzz::writeInput(data, size, ".npz");
    for (const std::string& name : lathe::runtime::listNpz(path))
      lathe::runtime::readNpzArray(path, name, std::uint64_t{1} << 26);
  } catch (const lathe::Error&) {
  }
  return 0;
}
