#pragma once
// ONNX axis attributes and inputs: negative values count from the last dim. One rule for
// the shape rules, the constant evaluator, lowering and the reference interpreter.
#include "engine/graph/graph.h"

#include <cstdint>

namespace lathe::graph {

// `axis` in [-rank, rank) mapped to [0, rank); throws lathe::Error (Invalid) naming the
// node otherwise. A scalar (rank 0) has no axis.
std::int64_t normalizeAxis(const Node& node, std::int64_t axis, std::int64_t rank);

} // namespace lathe::graph
