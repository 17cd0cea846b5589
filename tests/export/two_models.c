/* Two exported models in one program (tests/export/check_two_models.sh): the sample CNN
 * exported as "first" and the keyword spotter as "second", linked together with one copy of
 * the runtime. Each runs on the fixed input pattern the example main.c uses and prints its
 * f32 outputs in the example's format, so that the lines can be compared with each export's
 * own example program. */
#define _POSIX_C_SOURCE 200809L
#include "lathe_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const lathe_model first_model;
extern const lathe_model second_model;

static void* zeroed(uint64_t bytes) {
  const size_t n = (size_t)((bytes + 63u) / 64u * 64u) + 64u;
  void* p = aligned_alloc(64, n);
  memset(p, 0, n);
  return p;
}

static int run(const lathe_model* m) {
  const void* inputs[8];
  void* outputs[8];
  if (m->input_count > 8 || m->output_count > 8)
    return 1;
  for (uint32_t i = 0; i < m->input_count; ++i) {
    float* data = (float*)zeroed(m->inputs[i].bytes);
    for (uint64_t k = 0; k < m->inputs[i].bytes / sizeof(float); ++k)
      data[k] = (float)((double)((k * 7919u) % 2001u) / 1000.0 - 1.0);
    inputs[i] = data;
  }
  for (uint32_t o = 0; o < m->output_count; ++o)
    outputs[o] = zeroed(m->outputs[o].bytes);
  void* arena = zeroed(m->arena_bytes);
  const lathe_status status = lathe_run(m, arena, (size_t)m->arena_bytes, inputs, outputs);
  if (status != LATHE_OK) {
    fprintf(stderr, "%s: %s\n", m->name, lathe_status_text(status));
    return 1;
  }
  for (uint32_t o = 0; o < m->output_count; ++o) {
    const lathe_tensor_info* t = &m->outputs[o];
    const float* v = (const float*)outputs[o];
    const uint64_t n = t->bytes / sizeof(float);
    double sum = 0;
    printf("output %u \"%s\" %s [", o, t->name, lathe_dtype_name(t->dtype));
    for (int d = 0; d < t->rank; ++d)
      printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    printf("]:");
    for (uint64_t i = 0; i < n; ++i) {
      sum += v[i];
      if (i < 8)
        printf(" %.6g", v[i]);
    }
    printf("%s sum %.6g\n", n > 8 ? " ..." : "", sum);
  }
  return 0;
}

int main(void) {
  return run(&first_model) || run(&second_model);
}
