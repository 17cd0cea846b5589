// Compile-time evaluation: shared helpers, the data-movement ops and the dispatch. The
// arithmetic ops live in constant_evaluator_math.cpp.

#include "engine/graph_passes/constant_evaluator.h"

#include "engine/graph_passes/constant_evaluator_internal.h"
#include "engine/graph_passes/shape_rules.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace lathe::passes::eval {

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

namespace {

template <typename T, typename V>
TensorData build(DType dtype, Dims dims, const std::vector<V>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    out[i] = static_cast<T>(values[i]);
  return TensorData::fromValues(dtype, std::move(dims), out);
}

template <typename V>
TensorData makeTensorOf(DType dtype, Dims dims, const std::vector<V>& values) {
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

std::int64_t wrap(std::uint64_t v) {
  return static_cast<std::int64_t>(v);
}

} // namespace

TensorData makeTensor(DType dtype, Dims dims, const std::vector<double>& values) {
  return makeTensorOf(dtype, std::move(dims), values);
}

TensorData makeTensor(DType dtype, Dims dims, const std::vector<std::int64_t>& values) {
  return makeTensorOf(dtype, std::move(dims), values);
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

std::int64_t add(std::int64_t a, std::int64_t b) {
  return wrap(std::uint64_t(a) + std::uint64_t(b));
}
std::int64_t sub(std::int64_t a, std::int64_t b) {
  return wrap(std::uint64_t(a) - std::uint64_t(b));
}
std::int64_t mul(std::int64_t a, std::int64_t b) {
  return wrap(std::uint64_t(a) * std::uint64_t(b));
}

TensorData withDims(const TensorData& src, Dims dims) {
  auto bytes =
      std::make_shared<std::string>(reinterpret_cast<const char*>(src.data()), src.byteSize());
  return TensorData(src.dtype(), std::move(dims), std::move(bytes));
}

} // namespace lathe::passes::eval

namespace lathe::passes {
namespace {

using namespace eval;

// The elements of `src` at the given flat indices, as a tensor of the same dtype.
TensorData pickElements(const TensorData& src, Dims dims, const std::vector<std::int64_t>& at) {
  const std::size_t size = graph::dtypeSize(src.dtype());
  auto bytes = std::make_shared<std::string>(at.size() * size, '\0');
  for (std::size_t i = 0; i < at.size(); ++i)
    std::memcpy(bytes->data() + i * size, src.data() + at[i] * size, size);
  return TensorData(src.dtype(), std::move(dims), std::move(bytes));
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
