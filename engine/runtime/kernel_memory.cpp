// lathe_alloc / lathe_free: heap scratch for generated kernels (runtime_abi.h).
//
// Small blocks come from malloc. Large ones (the padded planes and Winograd transforms a
// convolution allocates on every call, megabytes each) are kept by the thread that freed
// them and handed out again: a kernel's next call gets the same blocks, already mapped and
// in the same place. Left to malloc, where such a block lands depends on the heap's history:
// in one process ResNet-50's stage-1 Winograd kernel took 1.25 ms on one call site and
// 0.45 ms on an identical one. Large blocks are 2 MiB aligned and asked for as huge pages,
// so that their placement in the caches and the TLB no longer depends on that history.
#include "engine/runtime/runtime_abi.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace {

constexpr std::size_t kHeader = 64;             // the block's size, kept before its bytes
constexpr std::size_t kLarge = 256 * 1024;      // blocks from here on are cached
constexpr std::size_t kHuge = 2 * 1024 * 1024;  // their alignment and size granule
constexpr std::size_t kCachedBlocks = 8;        // per thread
constexpr std::size_t kCachedBytes = 64u << 20; // per thread

struct Block {
  void* base = nullptr;
  std::size_t bytes = 0; // the whole block, header included
};

void* allocateLarge(std::size_t bytes) {
  void* base = std::aligned_alloc(kHuge, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (base)
    ::madvise(base, bytes, MADV_HUGEPAGE);
#endif
  return base;
}

// The large blocks this thread freed, most recent last; freed when the thread ends.
struct BlockCache {
  std::array<Block, kCachedBlocks> blocks{};
  std::size_t count = 0, bytes = 0;

  ~BlockCache() {
    for (std::size_t i = 0; i < count; ++i)
      std::free(blocks[i].base);
  }
  // The smallest cached block of at least `want` bytes, taken out of the cache (its size in
  // `bytes`); null if none.
  void* take(std::size_t want, std::size_t& size) {
    std::size_t best = count;
    for (std::size_t i = 0; i < count; ++i)
      if (blocks[i].bytes >= want && (best == count || blocks[i].bytes < blocks[best].bytes))
        best = i;
    if (best == count)
      return nullptr;
    void* base = blocks[best].base;
    size = blocks[best].bytes;
    bytes -= size;
    std::move(blocks.begin() + static_cast<std::ptrdiff_t>(best) + 1,
              blocks.begin() + static_cast<std::ptrdiff_t>(count),
              blocks.begin() + static_cast<std::ptrdiff_t>(best));
    --count;
    return base;
  }
  // Keeps the block, evicting the oldest ones while the cache is over its limits.
  void keep(void* base, std::size_t size) {
    while (count > 0 && (count == kCachedBlocks || bytes + size > kCachedBytes)) {
      std::free(blocks[0].base);
      bytes -= blocks[0].bytes;
      std::move(blocks.begin() + 1, blocks.begin() + static_cast<std::ptrdiff_t>(count),
                blocks.begin());
      --count;
    }
    if (size > kCachedBytes) {
      std::free(base);
      return;
    }
    blocks[count++] = {base, size};
    bytes += size;
  }
};

thread_local BlockCache tlsCache;

} // namespace

extern "C" void* lathe_alloc(int64_t bytes) {
  if (bytes < 0)
    return nullptr;
  const std::size_t rounded = (static_cast<std::size_t>(bytes) + 63) / 64 * 64;
  const bool large = rounded >= kLarge;
  // A large block is a whole number of huge pages, its header in the first cache line. The
  // header records the block's own size: a cached block handed out may be larger than asked.
  std::size_t total = large ? (rounded + kHeader + kHuge - 1) / kHuge * kHuge
                            : std::max<std::size_t>(rounded, 64) + kHeader;
  std::size_t cached = 0;
  void* base = large ? tlsCache.take(total, cached) : nullptr;
  if (base)
    total = cached;
  else
    base = large ? allocateLarge(total) : std::aligned_alloc(64, total);
  if (!base)
    return nullptr;
  std::memcpy(base, &total, sizeof total);
  return static_cast<std::byte*>(base) + kHeader;
}

extern "C" void lathe_free(void* pointer) {
  if (!pointer)
    return;
  void* base = static_cast<std::byte*>(pointer) - kHeader;
  std::size_t total = 0;
  std::memcpy(&total, base, sizeof total);
  if (total >= kHuge) // a large block's size (a small one's is below kLarge + kHeader)
    tlsCache.keep(base, total);
  else
    std::free(base);
}
