#pragma once
// Loop IR kernels -> native code through LLVM. No LLVM headers here.
//
// Kernel ABI: every kernel is `void <kernel.name>(void** args)`, where args[i] is the base
// address of kernel.parameters()[i] (inputs, then outputs), laid out densely in the
// buffer's strides. Bool buffers hold one byte per element. Parallel loops call
// `lathe_parallel_for` (engine/runtime), which the host must provide.

#include "engine/loop_ir/ir.h"
#include "engine/target/target.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lathe::codegen {

struct CodegenOptions {
  target::Target target; // "llvm" = the host
  bool keepText = false; // keep LLVM IR before/after optimisation and assembly per kernel
};

// One CUDA launch of a kernel (CUDA targets): its entry function in the PTX, the grid and
// block it is launched with, and what ptxas reported for it (-1: ptxas did not run).
struct GpuFunctionCode {
  std::string name;
  std::int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  int registers = -1, sharedBytes = -1, stackBytes = -1, spillStores = -1, spillLoads = -1;
};

struct KernelCode {
  std::string name;
  std::string llvmIr;          // before optimisation
  std::string llvmIrOptimized; // after
  std::string assembly;
  // Per line of `assembly`: the line of the kernel's loop IR (loop::toString) it came from,
  // 0 where none is known.
  std::vector<int> assemblyLoopLines;
  // The same per line of llvmIr and of llvmIrOptimized.
  std::vector<int> llvmIrLoopLines, llvmIrOptimizedLoopLines;
  // Bytes of machine code of the kernel's functions (itself, its bodies and outlined loops),
  // from the symbol sizes of the object LLVM emitted; 0 where the object does not say.
  std::uint64_t codeBytes = 0;
  // CUDA targets: `assembly` is the PTX; the launches, run in order, with their device
  // buffers (name, bytes) between them; why ptxas did not run (empty when it did).
  std::vector<GpuFunctionCode> gpuFunctions;
  std::vector<std::pair<std::string, std::int64_t>> gpuScratch;
  std::string ptxasLog;
};

using KernelFunction = void (*)(void** args);

// Kernels compiled in memory for this machine.
class JitKernels {
public:
  virtual ~JitKernels() = default;
  virtual KernelFunction function(const std::string& name) const = 0;
  // One entry per kernel, in order: its code size always, its texts with keepText.
  const std::vector<KernelCode>& code() const { return code_; }

protected:
  std::vector<KernelCode> code_;
};

// Throws lathe::Error on an unusable target or a kernel the emitter cannot handle.
std::unique_ptr<JitKernels> jitKernels(const std::vector<loop::Kernel>& kernels,
                                       const CodegenOptions& options);

// `code` has one entry per kernel, in order: its sizes always, its texts with keepText.
struct ObjectCode {
  std::string object; // an ELF/Wasm object file for options.target
  std::vector<KernelCode> code;
};
ObjectCode compileToObject(const std::vector<loop::Kernel>& kernels, const CodegenOptions& options);

} // namespace lathe::codegen
