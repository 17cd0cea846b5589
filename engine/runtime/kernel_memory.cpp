// lathe_alloc / lathe_free: heap scratch for generated kernels (runtime_abi.h).
#include "engine/runtime/runtime_abi.h"

#include <cstdlib>

extern "C" void* lathe_alloc(int64_t bytes) {
  const auto rounded = static_cast<std::size_t>((bytes + 63) / 64 * 64);
  return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
}

extern "C" void lathe_free(void* pointer) {
  std::free(pointer);
}
