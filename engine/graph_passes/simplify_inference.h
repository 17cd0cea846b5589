#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Removes ops that are no-ops at inference: Identity, and Dropout whose mask output is
// unused. Uses of their output are redirected to their input.
bool simplifyForInference(graph::Graph& graph);

} // namespace lathe::passes
