#pragma once
// Per-op shape rules for graph IR nodes (ONNX opset 17 semantics). infer-shapes applies them
// to every node; the constant evaluator uses them to size its results, so an op's output
// shape is computed in exactly one place.

#include "engine/graph/axis.h"
#include "engine/graph/graph.h"
#include "engine/graph/slice_bounds.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace lathe::passes {

// The output types of `node` computed from its input types, attributes and constant inputs:
// one entry per output (absent outputs included), as specific as the inputs allow. nullopt
// when no rule applies (unknown op, missing constant operands). Throws lathe::Error
// (Invalid), naming the node, when the inputs are definitely inconsistent.
std::optional<std::vector<graph::TensorType>> inferOutputTypes(const graph::Node& node);

// Applies inferOutputTypes to the node's outputs, taking only what they do not know yet: a
// declared type (from the model or an earlier pass) is completed, never contradicted.
// Returns whether any output type changed.
bool refineOutputTypes(graph::Node& node);

using graph::normalizeAxis; // engine/graph/axis.h

// Transpose's permutation (the attribute, or reversed axes by default), checked.
std::vector<std::int64_t> transposePermutation(const graph::Node& node, std::int64_t rank);

// The axes a Reduce* node reduces, sorted and normalized, for an input of `rank`: from the
// axes input or attribute, all axes when none are given, none when noop_with_empty_axes
// applies. nullopt when the axes come from a non-constant input.
std::optional<std::vector<std::int64_t>> reductionAxes(const graph::Node& node, std::int64_t rank);

using graph::clampSlice; // engine/graph/slice_bounds.h
using graph::SliceAxis;

// A Slice node's constant starts/ends/axes/steps with axes normalized against `rank`;
// nullopt when starts, ends, axes or steps are not constants. Throws Invalid on zero steps,
// repeated axes or mismatched lengths.
struct SliceParameters {
  std::vector<std::int64_t> starts, ends, axes, steps;
};
std::optional<SliceParameters> sliceParameters(const graph::Node& node, std::int64_t rank);

} // namespace lathe::passes
