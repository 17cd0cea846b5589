// Transposed convolutions: the builtin TRANSPOSE_CONV and MediaPipe's custom operator
// Convolution2DTransposeBias (segmentation models' last upsampling layer), both as a
// ConvTranspose between NHWC <-> NCHW Transposes.
#include "engine/frontend/tflite/tflite_convert.h"

#include <cstring>

namespace lathe::frontend::tflite {
namespace {

using A = lathe_tflite::ActivationFunctionType;
using B = lathe_tflite::BuiltinOperator;
using P = lathe_tflite::Padding;
using graph::Attribute;
using graph::Value;

// TRANSPOSE_CONV: inputs output_shape, weights [O, kH, kW, I], input, and (newer files) bias.
void transposeConv(OpContext& ctx) {
  ctx.requireInputs(3, 4);
  const auto& o = requiredOptions<lathe_tflite::TransposeConvOptions>(ctx, "TransposeConvOptions");
  const std::vector<std::int64_t> shape = ctx.constantInts(0, "the output shape");
  if (shape != ctx.outputInfo(0).shape)
    ctx.invalid("asks for an output shape that differs from its output tensor's");
  transposedConv(ctx, 2, 1, ctx.hasInput(3) ? 3 : -1, o.padding(), o.stride_h(), o.stride_w(),
                 o.fused_activation_function());
}

// MediaPipe's Convolution2DTransposeBias: inputs input, weights [O, kH, kW, I], bias; its
// custom options are the bytes of TFLite's C struct TfLiteTransposeConvParams: padding
// (1 same, 2 valid), stride width, stride height, each a little-endian int32.
void convolution2DTransposeBias(OpContext& ctx) {
  ctx.requireInputs(3, 3);
  const auto* bytes = ctx.op().custom_options();
  if (!bytes || bytes->size() < 12)
    ctx.invalid("has " + std::to_string(bytes ? bytes->size() : 0) +
                " bytes of custom options; it needs padding and two strides (12 bytes)");
  std::int32_t fields[3];
  std::memcpy(fields, bytes->data(), sizeof fields);
  if (fields[0] != 1 && fields[0] != 2)
    ctx.invalid("has padding " + std::to_string(fields[0]) + " (1 is same, 2 is valid)");
  transposedConv(ctx, 0, 1, 2, fields[0] == 1 ? P::SAME : P::VALID, fields[2], fields[1], A::NONE);
}

} // namespace

void transposedConv(OpContext& ctx, std::size_t x, std::size_t weights, int bias,
                    lathe_tflite::Padding padding, std::int64_t strideH, std::int64_t strideW,
                    lathe_tflite::ActivationFunctionType activation) {
  const TensorInfo& in = ctx.inputInfo(x);
  const TensorInfo& w = ctx.inputInfo(weights);
  const TensorInfo& out = ctx.outputInfo(0);
  if (in.shape.size() != 4 || w.shape.size() != 4 || out.shape.size() != 4)
    ctx.invalid("needs rank-4 input, weights and output");
  if (w.shape[3] != in.shape[3] || w.shape[0] != out.shape[3] || in.shape[0] != out.shape[0])
    ctx.invalid("has weights [" + std::to_string(w.shape[0]) + ", ..., " +
                std::to_string(w.shape[3]) + "] for " + std::to_string(in.shape[3]) +
                " input and " + std::to_string(out.shape[3]) + " output channels");
  if (strideH < 1 || strideW < 1 || strideH > 1024 || strideW > 1024)
    ctx.invalid("has a stride below 1 or above 1024");
  if (ctx.quantized(x) || ctx.quantized(weights))
    ctx.unsupported("quantized transposed convolutions");
  // TensorFlow defines the layer as the gradient of a convolution of the output (size o)
  // that gives the input (size i): SAME needs ceil(o / s) = i, VALID ceil((o - k + 1) / s) = i,
  // and SAME pads (i - 1) s + k - o, the smaller half first. What that leaves past the
  // last input's reach (at most s - 1) is ConvTranspose's output_padding.
  std::vector<std::int64_t> begin(2), end(2), extra(2);
  const std::int64_t strides[2] = {strideH, strideW};
  for (int d = 0; d < 2; ++d) {
    const std::int64_t i = in.shape[1 + d], k = w.shape[1 + d], o = out.shape[1 + d],
                       s = strides[d];
    const std::int64_t expect = padding == P::SAME ? (o + s - 1) / s : (o - k + s) / s;
    if (k < 1 || o < 1 || expect != i)
      ctx.invalid("writes " + std::to_string(o) + " along spatial axis " + std::to_string(d) +
                  ", which a " + std::string(padding == P::SAME ? "SAME" : "VALID") +
                  " convolution with window " + std::to_string(k) + " and stride " +
                  std::to_string(s) + " does not take to " + std::to_string(i));
    const std::int64_t total =
        padding == P::SAME ? std::max<std::int64_t>((i - 1) * s + k - o, 0) : 0;
    begin[d] = total / 2;
    const std::int64_t reach = (i - 1) * s + k - begin[d];
    end[d] = std::max<std::int64_t>(reach - o, 0);
    extra[d] = std::max<std::int64_t>(o - reach, 0);
  }
  Value* wt = permutedWeights(ctx, weights, {3, 0, 1, 2}, true); // [I, O, kH, kW]
  std::vector<Value*> inputs{toNchw(ctx, ctx.input(x)), wt};
  if (bias >= 0) {
    const auto b = static_cast<std::size_t>(bias);
    if (ctx.inputInfo(b).shape.size() != 1 || ctx.inputInfo(b).shape[0] != out.shape[3])
      ctx.invalid("has a bias that is not one value per output channel");
    inputs.push_back(ctx.input(b));
  }
  std::map<std::string, Attribute> attrs{
      {"kernel_shape", Attribute{std::vector<std::int64_t>{w.shape[1], w.shape[2]}}},
      {"strides", Attribute{std::vector<std::int64_t>{strideH, strideW}}},
      {"pads", Attribute{std::vector<std::int64_t>{begin[0], begin[1], end[0], end[1]}}},
      {"output_padding", Attribute{extra}}};
  Value* y = ctx.add("ConvTranspose", std::move(inputs), std::move(attrs));
  ctx.setOutput(0, toNhwc(ctx, applyActivation(ctx, y, activation)));
}

void registerCustomOps(std::unordered_map<std::string, OpEntry>& t) {
  t["Convolution2DTransposeBias"] = {convolution2DTransposeBias, QuantMode::Float};
}

void registerTransposedOps(std::unordered_map<int, OpEntry>& t) {
  t[static_cast<int>(B::TRANSPOSE_CONV)] = {transposeConv, QuantMode::Float};
}

} // namespace lathe::frontend::tflite
