// Reference kernels for normalizations, softmax and reductions, computed in double over the
// ONNX definitions (no running sums, no fused forms).

#include "engine/graph_passes/constant_evaluator_internal.h"
#include "engine/graph_passes/shape_rules.h"
#include "engine/reference/reference_ops_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lathe::reference::ops {
namespace {

// Inference form: y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c], c = axis 1.
std::optional<Outputs> batchNormalization(const Node& node, const std::vector<TensorType>& out) {
  if (node.attrInt("training_mode", 0) != 0)
    refuse("training mode (batch statistics)");
  for (std::size_t o = 1; o < node.outputs().size(); ++o)
    if (node.output(o))
      refuse("running statistics outputs (training mode)");
  const Dims dims = input(node, 0).dims();
  if (dims.size() < 2)
    refuse("an input without a channel axis");
  const std::vector<double> x = floatInput(node, 0), scale = floatInput(node, 1),
                            bias = floatInput(node, 2), mean = floatInput(node, 3),
                            var = floatInput(node, 4);
  const double epsilon = node.attrFloat("epsilon", 1e-5f);
  const std::int64_t channels = dims[1];
  const std::int64_t plane = product(Dims(dims.begin() + 2, dims.end()));
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % channels);
    y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + epsilon) * scale[c] + bias[c];
  }
  Outputs outputs{makeOutput(out[0], y)};
  outputs.resize(node.outputs().size());
  return outputs;
}

// Over axes [axis, rank): y = (x - mean) / sqrt(variance + epsilon) * scale + bias.
std::optional<Outputs> layerNormalization(const Node& node, const std::vector<TensorType>& out) {
  const Dims dims = input(node, 0).dims();
  const std::vector<double> x = floatInput(node, 0), scale = floatInput(node, 1);
  const std::vector<double> bias =
      optionalInput(node, 2) ? floatInput(node, 2) : std::vector<double>{};
  const auto axis = static_cast<std::size_t>(passes::normalizeAxis(
      node, node.attrInt("axis", -1), static_cast<std::int64_t>(dims.size())));
  const double epsilon = node.attrFloat("epsilon", 1e-5f);
  const std::int64_t size = product(Dims(dims.begin() + axis, dims.end()));
  const std::int64_t rows = product(Dims(dims.begin(), dims.begin() + axis));
  const auto scaleFrom = passes::eval::broadcastSources(dims, input(node, 1).dims());
  const auto biasFrom = bias.empty() ? std::vector<std::int64_t>{}
                                     : passes::eval::broadcastSources(dims, input(node, 2).dims());
  std::vector<double> y(x.size()), means(static_cast<std::size_t>(rows)),
      invStd(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto first = static_cast<std::size_t>(r * size);
    double mean = 0, var = 0;
    for (std::int64_t i = 0; i < size; ++i)
      mean += x[first + static_cast<std::size_t>(i)];
    mean /= static_cast<double>(size);
    for (std::int64_t i = 0; i < size; ++i)
      var += (x[first + static_cast<std::size_t>(i)] - mean) *
             (x[first + static_cast<std::size_t>(i)] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(size) + epsilon);
    means[static_cast<std::size_t>(r)] = mean;
    invStd[static_cast<std::size_t>(r)] = inv;
    for (std::int64_t i = 0; i < size; ++i) {
      const std::size_t e = first + static_cast<std::size_t>(i);
      y[e] = (x[e] - mean) * inv * scale[static_cast<std::size_t>(scaleFrom[e])] +
             (bias.empty() ? 0.0 : bias[static_cast<std::size_t>(biasFrom[e])]);
    }
  }
  Outputs outputs{makeOutput(out[0], y)};
  for (std::size_t o = 1; o < node.outputs().size(); ++o)
    outputs.push_back(node.output(o) ? makeOutput(out[o], o == 1 ? means : invStd) : TensorData{});
  return outputs;
}

// Per (batch, channel) over the spatial axes.
std::optional<Outputs> instanceNormalization(const Node& node, const std::vector<TensorType>& out) {
  const Dims dims = input(node, 0).dims();
  if (dims.size() < 3)
    refuse("an input without spatial axes");
  const std::vector<double> x = floatInput(node, 0), scale = floatInput(node, 1),
                            bias = floatInput(node, 2);
  const double epsilon = node.attrFloat("epsilon", 1e-5f);
  const std::int64_t plane = product(Dims(dims.begin() + 2, dims.end()));
  std::vector<double> y(x.size());
  for (std::int64_t p = 0; p < dims[0] * dims[1]; ++p) {
    const auto c = static_cast<std::size_t>(p % dims[1]);
    const auto first = static_cast<std::size_t>(p * plane);
    double mean = 0, var = 0;
    for (std::int64_t i = 0; i < plane; ++i)
      mean += x[first + static_cast<std::size_t>(i)];
    mean /= static_cast<double>(plane);
    for (std::int64_t i = 0; i < plane; ++i)
      var += std::pow(x[first + static_cast<std::size_t>(i)] - mean, 2);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(plane) + epsilon);
    for (std::int64_t i = 0; i < plane; ++i) {
      const std::size_t e = first + static_cast<std::size_t>(i);
      y[e] = (x[e] - mean) * inv * scale[c] + bias[c];
    }
  }
  return Outputs{makeOutput(out[0], y)};
}

// x / ||x||_p along one axis (p is 1 or 2).
std::optional<Outputs> lpNormalization(const Node& node, const std::vector<TensorType>& out) {
  const Dims dims = input(node, 0).dims();
  const std::vector<double> x = floatInput(node, 0);
  const auto axis = static_cast<std::size_t>(passes::normalizeAxis(
      node, node.attrInt("axis", -1), static_cast<std::int64_t>(dims.size())));
  const std::int64_t p = node.attrInt("p", 2);
  if (p != 1 && p != 2)
    refuse("p = " + std::to_string(p) + " (ONNX allows 1 and 2)");
  const std::int64_t extent = dims[axis];
  const std::int64_t inner = product(Dims(dims.begin() + axis + 1, dims.end()));
  const std::int64_t outer = product(Dims(dims.begin(), dims.begin() + axis));
  std::vector<double> y(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t k) {
        return static_cast<std::size_t>((o * extent + k) * inner + i);
      };
      double norm = 0;
      for (std::int64_t k = 0; k < extent; ++k)
        norm += p == 1 ? std::fabs(x[at(k)]) : x[at(k)] * x[at(k)];
      norm = p == 1 ? norm : std::sqrt(norm);
      for (std::int64_t k = 0; k < extent; ++k)
        y[at(k)] = norm == 0 ? 0.0 : x[at(k)] / norm;
    }
  return Outputs{makeOutput(out[0], y)};
}

// Softmax and LogSoftmax (opset 13 and later: along one axis).
template <bool Log>
std::optional<Outputs> softmax(const Node& node, const std::vector<TensorType>& out) {
  const Dims dims = input(node, 0).dims();
  const std::vector<double> x = floatInput(node, 0);
  const auto axis = static_cast<std::size_t>(passes::normalizeAxis(
      node, node.attrInt("axis", -1), static_cast<std::int64_t>(dims.size())));
  const std::int64_t extent = dims[axis];
  const std::int64_t inner = product(Dims(dims.begin() + axis + 1, dims.end()));
  const std::int64_t outer = product(Dims(dims.begin(), dims.begin() + axis));
  std::vector<double> y(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t k) {
        return static_cast<std::size_t>((o * extent + k) * inner + i);
      };
      double peak = -std::numeric_limits<double>::infinity(), sum = 0;
      for (std::int64_t k = 0; k < extent; ++k)
        peak = std::max(peak, x[at(k)]);
      for (std::int64_t k = 0; k < extent; ++k)
        sum += std::exp(x[at(k)] - peak);
      for (std::int64_t k = 0; k < extent; ++k)
        y[at(k)] = Log ? x[at(k)] - peak - std::log(sum) : std::exp(x[at(k)] - peak) / sum;
    }
  return Outputs{makeOutput(out[0], y)};
}

// Float Reduce* ops; integer ones go to the constant evaluator.
std::optional<Outputs> reduce(const Node& node, const std::vector<TensorType>& out) {
  const TensorData& data = input(node, 0);
  if (!isRealFloat(data.dtype()))
    return std::nullopt;
  const std::string& op = node.opType();
  const Dims& dims = data.dims();
  const auto axes = passes::reductionAxes(node, static_cast<std::int64_t>(dims.size()));
  if (!axes)
    refuse("reduction axes that are not constant");
  Dims kept = dims;
  for (std::int64_t a : *axes)
    kept[static_cast<std::size_t>(a)] = 1;
  const std::int64_t count = product(kept);
  const std::int64_t reduced = count == 0 ? 0 : data.numElements() / count;
  if (reduced == 0 && (op == "ReduceMax" || op == "ReduceMin"))
    refuse("the extremum of an empty reduction");
  const std::vector<double> x = passes::eval::realsOf(data);
  // Every input element's result slot: the same coordinates with the reduced axes at 0.
  const auto slot = passes::eval::broadcastSources(dims, kept);
  std::vector<std::vector<double>> groups(static_cast<std::size_t>(count));
  std::vector<double> y(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < x.size(); ++i) {
    // broadcastSources maps coordinates to `kept`'s flat index by skipping its unit axes.
    groups[static_cast<std::size_t>(slot[i])].push_back(x[i]);
  }
  for (std::size_t r = 0; r < groups.size(); ++r) {
    const std::vector<double>& g = groups[r];
    double v = 0;
    if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceLogSum") {
      for (double e : g)
        v += e;
      if (op == "ReduceMean")
        v /= static_cast<double>(g.size());
      if (op == "ReduceLogSum")
        v = std::log(v);
    } else if (op == "ReduceProd") {
      v = 1;
      for (double e : g)
        v *= e;
    } else if (op == "ReduceMax") {
      v = *std::max_element(g.begin(), g.end());
    } else if (op == "ReduceMin") {
      v = *std::min_element(g.begin(), g.end());
    } else if (op == "ReduceSumSquare" || op == "ReduceL2") {
      for (double e : g)
        v += e * e;
      if (op == "ReduceL2")
        v = std::sqrt(v);
    } else if (op == "ReduceL1") {
      for (double e : g)
        v += std::fabs(e);
    } else { // ReduceLogSumExp
      const double peak = g.empty() ? 0.0 : *std::max_element(g.begin(), g.end());
      for (double e : g)
        v += std::exp(e - peak);
      v = std::log(v) + peak;
    }
    y[r] = v;
  }
  return Outputs{makeOutput(out[0], y)};
}

// ArgMax and ArgMin: the first (or last) index of the extremum along one axis.
std::optional<Outputs> argExtremum(const Node& node, const std::vector<TensorType>& out) {
  const TensorData& data = input(node, 0);
  const Dims& dims = data.dims();
  const std::vector<double> x = passes::eval::realsOf(data);
  const auto axis = static_cast<std::size_t>(
      passes::normalizeAxis(node, node.attrInt("axis", 0), static_cast<std::int64_t>(dims.size())));
  const bool isMax = node.opType() == "ArgMax", last = node.attrInt("select_last_index", 0) != 0;
  const std::int64_t extent = dims[axis];
  const std::int64_t inner = product(Dims(dims.begin() + axis + 1, dims.end()));
  const std::int64_t outer = product(Dims(dims.begin(), dims.begin() + axis));
  if (extent == 0)
    refuse("the extremum of an empty axis");
  std::vector<std::int64_t> y;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      std::int64_t best = 0;
      for (std::int64_t k = 1; k < extent; ++k) {
        const double v = x[static_cast<std::size_t>((o * extent + k) * inner + i)];
        const double b = x[static_cast<std::size_t>((o * extent + best) * inner + i)];
        if (isMax ? (v > b || (last && v == b)) : (v < b || (last && v == b)))
          best = k;
      }
      y.push_back(best);
    }
  return Outputs{passes::eval::makeTensor(out[0].dtype, out[0].staticDims(), y)};
}

} // namespace

void addNormalizationKernels(KernelTable& table) {
  table["BatchNormalization"] = batchNormalization;
  table["LayerNormalization"] = layerNormalization;
  table["InstanceNormalization"] = instanceNormalization;
  table["LpNormalization"] = lpNormalization;
  table["Softmax"] = softmax<false>;
  table["LogSoftmax"] = softmax<true>;
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"})
    table[op] = reduce;
  table["ArgMax"] = argExtremum;
  table["ArgMin"] = argExtremum;
}

} // namespace lathe::reference::ops
