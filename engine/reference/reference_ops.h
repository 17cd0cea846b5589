#pragma once
// Lathe's reference kernels: one ONNX node evaluated from constant inputs by plain loops in
// double precision, its results rounded to the output types. Slow and simple on purpose:
// `lathe compare` checks compiled models against them. They share only the shape rules and
// the constant evaluator (data movement, arithmetic, casts) with the compiler.

#include "engine/graph/graph.h"

#include <string>
#include <vector>

namespace lathe::reference {

struct NodeEvaluation {
  std::vector<graph::TensorData> outputs; // one per output; an absent output's is empty
  std::string refusal;                    // why the node could not be evaluated
  bool ok() const { return refusal.empty(); }
};

// Every present input of `node` must be a constant with known bytes. An op or a variant the
// reference does not implement comes back as a refusal; an inconsistent node throws
// lathe::Error (Invalid) from the shape rules.
NodeEvaluation evaluateNode(const graph::Node& node);

} // namespace lathe::reference
