#include "engine/graph_passes/infer_shapes.h"

#include "engine/graph_passes/shape_rules.h"

namespace lathe::passes {

bool inferShapes(graph::Graph& graph) {
  bool changed = false;
  // Nodes are in topological order, so every input type is final when its user is reached.
  for (const auto& node : graph.nodes())
    changed = refineOutputTypes(*node) || changed;
  return changed;
}

} // namespace lathe::passes
