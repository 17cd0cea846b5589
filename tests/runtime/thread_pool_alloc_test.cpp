// parallelFor must not allocate: generated kernels call it per loop, and a malloc per call
// would serialise threads on the allocator. Its own executable because it replaces the
// global operator new to count allocations.

#include "engine/runtime/runtime_abi.h"
#include "engine/runtime/thread_pool.h"

#include <atomic>
#include <cstdlib>
#include <gtest/gtest.h>
#include <new>

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
} // namespace

void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed))
    allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size))
    return p;
  throw std::bad_alloc();
}
// noinline: once inlined, GCC 12 pairs `new T` with free() and warns (mismatched-new-delete).
[[gnu::noinline]] void operator delete(void* p) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace lathe::runtime {
namespace {

void body(std::int64_t begin, std::int64_t end, void* closure) {
  static_cast<std::atomic<std::int64_t>*>(closure)->fetch_add(end - begin);
}

TEST(ThreadPoolAllocation, ParallelForDoesNotAllocate) {
  ThreadPool pool(4);
  ScopedCurrentThreadPool scope(&pool);
  std::atomic<std::int64_t> total{0};
  pool.parallelFor(100, body, &total); // warm up: threads started, thread_locals touched
  ASSERT_EQ(lathe_parallel_for(100, body, &total), LATHE_PARALLEL_FOR_OK);

  counting = true;
  for (int i = 0; i < 2000; ++i) {
    pool.parallelFor(i % 13, body, &total);
    pool.parallelFor(64, [&](std::int64_t b, std::int64_t e) { total += e - b; });
    lathe_parallel_for(i % 7, body, &total);
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_GT(total.load(), 0);
}

// The profiler's chunk events go to buffers sized up front.
TEST(ThreadPoolAllocation, RecordingChunksDoesNotAllocate) {
  ThreadPool pool(4);
  ChunkRecorder recorder(pool.threadCount(), 16);
  pool.setChunkRecorder(&recorder);
  ScopedCurrentThreadPool scope(&pool);
  std::atomic<std::int64_t> total{0};
  pool.parallelFor(100, body, &total); // warm up

  allocations = 0;
  counting = true;
  for (int i = 0; i < 2000; ++i) // fills the lanes, then counts the rest as dropped
    lathe_parallel_for(64, body, &total);
  counting = false;
  pool.setChunkRecorder(nullptr);
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_EQ(recorder.events(0).size(), 16u); // the caller runs a piece of every loop
  EXPECT_GT(recorder.dropped(), 0u);
}

} // namespace
} // namespace lathe::runtime
