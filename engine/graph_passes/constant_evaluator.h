#pragma once
// Compile-time evaluation of graph IR nodes whose inputs are constants, for fold-constants.
// Covers the ops that show up in shape computations and small constant subgraphs; weights
// and other large tensors are left to the runtime.

#include "engine/graph/graph.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace lathe::passes {

// The tensor a Constant node holds (value, value_float(s) or value_int(s)), at any size.
// nullopt for string and sparse constants.
std::optional<graph::TensorData> constantNodeValue(const graph::Node& node);

// The outputs of `node`, one per output, computed at compile time from its constant inputs
// (absent optional inputs are fine). Shape and Size only need their input's type to be static
// enough. nullopt when the op is not supported, an input is not a constant with known bytes,
// an output would have more than `maxElements` elements, an element type is f16/bf16 for
// arithmetic, or the result would be ill-defined (integer division by zero, an index or a
// cast out of range). Shapes come from the shape rules, so invalid nodes throw lathe::Error.
std::optional<std::vector<graph::TensorData>> evaluateConstantNode(const graph::Node& node,
                                                                   std::int64_t maxElements);

} // namespace lathe::passes
