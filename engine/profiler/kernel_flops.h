#pragma once
// Floating-point operations per kernel call, for the profile's GFLOP/s and % of peak
// columns. Kept out of lowering: it only reads node types and shapes.
#include "engine/graph/graph.h"

#include <string>
#include <vector>

namespace lathe::profiler {

// 2 x multiply-accumulates of a Conv, ConvTranspose, MatMul or Gemm node with static shapes;
// 0 for every other node (their arithmetic is small next to memory traffic).
double estimateNodeFlops(const graph::Node& node);

// Per call: the summed estimate of the nodes it computes, found by name in `graph` (0 for a
// call whose nodes are unnamed or not in the graph).
std::vector<double> estimateCallFlops(const graph::Graph& graph,
                                      const std::vector<std::vector<std::string>>& callNodes);

} // namespace lathe::profiler
