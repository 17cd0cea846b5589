#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Merges nodes with the same op, domain, inputs and attributes (and identical constants)
// into the first one.
bool eliminateCommonSubexpressions(graph::Graph& graph);

} // namespace lathe::passes
