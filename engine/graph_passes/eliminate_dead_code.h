#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Removes nodes whose outputs no graph output depends on, and unused constants.
bool eliminateDeadCode(graph::Graph& graph);

} // namespace lathe::passes
