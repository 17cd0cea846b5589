#pragma once
// Helpers shared by constant_evaluator.cpp (data movement, dispatch) and
// constant_evaluator_math.cpp (arithmetic). Not part of any pass interface.

#include "engine/graph/graph.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace lathe::passes::eval {

using graph::DType;
using graph::Node;
using graph::TensorData;
using graph::TensorType;
using Dims = std::vector<std::int64_t>;
using Result = std::optional<TensorData>;
// Computes one op's single output; `out` is its static type from the shape rules.
using Evaluator = Result (*)(const Node& node, const TensorType& out);

std::int64_t product(const Dims& dims);
// Input i when it is a constant whose bytes are known, else nullptr.
const TensorData* constantData(const Node& n, std::size_t i);
// Element types the evaluator does arithmetic on (16-bit floats are not re-encoded).
bool isArithmetic(DType t);
bool isUnsigned(DType t);
Dims stridesOf(const Dims& dims);

// Calls f(coordinate) for every element of `dims`, in row-major order.
template <typename F>
void forEachCoordinate(const Dims& dims, F&& f) {
  const std::int64_t count = product(dims);
  Dims c(dims.size(), 0);
  for (std::int64_t flat = 0; flat < count; ++flat) {
    f(c);
    for (std::size_t k = dims.size(); k-- > 0;) {
      if (++c[k] < dims[k])
        break;
      c[k] = 0;
    }
  }
}

// For each element of an `out`-shaped result, the flat index numpy broadcasting reads in `in`.
std::vector<std::int64_t> broadcastSources(const Dims& out, const Dims& in);
// A copy of `src` with other dims (same element count).
TensorData withDims(const TensorData& src, Dims dims);
std::vector<double> realsOf(const TensorData& t);
std::vector<std::int64_t> intsOf(const TensorData& t);
// Values computed as int64 (wrapping to narrower integers) or double, stored as `dtype`.
TensorData makeTensor(DType dtype, Dims dims, const std::vector<double>& values);
TensorData makeTensor(DType dtype, Dims dims, const std::vector<std::int64_t>& values);

// Integer arithmetic that wraps instead of overflowing (undefined behaviour in C++).
std::int64_t add(std::int64_t a, std::int64_t b);
std::int64_t sub(std::int64_t a, std::int64_t b);
std::int64_t mul(std::int64_t a, std::int64_t b);

// constant_evaluator_math.cpp
Result evalRange(const Node& n, const TensorType& out);
Result evalCast(const Node& n, const TensorType& out);
Result evalBroadcast(const Node& n, const TensorType& out); // arithmetic, comparison, logic
Result evalUnary(const Node& n, const TensorType& out);
Result evalReduce(const Node& n, const TensorType& out);

} // namespace lathe::passes::eval
