#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Stores constant weights in the layout the kernels read fastest: a Gemm with transB = 1
// and a constant B (read by nothing else) gets B transposed at compile time and transB = 0,
// so that its rows are contiguous in the output columns (the register-tiled product and
// the vectorized column loop both need that). A Conv whose window covers its whole input
// once (a fully connected layer written as a Conv, its output one position per image)
// becomes Reshape, Gemm with the weights transposed the same way, and Reshape: as a Conv its
// rows of weights could only be read across output channels one element at a time.
bool layoutWeights(graph::Graph& graph);

} // namespace lathe::passes
