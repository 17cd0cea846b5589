#include "engine/frontend/tflite/tflite_convert.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace lathe::frontend::tflite {

using graph::DType;
using graph::TensorData;
using graph::Value;

// --- Converter ---

void Converter::reserveNames() {
  for (std::size_t i = 0; i < model_.tensorCount(); ++i)
    reserved_[model_.tensor(static_cast<std::int64_t>(i), "the tensor table").name] = 1;
}

std::string Converter::freshName(const std::string& base) {
  std::string candidate = base;
  for (int n = 1; graph_.findValue(candidate) || reserved_.count(candidate); ++n)
    candidate = base + "_" + std::to_string(n);
  return candidate;
}

Value* Converter::tensorValue(std::int64_t index, const std::string& reader) {
  if (auto it = values_.find(index); it != values_.end())
    return it->second;
  const TensorInfo& info = model_.tensor(index, reader);
  std::optional<TensorData> data = model_.constantData(index);
  if (!data)
    throw Error(ErrorKind::Invalid,
                reader + " reads tensor '" + info.name +
                    "', which is not a model input, has no data and is written by no earlier "
                    "operator",
                {model_.path(), info.name, {}});
  Value* v = graph_.addConstant(info.name, std::move(*data));
  values_[index] = v;
  return v;
}

Value* Converter::dequantized(std::int64_t index, const std::string& reader) {
  if (auto it = dequantized_.find(index); it != dequantized_.end())
    return it->second;
  Value* raw = tensorValue(index, reader);
  const TensorInfo& info = model_.tensor(index, reader);
  const std::string base = info.name + "/dequantized";
  Value* scale = graph_.addConstant(
      freshName(base + "_scale"),
      TensorData::fromValues(DType::F32,
                             info.quant.perTensor() ? std::vector<std::int64_t>{}
                                                    : std::vector<std::int64_t>{std::int64_t(
                                                          info.quant.scales.size())},
                             info.quant.scales));
  std::vector<std::int64_t> dims;
  if (!info.quant.perTensor())
    dims = {std::int64_t(info.quant.scales.size())};
  Value* zero = graph_.addConstant(freshName(base + "_zero_point"),
                                   zeroPointData(info.dtype, dims, info.quant.zeroPoints));
  graph::Node* n = graph_.addNode("DequantizeLinear", {raw, scale, zero}, {freshName(base)});
  n->name = n->output()->name();
  if (!info.quant.perTensor())
    n->attributes["axis"] = graph::Attribute{std::int64_t(info.quant.axis)};
  dequantized_[index] = n->output();
  return n->output();
}

void Converter::bind(std::int64_t index, Value* v) {
  values_[index] = v;
}

TensorData zeroPointData(DType dtype, const std::vector<std::int64_t>& dims,
                         const std::vector<std::int64_t>& zeroPoints) {
  const std::size_t size = graph::dtypeSize(dtype);
  auto bytes = std::make_shared<std::string>(zeroPoints.size() * size, '\0');
  for (std::size_t i = 0; i < zeroPoints.size(); ++i) {
    const std::int64_t z = zeroPoints[i];
    switch (dtype) {
    case DType::I8: {
      const auto v = static_cast<std::int8_t>(z);
      std::memcpy(bytes->data() + i, &v, 1);
      break;
    }
    case DType::U8: {
      const auto v = static_cast<std::uint8_t>(z);
      std::memcpy(bytes->data() + i, &v, 1);
      break;
    }
    case DType::I16: {
      const auto v = static_cast<std::int16_t>(z);
      std::memcpy(bytes->data() + 2 * i, &v, 2);
      break;
    }
    case DType::I32: {
      const auto v = static_cast<std::int32_t>(z);
      std::memcpy(bytes->data() + 4 * i, &v, 4);
      break;
    }
    default:
      LATHE_CHECK(false, "zero point of a non-integer type");
    }
  }
  return TensorData(dtype, dims, std::move(bytes));
}

// --- OpContext ---

OpContext::OpContext(Converter& converter, const lathe_tflite::Operator& op, std::size_t index,
                     std::string opName, bool dequantizeInputs)
    : cv_(converter), op_(op), index_(index), opName_(std::move(opName)),
      dequantizeInputs_(dequantizeInputs) {
  outputs_.assign(outputCount(), nullptr);
}

graph::Graph& OpContext::graph() {
  return cv_.graph();
}

std::size_t OpContext::inputCount() const {
  return op_.inputs() ? op_.inputs()->size() : 0;
}

std::int64_t OpContext::tensorIndex(std::size_t i) const {
  if (i >= inputCount())
    invalid("has " + std::to_string(inputCount()) + " inputs; input " + std::to_string(i) +
            " is needed");
  return op_.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
}

bool OpContext::hasInput(std::size_t i) const {
  return i < inputCount() && op_.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)) != -1;
}

const TensorInfo& OpContext::inputInfo(std::size_t i) const {
  return cv_.model().tensor(tensorIndex(i), what());
}

Value* OpContext::input(std::size_t i) {
  if (dequantizeInputs_ && quantized(i))
    return cv_.dequantized(tensorIndex(i), what());
  return rawInput(i);
}

Value* OpContext::rawInput(std::size_t i) {
  return cv_.tensorValue(tensorIndex(i), what());
}

bool OpContext::inputIsConstant(std::size_t i) const {
  return hasInput(i) && cv_.model().constantData(tensorIndex(i)).has_value();
}

TensorData OpContext::constantInput(std::size_t i, const std::string& what_) {
  std::optional<TensorData> data = cv_.model().constantData(tensorIndex(i));
  if (!data)
    unsupported(what_ + " (input " + std::to_string(i) + ", tensor '" + inputInfo(i).name +
                "') must be a constant");
  return std::move(*data);
}

std::vector<std::int64_t> OpContext::constantInts(std::size_t i, const std::string& what_) {
  const TensorData data = constantInput(i, what_);
  if (data.dtype() != DType::I32 && data.dtype() != DType::I64)
    invalid(what_ + " must hold int32 or int64 values");
  std::vector<std::int64_t> out;
  for (std::int64_t k = 0; k < data.numElements(); ++k)
    out.push_back(data.elementAsInt(k));
  return out;
}

bool OpContext::quantized(std::size_t i) const {
  if (!hasInput(i))
    return false;
  const TensorInfo& info = inputInfo(i);
  return info.quant.present() &&
         (info.dtype == DType::I8 || info.dtype == DType::U8 || info.dtype == DType::I16);
}

std::size_t OpContext::outputCount() const {
  return op_.outputs() ? op_.outputs()->size() : 0;
}

const TensorInfo& OpContext::outputInfo(std::size_t k) const {
  if (k >= outputCount())
    invalid("has " + std::to_string(outputCount()) + " outputs; output " + std::to_string(k) +
            " is needed");
  return cv_.model().tensor(op_.outputs()->Get(static_cast<flatbuffers::uoffset_t>(k)), what());
}

std::string OpContext::what() const {
  return "operator " + std::to_string(index_);
}

std::string OpContext::outputFileName() const {
  if (op_.outputs() && op_.outputs()->size() > 0) {
    const std::int64_t idx = op_.outputs()->Get(0);
    if (idx >= 0 && static_cast<std::size_t>(idx) < cv_.model().tensorCount())
      return cv_.model().tensor(idx, "").fileName;
  }
  return {};
}

void OpContext::setOutput(std::size_t k, Value* v) {
  const TensorInfo& info = outputInfo(k);
  const std::int64_t index = op_.outputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
  if (cv_.bound(index))
    invalid("writes tensor '" + info.name + "', which already has a value");
  const bool quantizedOut =
      info.quant.present() &&
      (info.dtype == DType::I8 || info.dtype == DType::U8 || info.dtype == DType::I16);
  Value* result = nullptr;
  if (dequantizeInputs_ && quantizedOut) {
    result = quantize(v, info, info.name);
  } else {
    graph::Node* producer = v->producer();
    const bool ours =
        producer && std::find(created_.begin(), created_.end(), producer) != created_.end();
    bool usedHere = false;
    for (graph::Node* n : created_)
      usedHere = usedHere || std::find(n->inputs.begin(), n->inputs.end(), v) != n->inputs.end();
    if (ours && !usedHere && producer->outputs().size() == 1) {
      // Rebuild the last node under the tensor's name.
      graph::Node* renamed = graph().addNode(producer->opType(), producer->inputs, {info.name});
      renamed->attributes = producer->attributes;
      renamed->name = info.name;
      created_.erase(std::find(created_.begin(), created_.end(), producer));
      graph().removeNodes({producer});
      created_.push_back(renamed);
      result = renamed->output();
    } else {
      graph::Node* n = graph().addNode("Identity", {v}, {info.name});
      n->name = info.name;
      created_.push_back(n);
      result = n->output();
    }
  }
  outputs_[k] = result;
  cv_.bind(index, result);
}

std::string OpContext::newName(const std::string& suffix) {
  const std::string base = outputCount() ? outputInfo(0).name : "operator" + std::to_string(index_);
  return cv_.freshName(base + "/" + suffix);
}

Value* OpContext::add(const std::string& opType, std::vector<Value*> inputs,
                      std::map<std::string, graph::Attribute> attributes,
                      const std::string& suffix) {
  const std::string name = newName(suffix.empty() ? opType : suffix);
  graph::Node* n = graph().addNode(opType, std::move(inputs), {name});
  n->name = name;
  n->attributes = std::move(attributes);
  created_.push_back(n);
  return n->output();
}

Value* OpContext::constant(const std::string& suffix, TensorData data) {
  return graph().addConstant(newName(suffix), std::move(data));
}

Value* OpContext::ints(const std::string& suffix, const std::vector<std::int64_t>& values) {
  return constant(suffix,
                  TensorData::fromValues(DType::I64, {std::int64_t(values.size())}, values));
}

Value* OpContext::floats(const std::string& suffix, const std::vector<float>& values,
                         std::vector<std::int64_t> dims) {
  return constant(suffix, TensorData::fromValues(DType::F32, std::move(dims), values));
}

Value* OpContext::dequantize(Value* v, const TensorInfo& info) {
  const bool perTensor = info.quant.perTensor();
  std::vector<std::int64_t> dims;
  if (!perTensor)
    dims = {std::int64_t(info.quant.scales.size())};
  Value* scale = floats("scale", info.quant.scales, dims);
  Value* zero = constant("zero_point", zeroPointData(info.dtype, dims, info.quant.zeroPoints));
  std::map<std::string, graph::Attribute> attrs;
  if (!perTensor)
    attrs["axis"] = graph::Attribute{std::int64_t(info.quant.axis)};
  return add("DequantizeLinear", {v, scale, zero}, std::move(attrs));
}

Value* OpContext::quantize(Value* v, const TensorInfo& info, const std::string& name) {
  if (!info.quant.perTensor())
    unsupported("output '" + info.name + "' is quantized per channel");
  Value* scale = floats("output_scale", info.quant.scales);
  Value* zero = constant("output_zero_point", zeroPointData(info.dtype, {}, info.quant.zeroPoints));
  if (name.empty())
    return add("QuantizeLinear", {v, scale, zero});
  graph::Node* n = graph().addNode("QuantizeLinear", {v, scale, zero}, {name});
  n->name = name;
  created_.push_back(n);
  return n->output();
}

void OpContext::unsupported(const std::string& reason) const {
  throw Error(ErrorKind::Unsupported, what() + ": " + reason,
              {cv_.model().path(), outputFileName(), opName_});
}

void OpContext::invalid(const std::string& reason) const {
  throw Error(ErrorKind::Invalid, what() + " " + reason,
              {cv_.model().path(), outputFileName(), opName_});
}

void OpContext::requireInputs(std::size_t min, std::size_t max) const {
  const std::size_t n = inputCount();
  if (n < min || n > max)
    invalid(
        "has " + std::to_string(n) + " inputs; " + opName_ + " takes " +
        (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)));
  for (std::size_t i = 0; i < min; ++i)
    if (!hasInput(i))
      invalid("lacks its required input " + std::to_string(i));
}

// --- helpers ---

Value* applyActivation(OpContext& ctx, Value* v, lathe_tflite::ActivationFunctionType act) {
  using A = lathe_tflite::ActivationFunctionType;
  switch (act) {
  case A::NONE:
    return v;
  case A::RELU:
    return ctx.add("Relu", {v});
  case A::RELU6:
    return ctx.add("Clip", {v, ctx.floats("min", {0.0f}), ctx.floats("max", {6.0f})});
  case A::RELU_N1_TO_1:
    return ctx.add("Clip", {v, ctx.floats("min", {-1.0f}), ctx.floats("max", {1.0f})});
  case A::TANH:
    return ctx.add("Tanh", {v});
  default:
    ctx.unsupported("fused activation " +
                    std::string(lathe_tflite::EnumNameActivationFunctionType(act)));
  }
}

Value* toNchw(OpContext& ctx, Value* v) {
  return ctx.add("Transpose", {v},
                 {{"perm", graph::Attribute{std::vector<std::int64_t>{0, 3, 1, 2}}}}, "to_nchw");
}

Value* toNhwc(OpContext& ctx, Value* v) {
  return ctx.add("Transpose", {v},
                 {{"perm", graph::Attribute{std::vector<std::int64_t>{0, 2, 3, 1}}}}, "to_nhwc");
}

TensorData permuteConstant(const TensorData& data, const std::vector<std::int64_t>& perm) {
  const std::vector<std::int64_t>& dims = data.dims();
  const std::size_t rank = dims.size();
  LATHE_CHECK(perm.size() == rank, "permutation rank");
  const std::size_t elem = graph::dtypeSize(data.dtype());
  std::vector<std::int64_t> outDims(rank), inStrides(rank, 1);
  for (std::size_t d = rank; d-- > 1;)
    inStrides[d - 1] = inStrides[d] * dims[d];
  for (std::size_t d = 0; d < rank; ++d)
    outDims[d] = dims[static_cast<std::size_t>(perm[d])];
  auto bytes = std::make_shared<std::string>(data.byteSize(), '\0');
  const auto* src = reinterpret_cast<const char*>(data.data());
  std::vector<std::int64_t> idx(rank, 0);
  const std::int64_t n = data.numElements();
  for (std::int64_t o = 0; o < n; ++o) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d)
      offset += idx[d] * inStrides[static_cast<std::size_t>(perm[d])];
    std::memcpy(bytes->data() + static_cast<std::size_t>(o) * elem,
                src + static_cast<std::size_t>(offset) * elem, elem);
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < outDims[d])
        break;
      idx[d] = 0;
    }
  }
  return TensorData(data.dtype(), outDims, std::move(bytes));
}

std::vector<std::int64_t> windowPads(lathe_tflite::Padding padding, std::int64_t inH,
                                     std::int64_t inW, std::int64_t kH, std::int64_t kW,
                                     std::int64_t strideH, std::int64_t strideW, std::int64_t dilH,
                                     std::int64_t dilW) {
  if (padding != lathe_tflite::Padding::SAME)
    return {0, 0, 0, 0};
  auto total = [](std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d) {
    const std::int64_t out = (in + s - 1) / s;
    return std::max<std::int64_t>((out - 1) * s + (k - 1) * d + 1 - in, 0);
  };
  const std::int64_t th = total(inH, kH, strideH, dilH), tw = total(inW, kW, strideW, dilW);
  return {th / 2, tw / 2, th - th / 2, tw - tw / 2};
}

std::int64_t normalizeAxis(const OpContext& ctx, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= std::max<std::int64_t>(r, 1))
    ctx.invalid("has axis " + std::to_string(axis) + " for a tensor of rank " + std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

} // namespace lathe::frontend::tflite
