#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Replaces nodes whose inputs are all constants (and Shape/Size of statically shaped
// values) by constants computed at compile time, and turns Constant nodes into constants.
// Only small results are folded, so weights are never duplicated.
bool foldConstants(graph::Graph& graph);

} // namespace lathe::passes
