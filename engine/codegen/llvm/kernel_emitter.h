#pragma once
// Loop IR -> LLVM IR for one kernel (internal to engine/codegen/llvm).
#include "engine/loop_ir/ir.h"
#include "engine/loop_ir/ir_printer.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/Module.h>

namespace lathe::codegen {

// Debug locations for the code of a module's kernels: each instruction carries the line of
// the kernel's loop IR text (loop::toString(kernel, &lines)) its statement starts on, in a
// file named KERNEL.loop, so that assembly lines lead back to loop IR lines (`.loc`).
class KernelDebugInfo {
public:
  explicit KernelDebugInfo(llvm::Module& module);
  // Resolves the debug metadata; call once, after the last kernel.
  void finalize();
  llvm::DIBuilder& builder() { return builder_; }
  llvm::DICompileUnit* unit() const { return unit_; }

private:
  llvm::DIBuilder builder_;
  llvm::DICompileUnit* unit_;
};

// Adds `void <kernel.name>(void** args)` (and helpers it needs) to `module`; with `debug`,
// its instructions carry the loop IR lines in `lines`.
void emitKernel(const loop::Kernel& kernel, llvm::Module& module, KernelDebugInfo* debug = nullptr,
                const loop::StmtLines* lines = nullptr);

// Adds the CUDA kernel `void <kernel.name>(ptr noalias ...)`, one pointer per parameter, for
// an NVPTX module: loops bound to blockIdx/threadIdx read those registers instead of
// iterating. Throws lathe::Error (Unsupported) for what a GPU kernel cannot do here: parallel
// loops, heap allocations, calls to external functions.
void emitGpuKernel(const loop::Kernel& kernel, llvm::Module& module);

} // namespace lathe::codegen
