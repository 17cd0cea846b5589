#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Replaces an If whose condition is a compile-time constant by the nodes of the branch it
// takes (a sample rate compiled in by value decides which branch a speech model runs), so
// the branch's shapes become known and its nodes fuse like any others. Ifs inside
// subgraphs are inlined into their own subgraph.
bool inlineConstantIfs(graph::Graph& graph);

} // namespace lathe::passes
