/* Lathe's standalone C runtime: runs a model exported by `lathe export` with no LLVM, no C++
 * and no engine. An export holds the model's kernels (an object file for its target), its
 * weights (an object file), a generated model.h/model.c that describe its tensors and
 * kernel calls, and this runtime as source.
 *
 *   #include "model.h"
 *   static _Alignas(64) unsigned char arena[MODEL_ARENA_BYTES];
 *   const void* inputs[MODEL_INPUT_COUNT] = {image};
 *   void* outputs[MODEL_OUTPUT_COUNT] = {scores};
 *   lathe_status s = lathe_run(MODEL, arena, sizeof arena, inputs, outputs);
 *
 * Buffers: the arena must be 64-byte aligned and at least MODEL_ARENA_BYTES long; inputs and
 * outputs must be aligned to their element size, and each must have the bytes its tensor
 * info gives rounded up to 64 (vector code may read to the end of a 64-byte line).
 *
 * Build options (preprocessor):
 *   LATHE_RUNTIME_PTHREADS   parallel loops on a pool of POSIX threads (lathe_set_threads);
 *                            without it every loop runs on the calling thread.
 *   LATHE_RUNTIME_NO_HEAP    no malloc: kernels' large temporaries come from a static scratch
 *                            of LATHE_RUNTIME_SCRATCH_BYTES bytes (default 0; model.h's
 *                            MODEL_SCRATCH_BYTES is what the model needs). Serial only.
 *   LATHE_RUNTIME_FREESTANDING  no libc at all (bare metal, wasm32): implies NO_HEAP, and the
 *                            runtime defines memcpy and memset for the kernels.
 *
 * The runtime is not reentrant for one arena: two concurrent runs need two arenas. */
#ifndef LATHE_RUNTIME_H
#define LATHE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LATHE_RUNTIME_VERSION 1

typedef enum {
  LATHE_OK = 0,
  LATHE_ERROR_ARGUMENT = 1, /* a null model, input or output pointer */
  LATHE_ERROR_ARENA = 2,    /* the arena is null, too small or not 64-byte aligned */
  LATHE_ERROR_VERSION = 3   /* the model was generated for another runtime version */
} lathe_status;

typedef enum {
  LATHE_F32 = 0,
  LATHE_F64,
  LATHE_F16,
  LATHE_BF16,
  LATHE_I8,
  LATHE_I16,
  LATHE_I32,
  LATHE_I64,
  LATHE_U8,
  LATHE_U16,
  LATHE_U32,
  LATHE_U64,
  LATHE_BOOL
} lathe_dtype;

/* A model input or output. */
typedef struct {
  const char* name;
  lathe_dtype dtype;
  int32_t rank;
  const int64_t* shape;
  uint64_t bytes; /* elements times element size, without padding */
} lathe_tensor_info;

/* Where a kernel argument lives. */
typedef enum {
  LATHE_SLOT_INPUT = 0,    /* the caller's input `index` */
  LATHE_SLOT_OUTPUT = 1,   /* the caller's output `index` */
  LATHE_SLOT_CONSTANT = 2, /* weights + offset */
  LATHE_SLOT_ARENA = 3     /* arena + offset */
} lathe_slot_kind;

typedef struct {
  uint8_t kind; /* lathe_slot_kind */
  uint32_t index;
  uint64_t offset;
} lathe_slot;

/* Every kernel takes the addresses of its parameters: inputs, then outputs. */
typedef void (*lathe_kernel)(void** args);

typedef struct {
  lathe_kernel function;
  const char* name;
  uint32_t first_arg; /* into lathe_model.args */
  uint32_t arg_count;
} lathe_call;

/* What model.c defines; read it through the functions below. */
typedef struct {
  uint32_t runtime_version; /* LATHE_RUNTIME_VERSION it was generated for */
  const char* name;
  const char* target;
  uint32_t input_count, output_count;
  const lathe_tensor_info* inputs;
  const lathe_tensor_info* outputs;
  const uint32_t* output_slots; /* slot of each output */
  uint32_t slot_count;
  const lathe_slot* slots;
  uint32_t call_count;
  const lathe_call* calls;
  const uint32_t* args; /* slot per kernel parameter, calls in order */
  uint32_t max_args;
  const unsigned char* weights;
  uint64_t weight_bytes;
  uint64_t arena_bytes;
} lathe_model;

/* Runs every kernel in order. Returns LATHE_OK, or why it could not run: the arguments are
 * checked before the first kernel runs, and nothing is written then. */
lathe_status lathe_run(const lathe_model* model, void* arena, size_t arena_bytes,
                       const void* const* inputs, void* const* outputs);

/* As lathe_run, and times each call with `clock` (any monotonic counter, e.g. nanoseconds
 * or cycles): call_ticks[i] gets call i's ticks (call_ticks holds model->call_count). */
lathe_status lathe_run_timed(const lathe_model* model, void* arena, size_t arena_bytes,
                             const void* const* inputs, void* const* outputs,
                             uint64_t (*clock)(void), uint64_t* call_ticks);

/* The index of the input or output of that name, or -1. */
int lathe_input_index(const lathe_model* model, const char* name);
int lathe_output_index(const lathe_model* model, const char* name);

size_t lathe_dtype_size(lathe_dtype dtype);
const char* lathe_dtype_name(lathe_dtype dtype);
const char* lathe_status_text(lathe_status status);

/* Threads for parallel loops (LATHE_RUNTIME_PTHREADS only; elsewhere a no-op returning 1).
 * n <= 0: one. Returns the threads in use. Not to be called while a model runs. */
int lathe_set_threads(int n);

/* Called when a kernel's temporary cannot be allocated (a kernel cannot go on without it).
 * The default prints a message where there is a libc and stops the program; define
 * LATHE_RUNTIME_CUSTOM_PANIC and provide your own to do otherwise. Must not return. */
void lathe_panic(const char* message);

/* What generated kernels call (runtime ABI, shared with the Lathe engine). */
typedef void (*lathe_parallel_body)(int64_t begin, int64_t end, void* closure);
int lathe_parallel_for(int64_t n, lathe_parallel_body body, void* closure);
void* lathe_alloc(int64_t bytes);
void lathe_free(void* pointer);

/* Hosted builds keep the large temporaries a thread freed (at most 8 blocks, 64 MiB) for the
 * kernels' next calls; this frees the calling thread's. The runtime's own worker threads free
 * theirs when they end. Not to be called while a model runs. */
void lathe_release_scratch(void);

#ifdef __cplusplus
}
#endif

#endif
