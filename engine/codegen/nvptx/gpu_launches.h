#pragma once
// A scheduled kernel as CUDA launches (no LLVM here). Blocks of one launch cannot wait for
// each other, so each top-level nest of the kernel is a launch of its own, run in order;
// buffers allocated around the nests live between launches and become device memory
// (scratch) passed to every launch after the kernel's own parameters.

#include "engine/loop_ir/ir.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace lathe::codegen::nvptx {

struct GpuLaunch {
  loop::Kernel kernel; // parameters: the kernel's inputs, outputs, then the scratch buffers
  std::array<std::int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
};

struct GpuScratch {
  std::string name;
  std::int64_t bytes = 0;
};

struct GpuKernelPlan {
  std::vector<GpuLaunch> launches;
  std::vector<GpuScratch> scratch;
};

// Throws lathe::Error (Unsupported) naming the kernel when a launch's threads per block pass
// 1024 or a scratch buffer has no constant size.
GpuKernelPlan planLaunches(const loop::Kernel& kernel);

} // namespace lathe::codegen::nvptx
