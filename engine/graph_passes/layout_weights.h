#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Stores constant weights in the layout the kernels read fastest: a Gemm with transB = 1
// and a constant B (read by nothing else) gets B transposed at compile time and transB = 0,
// so that its rows are contiguous in the output columns (the register-tiled product and
// the vectorized column loop both need that).
bool layoutWeights(graph::Graph& graph);

} // namespace lathe::passes
