#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Forms fused groups: an anchor op (Conv, ConvTranspose, Gemm, MatMul) followed by a chain
// of elementwise ops, each consuming the previous result, becomes one group (one kernel).
// Groups are kept consecutive in the node order.
bool fuseElementwise(graph::Graph& graph);

} // namespace lathe::passes
