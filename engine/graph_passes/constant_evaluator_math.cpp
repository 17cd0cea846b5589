// Compile-time evaluation of arithmetic, comparison, logic, cast and reduction ops.

#include "engine/graph_passes/constant_evaluator_internal.h"
#include "engine/graph_passes/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace lathe::passes::eval {
namespace {

// Reductions read every input element; bound that work too.
constexpr std::int64_t kMaxReducedInputElements = 1 << 20;

// The range of values an integer dtype holds, for checking float-to-int casts.
std::pair<double, double> integerRange(DType t) {
  switch (t) {
  case DType::I8:
    return {-128.0, 127.0};
  case DType::I16:
    return {-32768.0, 32767.0};
  case DType::I32:
    return {-2147483648.0, 2147483647.0};
  case DType::U8:
    return {0.0, 255.0};
  case DType::U16:
    return {0.0, 65535.0};
  case DType::U32:
    return {0.0, 4294967295.0};
  default:
    return {-9223372036854775808.0, 9223372036854774784.0}; // I64, largest double below 2^63
  }
}

std::optional<double> realBinary(const std::string& op, double a, double b, bool cMod) {
  if (op == "Add" || op == "Sum")
    return a + b;
  if (op == "Sub")
    return a - b;
  if (op == "Mul")
    return a * b;
  if (op == "Div")
    return a / b;
  if (op == "Pow")
    return std::pow(a, b);
  if (op == "Min")
    return std::min(a, b);
  if (op == "Max")
    return std::max(a, b);
  if (op == "Mod") {
    double r = std::fmod(a, b);
    if (!cMod && r != 0 && ((r < 0) != (b < 0))) // Python-style: the sign of the divisor
      r += b;
    return r;
  }
  return std::nullopt;
}

std::optional<std::int64_t> intBinary(const std::string& op, std::int64_t a, std::int64_t b,
                                      bool cMod) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  if (op == "Add" || op == "Sum")
    return add(a, b);
  if (op == "Sub")
    return sub(a, b);
  if (op == "Mul")
    return mul(a, b);
  if (op == "Min")
    return std::min(a, b);
  if (op == "Max")
    return std::max(a, b);
  if (op == "Div") { // truncates toward zero, as in C
    if (b == 0 || (a == kMin && b == -1))
      return std::nullopt;
    return a / b;
  }
  if (op == "Mod") {
    if (b == 0)
      return std::nullopt;
    if (b == -1)
      return 0;
    std::int64_t r = a % b;
    if (!cMod && r != 0 && ((r < 0) != (b < 0)))
      r += b;
    return r;
  }
  if (op == "Pow") {
    if (b < 0)
      return std::nullopt;
    std::int64_t result = 1;
    for (std::int64_t base = a; b > 0; b >>= 1, base = mul(base, base))
      if (b & 1)
        result = mul(result, base);
    return result;
  }
  return std::nullopt;
}

bool compare(const std::string& op, auto a, auto b) {
  if (op == "Equal")
    return a == b;
  if (op == "Less")
    return a < b;
  if (op == "LessOrEqual")
    return a <= b;
  if (op == "Greater")
    return a > b;
  if (op == "GreaterOrEqual")
    return a >= b;
  if (op == "And")
    return a != 0 && b != 0;
  if (op == "Or")
    return a != 0 || b != 0;
  return (a != 0) != (b != 0); // Xor
}

bool isComparison(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
         op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor";
}

// Applies `f` to broadcast operands, folding left over variadic inputs.
template <typename T, typename F>
std::optional<std::vector<T>> combine(const std::vector<std::vector<T>>& operands,
                                      const std::vector<std::vector<std::int64_t>>& sources,
                                      F&& f) {
  std::vector<T> result(sources[0].size());
  for (std::size_t i = 0; i < result.size(); ++i) {
    T acc = operands[0][static_cast<std::size_t>(sources[0][i])];
    for (std::size_t k = 1; k < operands.size(); ++k) {
      const auto next = f(acc, operands[k][static_cast<std::size_t>(sources[k][i])]);
      if (!next)
        return std::nullopt;
      acc = *next;
    }
    result[i] = acc;
  }
  return result;
}

} // namespace

Result evalRange(const Node& n, const TensorType& out) {
  const TensorData &start = *constantData(n, 0), &delta = *constantData(n, 2);
  if (!isArithmetic(out.dtype) || out.dtype == DType::Bool)
    return std::nullopt;
  const std::int64_t count = out.staticDims()[0];
  if (graph::isFloat(out.dtype)) {
    // ONNX defines Range as repeated addition in the element type (its function body, and
    // ORT), so f32 values are rounded after every step rather than computed as start + i*delta.
    std::vector<double> v(static_cast<std::size_t>(count));
    double value = start.elementAsDouble(0);
    const double step = delta.elementAsDouble(0);
    for (double& x : v) {
      x = value;
      value = out.dtype == DType::F32 ? double(float(value + step)) : value + step;
    }
    return makeTensor(out.dtype, {count}, v);
  }
  std::vector<std::int64_t> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = add(start.elementAsInt(0), mul(i, delta.elementAsInt(0)));
  return makeTensor(out.dtype, {count}, v);
}

Result evalCast(const Node& n, const TensorType& out) {
  const TensorData& in = *constantData(n, 0);
  const DType from = in.dtype(), to = out.dtype;
  if (from == to)
    return withDims(in, out.staticDims());
  // u64 above 2^63 does not survive the int64 path, so it is left to the runtime.
  if (!isArithmetic(from) || !isArithmetic(to) || from == DType::U64 || to == DType::U64)
    return std::nullopt;
  if (!graph::isFloat(from))
    return makeTensor(to, out.staticDims(), intsOf(in));
  const std::vector<double> values = realsOf(in);
  if (graph::isFloat(to) || to == DType::Bool)
    return makeTensor(to, out.staticDims(), values);
  const auto [lo, hi] = integerRange(to);
  std::vector<std::int64_t> ints;
  for (double v : values) {
    const double t = std::trunc(v);
    if (!(t >= lo && t <= hi)) // also catches NaN: the conversion would be undefined
      return std::nullopt;
    ints.push_back(static_cast<std::int64_t>(t));
  }
  return makeTensor(to, out.staticDims(), ints);
}

Result evalBroadcast(const Node& n, const TensorType& out) {
  const std::string& op = n.opType();
  const Dims dims = out.staticDims();
  const DType dtype = constantData(n, 0)->dtype();
  std::vector<const TensorData*> ins;
  std::vector<std::vector<std::int64_t>> sources;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const TensorData* in = constantData(n, i);
    // Only Pow may mix types; an integer base with a float exponent has no exact int64 path.
    const bool mixes = in && in->dtype() != dtype;
    if (!in || !isArithmetic(in->dtype()) || (mixes && op != "Pow") ||
        (mixes && !graph::isFloat(dtype) && graph::isFloat(in->dtype())))
      return std::nullopt;
    ins.push_back(in);
    sources.push_back(broadcastSources(dims, in->dims()));
  }
  // Ordering and division of u64 above 2^63 would go wrong in int64.
  if (dtype == DType::U64 && op != "Add" && op != "Sub" && op != "Mul" && op != "Sum")
    return std::nullopt;
  const bool cMod = n.attrInt("fmod", 0) != 0;
  if (graph::isFloat(dtype)) {
    std::vector<std::vector<double>> operands;
    for (const TensorData* in : ins)
      operands.push_back(realsOf(*in));
    if (isComparison(op)) {
      auto r = combine<double>(operands, sources, [&](double a, double b) {
        return std::optional<double>(compare(op, a, b));
      });
      return makeTensor(DType::Bool, dims, *r);
    }
    auto r = combine<double>(operands, sources,
                             [&](double a, double b) { return realBinary(op, a, b, cMod); });
    return r ? Result(makeTensor(out.dtype, dims, *r)) : std::nullopt;
  }
  std::vector<std::vector<std::int64_t>> operands;
  for (const TensorData* in : ins)
    operands.push_back(intsOf(*in));
  if (isComparison(op)) {
    auto r = combine<std::int64_t>(operands, sources, [&](std::int64_t a, std::int64_t b) {
      return std::optional<std::int64_t>(compare(op, a, b));
    });
    return makeTensor(DType::Bool, dims, *r);
  }
  if (dtype == DType::Bool)
    return std::nullopt;
  auto r = combine<std::int64_t>(
      operands, sources, [&](std::int64_t a, std::int64_t b) { return intBinary(op, a, b, cMod); });
  return r ? Result(makeTensor(out.dtype, dims, *r)) : std::nullopt;
}

Result evalUnary(const Node& n, const TensorType& out) {
  const std::string& op = n.opType();
  const TensorData& in = *constantData(n, 0);
  const DType dtype = in.dtype();
  if (!isArithmetic(dtype))
    return std::nullopt;
  if (graph::isFloat(dtype)) {
    std::vector<double> v = realsOf(in);
    for (double& x : v) {
      if (op == "Neg")
        x = -x;
      else if (op == "Abs")
        x = std::fabs(x);
      else if (op == "Floor")
        x = std::floor(x);
      else if (op == "Ceil")
        x = std::ceil(x);
      else if (op == "Sqrt")
        x = std::sqrt(x);
      else if (op == "Sign" && !std::isnan(x))
        x = (x > 0) - (x < 0);
      else if (op == "Not")
        return std::nullopt;
    }
    return makeTensor(dtype, out.staticDims(), v);
  }
  if (op == "Floor" || op == "Ceil" || op == "Sqrt")
    return std::nullopt; // float-only ops in ONNX
  std::vector<std::int64_t> v = intsOf(in);
  for (std::int64_t& x : v) {
    if (op == "Neg")
      x = sub(0, x);
    else if (op == "Abs" && !isUnsigned(dtype) && x < 0)
      x = sub(0, x);
    else if (op == "Sign")
      x = isUnsigned(dtype) ? x != 0 : (x > 0) - (x < 0);
    else if (op == "Not")
      x = x == 0;
  }
  return makeTensor(dtype, out.staticDims(), v);
}

Result evalReduce(const Node& n, const TensorType& out) {
  const std::string& op = n.opType();
  const TensorData& in = *constantData(n, 0);
  const DType dtype = in.dtype();
  if (!isArithmetic(dtype) || dtype == DType::Bool || in.numElements() > kMaxReducedInputElements ||
      (dtype == DType::U64 && op != "ReduceSum"))
    return std::nullopt;
  const auto axes = reductionAxes(n, static_cast<std::int64_t>(in.dims().size()));
  if (!axes)
    return std::nullopt;
  // The result laid out with reduced axes kept as 1 has the same element order as `out`.
  Dims kept = in.dims();
  for (std::int64_t a : *axes)
    kept[static_cast<std::size_t>(a)] = 1;
  const Dims keptStrides = stridesOf(kept);
  const auto count = static_cast<std::size_t>(product(kept));
  if (in.numElements() == 0 && count > 0 && (op == "ReduceMin" || op == "ReduceMax"))
    return std::nullopt; // the extremum of nothing
  auto reduceAll = [&](auto values, auto init) {
    using T = typename decltype(values)::value_type;
    std::vector<T> acc(count, init);
    std::vector<bool> seen(count, false);
    std::int64_t flat = 0;
    forEachCoordinate(in.dims(), [&](const Dims& c) {
      std::size_t o = 0;
      for (std::size_t k = 0; k < c.size(); ++k)
        o += static_cast<std::size_t>((kept[k] == 1 ? 0 : c[k]) * keptStrides[k]);
      const T x = values[static_cast<std::size_t>(flat++)];
      T& a = acc[o];
      if constexpr (std::is_same_v<T, double>) {
        a = op == "ReduceSum" ? a + x : op == "ReduceProd" ? a * x : a;
      } else {
        a = op == "ReduceSum" ? add(a, x) : op == "ReduceProd" ? mul(a, x) : a;
      }
      if (op == "ReduceMin")
        a = seen[o] ? std::min(a, x) : x;
      if (op == "ReduceMax")
        a = seen[o] ? std::max(a, x) : x;
      seen[o] = true;
    });
    return makeTensor(dtype, out.staticDims(), acc);
  };
  const int init = op == "ReduceProd" ? 1 : 0;
  if (graph::isFloat(dtype))
    return reduceAll(realsOf(in), double(init));
  return reduceAll(intsOf(in), std::int64_t(init));
}

} // namespace lathe::passes::eval
