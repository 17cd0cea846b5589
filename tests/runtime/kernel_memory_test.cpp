// lathe_alloc / lathe_free (kernel_memory.cpp): the heap scratch generated kernels use.

#include "engine/runtime/runtime_abi.h"

#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <thread>

namespace {

constexpr std::int64_t kMiB = 1 << 20;
constexpr std::uintptr_t kHugePage = 2 * kMiB;

std::uintptr_t address(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

TEST(KernelMemory, BlocksAreCacheLineAlignedAndWritable) {
  for (std::int64_t bytes :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{100}, std::int64_t{256 * 1024 - 64},
        std::int64_t{256 * 1024}, std::int64_t{3 * kMiB + 5}}) {
    void* p = lathe_alloc(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(address(p) % 64, 0u) << bytes;
    std::memset(p, 0x5a, static_cast<std::size_t>(bytes));
    lathe_free(p);
  }
  lathe_free(nullptr); // allowed, does nothing
}

TEST(KernelMemory, RefusesWhatCannotBeAllocated) {
  EXPECT_EQ(lathe_alloc(-1), nullptr);
  EXPECT_EQ(lathe_alloc(INT64_MAX), nullptr);
}

// A kernel's large scratch lands at the same place in a huge page whatever the heap did
// before, and its next call gets the block back: where malloc put such blocks depended on
// the heap's history, and one of three identical Winograd kernels ran 2.7x slower.
TEST(KernelMemory, LargeBlocksKeepTheirPlaceAndComeBack) {
  void* small = lathe_alloc(1000); // disturbs a plain heap's layout
  void* a = lathe_alloc(5 * kMiB / 2);
  void* b = lathe_alloc(861184);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(address(a) % kHugePage, address(b) % kHugePage);
  lathe_free(a);
  lathe_free(b);
  void* b2 = lathe_alloc(861184);
  void* a2 = lathe_alloc(5 * kMiB / 2);
  EXPECT_EQ(b2, b); // the smallest cached block that fits
  EXPECT_EQ(a2, a);
  lathe_free(a2);
  lathe_free(b2);
  lathe_free(small);
}

TEST(KernelMemory, ABlockHandedOutSmallerKeepsItsSize) {
  // Sizes no other test caches on this thread: 12 MiB and 10 MiB blocks with their headers.
  void* big = lathe_alloc(11 * kMiB);
  ASSERT_NE(big, nullptr);
  lathe_free(big);
  void* smaller = lathe_alloc(9 * kMiB); // the cached 12 MiB block is the smallest that fits
  EXPECT_EQ(smaller, big);
  lathe_free(smaller);
  void* again = lathe_alloc(11 * kMiB); // still known as 12 MiB, so it fits again
  EXPECT_EQ(again, big);
  std::memset(again, 2, 11 * kMiB);
  lathe_free(again);
}

TEST(KernelMemory, ThreadsKeepTheirOwnBlocks) {
  void* mine = lathe_alloc(4 * kMiB);
  ASSERT_NE(mine, nullptr);
  lathe_free(mine);
  void* theirs = nullptr;
  std::thread([&] {
    theirs = lathe_alloc(4 * kMiB);
    std::memset(theirs, 1, 4 * kMiB);
    lathe_free(theirs); // kept by that thread, released when it ends
  }).join();
  EXPECT_NE(theirs, mine); // this thread's cached block was not handed to another thread
  void* again = lathe_alloc(4 * kMiB);
  EXPECT_EQ(again, mine);
  lathe_free(again);
}

} // namespace
