#include "engine/graph_passes/constant_evaluator.h"

#include "engine/graph_passes/shape_rules.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace lathe::passes {
namespace {

using graph::DType;
using graph::Node;
using graph::TensorData;
using graph::TensorType;
using Dims = std::vector<std::int64_t>;
using Result = std::optional<TensorData>;
// Computes one op's single output; `out` is its static type from the shape rules.
using Evaluator = Result (*)(const Node& node, const TensorType& out);

// Reductions read every input element; bound that work too.
constexpr std::int64_t kMaxReducedInputElements = 1 << 20;

std::int64_t product(const Dims& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims)
    n *= d;
  return n;
}

// Input i when it is a constant whose bytes are known, else nullptr.
const TensorData* constantData(const Node& n, std::size_t i) {
  const graph::Value* v = n.input(i);
  return v && v->isConstant() && !v->constant().isElided() ? &v->constant() : nullptr;
}

// Element types the evaluator does arithmetic on (16-bit floats are not re-encoded).
bool isArithmetic(DType t) {
  return t != DType::Undefined && t != DType::F16 && t != DType::BF16;
}

bool isUnsigned(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}

Dims stridesOf(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (std::size_t k = dims.size(); k-- > 1;)
    strides[k - 1] = strides[k] * dims[k];
  return strides;
}

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
std::vector<std::int64_t> broadcastSources(const Dims& out, const Dims& in) {
  const Dims strides = stridesOf(in);
  const std::size_t offset = out.size() - in.size();
  std::vector<std::int64_t> sources;
  forEachCoordinate(out, [&](const Dims& c) {
    std::int64_t s = 0;
    for (std::size_t k = 0; k < in.size(); ++k)
      if (in[k] != 1)
        s += c[offset + k] * strides[k];
    sources.push_back(s);
  });
  return sources;
}

// The elements of `src` at the given flat indices, as a tensor of the same dtype.
TensorData pickElements(const TensorData& src, Dims dims, const std::vector<std::int64_t>& at) {
  const std::size_t size = graph::dtypeSize(src.dtype());
  auto bytes = std::make_shared<std::string>(at.size() * size, '\0');
  for (std::size_t i = 0; i < at.size(); ++i)
    std::memcpy(bytes->data() + i * size, src.data() + at[i] * size, size);
  return TensorData(src.dtype(), std::move(dims), std::move(bytes));
}

TensorData withDims(const TensorData& src, Dims dims) {
  auto bytes =
      std::make_shared<std::string>(reinterpret_cast<const char*>(src.data()), src.byteSize());
  return TensorData(src.dtype(), std::move(dims), std::move(bytes));
}

std::vector<double> realsOf(const TensorData& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numElements()));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = t.elementAsDouble(static_cast<std::int64_t>(i));
  return v;
}

std::vector<std::int64_t> intsOf(const TensorData& t) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(t.numElements()));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = t.elementAsInt(static_cast<std::int64_t>(i));
  return v;
}

template <typename T, typename V>
TensorData build(DType dtype, Dims dims, const std::vector<V>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    out[i] = static_cast<T>(values[i]);
  return TensorData::fromValues(dtype, std::move(dims), out);
}

// Values computed as int64 (wrapping to narrower integers) or double, stored as `dtype`.
template <typename V>
TensorData makeTensor(DType dtype, Dims dims, const std::vector<V>& values) {
  switch (dtype) {
  case DType::F32:
    return build<float>(dtype, std::move(dims), values);
  case DType::F64:
    return build<double>(dtype, std::move(dims), values);
  case DType::I8:
    return build<std::int8_t>(dtype, std::move(dims), values);
  case DType::I16:
    return build<std::int16_t>(dtype, std::move(dims), values);
  case DType::I32:
    return build<std::int32_t>(dtype, std::move(dims), values);
  case DType::I64:
    return build<std::int64_t>(dtype, std::move(dims), values);
  case DType::U8:
    return build<std::uint8_t>(dtype, std::move(dims), values);
  case DType::U16:
    return build<std::uint16_t>(dtype, std::move(dims), values);
  case DType::U32:
    return build<std::uint32_t>(dtype, std::move(dims), values);
  case DType::U64:
    return build<std::uint64_t>(dtype, std::move(dims), values);
  case DType::Bool: {
    std::vector<std::uint8_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
      bits[i] = values[i] != 0;
    return TensorData::fromValues(dtype, std::move(dims), bits);
  }
  default:
    break;
  }
  LATHE_CHECK(false, "makeTensor for a non-arithmetic dtype");
  return {};
}

// Integer arithmetic that wraps instead of overflowing (undefined behaviour in C++).
std::int64_t wrap(std::uint64_t v) {
  return static_cast<std::int64_t>(v);
}
std::int64_t add(std::int64_t a, std::int64_t b) {
  return wrap(std::uint64_t(a) + std::uint64_t(b));
}
std::int64_t sub(std::int64_t a, std::int64_t b) {
  return wrap(std::uint64_t(a) - std::uint64_t(b));
}
std::int64_t mul(std::int64_t a, std::int64_t b) {
  return wrap(std::uint64_t(a) * std::uint64_t(b));
}

// --- data movement -----------------------------------------------------------------------

Result evalSameData(const Node& n, const TensorType& out) {
  return withDims(*constantData(n, 0), out.staticDims());
}

Result evalShape(const Node& n, const TensorType& out) {
  const TensorType& in = n.input(0)->type;
  const auto rank = static_cast<std::int64_t>(in.rank());
  std::int64_t start = n.attrInt("start", 0);
  start = std::clamp<std::int64_t>(start < 0 ? start + rank : start, 0, rank);
  std::vector<std::int64_t> dims;
  for (std::int64_t i = 0; i < out.staticDims()[0]; ++i) {
    const graph::Dim& d = (*in.shape)[static_cast<std::size_t>(start + i)];
    if (!d.isKnown())
      return std::nullopt;
    dims.push_back(d.value);
  }
  return makeTensor(DType::I64, out.staticDims(), dims);
}

Result evalSize(const Node& n, const TensorType& out) {
  const auto count = n.input(0)->type.numElements();
  if (!count)
    return std::nullopt;
  return makeTensor(DType::I64, {}, std::vector<std::int64_t>{*count});
}

Result evalConcat(const Node& n, const TensorType& out) {
  const Dims dims = out.staticDims();
  const auto axis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("axis", 0), static_cast<std::int64_t>(dims.size())));
  const std::int64_t outer = product(Dims(dims.begin(), dims.begin() + axis));
  const std::int64_t inner = product(Dims(dims.begin() + axis + 1, dims.end()));
  const std::size_t size = graph::dtypeSize(out.dtype);
  auto bytes = std::make_shared<std::string>();
  bytes->reserve(static_cast<std::size_t>(product(dims)) * size);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const TensorData* in = constantData(n, i);
      if (!in || in->dtype() != out.dtype)
        return std::nullopt;
      const auto chunk = static_cast<std::size_t>(in->dims()[axis] * inner) * size;
      bytes->append(reinterpret_cast<const char*>(in->data()) + o * chunk, chunk);
    }
  return TensorData(out.dtype, dims, std::move(bytes));
}

Result evalGather(const Node& n, const TensorType& out) {
  const TensorData &data = *constantData(n, 0), &indices = *constantData(n, 1);
  const Dims& in = data.dims();
  const auto axis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("axis", 0), static_cast<std::int64_t>(in.size())));
  const std::int64_t outer = product(Dims(in.begin(), in.begin() + axis));
  const std::int64_t inner = product(Dims(in.begin() + axis + 1, in.end()));
  const std::int64_t extent = in[axis];
  std::vector<std::int64_t> at;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t k = 0; k < indices.numElements(); ++k) {
      std::int64_t index = indices.elementAsInt(k);
      if (index < 0)
        index += extent;
      if (index < 0 || index >= extent)
        return std::nullopt; // the runtime reports it; folding must not guess
      for (std::int64_t j = 0; j < inner; ++j)
        at.push_back((o * extent + index) * inner + j);
    }
  return pickElements(data, out.staticDims(), at);
}

Result evalSlice(const Node& n, const TensorType& out) {
  const TensorData& data = *constantData(n, 0);
  const Dims& in = data.dims();
  const auto params = sliceParameters(n, static_cast<std::int64_t>(in.size()));
  if (!params)
    return std::nullopt;
  Dims start(in.size(), 0), step(in.size(), 1);
  for (std::size_t i = 0; i < params->axes.size(); ++i) {
    const auto a = static_cast<std::size_t>(params->axes[i]);
    const SliceAxis s = clampSlice(in[a], params->starts[i], params->ends[i], params->steps[i]);
    start[a] = s.start;
    step[a] = s.step;
  }
  const Dims strides = stridesOf(in);
  std::vector<std::int64_t> at;
  forEachCoordinate(out.staticDims(), [&](const Dims& c) {
    std::int64_t s = 0;
    for (std::size_t k = 0; k < c.size(); ++k)
      s += (start[k] + c[k] * step[k]) * strides[k];
    at.push_back(s);
  });
  return pickElements(data, out.staticDims(), at);
}

Result evalExpand(const Node& n, const TensorType& out) {
  const TensorData& data = *constantData(n, 0);
  return pickElements(data, out.staticDims(), broadcastSources(out.staticDims(), data.dims()));
}

Result evalTile(const Node& n, const TensorType& out) {
  const TensorData& data = *constantData(n, 0);
  const Dims strides = stridesOf(data.dims());
  std::vector<std::int64_t> at;
  forEachCoordinate(out.staticDims(), [&](const Dims& c) {
    std::int64_t s = 0;
    for (std::size_t k = 0; k < c.size(); ++k)
      s += (c[k] % data.dims()[k]) * strides[k];
    at.push_back(s);
  });
  return pickElements(data, out.staticDims(), at);
}

Result evalTranspose(const Node& n, const TensorType& out) {
  const TensorData& data = *constantData(n, 0);
  const auto perm = transposePermutation(n, static_cast<std::int64_t>(data.dims().size()));
  const Dims strides = stridesOf(data.dims());
  std::vector<std::int64_t> at;
  forEachCoordinate(out.staticDims(), [&](const Dims& c) {
    std::int64_t s = 0;
    for (std::size_t k = 0; k < c.size(); ++k)
      s += c[k] * strides[static_cast<std::size_t>(perm[k])];
    at.push_back(s);
  });
  return pickElements(data, out.staticDims(), at);
}

Result evalWhere(const Node& n, const TensorType& out) {
  const TensorData &cond = *constantData(n, 0), &x = *constantData(n, 1), &y = *constantData(n, 2);
  if (x.dtype() != y.dtype() || x.dtype() != out.dtype)
    return std::nullopt;
  const Dims dims = out.staticDims();
  const auto c = broadcastSources(dims, cond.dims()), xs = broadcastSources(dims, x.dims()),
             ys = broadcastSources(dims, y.dims());
  const std::size_t size = graph::dtypeSize(out.dtype);
  auto bytes = std::make_shared<std::string>(c.size() * size, '\0');
  for (std::size_t i = 0; i < c.size(); ++i) {
    const bool pickX = cond.elementAsInt(c[i]) != 0;
    std::memcpy(bytes->data() + i * size,
                (pickX ? x.data() + xs[i] * size : y.data() + ys[i] * size), size);
  }
  return TensorData(out.dtype, dims, std::move(bytes));
}

Result evalConstantOfShape(const Node& n, const TensorType& out) {
  TensorData value = TensorData::fromValues(DType::F32, {1}, std::vector<float>{0.0f});
  if (const graph::Attribute* a = n.findAttribute("value"); a && a->is<TensorData>())
    value = a->as<TensorData>();
  if (value.isElided() || value.numElements() != 1)
    return std::nullopt;
  return pickElements(
      value, out.staticDims(),
      std::vector<std::int64_t>(static_cast<std::size_t>(out.numElements().value()), 0));
}

// --- arithmetic --------------------------------------------------------------------------

Result evalRange(const Node& n, const TensorType& out) {
  const TensorData &start = *constantData(n, 0), &delta = *constantData(n, 2);
  if (!isArithmetic(out.dtype) || out.dtype == DType::Bool)
    return std::nullopt;
  const std::int64_t count = out.staticDims()[0];
  if (graph::isFloat(out.dtype)) {
    std::vector<double> v(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
      v[static_cast<std::size_t>(i)] =
          start.elementAsDouble(0) + double(i) * delta.elementAsDouble(0);
    return makeTensor(out.dtype, {count}, v);
  }
  std::vector<std::int64_t> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = add(start.elementAsInt(0), mul(i, delta.elementAsInt(0)));
  return makeTensor(out.dtype, {count}, v);
}

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

Result evalBroadcast(const Node& n, const TensorType& out) {
  const std::string& op = n.opType();
  const Dims dims = out.staticDims();
  const DType dtype = constantData(n, 0)->dtype();
  std::vector<const TensorData*> ins;
  std::vector<std::vector<std::int64_t>> sources;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const TensorData* in = constantData(n, i);
    // Only Pow may mix types (a float base with an integer exponent is computed in double).
    if (!in || !isArithmetic(in->dtype()) ||
        (in->dtype() != dtype && !(op == "Pow" && graph::isFloat(dtype))))
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

struct EvaluatorInfo {
  Evaluator evaluate;
  bool typeOnly; // needs only its input's type, not constant data (Shape, Size)
};

const std::map<std::string, EvaluatorInfo, std::less<>>& evaluators() {
  static const auto table = [] {
    std::map<std::string, EvaluatorInfo, std::less<>> m;
    for (const char* op : {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"})
      m[op] = {evalSameData, false};
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod", "Pow", "Min", "Max", "Sum", "Equal",
                           "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"})
      m[op] = {evalBroadcast, false};
    for (const char* op : {"Neg", "Abs", "Floor", "Ceil", "Sqrt", "Sign", "Not"})
      m[op] = {evalUnary, false};
    for (const char* op : {"ReduceSum", "ReduceProd", "ReduceMin", "ReduceMax"})
      m[op] = {evalReduce, false};
    m["Shape"] = {evalShape, true};
    m["Size"] = {evalSize, true};
    m["Cast"] = {evalCast, false};
    m["Concat"] = {evalConcat, false};
    m["Gather"] = {evalGather, false};
    m["Slice"] = {evalSlice, false};
    m["ConstantOfShape"] = {evalConstantOfShape, false};
    m["Range"] = {evalRange, false};
    m["Expand"] = {evalExpand, false};
    m["Tile"] = {evalTile, false};
    m["Transpose"] = {evalTranspose, false};
    m["Where"] = {evalWhere, false};
    return m;
  }();
  return table;
}

} // namespace

std::optional<TensorData> constantNodeValue(const Node& node) {
  if (const graph::Attribute* a = node.findAttribute("value"); a && a->is<TensorData>())
    return a->as<TensorData>();
  if (const graph::Attribute* a = node.findAttribute("value_float"); a && a->is<float>())
    return TensorData::fromValues(DType::F32, {}, std::vector<float>{a->as<float>()});
  if (const graph::Attribute* a = node.findAttribute("value_int"); a && a->is<std::int64_t>())
    return TensorData::fromValues(DType::I64, {}, std::vector<std::int64_t>{a->as<std::int64_t>()});
  if (const graph::Attribute* a = node.findAttribute("value_floats");
      a && a->is<std::vector<float>>()) {
    const auto& v = a->as<std::vector<float>>();
    return TensorData::fromValues(DType::F32, {static_cast<std::int64_t>(v.size())}, v);
  }
  if (const graph::Attribute* a = node.findAttribute("value_ints");
      a && a->is<std::vector<std::int64_t>>()) {
    const auto& v = a->as<std::vector<std::int64_t>>();
    return TensorData::fromValues(DType::I64, {static_cast<std::int64_t>(v.size())}, v);
  }
  return std::nullopt;
}

std::optional<std::vector<TensorData>> evaluateConstantNode(const Node& node,
                                                            std::int64_t maxElements) {
  if (!node.domain().empty() || node.outputs().size() != 1)
    return std::nullopt;
  const auto& table = evaluators();
  const auto it = table.find(node.opType());
  if (it == table.end())
    return std::nullopt;
  const EvaluatorInfo& info = it->second;
  if (info.typeOnly ? !node.input(0) : node.inputs.empty())
    return std::nullopt;
  if (!info.typeOnly)
    for (std::size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] && !constantData(node, i))
        return std::nullopt;
  const auto types = inferOutputTypes(node);
  if (!types || types->empty())
    return std::nullopt;
  const TensorType& out = types->front();
  const auto count = out.numElements();
  if (out.dtype == DType::Undefined || !count || *count > maxElements)
    return std::nullopt;
  Result result = info.evaluate(node, out);
  if (!result)
    return std::nullopt;
  LATHE_CHECK(result->dtype() == out.dtype && result->dims() == out.staticDims(),
              "evaluated " + node.describe() + " disagrees with its shape rule");
  return std::vector<TensorData>{std::move(*result)};
}

} // namespace lathe::passes
