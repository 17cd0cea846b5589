#pragma once
#include "engine/graph/graph.h"
#include "engine/lowering/lowered_model.h"

namespace lathe::lowering {

// What the default schedules may assume of the target.
struct LoweringOptions {
  // Width of the target's vector registers (512 for AVX-512, 256 for AVX2, 128 for NEON);
  // 0 keeps to schedules that leave vectorization to LLVM.
  int vectorBits = 0;
  // The target is a GPU: Conv, pooling and matrix products lower to plain nests (outer
  // loops over the output elements, each summing into a scalar) that the GPU default
  // trace spreads over blocks and threads, instead of the CPU's tiles and planes.
  bool gpu = false;
};

// Lowers every node (each fused group into ONE kernel named after the group) to loop IR.
// The graph must have static shapes. Throws lathe::Error (Unsupported) naming the node
// for ops without a lowering.
LoweredModel lowerGraph(const graph::Graph& graph, const LoweringOptions& options = {});

} // namespace lathe::lowering
