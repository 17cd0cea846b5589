/* Checks of the standalone C runtime's API against an exported model (built by
 * check_export.py --api-check with the export's model.c, runtime and objects): argument
 * and arena errors are refused before any kernel runs, names are found, and runs on one
 * and on several threads, timed or not, give the same outputs. Exit status 0 when all hold. */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;
#define CHECK(condition)                                                                   \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      fprintf(stderr, "api_check: FAIL line %d: %s\n", __LINE__, #condition);              \
      ++failures;                                                                          \
    }                                                                                      \
  } while (0)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void* padded(uint64_t bytes) {
  const size_t n = (size_t)((bytes + 63u) / 64u * 64u) + 64u;
  void* p = aligned_alloc(64, n);
  memset(p, 0, n);
  return p;
}

int main(void) {
  const void* inputs[MODEL_INPUT_COUNT];
  void* outputs[MODEL_OUTPUT_COUNT];
  void* second[MODEL_OUTPUT_COUNT];
  for (uint32_t i = 0; i < MODEL->input_count; ++i) {
    float* data = (float*)padded(MODEL->inputs[i].bytes);
    for (uint64_t e = 0; e < MODEL->inputs[i].bytes / 4; ++e)
      data[e] = (float)((e * 37u) % 101u) / 50.0f - 1.0f;
    inputs[i] = data;
  }
  for (uint32_t o = 0; o < MODEL->output_count; ++o) {
    outputs[o] = padded(MODEL->outputs[o].bytes);
    second[o] = padded(MODEL->outputs[o].bytes);
  }
  unsigned char* arena = (unsigned char*)padded(MODEL_ARENA_BYTES + 64);

  /* Refusals: nothing runs, nothing is written. */
  CHECK(lathe_run(NULL, arena, MODEL_ARENA_BYTES, inputs, outputs) == LATHE_ERROR_ARGUMENT);
  CHECK(lathe_run(MODEL, arena, MODEL_ARENA_BYTES, NULL, outputs) == LATHE_ERROR_ARGUMENT);
  CHECK(lathe_run(MODEL, NULL, MODEL_ARENA_BYTES, inputs, outputs) == LATHE_ERROR_ARENA);
  CHECK(lathe_run(MODEL, arena, MODEL->arena_bytes - 1, inputs, outputs) == LATHE_ERROR_ARENA);
  CHECK(lathe_run(MODEL, arena + 8, MODEL_ARENA_BYTES, inputs, outputs) == LATHE_ERROR_ARENA);
  lathe_model other = *MODEL;
  other.runtime_version = LATHE_RUNTIME_VERSION + 1;
  CHECK(lathe_run(&other, arena, MODEL_ARENA_BYTES, inputs, outputs) == LATHE_ERROR_VERSION);
  CHECK(strlen(lathe_status_text(LATHE_ERROR_ARENA)) > 10);

  /* Names. */
  CHECK(lathe_input_index(MODEL, MODEL->inputs[0].name) == 0);
  CHECK(lathe_output_index(MODEL, MODEL->outputs[0].name) == 0);
  CHECK(lathe_input_index(MODEL, "no such input") == -1);
  CHECK(lathe_output_index(MODEL, NULL) == -1);
  CHECK(lathe_dtype_size(MODEL->inputs[0].dtype) == 4);
  CHECK(strcmp(lathe_dtype_name(LATHE_F32), "f32") == 0);

  /* One thread, then three (timed): the same bytes. */
  CHECK(lathe_set_threads(1) == 1);
  CHECK(lathe_run(MODEL, arena, MODEL_ARENA_BYTES, inputs, outputs) == LATHE_OK);
  const int threads = lathe_set_threads(3);
  uint64_t* ticks = (uint64_t*)calloc(MODEL->call_count, sizeof(uint64_t));
  CHECK(lathe_run_timed(MODEL, arena, MODEL_ARENA_BYTES, inputs, second, now_ns, ticks) ==
        LATHE_OK);
  uint64_t total = 0;
  for (uint32_t c = 0; c < MODEL->call_count; ++c)
    total += ticks[c];
  CHECK(total > 0);
  for (uint32_t o = 0; o < MODEL->output_count; ++o)
    CHECK(memcmp(outputs[o], second[o], (size_t)MODEL->outputs[o].bytes) == 0);
  CHECK(lathe_set_threads(2) == (threads > 1 ? 2 : 1));
  CHECK(lathe_run(MODEL, arena, MODEL_ARENA_BYTES, inputs, second) == LATHE_OK);
  for (uint32_t o = 0; o < MODEL->output_count; ++o)
    CHECK(memcmp(outputs[o], second[o], (size_t)MODEL->outputs[o].bytes) == 0);
  lathe_set_threads(1);
  printf("api_check: %s (%d thread(s) at most, %u calls timed)\n", failures ? "FAIL" : "PASS",
         threads, MODEL->call_count);
  return failures ? 1 : 0;
}
