/* The hosted C runtime's lathe_alloc / lathe_free (what exported kernels take their padded
 * planes and transforms from): alignment, large blocks at the same place in a huge page and
 * handed back on the next call, a block handed out for less keeping its own size, the limits
 * on what a thread keeps, and worker threads that free what they kept. Built with
 * LATHE_RUNTIME_PTHREADS and -std=c11, as an export's Makefile builds it. Exit status 0 when
 * every check holds. */
#include "lathe_runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MIB ((int64_t)1 << 20)

static int failures;

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "scratch_check: FAILED: %s\n", what);
    ++failures;
  }
}

static uintptr_t address(const void* p) { return (uintptr_t)p; }

static int64_t filled;
static void fill(int64_t begin, int64_t end, void* closure) {
  (void)closure;
  for (int64_t i = begin; i < end; ++i) {
    unsigned char* p = (unsigned char*)lathe_alloc(3 * MIB);
    memset(p, (int)i, (size_t)(3 * MIB));
    lathe_free(p);
  }
  __atomic_add_fetch(&filled, end - begin, __ATOMIC_RELAXED);
}

int main(void) {
  const int64_t sizes[] = {0, 1, 100, 256 * 1024 - 64, 256 * 1024, 3 * MIB + 5};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    unsigned char* p = (unsigned char*)lathe_alloc(sizes[i]);
    expect(p && address(p) % 64 == 0, "every block is cache-line aligned");
    if (p)
      memset(p, 0x5a, (size_t)sizes[i]);
    lathe_free(p);
  }
  lathe_free(0);
  lathe_release_scratch();

  /* Large blocks: the same offset in a huge page whatever the heap did before, and back. */
  void* small = lathe_alloc(1000);
  void* a = lathe_alloc(5 * MIB / 2);
  void* b = lathe_alloc(861184);
  expect(address(a) % (2 * MIB) == address(b) % (2 * MIB), "large blocks share their offset");
  lathe_free(a);
  lathe_free(b);
  void* b2 = lathe_alloc(861184);
  void* a2 = lathe_alloc(5 * MIB / 2);
  expect(b2 == b, "the smallest kept block that fits comes back");
  expect(a2 == a, "the larger kept block comes back");
  lathe_free(a2);
  lathe_free(b2);
  lathe_free(small);

  /* A 12 MiB block handed out for 9 MiB is still 12 MiB when it comes back. */
  lathe_release_scratch();
  void* big = lathe_alloc(11 * MIB);
  lathe_free(big);
  void* smaller = lathe_alloc(9 * MIB);
  expect(smaller == big, "a kept block serves a smaller request");
  lathe_free(smaller);
  void* again = lathe_alloc(11 * MIB);
  expect(again == big, "a block handed out for less keeps its own size");
  memset(again, 2, (size_t)(11 * MIB));
  lathe_free(again);

  /* At most 64 MiB kept: a 70 MiB block is freed, not kept. */
  void* huge = lathe_alloc(70 * MIB);
  memset(huge, 3, (size_t)(70 * MIB));
  lathe_free(huge);
  void* next = lathe_alloc(11 * MIB);
  expect(next == big, "a block over the limit does not evict what is kept");
  lathe_free(next);
  lathe_release_scratch();

  /* Worker threads allocate and free in parallel loops, and free what they kept when they
   * end (lathe_set_threads stops them). */
  expect(lathe_set_threads(3) == 3, "three threads");
  for (int round = 0; round < 4; ++round)
    lathe_parallel_for(12, fill, 0);
  expect(filled == 48, "every chunk ran");
  expect(lathe_set_threads(1) == 1, "back to one thread");
  lathe_release_scratch();

  if (failures == 0)
    printf("scratch_check: all checks hold\n");
  return failures ? 1 : 0;
}
