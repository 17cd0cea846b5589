// QUANTIZE, DEQUANTIZE and the integer forms of convolutions and fully connected layers.
//
// A quantized CONV_2D / DEPTHWISE_CONV_2D is QLinearConv: int8 (or uint8) activations and
// weights, per-channel weight scales, the int32 bias at scale input*weight, requantized to
// the output's scale and zero point; a fused activation clamps the quantized output to the
// codes of its range. A quantized FULLY_CONNECTED is MatMulInteger (int32 accumulators) plus
// the int32 bias, scaled to real values, activated and quantized. TFLite's integer kernels
// requantize with a fixed-point multiplier where these use float, so results may differ by
// one code at rounding ties.
#include "engine/frontend/tflite/tflite_convert.h"

#include <cmath>

namespace lathe::frontend::tflite {
namespace {

using A = lathe_tflite::ActivationFunctionType;
using B = lathe_tflite::BuiltinOperator;
using graph::Attribute;
using graph::DType;
using graph::TensorData;
using graph::Value;

void quantize(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  const TensorInfo& out = ctx.outputInfo(0);
  if (!out.quant.present())
    ctx.invalid("writes '" + out.name + "', which has no quantization parameters");
  Value* x = ctx.quantized(0) ? ctx.dequantize(ctx.rawInput(0), ctx.inputInfo(0)) : ctx.rawInput(0);
  if (!ctx.quantized(0) && !graph::isFloat(ctx.inputInfo(0).dtype))
    ctx.unsupported("quantizing a tensor of type " +
                    std::string(graph::dtypeName(ctx.inputInfo(0).dtype)));
  ctx.setOutput(0, ctx.quantize(x, out));
}

void dequantize(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  const TensorInfo& in = ctx.inputInfo(0);
  if (ctx.quantized(0)) {
    ctx.setOutput(0, ctx.dequantize(ctx.rawInput(0), in));
    return;
  }
  // Float16 weights stored for size, widened when the model runs.
  if (in.dtype == DType::F16 || in.dtype == DType::BF16) {
    ctx.setOutput(0, ctx.add("Cast", {ctx.rawInput(0)},
                             {{"to", Attribute{graph::onnxCodeOf(ctx.outputInfo(0).dtype)}}}));
    return;
  }
  ctx.unsupported("dequantizing '" + in.name + "', which has no quantization parameters");
}

// The quantization scale(s) of a tensor as a constant (scalar or [n]).
Value* scales(OpContext& ctx, const TensorInfo& info, const char* suffix) {
  std::vector<std::int64_t> dims;
  if (!info.quant.perTensor())
    dims = {std::int64_t(info.quant.scales.size())};
  return ctx.floats(suffix, info.quant.scales, dims);
}

Value* zeroPoints(OpContext& ctx, const TensorInfo& info, const char* suffix) {
  std::vector<std::int64_t> dims;
  if (!info.quant.perTensor())
    dims = {std::int64_t(info.quant.zeroPoints.size())};
  return ctx.constant(suffix, zeroPointData(info.dtype, dims, info.quant.zeroPoints));
}

// The codes a fused activation leaves of the output's range, or nothing when it clamps none.
void clampCodes(OpContext& ctx, Value*& v, const TensorInfo& out, A act) {
  if (act == A::NONE)
    return;
  const double scale = out.quant.scales[0];
  const double zero = static_cast<double>(out.quant.zeroPoints[0]);
  const double qmin = out.dtype == DType::U8 ? 0 : -128, qmax = out.dtype == DType::U8 ? 255 : 127;
  double lo = qmin, hi = qmax;
  auto code = [&](double real) { return std::clamp(zero + std::round(real / scale), qmin, qmax); };
  switch (act) {
  case A::RELU:
    lo = code(0.0);
    break;
  case A::RELU6:
    lo = code(0.0), hi = code(6.0);
    break;
  case A::RELU_N1_TO_1:
    lo = code(-1.0), hi = code(1.0);
    break;
  default:
    ctx.unsupported("fused activation " +
                    std::string(lathe_tflite::EnumNameActivationFunctionType(act)) +
                    " on a quantized output");
  }
  if (lo <= qmin && hi >= qmax)
    return;
  Value* l = ctx.constant("clamp_min", zeroPointData(out.dtype, {}, {std::int64_t(lo)}));
  Value* h = ctx.constant("clamp_max", zeroPointData(out.dtype, {}, {std::int64_t(hi)}));
  v = ctx.add("Clip", {v, l, h});
}

void checkQuantizedOperands(OpContext& ctx, std::size_t weights) {
  const TensorInfo& x = ctx.inputInfo(0);
  const TensorInfo& out = ctx.outputInfo(0);
  if (!x.quant.perTensor() || !out.quant.perTensor())
    ctx.unsupported("activations quantized per channel");
  if (!(x.dtype == DType::I8 || x.dtype == DType::U8) || out.dtype != x.dtype)
    ctx.unsupported("quantized activations of type " + std::string(graph::dtypeName(x.dtype)) +
                    " -> " + std::string(graph::dtypeName(out.dtype)) +
                    " (int8 and uint8 are supported)");
  const TensorInfo& w = ctx.inputInfo(weights);
  if (!ctx.quantized(weights) || !(w.dtype == DType::I8 || w.dtype == DType::U8))
    ctx.unsupported("float weights with quantized activations");
  if (ctx.hasInput(2) && ctx.inputInfo(2).dtype != DType::I32)
    ctx.unsupported("a bias of type " + std::string(graph::dtypeName(ctx.inputInfo(2).dtype)) +
                    " (int32 is supported)");
}

} // namespace

void quantizedConv(OpContext& ctx, bool depthwise) {
  checkQuantizedOperands(ctx, 1);
  const ConvGeometry geo = convGeometry(ctx, depthwise);
  const TensorInfo& x = ctx.inputInfo(0);
  const TensorInfo& w = ctx.inputInfo(1);
  const TensorInfo& out = ctx.outputInfo(0);
  const int channelAxis = depthwise ? 3 : 0;
  if (!w.quant.perTensor() && w.quant.axis != channelAxis)
    ctx.unsupported("weights quantized along axis " + std::to_string(w.quant.axis));
  if (!ctx.inputIsConstant(1))
    ctx.unsupported("computed weights in a quantized convolution");
  Value* weights = permutedWeights(ctx, 1,
                                   depthwise ? std::vector<std::int64_t>{3, 0, 1, 2}
                                             : std::vector<std::int64_t>{0, 3, 1, 2},
                                   false);
  std::vector<Value*> inputs{
      toNchw(ctx, ctx.rawInput(0)),           scales(ctx, x, "input_scale"),
      zeroPoints(ctx, x, "input_zero_point"), weights,
      scales(ctx, w, "weight_scale"),         zeroPoints(ctx, w, "weight_zero_point"),
      scales(ctx, out, "output_scale"),       zeroPoints(ctx, out, "output_zero_point")};
  if (ctx.hasInput(2))
    inputs.push_back(ctx.rawInput(2));
  Value* y = ctx.add("QLinearConv", std::move(inputs), geo.attributes());
  clampCodes(ctx, y, out, geo.activation);
  ctx.setOutput(0, toNhwc(ctx, y));
}

void quantizedFullyConnected(OpContext& ctx) {
  checkQuantizedOperands(ctx, 1);
  const auto* o = ctx.options<lathe_tflite::FullyConnectedOptions>();
  const TensorInfo& x = ctx.inputInfo(0);
  const TensorInfo& w = ctx.inputInfo(1);
  const TensorInfo& out = ctx.outputInfo(0);
  if (w.shape.size() != 2)
    ctx.invalid("needs rank-2 weights");
  if (!w.quant.perTensor() && w.quant.axis != 0)
    ctx.unsupported("weights quantized along axis " + std::to_string(w.quant.axis));
  if (!ctx.inputIsConstant(1))
    ctx.unsupported("computed weights in a quantized fully connected layer");
  Value* flat = flattenForFullyConnected(ctx);
  Value* acc = ctx.add("MatMulInteger", {flat, permutedWeights(ctx, 1, {1, 0}, false),
                                         zeroPoints(ctx, x, "input_zero_point"),
                                         zeroPoints(ctx, w, "weight_zero_point")});
  if (ctx.hasInput(2))
    acc = ctx.add("Add", {acc, ctx.rawInput(2)}, {}, "add_bias");
  // Real value = accumulator * input scale * weight scale (per output channel).
  std::vector<float> combined;
  for (float ws : w.quant.scales)
    combined.push_back(x.quant.scales[0] * ws);
  std::vector<std::int64_t> dims;
  if (combined.size() > 1)
    dims = {std::int64_t(combined.size())};
  Value* real =
      ctx.add("Mul", {ctx.add("Cast", {acc}, {{"to", Attribute{graph::onnxCodeOf(DType::F32)}}}),
                      ctx.floats("accumulator_scale", combined, dims)});
  real = applyActivation(ctx, real, o ? o->fused_activation_function() : A::NONE);
  Value* y = ctx.quantize(real, out);
  if (o && o->keep_num_dims())
    y = ctx.add("Reshape", {y, ctx.ints("shape", out.shape)});
  ctx.setOutput(0, y);
}

void registerQuantOps(std::unordered_map<int, OpEntry>& t) {
  t[static_cast<int>(B::QUANTIZE)] = {quantize, QuantMode::Native};
  t[static_cast<int>(B::DEQUANTIZE)] = {dequantize, QuantMode::Native};
}

} // namespace lathe::frontend::tflite
