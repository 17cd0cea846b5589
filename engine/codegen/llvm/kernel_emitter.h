#pragma once
// Loop IR -> LLVM IR for one kernel (internal to engine/codegen/llvm).
#include "engine/loop_ir/ir.h"

#include <llvm/IR/Module.h>

namespace lathe::codegen {

// Adds `void <kernel.name>(void** args)` (and helpers it needs) to `module`.
void emitKernel(const loop::Kernel& kernel, llvm::Module& module);

} // namespace lathe::codegen
