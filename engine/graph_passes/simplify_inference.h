#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Removes ops that are no-ops at inference: Identity, and Dropout whose mask output is
// unused. Uses of their output are redirected to their input. A Transpose that undoes the
// Transpose feeding it is bypassed the same way (dead-code elimination removes the pair).
bool simplifyForInference(graph::Graph& graph);

} // namespace lathe::passes
