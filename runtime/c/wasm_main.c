/* The entry points a JavaScript host calls in an exported model's model.wasm (see main.js):
 * memory for inputs, outputs and the arena from a bump allocator over the module's heap
 * (grown as needed), and a run. Built freestanding: no libc, no WASI. */
#include "model.h"

extern unsigned char __heap_base;
static uintptr_t lathe_wasm_top;

/* `bytes` of memory, 64-byte aligned and zeroed (fresh pages are); 0 when memory cannot
 * grow. Never freed: the host allocates once per tensor. */
__attribute__((export_name("lathe_wasm_alloc"))) void* lathe_wasm_alloc(uint32_t bytes) {
  if (!lathe_wasm_top)
    lathe_wasm_top = ((uintptr_t)&__heap_base + 63u) & ~(uintptr_t)63u;
  const uintptr_t start = lathe_wasm_top;
  const uintptr_t end = start + (((uintptr_t)bytes + 63u) & ~(uintptr_t)63u);
  const uintptr_t have = (uintptr_t)__builtin_wasm_memory_size(0) * 65536u;
  if (end > have &&
      __builtin_wasm_memory_grow(0, (end - have + 65535u) / 65536u) == (__SIZE_TYPE__)-1)
    return 0;
  lathe_wasm_top = end;
  return (void*)start;
}

/* Runs the model: `inputs` and `outputs` are tables of addresses in this memory. */
__attribute__((export_name("lathe_wasm_run"))) int lathe_wasm_run(const void* const* inputs,
                                                                 void* const* outputs,
                                                                 void* arena) {
  return (int)lathe_run(MODEL, arena, MODEL_ARENA_BYTES, inputs, outputs);
}
