// Reference kernels for elementwise activations and the other float unary ops, PRelu and
// Clip, in double over the ONNX formulas.

#include "engine/graph_passes/constant_evaluator_internal.h"
#include "engine/reference/reference_ops_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace lathe::reference::ops {
namespace {

// f(x, node) for every element; the node gives the op's attributes.
using UnaryFormula = double (*)(double x, const Node& node);

const std::map<std::string, UnaryFormula, std::less<>>& unaryFormulas() {
  static const std::map<std::string, UnaryFormula, std::less<>> table{
      {"Relu", [](double x, const Node&) { return x > 0 ? x : (std::isnan(x) ? x : 0.0); }},
      {"Sigmoid", [](double x, const Node&) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"Tanh", [](double x, const Node&) { return std::tanh(x); }},
      {"Exp", [](double x, const Node&) { return std::exp(x); }},
      {"Log", [](double x, const Node&) { return std::log(x); }},
      {"Erf", [](double x, const Node&) { return std::erf(x); }},
      {"Reciprocal", [](double x, const Node&) { return 1.0 / x; }},
      {"Sin", [](double x, const Node&) { return std::sin(x); }},
      {"Cos", [](double x, const Node&) { return std::cos(x); }},
      {"Tan", [](double x, const Node&) { return std::tan(x); }},
      {"Asin", [](double x, const Node&) { return std::asin(x); }},
      {"Acos", [](double x, const Node&) { return std::acos(x); }},
      {"Atan", [](double x, const Node&) { return std::atan(x); }},
      {"Sinh", [](double x, const Node&) { return std::sinh(x); }},
      {"Cosh", [](double x, const Node&) { return std::cosh(x); }},
      {"Asinh", [](double x, const Node&) { return std::asinh(x); }},
      {"Acosh", [](double x, const Node&) { return std::acosh(x); }},
      {"Atanh", [](double x, const Node&) { return std::atanh(x); }},
      {"Round", [](double x, const Node&) { return std::nearbyint(x); }}, // half to even
      {"Softplus", [](double x, const Node&) { return std::log1p(std::exp(x)); }},
      {"Softsign", [](double x, const Node&) { return x / (1.0 + std::fabs(x)); }},
      {"Mish", [](double x, const Node&) { return x * std::tanh(std::log1p(std::exp(x))); }},
      {"LeakyRelu",
       [](double x, const Node& n) { return x < 0 ? double(n.attrFloat("alpha", 0.01f)) * x : x; }},
      {"ThresholdedRelu",
       [](double x, const Node& n) { return x > double(n.attrFloat("alpha", 1.0f)) ? x : 0.0; }},
      {"Elu",
       [](double x, const Node& n) {
         return x < 0 ? double(n.attrFloat("alpha", 1.0f)) * std::expm1(x) : x;
       }},
      {"Celu",
       [](double x, const Node& n) {
         const double alpha = n.attrFloat("alpha", 1.0f);
         return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
       }},
      {"Selu",
       [](double x, const Node& n) {
         const double alpha = n.attrFloat("alpha", 1.67326319217681884765625f);
         const double gamma = n.attrFloat("gamma", 1.05070102214813232421875f);
         return gamma * (x > 0 ? x : alpha * std::expm1(x));
       }},
      {"HardSigmoid",
       [](double x, const Node& n) {
         const double alpha = n.attrFloat("alpha", 0.2f), beta = n.attrFloat("beta", 0.5f);
         return std::clamp(alpha * x + beta, 0.0, 1.0);
       }},
      {"HardSwish", [](double x, const Node&) { return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0); }},
  };
  return table;
}

std::optional<Outputs> unary(const Node& node, const std::vector<TensorType>& out) {
  if (!isRealFloat(input(node, 0).dtype()))
    return std::nullopt;
  const UnaryFormula f = unaryFormulas().at(node.opType());
  std::vector<double> y = floatInput(node, 0);
  for (double& v : y)
    v = f(v, node);
  return Outputs{makeOutput(out[0], y)};
}

// IsNaN and IsInf: boolean results of float inputs.
std::optional<Outputs> classify(const Node& node, const std::vector<TensorType>& out) {
  const std::vector<double> x = floatInput(node, 0);
  const bool nan = node.opType() == "IsNaN";
  const bool positive = node.attrInt("detect_positive", 1) != 0;
  const bool negative = node.attrInt("detect_negative", 1) != 0;
  std::vector<std::int64_t> y;
  for (double v : x)
    y.push_back(nan ? std::isnan(v) : std::isinf(v) && (v > 0 ? positive : negative));
  return Outputs{passes::eval::makeTensor(DType::Bool, out[0].staticDims(), y)};
}

// y = x < 0 ? slope * x : x, the slope broadcast to x.
std::optional<Outputs> prelu(const Node& node, const std::vector<TensorType>& out) {
  const std::vector<double> x = floatInput(node, 0), slope = floatInput(node, 1);
  const auto from = passes::eval::broadcastSources(out[0].staticDims(), input(node, 1).dims());
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = x[i] < 0 ? slope[static_cast<std::size_t>(from[i])] * x[i] : x[i];
  return Outputs{makeOutput(out[0], y)};
}

// Clip-11 and later: optional scalar min and max inputs.
std::optional<Outputs> clip(const Node& node, const std::vector<TensorType>& out) {
  if (!isRealFloat(input(node, 0).dtype()))
    return std::nullopt;
  std::vector<double> y = floatInput(node, 0);
  // An absent bound is no bound; with min > max every value becomes max (ONNX); NaN stays.
  const double low =
      optionalInput(node, 1) ? floatInput(node, 1).at(0) : -std::numeric_limits<double>::infinity();
  const double high =
      optionalInput(node, 2) ? floatInput(node, 2).at(0) : std::numeric_limits<double>::infinity();
  for (double& v : y)
    v = std::min(std::max(v, low), high);
  return Outputs{makeOutput(out[0], y)};
}

} // namespace

void addPointwiseKernels(KernelTable& table) {
  for (const auto& [op, formula] : unaryFormulas())
    table[op] = unary;
  table["IsNaN"] = classify;
  table["IsInf"] = classify;
  table["PRelu"] = prelu;
  table["Clip"] = clip;
}

} // namespace lathe::reference::ops
