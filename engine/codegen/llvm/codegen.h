#pragma once
// engine/codegen/llvm: the only place that includes LLVM headers. This header does not;
// it is what the rest of the engine sees.

#include "engine/target/target.h"

#include <string>

namespace lathe::codegen {

std::string llvmVersion();
std::string hostTriple();
std::string hostCpuName();     // e.g. "znver4"
std::string hostCpuFeatures(); // "+avx2,-avx512fp16,+fma,...": what this CPU has and lacks

// The target with every field filled in (host triple, cpu and features resolved).
target::Target resolveTarget(const target::Target& target);

// The width in bits of the widest vector registers `target` has for f32 arithmetic
// (512 with AVX-512, 256 with AVX/AVX2, 128 with SSE, NEON or wasm SIMD; 0 without).
int vectorBits(const target::Target& target);

// Whether code for `target` runs in this process: the host's triple, and no instruction set
// extension this CPU lacks (x86-64-v4 code on a CPU without AVX-512 does not).
bool runsOnHost(const target::Target& target);

// Whether LLVM can generate code for `target`; if not, `why` says what is missing.
bool targetAvailable(const target::Target& target, std::string* why = nullptr);

} // namespace lathe::codegen
