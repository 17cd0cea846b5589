// Reference kernels that pick elements along one axis: TopK (values and indices, ties to
// the lower index) and Hardmax (1 at the first maximum).

#include "engine/graph_passes/constant_evaluator_internal.h"
#include "engine/graph_passes/shape_rules.h"
#include "engine/reference/reference_ops_internal.h"

#include <algorithm>
#include <numeric>

namespace lathe::reference::ops {
namespace {

// The input viewed as [outer, extent, inner] around `axis`.
struct AxisView {
  std::int64_t outer = 1, extent = 1, inner = 1;
  std::size_t at(std::int64_t o, std::int64_t k, std::int64_t i) const {
    return static_cast<std::size_t>((o * extent + k) * inner + i);
  }
};

AxisView viewAround(const Node& node, const Dims& dims, std::int64_t axisAttr) {
  const auto axis = static_cast<std::size_t>(
      passes::normalizeAxis(node, axisAttr, static_cast<std::int64_t>(dims.size())));
  return {product(Dims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(axis))), dims[axis],
          product(Dims(dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, dims.end()))};
}

std::optional<Outputs> topK(const Node& node, const std::vector<TensorType>& out) {
  const TensorData& data = input(node, 0);
  const std::vector<double> x = passes::eval::realsOf(data);
  const AxisView v = viewAround(node, data.dims(), node.attrInt("axis", -1));
  const std::int64_t k = input(node, 1).elementAsInt(0);
  if (k < 0 || k > v.extent)
    refuse("k = " + std::to_string(k) + " outside [0, " + std::to_string(v.extent) + "]");
  const bool largest = node.attrInt("largest", 1) != 0;
  std::vector<double> values;
  std::vector<std::int64_t> indices;
  values.reserve(static_cast<std::size_t>(v.outer * k * v.inner));
  std::vector<std::vector<std::pair<double, std::int64_t>>> picked(
      static_cast<std::size_t>(v.outer * v.inner));
  for (std::int64_t o = 0; o < v.outer; ++o)
    for (std::int64_t i = 0; i < v.inner; ++i) {
      std::vector<std::int64_t> order(static_cast<std::size_t>(v.extent));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        const double xa = x[v.at(o, a, i)], xb = x[v.at(o, b, i)];
        return largest ? xa > xb : xa < xb; // stable: equal values keep the lower index first
      });
      auto& p = picked[static_cast<std::size_t>(o * v.inner + i)];
      for (std::int64_t j = 0; j < k; ++j)
        p.push_back({x[v.at(o, order[static_cast<std::size_t>(j)], i)],
                     order[static_cast<std::size_t>(j)]});
    }
  // Outputs in [outer, k, inner] order.
  for (std::int64_t o = 0; o < v.outer; ++o)
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < v.inner; ++i) {
        const auto& [value, index] =
            picked[static_cast<std::size_t>(o * v.inner + i)][static_cast<std::size_t>(j)];
        values.push_back(value);
        indices.push_back(index);
      }
  Outputs outputs{makeOutput(out[0], values)};
  if (out.size() > 1)
    outputs.push_back(passes::eval::makeTensor(DType::I64, out[1].staticDims(), indices));
  return outputs;
}

std::optional<Outputs> hardmax(const Node& node, const std::vector<TensorType>& out) {
  const TensorData& data = input(node, 0);
  const std::vector<double> x = floatInput(node, 0);
  const AxisView v = viewAround(node, data.dims(), node.attrInt("axis", -1));
  std::vector<double> y(x.size(), 0.0);
  for (std::int64_t o = 0; o < v.outer; ++o)
    for (std::int64_t i = 0; i < v.inner; ++i) {
      std::int64_t best = 0;
      for (std::int64_t k = 1; k < v.extent; ++k)
        if (x[v.at(o, k, i)] > x[v.at(o, best, i)])
          best = k;
      if (v.extent > 0)
        y[v.at(o, best, i)] = 1.0;
    }
  return Outputs{makeOutput(out[0], y)};
}

} // namespace

void addSelectKernels(KernelTable& table) {
  table["TopK"] = topK;
  table["Hardmax"] = hardmax;
}

} // namespace lathe::reference::ops
