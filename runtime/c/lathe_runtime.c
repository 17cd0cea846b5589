/* Lathe's standalone C runtime (see lathe_runtime.h). C11. Hosted builds take kernels'
 * temporaries from the heap; freestanding ones from a static block (no heap at all). */
#if !defined(LATHE_RUNTIME_FREESTANDING) && defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise under -std=c11 */
#endif
#include "lathe_runtime.h"

#if defined(LATHE_RUNTIME_FREESTANDING) && !defined(LATHE_RUNTIME_NO_HEAP)
#define LATHE_RUNTIME_NO_HEAP
#endif
#if defined(LATHE_RUNTIME_NO_HEAP) && defined(LATHE_RUNTIME_PTHREADS)
#error "the static scratch serves one thread: LATHE_RUNTIME_NO_HEAP is for serial builds"
#endif
#ifndef LATHE_RUNTIME_SCRATCH_BYTES
#define LATHE_RUNTIME_SCRATCH_BYTES 0
#endif

#ifndef LATHE_RUNTIME_FREESTANDING
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif
#ifdef LATHE_RUNTIME_PTHREADS
#include <pthread.h>
#include <stdatomic.h>
#endif
#if !defined(LATHE_RUNTIME_NO_HEAP) && defined(__linux__)
#include <sys/mman.h> /* madvise */
#endif

/* ---- what a libc would give ------------------------------------------------------------ */

#ifdef LATHE_RUNTIME_FREESTANDING
/* Kernels' loops may be turned into calls to these by the compiler. */
void* memcpy(void* restrict dst, const void* restrict src, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
  while (n--)
    *d++ = *s++;
  return dst;
}
void* memmove(void* dst, const void* src, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
  if (d < s) {
    while (n--)
      *d++ = *s++;
  } else {
    while (n--)
      d[n] = s[n];
  }
  return dst;
}
void* memset(void* dst, int value, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  while (n--)
    *d++ = (unsigned char)value;
  return dst;
}
#if defined(__ARM_EABI__)
/* Arm EABI targets' compilers call these (the run-time ABI's names; note memset's order). */
void __aeabi_memcpy(void* dst, const void* src, size_t n) { memcpy(dst, src, n); }
void __aeabi_memcpy4(void* dst, const void* src, size_t n) { memcpy(dst, src, n); }
void __aeabi_memcpy8(void* dst, const void* src, size_t n) { memcpy(dst, src, n); }
void __aeabi_memmove(void* dst, const void* src, size_t n) { memmove(dst, src, n); }
void __aeabi_memmove4(void* dst, const void* src, size_t n) { memmove(dst, src, n); }
void __aeabi_memmove8(void* dst, const void* src, size_t n) { memmove(dst, src, n); }
void __aeabi_memset(void* dst, size_t n, int value) { memset(dst, value, n); }
void __aeabi_memset4(void* dst, size_t n, int value) { memset(dst, value, n); }
void __aeabi_memset8(void* dst, size_t n, int value) { memset(dst, value, n); }
void __aeabi_memclr(void* dst, size_t n) { memset(dst, 0, n); }
void __aeabi_memclr4(void* dst, size_t n) { memset(dst, 0, n); }
void __aeabi_memclr8(void* dst, size_t n) { memset(dst, 0, n); }
#endif
/* Round half to even, what kernels call for quantization (llvm.roundeven) where the target
 * has no instruction for it (Cortex-M) and there is no libm. Bit operations only: no FPU
 * needed. */
float roundevenf(float x) {
  union {
    float f;
    uint32_t u;
  } v;
  v.f = x;
  const uint32_t exponent = (v.u >> 23) & 0xffu;
  if (exponent >= 150u) /* integral already (|x| >= 2^23), infinity or NaN */
    return x;
  if (exponent < 126u) { /* |x| < 0.5: a zero of x's sign */
    v.u &= 0x80000000u;
    return v.f;
  }
  if (exponent == 126u) { /* 0.5 <= |x| < 1: 0 for 0.5 (even), else 1 */
    const int above_half = (v.u & 0x7fffffu) != 0;
    v.u = (v.u & 0x80000000u) | (above_half ? 0x3f800000u : 0u);
    return v.f;
  }
  const uint32_t shift = 150u - exponent; /* fraction bits, 1..23 */
  const uint32_t mask = (1u << shift) - 1u;
  const uint32_t fraction = v.u & mask;
  const uint32_t half = 1u << (shift - 1u);
  const uint32_t odd = shift == 23u ? 1u : (v.u >> shift) & 1u; /* 1.x has an odd 1 */
  v.u &= ~mask;
  if (fraction > half || (fraction == half && odd))
    v.u += 1u << shift; /* a carry into the exponent is right: 1.5 -> 2 */
  return v.f;
}
static int lathe_strcmp(const char* a, const char* b) {
  while (*a && *a == *b) {
    ++a;
    ++b;
  }
  return (unsigned char)*a - (unsigned char)*b;
}
#else
#define lathe_strcmp strcmp
#endif

#ifndef LATHE_RUNTIME_CUSTOM_PANIC
void lathe_panic(const char* message) {
#ifdef LATHE_RUNTIME_FREESTANDING
  (void)message;
  __builtin_trap();
#else
  fprintf(stderr, "lathe runtime: %s\n", message);
  abort();
#endif
}
#endif

/* ---- kernels' temporaries -------------------------------------------------------------- */

#ifdef LATHE_RUNTIME_NO_HEAP
/* A stack of blocks: kernels free their temporaries in reverse order of allocation. */
#if LATHE_RUNTIME_SCRATCH_BYTES > 0
static _Alignas(64) unsigned char lathe_scratch[LATHE_RUNTIME_SCRATCH_BYTES];
#else
static _Alignas(64) unsigned char lathe_scratch[64];
#endif
static size_t lathe_scratch_top;

void* lathe_alloc(int64_t bytes) {
  const size_t rounded = ((size_t)bytes + 63u) / 64u * 64u + 64u; /* + a header line */
  if (bytes < 0 || rounded > (size_t)LATHE_RUNTIME_SCRATCH_BYTES - lathe_scratch_top)
    lathe_panic("a kernel's temporary does not fit LATHE_RUNTIME_SCRATCH_BYTES");
  unsigned char* block = lathe_scratch + lathe_scratch_top;
  *(size_t*)block = lathe_scratch_top;
  lathe_scratch_top += rounded;
  return block + 64;
}
void lathe_free(void* pointer) {
  if (pointer)
    lathe_scratch_top = *(size_t*)((unsigned char*)pointer - 64);
}
void lathe_release_scratch(void) {}
#else
/* Small blocks come from malloc. Large ones (a convolution's padded planes and Winograd
 * transforms, megabytes on every call) are whole 2 MiB huge pages, kept by the thread that
 * freed them and handed out again: the kernel's next call gets the same, already mapped
 * blocks. Left to malloc, where such a block lands depends on the heap's history, and that
 * alone made one of three identical ResNet-50 kernels 2.7x slower. The engine's runtime
 * (kernel_memory.cpp) keeps the same policy. */
#define LATHE_BLOCK_HEADER ((size_t)64)       /* the block's size, before its bytes */
#define LATHE_BLOCK_LARGE ((size_t)256 << 10) /* blocks from here on are kept */
#define LATHE_BLOCK_HUGE ((size_t)2 << 20)    /* their alignment and size granule */
#define LATHE_BLOCKS_KEPT 8                   /* per thread */
#define LATHE_BLOCK_BYTES_KEPT ((size_t)64 << 20)

typedef struct {
  void* base;
  size_t bytes; /* the whole block, header included */
} lathe_block;
typedef struct {
  lathe_block blocks[LATHE_BLOCKS_KEPT]; /* most recently freed last */
  int count;
  size_t bytes;
} lathe_block_cache;
static _Thread_local lathe_block_cache lathe_kept;

static void lathe_forget_block(lathe_block_cache* c, int i) {
  c->bytes -= c->blocks[i].bytes;
  for (int j = i + 1; j < c->count; ++j)
    c->blocks[j - 1] = c->blocks[j];
  --c->count;
}

void lathe_release_scratch(void) {
  lathe_block_cache* c = &lathe_kept;
  for (int i = 0; i < c->count; ++i)
    free(c->blocks[i].base);
  c->count = 0;
  c->bytes = 0;
}

void* lathe_alloc(int64_t bytes) {
  if (bytes < 0 || (uint64_t)bytes > (uint64_t)(SIZE_MAX / 2))
    lathe_panic("a kernel asked for a temporary of impossible size");
  const size_t rounded = ((size_t)bytes + 63u) / 64u * 64u;
  const int large = rounded >= LATHE_BLOCK_LARGE;
  size_t total = large ? (rounded + LATHE_BLOCK_HEADER + LATHE_BLOCK_HUGE - 1) /
                             LATHE_BLOCK_HUGE * LATHE_BLOCK_HUGE
                       : (rounded ? rounded : 64u) + LATHE_BLOCK_HEADER;
  void* base = 0;
  if (large) { /* the smallest kept block that fits */
    lathe_block_cache* c = &lathe_kept;
    int best = -1;
    for (int i = 0; i < c->count; ++i)
      if (c->blocks[i].bytes >= total && (best < 0 || c->blocks[i].bytes < c->blocks[best].bytes))
        best = i;
    if (best >= 0) {
      base = c->blocks[best].base;
      total = c->blocks[best].bytes; /* it keeps its own size */
      lathe_forget_block(c, best);
    }
  }
  if (!base) {
    base = aligned_alloc(large ? LATHE_BLOCK_HUGE : 64u, total);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (base && large)
      madvise(base, total, MADV_HUGEPAGE);
#endif
  }
  if (!base)
    lathe_panic("out of memory for a kernel's temporary");
  memcpy(base, &total, sizeof total);
  return (unsigned char*)base + LATHE_BLOCK_HEADER;
}

void lathe_free(void* pointer) {
  if (!pointer)
    return;
  void* base = (unsigned char*)pointer - LATHE_BLOCK_HEADER;
  size_t total;
  memcpy(&total, base, sizeof total);
  if (total < LATHE_BLOCK_HUGE || total > LATHE_BLOCK_BYTES_KEPT) {
    free(base);
    return;
  }
  lathe_block_cache* c = &lathe_kept; /* evict the oldest while over the limits */
  while (c->count > 0 &&
         (c->count == LATHE_BLOCKS_KEPT || c->bytes + total > LATHE_BLOCK_BYTES_KEPT)) {
    free(c->blocks[0].base);
    lathe_forget_block(c, 0);
  }
  c->blocks[c->count].base = base;
  c->blocks[c->count].bytes = total;
  ++c->count;
  c->bytes += total;
}
#endif

/* ---- parallel loops -------------------------------------------------------------------- */

#ifdef LATHE_RUNTIME_PTHREADS
/* A loop is cut into pieces (4 a thread) that the caller and the workers take in turn from
 * one counter, so that a thread whose pieces cost less takes more of them. Between loops the
 * workers spin a while on the loop counter before they sleep: a model calls one loop after
 * another, and a sleeping worker took tens of microseconds to wake for each (exported
 * ResNet-50 at 2 threads ran 26 % slower than the engine, whose pool does the same). */
#define LATHE_MAX_THREADS 256
#define LATHE_PIECES_PER_THREAD 4
#define LATHE_SPINS 20000
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  int threads; /* workers + the caller */
  int stop;    /* workers leave */
  _Atomic long epoch; /* bumped per loop */
  long born;          /* the epoch when the workers were started */
  _Atomic int pending; /* workers not yet done with the loop */
  _Atomic int64_t next; /* the next piece to take */
  int64_t n, pieces;
  lathe_parallel_body body;
  void* closure;
  pthread_t workers[LATHE_MAX_THREADS];
} lathe_pool;
static lathe_pool lathe_the_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                                    PTHREAD_COND_INITIALIZER, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, {0}};
static _Thread_local int lathe_in_parallel;

static void lathe_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Takes pieces of the current loop until none is left. */
static void lathe_take_pieces(lathe_pool* p) {
  const int64_t n = p->n, pieces = p->pieces;
  for (int64_t piece; (piece = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) <
                      pieces;) {
    const int64_t begin = n * piece / pieces, end = n * (piece + 1) / pieces;
    if (begin < end)
      p->body(begin, end, p->closure);
  }
}

static void* lathe_worker(void* arg) {
  (void)arg;
  lathe_pool* p = &lathe_the_pool;
  lathe_in_parallel = 1;
  pthread_mutex_lock(&p->lock);
  long seen = p->born; /* a loop may have begun before this thread got the lock */
  pthread_mutex_unlock(&p->lock);
  for (;;) {
    /* Spin a while for the next loop, then sleep until it comes. */
    for (int spin = 0; spin < LATHE_SPINS &&
                       atomic_load_explicit(&p->epoch, memory_order_acquire) == seen;
         ++spin)
      lathe_pause();
    pthread_mutex_lock(&p->lock);
    while (atomic_load_explicit(&p->epoch, memory_order_acquire) == seen && !p->stop)
      pthread_cond_wait(&p->work, &p->lock);
    const int stop = p->stop;
    seen = atomic_load_explicit(&p->epoch, memory_order_acquire);
    pthread_mutex_unlock(&p->lock);
    if (stop)
      break;
    lathe_take_pieces(p);
    if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&p->lock); /* the caller may be asleep on `done` */
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->lock);
    }
  }
  lathe_release_scratch(); /* the blocks this worker kept */
  return 0;
}

int lathe_set_threads(int n) {
  lathe_pool* p = &lathe_the_pool;
  if (n < 1)
    n = 1;
  if (n > LATHE_MAX_THREADS)
    n = LATHE_MAX_THREADS;
  /* Stop the workers there are, then start n - 1. */
  pthread_mutex_lock(&p->lock);
  const int running = p->threads - 1;
  p->stop = 1;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  for (int i = 1; i <= running; ++i)
    pthread_join(p->workers[i], 0);
  pthread_mutex_lock(&p->lock);
  p->stop = 0;
  p->threads = 1;
  p->born = atomic_load(&p->epoch);
  for (int i = 1; i < n; ++i) {
    if (pthread_create(&p->workers[i], 0, lathe_worker, (void*)(intptr_t)i) != 0)
      break;
    p->threads = i + 1;
  }
  const int threads = p->threads;
  pthread_mutex_unlock(&p->lock);
  return threads;
}

int lathe_parallel_for(int64_t n, lathe_parallel_body body, void* closure) {
  lathe_pool* p = &lathe_the_pool;
  if (n < 0 || !body)
    return 2;
  if (n == 0)
    return 0;
  if (n == 1 || p->threads <= 1 || lathe_in_parallel) {
    body(0, n, closure);
    return 0;
  }
  const int64_t most = (int64_t)p->threads * LATHE_PIECES_PER_THREAD;
  pthread_mutex_lock(&p->lock);
  p->n = n;
  p->pieces = n < most ? n : most;
  p->body = body;
  p->closure = closure;
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  atomic_store_explicit(&p->pending, p->threads - 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&p->epoch, 1, memory_order_release);
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  lathe_in_parallel = 1;
  lathe_take_pieces(p);
  lathe_in_parallel = 0;
  for (int spin = 0;
       spin < LATHE_SPINS && atomic_load_explicit(&p->pending, memory_order_acquire) > 0; ++spin)
    lathe_pause();
  if (atomic_load_explicit(&p->pending, memory_order_acquire) > 0) {
    pthread_mutex_lock(&p->lock);
    while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0)
      pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
  }
  return 0;
}
#else
int lathe_set_threads(int n) {
  (void)n;
  return 1;
}

int lathe_parallel_for(int64_t n, lathe_parallel_body body, void* closure) {
  if (n < 0 || !body)
    return 2;
  if (n > 0)
    body(0, n, closure);
  return 0;
}
#endif

/* ---- running a model ------------------------------------------------------------------- */

size_t lathe_dtype_size(lathe_dtype dtype) {
  switch (dtype) {
  case LATHE_F64:
  case LATHE_I64:
  case LATHE_U64:
    return 8;
  case LATHE_F32:
  case LATHE_I32:
  case LATHE_U32:
    return 4;
  case LATHE_F16:
  case LATHE_BF16:
  case LATHE_I16:
  case LATHE_U16:
    return 2;
  case LATHE_I8:
  case LATHE_U8:
  case LATHE_BOOL:
    return 1;
  }
  return 0;
}

const char* lathe_dtype_name(lathe_dtype dtype) {
  static const char* const names[] = {"f32", "f64", "f16", "bf16", "i8",  "i16", "i32",
                                      "i64", "u8",  "u16", "u32",  "u64", "bool"};
  return (unsigned)dtype < sizeof names / sizeof names[0] ? names[dtype] : "?";
}

const char* lathe_status_text(lathe_status status) {
  switch (status) {
  case LATHE_OK:
    return "ok";
  case LATHE_ERROR_ARGUMENT:
    return "a null model, input or output";
  case LATHE_ERROR_ARENA:
    return "the arena is null, smaller than the model needs or not 64-byte aligned";
  case LATHE_ERROR_VERSION:
    return "the model was generated for another version of the runtime";
  }
  return "unknown status";
}

static int lathe_index_of(const lathe_tensor_info* tensors, uint32_t count, const char* name) {
  if (!name)
    return -1;
  for (uint32_t i = 0; i < count; ++i)
    if (lathe_strcmp(tensors[i].name, name) == 0)
      return (int)i;
  return -1;
}

int lathe_input_index(const lathe_model* model, const char* name) {
  return model ? lathe_index_of(model->inputs, model->input_count, name) : -1;
}

int lathe_output_index(const lathe_model* model, const char* name) {
  return model ? lathe_index_of(model->outputs, model->output_count, name) : -1;
}

static void* lathe_slot_address(const lathe_model* m, const lathe_slot* s, unsigned char* arena,
                                const void* const* inputs, void* const* outputs) {
  switch (s->kind) {
  case LATHE_SLOT_INPUT:
    return (void*)inputs[s->index];
  case LATHE_SLOT_OUTPUT:
    return outputs[s->index];
  case LATHE_SLOT_CONSTANT:
    return (void*)(m->weights + s->offset);
  default:
    return arena + s->offset;
  }
}

static void lathe_copy_bytes(unsigned char* dst, const unsigned char* src, uint64_t n) {
  if (dst != src)
    while (n--)
      *dst++ = *src++;
}

static lathe_status lathe_check(const lathe_model* m, void* arena, size_t arena_bytes,
                                const void* const* inputs, void* const* outputs) {
  if (!m || (m->input_count && !inputs) || (m->output_count && !outputs))
    return LATHE_ERROR_ARGUMENT;
  if (m->runtime_version != LATHE_RUNTIME_VERSION)
    return LATHE_ERROR_VERSION;
  for (uint32_t i = 0; i < m->input_count; ++i)
    if (!inputs[i])
      return LATHE_ERROR_ARGUMENT;
  for (uint32_t i = 0; i < m->output_count; ++i)
    if (!outputs[i])
      return LATHE_ERROR_ARGUMENT;
  if (m->arena_bytes &&
      (!arena || arena_bytes < m->arena_bytes || ((uintptr_t)arena & 63u) != 0))
    return LATHE_ERROR_ARENA;
  return LATHE_OK;
}

lathe_status lathe_run_timed(const lathe_model* m, void* arena, size_t arena_bytes,
                             const void* const* inputs, void* const* outputs,
                             uint64_t (*clock)(void), uint64_t* call_ticks) {
  const lathe_status status = lathe_check(m, arena, arena_bytes, inputs, outputs);
  if (status != LATHE_OK)
    return status;
  void* args[64];
  void** argv = args;
  if (m->max_args > sizeof args / sizeof args[0])
    return LATHE_ERROR_ARGUMENT; /* model.c is generated with at most 64 */
  for (uint32_t c = 0; c < m->call_count; ++c) {
    const lathe_call* call = &m->calls[c];
    for (uint32_t a = 0; a < call->arg_count; ++a)
      argv[a] = lathe_slot_address(m, &m->slots[m->args[call->first_arg + a]],
                                   (unsigned char*)arena, inputs, outputs);
    const uint64_t start = clock ? clock() : 0;
    call->function(argv);
    if (clock && call_ticks)
      call_ticks[c] = clock() - start;
  }
  /* Outputs no kernel writes: a model input or a constant returned as it is. */
  for (uint32_t o = 0; o < m->output_count; ++o) {
    const lathe_slot* s = &m->slots[m->output_slots[o]];
    if (s->kind != LATHE_SLOT_OUTPUT)
      lathe_copy_bytes((unsigned char*)outputs[o],
                       (const unsigned char*)lathe_slot_address(m, s, (unsigned char*)arena,
                                                                 inputs, outputs),
                       m->outputs[o].bytes);
  }
  return LATHE_OK;
}

lathe_status lathe_run(const lathe_model* model, void* arena, size_t arena_bytes,
                       const void* const* inputs, void* const* outputs) {
  return lathe_run_timed(model, arena, arena_bytes, inputs, outputs, 0, 0);
}
