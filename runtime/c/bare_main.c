/* An example program for a model exported by `lathe export` for a Cortex-M board. It talks
 * to the host through Arm semihosting (QEMU, or a debug probe): it reads the inputs from
 * .npy files on the host (a fixed pattern without them), runs the model on a static arena,
 * prints each output's shape, first values and sum, and with -o writes the outputs as
 * output_<i>.npy into an existing folder.
 *
 *   qemu-system-arm -M BOARD -nographic -semihosting-config enable=on,target=native \
 *       -kernel model.elf -append "[-o DIR] [input_0.npy ...]"
 *
 * No libc: everything it needs is here, in startup.c and in the freestanding runtime. */
#include "model.h"

int semihost_call(int op, void* arg); /* startup.c */

enum {
  SYS_OPEN = 0x01,
  SYS_CLOSE = 0x02,
  SYS_WRITE0 = 0x04,
  SYS_WRITE = 0x05,
  SYS_READ = 0x06,
  SYS_GET_CMDLINE = 0x15
};

static _Alignas(64) unsigned char arena[MODEL_ARENA_BYTES];
static _Alignas(64) unsigned char io[MODEL_IO_BYTES];

/* ---- text out ---------------------------------------------------------------------------- */

static char line[160];
static unsigned line_len;

static void flush(void) {
  line[line_len] = '\0';
  if (line_len)
    semihost_call(SYS_WRITE0, line);
  line_len = 0;
}
static void put(const char* s) {
  while (*s) {
    if (line_len + 1 >= sizeof line)
      flush();
    line[line_len++] = *s++;
  }
}
static void put_u(uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v);
  char s[2] = {0, 0};
  while (n--) {
    s[0] = digits[n];
    put(s);
  }
}
static void put_i(int64_t v) {
  if (v < 0) {
    put("-");
    v = -v;
  }
  put_u((uint64_t)v);
}
/* d.ddddde+XX: six significant digits, as printf's %.6g would be close to. */
static void put_f(double v) {
  if (v != v) {
    put("nan");
    return;
  }
  if (v < 0) {
    put("-");
    v = -v;
  }
  if (v > 1.7e308) {
    put("inf");
    return;
  }
  if (v == 0) {
    put("0");
    return;
  }
  int e = 0;
  while (v >= 10) {
    v /= 10;
    ++e;
  }
  while (v < 1) {
    v *= 10;
    --e;
  }
  uint32_t digits = (uint32_t)(v * 100000.0 + 0.5);
  if (digits >= 1000000u) {
    digits /= 10u;
    ++e;
  }
  char s[8] = {0};
  for (int i = 6; i >= 2; --i, digits /= 10u)
    s[i] = (char)('0' + digits % 10u);
  s[0] = (char)('0' + digits);
  s[1] = '.';
  put(s);
  put(e < 0 ? "e-" : "e+");
  if ((e < 0 ? -e : e) < 10)
    put("0");
  put_u((uint64_t)(e < 0 ? -e : e));
}

/* Stops the program (startup.c turns main's result into the emulator's exit status). */
void lathe_panic(const char* message) {
  flush();
  put("lathe runtime: ");
  put(message);
  put("\n");
  flush();
  semihost_call(0x18, (void*)0x20023u);
  for (;;) {
  }
}

/* ---- the host's files ---------------------------------------------------------------------- */

static unsigned length(const char* s) {
  unsigned n = 0;
  while (s[n])
    ++n;
  return n;
}
static int starts(const char* s, const char* prefix) {
  while (*prefix)
    if (*s++ != *prefix++)
      return 0;
  return 1;
}
static const char* find(const char* s, const char* what) {
  for (; *s; ++s)
    if (starts(s, what))
      return s;
  return 0;
}

static int host_open(const char* path, int mode) { /* mode 1: "rb", 5: "wb" */
  uintptr_t block[3] = {(uintptr_t)path, (uintptr_t)mode, length(path)};
  return semihost_call(SYS_OPEN, block);
}
static int host_read(int file, void* data, uint32_t bytes) { /* 1 when all were read */
  uintptr_t block[3] = {(uintptr_t)file, (uintptr_t)data, bytes};
  return semihost_call(SYS_READ, block) == 0;
}
static int host_write(int file, const void* data, uint32_t bytes) {
  uintptr_t block[3] = {(uintptr_t)file, (uintptr_t)data, bytes};
  return semihost_call(SYS_WRITE, block) == 0;
}
static void host_close(int file) {
  uintptr_t block[1] = {(uintptr_t)file};
  semihost_call(SYS_CLOSE, block);
}

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

static int fail(const char* path, const char* why) {
  put("model: ");
  put(path);
  put(": ");
  put(why);
  put("\n");
  flush();
  return 0;
}

/* Reads a version-1 .npy file whose dtype and shape are the tensor's into `data`. */
static int read_npy(const char* path, const lathe_tensor_info* t, void* data) {
  static char header[256];
  const int file = host_open(path, 1);
  if (file < 0)
    return fail(path, "cannot open it");
  int ok = 0;
  unsigned char magic[10];
  if (!host_read(file, magic, 10) || !starts((const char*)magic + 1, "NUMPY") || magic[0] != 0x93 ||
      magic[6] != 1) {
    fail(path, "not a version-1 .npy file");
    goto done;
  }
  const unsigned header_len = (unsigned)magic[8] | (unsigned)magic[9] << 8;
  if (header_len >= sizeof header || !host_read(file, header, header_len)) {
    fail(path, "a header this example cannot read");
    goto done;
  }
  header[header_len] = '\0';
  const char* descr = find(header, "'descr': '");
  const char* shape = find(header, "'shape': (");
  if (!descr || !shape || find(header, "'fortran_order': True")) {
    fail(path, "only C-ordered arrays with a dtype and shape are read");
    goto done;
  }
  const char* want = npy_descr(t->dtype);
  if (!starts(descr + 11, want + 1) || (descr[10] != want[0] && descr[10] != '|')) {
    fail(path, "another dtype than the input's");
    goto done;
  }
  const char* p = shape + 10;
  int32_t rank = 0;
  int same = 1;
  while (*p && *p != ')') {
    int64_t d = 0;
    while (*p >= '0' && *p <= '9')
      d = d * 10 + (*p++ - '0');
    same = same && rank < t->rank && t->shape[rank] == d;
    ++rank;
    while (*p == ',' || *p == ' ' || *p == 'L')
      ++p;
  }
  if (!same || rank != t->rank) {
    fail(path, "another shape than the input's");
    goto done;
  }
  if (!host_read(file, data, (uint32_t)t->bytes)) {
    fail(path, "fewer bytes of data than the input has");
    goto done;
  }
  ok = 1;
done:
  host_close(file);
  return ok;
}

static int write_npy(const char* path, const lathe_tensor_info* t, const void* data) {
  static char dict[192];
  unsigned n = 0;
  const char* parts[] = {"{'descr': '", npy_descr(t->dtype),
                         "', 'fortran_order': False, 'shape': ("};
  for (unsigned i = 0; i < 3; ++i)
    for (const char* s = parts[i]; *s;)
      dict[n++] = *s++;
  for (int32_t d = 0; d < t->rank; ++d) {
    char digits[24];
    int k = 0;
    uint64_t v = (uint64_t)t->shape[d];
    do {
      digits[k++] = (char)('0' + v % 10u);
      v /= 10u;
    } while (v);
    while (k--)
      dict[n++] = digits[k];
    dict[n++] = ',';
    if (d + 1 < t->rank)
      dict[n++] = ' ';
  }
  for (const char* s = "), }"; *s;)
    dict[n++] = *s++;
  while ((10 + n + 1) % 64 != 0)
    dict[n++] = ' ';
  dict[n++] = '\n';
  const unsigned char head[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255), (unsigned char)(n >> 8)};
  const int file = host_open(path, 5);
  if (file < 0)
    return 0;
  const int ok = host_write(file, head, 10) && host_write(file, dict, n) &&
                 host_write(file, data, (uint32_t)t->bytes);
  host_close(file);
  return ok;
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
  case LATHE_I32:
    return ((const int32_t*)data)[i];
  case LATHE_I64:
    return (double)((const int64_t*)data)[i];
  default:
    return ((const uint16_t*)data)[i];
  }
}

/* Inputs without a file: a fixed pattern in [-1, 1] (0/1 for integers), as main.c's. */
static void fill(const lathe_tensor_info* t, void* data) {
  const uint64_t n = t->bytes / lathe_dtype_size(t->dtype);
  for (uint64_t i = 0; i < n; ++i) {
    const double v = (double)((i * 7919u) % 2001u) / 1000.0 - 1.0;
    if (t->dtype == LATHE_F32)
      ((float*)data)[i] = (float)v;
    else if (t->dtype == LATHE_F64)
      ((double*)data)[i] = v;
    else
      ((unsigned char*)data)[i * lathe_dtype_size(t->dtype)] = (unsigned char)(i % 2);
  }
}

int main(void) {
  static char cmdline[512];
  uintptr_t block[2] = {(uintptr_t)cmdline, sizeof cmdline - 1};
  if (semihost_call(SYS_GET_CMDLINE, block) != 0)
    cmdline[0] = '\0';
  /* argv[0] (the program), then options and input files, separated by spaces. */
  const char* out_dir = 0;
  const char* paths[MODEL_INPUT_COUNT + 1];
  int files = 0, word = 0;
  for (char* p = cmdline; *p;) {
    while (*p == ' ')
      *p++ = '\0';
    if (!*p)
      break;
    char* arg = p;
    while (*p && *p != ' ')
      ++p;
    if (*p)
      *p++ = '\0';
    if (word++ == 0)
      continue;
    if (arg[0] == '-' && arg[1] == 'o' && !arg[2]) {
      while (*p == ' ')
        ++p;
      out_dir = p;
      while (*p && *p != ' ')
        ++p;
      if (*p)
        *p++ = '\0';
    } else if (arg[0] == '-') {
      put("usage: model.elf [-o DIR] [input.npy ...]\n");
      flush();
      return 2;
    } else if (files < MODEL_INPUT_COUNT) {
      paths[files++] = arg;
    } else {
      put("model: " MODEL_NAME " takes fewer inputs\n");
      flush();
      return 2;
    }
  }
  if (files != 0 && files != MODEL_INPUT_COUNT) {
    put("model: give all inputs or none\n");
    flush();
    return 2;
  }

  const void* inputs[MODEL_INPUT_COUNT + 1];
  void* outputs[MODEL_OUTPUT_COUNT + 1];
  unsigned char* next = io;
  for (uint32_t i = 0; i < MODEL->input_count; ++i) {
    inputs[i] = next;
    if (files ? !read_npy(paths[i], &MODEL->inputs[i], next) : (fill(&MODEL->inputs[i], next), 0))
      return 1;
    next += (MODEL->inputs[i].bytes + 63u) / 64u * 64u;
  }
  for (uint32_t o = 0; o < MODEL->output_count; ++o) {
    outputs[o] = next;
    next += (MODEL->outputs[o].bytes + 63u) / 64u * 64u;
  }
  const lathe_status s = lathe_run(MODEL, arena, sizeof arena, inputs, outputs);
  if (s != LATHE_OK) {
    put("model: ");
    put(lathe_status_text(s));
    put("\n");
    flush();
    return 1;
  }

  for (uint32_t o = 0; o < MODEL->output_count; ++o) {
    const lathe_tensor_info* t = &MODEL->outputs[o];
    const uint64_t n = t->bytes / lathe_dtype_size(t->dtype);
    double sum = 0;
    put("output ");
    put_u(o);
    put(" \"");
    put(t->name);
    put("\" ");
    put(lathe_dtype_name(t->dtype));
    put(" [");
    for (int32_t d = 0; d < t->rank; ++d) {
      if (d)
        put(", ");
      put_i(t->shape[d]);
    }
    put("]:");
    for (uint64_t i = 0; i < n; ++i) {
      sum += value_at(t, outputs[o], i);
      if (i < 8) {
        put(" ");
        put_f(value_at(t, outputs[o], i));
      }
    }
    put(n > 8 ? " ... sum " : " sum ");
    put_f(sum);
    put("\n");
    flush();
    if (out_dir) {
      static char path[320];
      unsigned k = 0;
      for (const char* c = out_dir; *c && k < 280;)
        path[k++] = *c++;
      for (const char* c = "/output_"; *c;)
        path[k++] = *c++;
      path[k++] = (char)('0' + o % 10u);
      for (const char* c = ".npy"; *c;)
        path[k++] = *c++;
      path[k] = '\0';
      if (o >= 10 || !write_npy(path, t, outputs[o])) {
        fail(path, "cannot write it");
        return 1;
      }
    }
  }
  return 0;
}
