/* The C ABI that generated kernels call back into. Plain C so that exported module
 * bundles (engine/export) can include it in their C header. */
#ifndef LATHE_RUNTIME_RUNTIME_ABI_H
#define LATHE_RUNTIME_RUNTIME_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes of lathe_parallel_for. */
enum {
  LATHE_PARALLEL_FOR_OK = 0,
  LATHE_PARALLEL_FOR_BODY_FAILED = 1,      /* a body threw; the host keeps the exception */
  LATHE_PARALLEL_FOR_INVALID_ARGUMENT = 2, /* n < 0 or body == NULL */
};

/* The body of a parallel loop: handles iterations [begin, end) with begin < end. */
typedef void (*lathe_parallel_body)(int64_t begin, int64_t end, void* closure);

/* Runs body over [0, n) split into at most one contiguous chunk per pool thread, on the
 * process-wide current pool (lathe::runtime::setCurrentThreadPool), and returns when all
 * chunks are done. Runs serially on the calling thread when no pool is set, n is 1,
 * or the caller is itself inside a parallel region (nested loops never deadlock).
 * Never unwinds: a C++ exception from body is kept for the host and reported as
 * LATHE_PARALLEL_FOR_BODY_FAILED. Safe to call from any thread. */
int lathe_parallel_for(int64_t n, lathe_parallel_body body, void* closure);

/* Heap scratch for kernels whose temporaries do not fit on the stack: 64-byte aligned,
 * released with lathe_free. Returns NULL when out of memory. */
void* lathe_alloc(int64_t bytes);
void lathe_free(void* pointer);

#ifdef __cplusplus
}
#endif

#endif
