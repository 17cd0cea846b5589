#pragma once
#include "engine/graph/graph.h"
#include "engine/lowering/lowered_model.h"

namespace lathe::lowering {

// Lowers every node (each fused group into ONE kernel named after the group) to loop IR.
// The graph must have static shapes. Throws lathe::Error (Unsupported) naming the node
// for ops without a lowering.
LoweredModel lowerGraph(const graph::Graph& graph);

} // namespace lathe::lowering
