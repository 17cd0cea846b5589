#pragma once
// Loop IR kernels -> PTX through LLVM's NVPTX backend, each assembled by ptxas when the CUDA
// Toolkit is there. No LLVM headers here.

#include "engine/codegen/llvm/compiler.h"

#include <vector>

namespace lathe::codegen::nvptx {

struct PtxModule {
  std::string ptx;      // one module: every launch of every kernel, an entry function each
  std::string cubin;    // ptxas's output, when it ran
  std::string ptxasLog; // what ptxas printed, or why it did not run
  // One entry per kernel, in order: `assembly` holds its entry functions' PTX,
  // `gpuFunctions` its launches with ptxas's figures; with keepText also the LLVM IR of its
  // functions before and after optimisation.
  std::vector<KernelCode> code;
};

// Throws lathe::Error (Unsupported) naming the kernel for what has no
// GPU code here (a parallel loop, a heap buffer inside a nest, f64 transcendental
// functions, calls to the host), (Internal) when ptxas refuses the PTX.
PtxModule compileToPtx(const std::vector<loop::Kernel>& kernels, const CodegenOptions& options);

} // namespace lathe::codegen::nvptx
