/* An example program for a model exported by `lathe export`: runs it on inputs read from
 * .npy files (or on a fixed pattern without them), prints each output's shape, first values
 * and sum, and with -o writes the outputs as output_<i>.npy. With -r it times the runs.
 *
 *   model [-t THREADS] [-r REPEAT] [-p] [-o DIR] [input_0.npy input_1.npy ...]
 *
 * Inputs are given in the model's order (see model.h). */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char* npy_descr(lathe_dtype t) {
  switch (t) {
  case LATHE_F32:
    return "<f4";
  case LATHE_F64:
    return "<f8";
  case LATHE_F16:
    return "<f2";
  case LATHE_BF16:
  case LATHE_U16:
    return "<u2";
  case LATHE_I8:
    return "|i1";
  case LATHE_U8:
    return "|u1";
  case LATHE_BOOL:
    return "|b1";
  case LATHE_I16:
    return "<i2";
  case LATHE_I32:
    return "<i4";
  case LATHE_U32:
    return "<u4";
  case LATHE_I64:
    return "<i8";
  case LATHE_U64:
    return "<u8";
  }
  return "?";
}

/* Buffers aligned to 64 bytes and padded to a multiple of 64 (lathe_runtime.h). */
static void* buffer_for(uint64_t bytes) {
  const size_t padded = (size_t)((bytes + 63u) / 64u * 64u);
  void* p = aligned_alloc(64, padded ? padded : 64);
  if (p)
    memset(p, 0, padded ? padded : 64);
  return p;
}

/* Reads an .npy file whose dtype and shape are the tensor's into `data`. */
static int read_npy(const char* path, const lathe_tensor_info* t, void* data) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "model: cannot open %s\n", path);
    return 0;
  }
  unsigned char magic[10];
  char header[4096];
  int ok = 0;
  size_t header_len = 0;
  if (fread(magic, 1, 10, f) != 10 || memcmp(magic, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "model: %s is not an .npy file\n", path);
    goto done;
  }
  if (magic[6] == 1) {
    header_len = (size_t)magic[8] | (size_t)magic[9] << 8;
  } else {
    unsigned char more[2];
    if (fread(more, 1, 2, f) != 2)
      goto done;
    header_len = (size_t)magic[8] | (size_t)magic[9] << 8 | (size_t)more[0] << 16 |
                 (size_t)more[1] << 24;
  }
  if (header_len >= sizeof header || fread(header, 1, header_len, f) != header_len) {
    fprintf(stderr, "model: %s has a header this example cannot read\n", path);
    goto done;
  }
  header[header_len] = '\0';
  const char* descr = strstr(header, "'descr':");
  const char* shape = strstr(header, "'shape':");
  if (!descr || !shape || strstr(header, "'fortran_order': True")) {
    fprintf(stderr, "model: %s: only C-ordered arrays with a dtype and shape are read\n", path);
    goto done;
  }
  descr = strchr(descr + 8, '\'');
  const char* want = npy_descr(t->dtype);
  if (!descr || strncmp(descr + 2, want + 1, strlen(want) - 1) != 0 ||
      (descr[1] != want[0] && descr[1] != '|' && descr[1] != '=')) {
    fprintf(stderr, "model: %s: input \"%s\" wants dtype %s\n", path, t->name, want);
    goto done;
  }
  const char* p = strchr(shape, '(');
  int rank = 0;
  int64_t dims[16];
  while (p && *p && *p != ')' && rank < 16) {
    ++p;
    while (*p == ' ')
      ++p;
    if (*p == ')')
      break;
    char* end = NULL;
    dims[rank++] = strtoll(p, &end, 10);
    p = end;
    while (*p == ' ')
      ++p;
  }
  int same = rank == t->rank;
  for (int d = 0; same && d < rank; ++d)
    same = dims[d] == t->shape[d];
  if (!same) {
    fprintf(stderr, "model: %s: input \"%s\" has another shape than the model's\n", path,
            t->name);
    goto done;
  }
  if (fread(data, 1, (size_t)t->bytes, f) != t->bytes) {
    fprintf(stderr, "model: %s holds fewer than %llu bytes of data\n", path,
            (unsigned long long)t->bytes);
    goto done;
  }
  ok = 1;
done:
  fclose(f);
  return ok;
}

static int write_npy(const char* path, const lathe_tensor_info* t, const void* data) {
  char dict[512];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   npy_descr(t->dtype));
  for (int d = 0; d < t->rank; ++d)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s", (long long)t->shape[d],
                  d + 1 < t->rank ? " " : "");
  n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  while ((10 + n + 1) % 64 != 0)
    dict[n++] = ' ';
  dict[n++] = '\n';
  FILE* f = fopen(path, "wb");
  if (!f)
    return 0;
  const unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255),
                                  (unsigned char)(n >> 8)};
  int ok = fwrite(head, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n &&
           fwrite(data, 1, (size_t)t->bytes, f) == t->bytes;
  return fclose(f) == 0 && ok;
}

static double value_at(const lathe_tensor_info* t, const void* data, uint64_t i) {
  switch (t->dtype) {
  case LATHE_F32:
    return ((const float*)data)[i];
  case LATHE_F64:
    return ((const double*)data)[i];
  case LATHE_I8:
    return ((const int8_t*)data)[i];
  case LATHE_U8:
  case LATHE_BOOL:
    return ((const uint8_t*)data)[i];
  case LATHE_I16:
    return ((const int16_t*)data)[i];
  case LATHE_U16:
  case LATHE_F16:
  case LATHE_BF16:
    return ((const uint16_t*)data)[i];
  case LATHE_I32:
    return ((const int32_t*)data)[i];
  case LATHE_U32:
    return ((const uint32_t*)data)[i];
  case LATHE_I64:
    return (double)((const int64_t*)data)[i];
  case LATHE_U64:
    return (double)((const uint64_t*)data)[i];
  }
  return 0;
}

/* Inputs without a file: a fixed pattern in [-1, 1] (0/1 for integers). */
static void fill(const lathe_tensor_info* t, void* data) {
  const uint64_t n = t->bytes / lathe_dtype_size(t->dtype);
  for (uint64_t i = 0; i < n; ++i) {
    const double v = (double)((i * 7919u) % 2001u) / 1000.0 - 1.0;
    switch (t->dtype) {
    case LATHE_F32:
      ((float*)data)[i] = (float)v;
      break;
    case LATHE_F64:
      ((double*)data)[i] = v;
      break;
    default:
      memset((char*)data + i * lathe_dtype_size(t->dtype), 0, lathe_dtype_size(t->dtype));
      *((unsigned char*)data + i * lathe_dtype_size(t->dtype)) = (unsigned char)(i % 2);
    }
  }
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare_u64(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  int threads = 1, repeat = 1, profile = 0, files = 0;
  const char* out_dir = NULL;
  const char* paths[MODEL_INPUT_COUNT + 1];
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "-t") && a + 1 < argc)
      threads = atoi(argv[++a]);
    else if (!strcmp(argv[a], "-r") && a + 1 < argc)
      repeat = atoi(argv[++a]);
    else if (!strcmp(argv[a], "-o") && a + 1 < argc)
      out_dir = argv[++a];
    else if (!strcmp(argv[a], "-p"))
      profile = 1;
    else if (argv[a][0] == '-') {
      fprintf(stderr, "usage: %s [-t THREADS] [-r REPEAT] [-p] [-o DIR] [input.npy ...]\n",
              argv[0]);
      return 2;
    } else if (files < MODEL_INPUT_COUNT)
      paths[files++] = argv[a];
    else {
      fprintf(stderr, "model: %s takes %d inputs\n", MODEL_NAME, MODEL_INPUT_COUNT);
      return 2;
    }
  }
  if (files != 0 && files != MODEL_INPUT_COUNT) {
    fprintf(stderr, "model: give all %d inputs or none\n", MODEL_INPUT_COUNT);
    return 2;
  }
  if (repeat < 1)
    repeat = 1;
  lathe_set_threads(threads);

  const void* inputs[MODEL_INPUT_COUNT + 1];
  void* outputs[MODEL_OUTPUT_COUNT + 1];
  void* arena = buffer_for(MODEL_ARENA_BYTES);
  for (uint32_t i = 0; i < MODEL->input_count; ++i) {
    void* data = buffer_for(MODEL->inputs[i].bytes);
    if (!data)
      return 1;
    if (files) {
      if (!read_npy(paths[i], &MODEL->inputs[i], data))
        return 1;
    } else {
      fill(&MODEL->inputs[i], data);
    }
    inputs[i] = data;
  }
  for (uint32_t o = 0; o < MODEL->output_count; ++o)
    if (!(outputs[o] = buffer_for(MODEL->outputs[o].bytes)))
      return 1;

  uint64_t* times = (uint64_t*)calloc((size_t)repeat, sizeof(uint64_t));
  uint64_t* ticks = (uint64_t*)calloc(MODEL->call_count + 1u, sizeof(uint64_t));
  uint64_t* total = (uint64_t*)calloc(MODEL->call_count + 1u, sizeof(uint64_t));
  for (int r = repeat > 1 ? -1 : 0; r < repeat; ++r) { /* one warm-up run when timing */
    const uint64_t start = now_ns();
    const lathe_status s =
        lathe_run_timed(MODEL, arena, MODEL_ARENA_BYTES, inputs, outputs, profile ? now_ns : 0,
                        ticks);
    if (s != LATHE_OK) {
      fprintf(stderr, "model: %s\n", lathe_status_text(s));
      return 1;
    }
    if (r >= 0) {
      times[r] = now_ns() - start;
      for (uint32_t c = 0; profile && c < MODEL->call_count; ++c)
        total[c] += ticks[c];
    }
  }

  for (uint32_t o = 0; o < MODEL->output_count; ++o) {
    const lathe_tensor_info* t = &MODEL->outputs[o];
    const uint64_t n = t->bytes / lathe_dtype_size(t->dtype);
    double sum = 0;
    printf("output %u \"%s\" %s [", o, t->name, lathe_dtype_name(t->dtype));
    for (int d = 0; d < t->rank; ++d)
      printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    printf("]:");
    for (uint64_t i = 0; i < n; ++i) {
      sum += value_at(t, outputs[o], i);
      if (i < 8)
        printf(" %.6g", value_at(t, outputs[o], i));
    }
    printf("%s sum %.6g\n", n > 8 ? " ..." : "", sum);
    if (out_dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/output_%u.npy", out_dir, o);
      if (!write_npy(path, t, outputs[o])) {
        fprintf(stderr, "model: cannot write %s\n", path);
        return 1;
      }
    }
  }
  if (repeat > 1) {
    qsort(times, (size_t)repeat, sizeof times[0], compare_u64);
    printf("%d runs on %d thread(s): median %.3f ms, min %.3f ms\n", repeat, threads,
           (double)times[repeat / 2] / 1e6, (double)times[0] / 1e6);
  }
  for (uint32_t c = 0; profile && c < MODEL->call_count; ++c)
    printf("%-40s %10.4f ms\n", MODEL->calls[c].name, (double)total[c] / repeat / 1e6);
  return 0;
}
