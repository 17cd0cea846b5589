// Convolutions, pools and resizing (NHWC in the file, NCHW between two Transposes in the
// graph), fully connected layers and batched matrix products.
#include "engine/frontend/tflite/tflite_convert.h"

namespace lathe::frontend::tflite {
namespace {

using A = lathe_tflite::ActivationFunctionType;
using B = lathe_tflite::BuiltinOperator;
using graph::Attribute;
using graph::Value;

void requireRank(const OpContext& ctx, const TensorInfo& info, std::size_t rank, const char* what) {
  if (info.shape.size() != rank)
    ctx.invalid("needs a rank-" + std::to_string(rank) + " " + what + "; '" + info.name +
                "' has rank " + std::to_string(info.shape.size()));
}

void conv(OpContext& ctx, bool depthwise) {
  ctx.requireInputs(2, 3);
  if (ctx.quantized(0)) {
    quantizedConv(ctx, depthwise);
    return;
  }
  ConvGeometry geo = convGeometry(ctx, depthwise);
  Value* w = permutedWeights(ctx, 1,
                             depthwise ? std::vector<std::int64_t>{3, 0, 1, 2}
                                       : std::vector<std::int64_t>{0, 3, 1, 2},
                             true);
  std::vector<Value*> inputs{toNchw(ctx, ctx.input(0)), w};
  if (ctx.hasInput(2))
    inputs.push_back(ctx.quantized(2) ? ctx.dequantize(ctx.rawInput(2), ctx.inputInfo(2))
                                      : ctx.input(2));
  Value* y = ctx.add("Conv", std::move(inputs), geo.attributes());
  ctx.setOutput(0, toNhwc(ctx, applyActivation(ctx, y, geo.activation)));
}

void conv2d(OpContext& ctx) {
  conv(ctx, false);
}
void depthwiseConv2d(OpContext& ctx) {
  conv(ctx, true);
}

void pool(OpContext& ctx, const char* onnxOp) {
  ctx.requireInputs(1, 1);
  const auto& o = requiredOptions<lathe_tflite::Pool2DOptions>(ctx, "Pool2DOptions");
  const TensorInfo& x = ctx.inputInfo(0);
  requireRank(ctx, x, 4, "input");
  if (o.filter_height() < 1 || o.filter_width() < 1 || o.stride_h() < 1 || o.stride_w() < 1)
    ctx.invalid("has a window or stride below 1");
  std::map<std::string, Attribute> attrs{
      {"kernel_shape", Attribute{std::vector<std::int64_t>{o.filter_height(), o.filter_width()}}},
      {"strides", Attribute{std::vector<std::int64_t>{o.stride_h(), o.stride_w()}}},
      {"pads", Attribute{windowPads(o.padding(), x.shape[1], x.shape[2], o.filter_height(),
                                    o.filter_width(), o.stride_h(), o.stride_w(), 1, 1)}}};
  if (std::string(onnxOp) == "AveragePool")
    attrs["count_include_pad"] = Attribute{std::int64_t(0)};
  Value* y = ctx.add(onnxOp, {toNchw(ctx, ctx.input(0))}, std::move(attrs));
  ctx.setOutput(0, toNhwc(ctx, applyActivation(ctx, y, o.fused_activation_function())));
}

void averagePool(OpContext& ctx) {
  pool(ctx, "AveragePool");
}
void maxPool(OpContext& ctx) {
  pool(ctx, "MaxPool");
}

// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR to a constant size. TensorFlow's source
// coordinate is out * in / size by default, (out + 0.5) * in / size - 0.5 with half-pixel
// centres (no - 0.5 for nearest, which then floors) and out * (in - 1) / (size - 1) with
// aligned corners (nearest rounds halves away from zero); indices are clamped to the input.
template <typename Options>
void resize(OpContext& ctx, bool nearest) {
  ctx.requireInputs(2, 2);
  const TensorInfo& x = ctx.inputInfo(0);
  requireRank(ctx, x, 4, "input");
  const std::vector<std::int64_t> size = ctx.constantInts(1, "the output size");
  if (size.size() != 2 || size[0] < 1 || size[1] < 1)
    ctx.invalid("needs a size of two positive extents");
  const Options* o = ctx.options<Options>();
  const bool alignCorners = o && o->align_corners();
  const bool halfPixel = o && o->half_pixel_centers();
  if (alignCorners && halfPixel)
    ctx.invalid("sets both align_corners and half_pixel_centers");
  const std::string mode = alignCorners ? "align_corners"
                           : halfPixel  ? (nearest ? "tf_half_pixel_for_nn" : "half_pixel")
                                        : "asymmetric";
  std::map<std::string, Attribute> attrs{
      {"mode", Attribute{std::string(nearest ? "nearest" : "linear")}},
      {"coordinate_transformation_mode", Attribute{mode}}};
  if (nearest)
    attrs["nearest_mode"] = Attribute{std::string(alignCorners ? "round_prefer_ceil" : "floor")};
  Value* sizes = ctx.ints("sizes", {x.shape[0], x.shape[3], size[0], size[1]});
  Value* y =
      ctx.add("Resize", {toNchw(ctx, ctx.input(0)), nullptr, nullptr, sizes}, std::move(attrs));
  ctx.setOutput(0, toNhwc(ctx, y));
}

void resizeBilinear(OpContext& ctx) {
  resize<lathe_tflite::ResizeBilinearOptions>(ctx, false);
}
void resizeNearest(OpContext& ctx) {
  resize<lathe_tflite::ResizeNearestNeighborOptions>(ctx, true);
}

void fullyConnected(OpContext& ctx) {
  ctx.requireInputs(2, 3);
  const auto* o = ctx.options<lathe_tflite::FullyConnectedOptions>();
  if (o && o->weights_format() != 0)
    ctx.unsupported("shuffled weight formats");
  if (ctx.quantized(0)) {
    quantizedFullyConnected(ctx);
    return;
  }
  const TensorInfo& w = ctx.inputInfo(1);
  requireRank(ctx, w, 2, "weight tensor");
  Value* x = flattenForFullyConnected(ctx);
  Value* y = ctx.add("MatMul", {x, permutedWeights(ctx, 1, {1, 0}, true)});
  if (ctx.hasInput(2))
    y = ctx.add("Add", {y, ctx.quantized(2) ? ctx.dequantize(ctx.rawInput(2), ctx.inputInfo(2))
                                            : ctx.input(2)});
  y = applyActivation(ctx, y, o ? o->fused_activation_function() : A::NONE);
  if (o && o->keep_num_dims())
    y = ctx.add("Reshape", {y, ctx.ints("shape", ctx.outputInfo(0).shape)});
  ctx.setOutput(0, y);
}

Value* swapLastAxes(OpContext& ctx, Value* v, std::size_t rank, const char* suffix) {
  std::vector<std::int64_t> perm;
  for (std::size_t d = 0; d < rank; ++d)
    perm.push_back(static_cast<std::int64_t>(d));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return ctx.add("Transpose", {v}, {{"perm", Attribute{perm}}}, suffix);
}

void batchMatMul(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  const auto* o = ctx.options<lathe_tflite::BatchMatMulOptions>();
  Value* a = ctx.input(0);
  Value* b = ctx.input(1);
  const std::size_t ra = ctx.inputInfo(0).shape.size(), rb = ctx.inputInfo(1).shape.size();
  if (ra < 2 || rb < 2)
    ctx.invalid("needs operands of rank 2 or more");
  if (o && o->adj_x())
    a = swapLastAxes(ctx, a, ra, "adj_x");
  if (o && o->adj_y())
    b = swapLastAxes(ctx, b, rb, "adj_y");
  ctx.setOutput(0, ctx.add("MatMul", {a, b}));
}

} // namespace

ConvGeometry convGeometry(OpContext& ctx, bool depthwise) {
  const TensorInfo& x = ctx.inputInfo(0);
  const TensorInfo& w = ctx.inputInfo(1);
  requireRank(ctx, x, 4, "input");
  requireRank(ctx, w, 4, "filter");
  ConvGeometry g;
  std::int64_t strideH = 0, strideW = 0, dilH = 1, dilW = 1;
  lathe_tflite::Padding padding;
  const std::int64_t channels = x.shape[3];
  if (depthwise) {
    const auto& o =
        requiredOptions<lathe_tflite::DepthwiseConv2DOptions>(ctx, "DepthwiseConv2DOptions");
    strideH = o.stride_h(), strideW = o.stride_w(), dilH = o.dilation_h_factor(),
    dilW = o.dilation_w_factor(), padding = o.padding();
    g.activation = o.fused_activation_function();
    if (w.shape[0] != 1 || channels == 0 || w.shape[3] % channels != 0)
      ctx.invalid("has a filter of shape [" + std::to_string(w.shape[0]) + ", ..., " +
                  std::to_string(w.shape[3]) + "] for " + std::to_string(channels) +
                  " input channels");
    g.group = channels;
  } else {
    const auto& o = requiredOptions<lathe_tflite::Conv2DOptions>(ctx, "Conv2DOptions");
    strideH = o.stride_h(), strideW = o.stride_w(), dilH = o.dilation_h_factor(),
    dilW = o.dilation_w_factor(), padding = o.padding();
    g.activation = o.fused_activation_function();
    if (w.shape[3] == 0 || channels % w.shape[3] != 0)
      ctx.invalid("has " + std::to_string(w.shape[3]) + " filter input channels for " +
                  std::to_string(channels) + " input channels");
    g.group = channels / w.shape[3];
  }
  if (strideH < 1 || strideW < 1 || dilH < 1 || dilW < 1)
    ctx.invalid("has a stride or dilation below 1");
  g.kernel = {w.shape[1], w.shape[2]};
  g.strides = {strideH, strideW};
  g.dilations = {dilH, dilW};
  g.pads = windowPads(padding, x.shape[1], x.shape[2], w.shape[1], w.shape[2], strideH, strideW,
                      dilH, dilW);
  return g;
}

std::map<std::string, Attribute> ConvGeometry::attributes() const {
  return {{"kernel_shape", Attribute{kernel}},
          {"strides", Attribute{strides}},
          {"dilations", Attribute{dilations}},
          {"pads", Attribute{pads}},
          {"group", Attribute{group}}};
}

Value* flattenForFullyConnected(OpContext& ctx) {
  const TensorInfo& x = ctx.inputInfo(0);
  const TensorInfo& w = ctx.inputInfo(1);
  const std::int64_t depth = w.shape[1];
  std::int64_t total = 1;
  for (std::int64_t d : x.shape)
    total *= d;
  if (depth == 0 || total % depth != 0)
    ctx.invalid("has an input of " + std::to_string(total) + " elements for weights of depth " +
                std::to_string(depth));
  Value* v = ctx.onIntegers() ? ctx.rawInput(0) : ctx.input(0);
  if (x.shape.size() == 2 && x.shape[1] == depth)
    return v;
  return ctx.add("Reshape", {v, ctx.ints("flat_shape", {total / depth, depth})});
}

Value* permutedWeights(OpContext& ctx, std::size_t i, const std::vector<std::int64_t>& perm,
                       bool dequantize) {
  TensorInfo info = ctx.inputInfo(i);
  Value* v = nullptr;
  if (ctx.inputIsConstant(i))
    v = ctx.constant(perm.size() == 2 ? "weights_transposed" : "weights_oihw",
                     permuteConstant(ctx.constantInput(i, "the weights"), perm));
  else
    v = ctx.add("Transpose", {ctx.rawInput(i)}, {{"perm", Attribute{perm}}}, "weights");
  if (dequantize && ctx.quantized(i)) {
    for (std::size_t d = 0; d < perm.size(); ++d)
      if (perm[d] == info.quant.axis) {
        info.quant.axis = static_cast<int>(d);
        break;
      }
    v = ctx.dequantize(v, info);
  }
  return v;
}

void registerSpatialOps(std::unordered_map<int, OpEntry>& t) {
  t[static_cast<int>(B::CONV_2D)] = {conv2d, QuantMode::Native};
  t[static_cast<int>(B::DEPTHWISE_CONV_2D)] = {depthwiseConv2d, QuantMode::Native};
  t[static_cast<int>(B::FULLY_CONNECTED)] = {fullyConnected, QuantMode::Native};
  t[static_cast<int>(B::AVERAGE_POOL_2D)] = {averagePool, QuantMode::Float};
  t[static_cast<int>(B::MAX_POOL_2D)] = {maxPool, QuantMode::Float};
  t[static_cast<int>(B::RESIZE_BILINEAR)] = {resizeBilinear, QuantMode::Float};
  t[static_cast<int>(B::RESIZE_NEAREST_NEIGHBOR)] = {resizeNearest, QuantMode::PassThrough};
  t[static_cast<int>(B::BATCH_MATMUL)] = {batchMatMul, QuantMode::Float};
}

} // namespace lathe::frontend::tflite
