#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Computes element types and shapes of node outputs from their inputs, attributes and
// constant inputs. Only makes types more specific (unknown -> known); returns true if any
// type changed.
bool inferShapes(graph::Graph& graph);

} // namespace lathe::passes
