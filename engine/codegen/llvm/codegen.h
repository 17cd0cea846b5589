#pragma once
// engine/codegen/llvm: the only place that includes LLVM headers. This header does not;
// it is what the rest of the engine sees.

#include "engine/target/target.h"

#include <string>

namespace lathe::codegen {

std::string llvmVersion();
std::string hostTriple();
std::string hostCpuName();     // e.g. "znver4"
std::string hostCpuFeatures(); // "+avx2,+fma,..." as LLVM sees this CPU

// The target with every field filled in (host triple, cpu and features resolved).
target::Target resolveTarget(const target::Target& target);

// Whether LLVM can generate code for `target`; if not, `why` says what is missing.
bool targetAvailable(const target::Target& target, std::string* why = nullptr);

} // namespace lathe::codegen
