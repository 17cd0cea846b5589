#pragma once
// ONNX Slice semantics for one axis, shared by shape inference, constant folding and
// lowering so that they cannot disagree.
#include <cstdint>

namespace lathe::graph {

// One axis of a Slice after ONNX's clamping: `count` elements at start, start+step, ...
struct SliceAxis {
  std::int64_t start = 0;
  std::int64_t step = 1;
  std::int64_t count = 0;
};

// Clamps start/end (negative values count from the end) for a non-zero step.
SliceAxis clampSlice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step);

} // namespace lathe::graph
