#pragma once
// General constant folding. Nodes whose inputs are all constants
// (what the fold-constants pass leaves: large results and ops its interpreter does not
// know) are compiled and run once, on this machine, and replaced by their results.
#include "engine/graph/graph.h"

namespace lathe::driver {

// Returns the number of nodes folded. The graph must have static shapes where folded.
std::size_t foldConstantSubgraphs(graph::Graph& graph);

} // namespace lathe::driver
