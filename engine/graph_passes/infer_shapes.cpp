#include "engine/graph_passes/infer_shapes.h"

#include "engine/graph_passes/shape_rules.h"

namespace lathe::passes {
namespace {

using graph::Dim;
using graph::TensorType;

// Takes from `inferred` only what `current` does not know yet: a declared type (from the
// model or an earlier pass) is never contradicted, only completed.
bool refine(TensorType& current, const TensorType& inferred) {
  bool changed = false;
  if (current.dtype == graph::DType::Undefined && inferred.dtype != graph::DType::Undefined) {
    current.dtype = inferred.dtype;
    changed = true;
  }
  if (!inferred.shape)
    return changed;
  if (!current.shape) {
    current.shape = inferred.shape;
    return true;
  }
  if (current.shape->size() != inferred.shape->size())
    return changed;
  for (std::size_t i = 0; i < current.shape->size(); ++i) {
    Dim& have = (*current.shape)[i];
    const Dim& got = (*inferred.shape)[i];
    const bool moreSpecific = (!have.isKnown() && got.isKnown()) ||
                              (!have.isKnown() && !have.isSymbolic() && got.isSymbolic());
    if (moreSpecific) {
      have = got;
      changed = true;
    }
  }
  return changed;
}

} // namespace

bool inferShapes(graph::Graph& graph) {
  bool changed = false;
  // Nodes are in topological order, so every input type is final when its user is reached.
  for (const auto& node : graph.nodes()) {
    const auto types = inferOutputTypes(*node);
    if (!types)
      continue;
    for (std::size_t i = 0; i < types->size() && i < node->outputs().size(); ++i)
      if (graph::Value* out = node->output(i))
        changed = refine(out->type, (*types)[i]) || changed;
  }
  return changed;
}

} // namespace lathe::passes
