// Operators that move values: reshapes, transposes, slices, padding, concatenation, gather.
// They run on the stored integers of quantized tensors when the parameters agree.
#include "engine/frontend/tflite/tflite_convert.h"

#include <limits>

namespace lathe::frontend::tflite {
namespace {

using A = lathe_tflite::ActivationFunctionType;
using B = lathe_tflite::BuiltinOperator;
using graph::Attribute;
using graph::Value;

// RESHAPE, SQUEEZE, EXPAND_DIMS: the file declares the output's shape, which is what the
// shape input or the options compute; Reshape to it.
void reshapeToDeclared(OpContext& ctx) {
  if (ctx.inputCount() < 1 || !ctx.hasInput(0))
    ctx.invalid("lacks its input");
  const std::vector<std::int64_t>& in = ctx.inputInfo(0).shape;
  const std::vector<std::int64_t>& out = ctx.outputInfo(0).shape;
  std::int64_t a = 1, b = 1;
  for (std::int64_t d : in)
    a *= d;
  for (std::int64_t d : out)
    b *= d;
  if (a != b)
    ctx.invalid("turns " + std::to_string(a) + " elements into a declared shape of " +
                std::to_string(b));
  ctx.setOutput(0, ctx.add("Reshape", {ctx.input(0), ctx.ints("shape", out)}));
}

void squeeze(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  const std::vector<std::int64_t>& in = ctx.inputInfo(0).shape;
  std::vector<std::int64_t> axes;
  const auto* o = ctx.options<lathe_tflite::SqueezeOptions>();
  if (o && o->squeeze_dims() && o->squeeze_dims()->size() > 0) {
    for (int a : *o->squeeze_dims())
      axes.push_back(normalizeAxis(ctx, a, in.size()));
  } else {
    for (std::size_t d = 0; d < in.size(); ++d)
      if (in[d] == 1)
        axes.push_back(static_cast<std::int64_t>(d));
  }
  for (std::int64_t a : axes)
    if (in[static_cast<std::size_t>(a)] != 1)
      ctx.invalid("squeezes axis " + std::to_string(a) + " of extent " +
                  std::to_string(in[static_cast<std::size_t>(a)]));
  if (axes.empty()) {
    ctx.setOutput(0, ctx.input(0));
    return;
  }
  ctx.setOutput(0, ctx.add("Squeeze", {ctx.input(0), ctx.ints("axes", axes)}));
}

void expandDims(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  const std::vector<std::int64_t> axis = ctx.constantInts(1, "the axis");
  if (axis.size() != 1)
    ctx.invalid("needs one axis");
  const std::int64_t a = normalizeAxis(ctx, axis[0], ctx.inputInfo(0).shape.size() + 1);
  ctx.setOutput(0, ctx.add("Unsqueeze", {ctx.input(0), ctx.ints("axes", {a})}));
}

void transpose(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  const std::vector<std::int64_t> perm = ctx.constantInts(1, "the permutation");
  const std::size_t rank = ctx.inputInfo(0).shape.size();
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank)
    ctx.invalid("has a permutation of " + std::to_string(perm.size()) + " axes for rank " +
                std::to_string(rank));
  for (std::int64_t p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(rank) || seen[static_cast<std::size_t>(p)])
      ctx.invalid("has an invalid permutation");
    seen[static_cast<std::size_t>(p)] = true;
  }
  ctx.setOutput(0, ctx.add("Transpose", {ctx.input(0)}, {{"perm", Attribute{perm}}}));
}

// PAD / PADV2: paddings [rank, 2]; quantized tensors pad with the zero point's value.
void pad(OpContext& ctx) {
  ctx.requireInputs(2, 3);
  const std::size_t rank = ctx.inputInfo(0).shape.size();
  const std::vector<std::int64_t> p = ctx.constantInts(1, "the paddings");
  if (p.size() != 2 * rank)
    ctx.invalid("has " + std::to_string(p.size()) + " padding values for rank " +
                std::to_string(rank));
  std::vector<std::int64_t> pads(2 * rank);
  for (std::size_t d = 0; d < rank; ++d) {
    if (p[2 * d] < 0 || p[2 * d + 1] < 0)
      ctx.invalid("has negative padding");
    pads[d] = p[2 * d];
    pads[rank + d] = p[2 * d + 1];
  }
  std::vector<Value*> inputs{ctx.input(0), ctx.ints("pads", pads)};
  if (ctx.hasInput(2)) {
    Value* value = ctx.input(2);
    if (!ctx.inputInfo(2).shape.empty()) // [1] in some files; Pad takes a scalar
      value = ctx.add("Reshape", {value, ctx.ints("value_shape", {})});
    inputs.push_back(value);
  } else if (ctx.onIntegers()) {
    const TensorInfo& info = ctx.inputInfo(0);
    inputs.push_back(
        ctx.constant("pad_value", zeroPointData(info.dtype, {}, {info.quant.zeroPoints[0]})));
  }
  ctx.setOutput(0,
                ctx.add("Pad", std::move(inputs), {{"mode", Attribute{std::string("constant")}}}));
}

void concatenation(OpContext& ctx) {
  if (ctx.inputCount() < 1)
    ctx.invalid("has no inputs");
  const auto& o = requiredOptions<lathe_tflite::ConcatenationOptions>(ctx, "ConcatenationOptions");
  const std::int64_t axis = normalizeAxis(ctx, o.axis(), ctx.inputInfo(0).shape.size());
  std::vector<Value*> inputs;
  for (std::size_t i = 0; i < ctx.inputCount(); ++i)
    inputs.push_back(ctx.input(i));
  Value* v = ctx.add("Concat", std::move(inputs), {{"axis", Attribute{axis}}});
  if (o.fused_activation_function() != A::NONE && ctx.onIntegers())
    ctx.unsupported("a fused activation on a quantized concatenation");
  ctx.setOutput(0, applyActivation(ctx, v, o.fused_activation_function()));
}

// PACK: stack along a new axis.
void pack(OpContext& ctx) {
  if (ctx.inputCount() < 1)
    ctx.invalid("has no inputs");
  const auto* o = ctx.options<lathe_tflite::PackOptions>();
  const std::int64_t axis =
      normalizeAxis(ctx, o ? o->axis() : 0, ctx.inputInfo(0).shape.size() + 1);
  std::vector<Value*> parts;
  for (std::size_t i = 0; i < ctx.inputCount(); ++i)
    parts.push_back(ctx.add("Unsqueeze", {ctx.input(i), ctx.ints("axes", {axis})}));
  ctx.setOutput(0, ctx.add("Concat", std::move(parts), {{"axis", Attribute{axis}}}));
}

void gather(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  const auto* o = ctx.options<lathe_tflite::GatherOptions>();
  if (o && o->batch_dims() != 0)
    ctx.unsupported("batch_dims " + std::to_string(o->batch_dims()));
  const std::int64_t axis = normalizeAxis(ctx, o ? o->axis() : 0, ctx.inputInfo(0).shape.size());
  ctx.setOutput(0, ctx.add("Gather", {ctx.input(0), ctx.rawInput(1)}, {{"axis", Attribute{axis}}}));
}

// STRIDED_SLICE: begin/end/strides with masks. Shrunk axes are sliced to one element and
// squeezed; ellipsis and new-axis masks are refused.
void stridedSlice(OpContext& ctx) {
  ctx.requireInputs(4, 4);
  const auto& o = requiredOptions<lathe_tflite::StridedSliceOptions>(ctx, "StridedSliceOptions");
  if (o.ellipsis_mask() != 0 || o.new_axis_mask() != 0)
    ctx.unsupported("ellipsis or new-axis masks");
  if (o.offset())
    ctx.unsupported("end offsets relative to begin");
  const std::vector<std::int64_t>& shape = ctx.inputInfo(0).shape;
  const std::vector<std::int64_t> begin = ctx.constantInts(1, "begin");
  const std::vector<std::int64_t> end = ctx.constantInts(2, "end");
  const std::vector<std::int64_t> strides = ctx.constantInts(3, "strides");
  const std::size_t n = begin.size();
  if (end.size() != n || strides.size() != n || n > shape.size())
    ctx.invalid("has begin, end and strides of different lengths or longer than the rank");
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  std::vector<std::int64_t> starts, ends, axes, steps, shrink;
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t s = strides[d];
    if (s == 0)
      ctx.invalid("has stride 0");
    const bool beginMasked = (o.begin_mask() >> d) & 1, endMasked = (o.end_mask() >> d) & 1;
    std::int64_t b = begin[d], e = end[d];
    if ((o.shrink_axis_mask() >> d) & 1) {
      if (b < 0)
        b += shape[d];
      if (b < 0 || b >= shape[d])
        ctx.invalid("shrinks axis " + std::to_string(d) + " at index " + std::to_string(begin[d]) +
                    " outside its extent " + std::to_string(shape[d]));
      starts.push_back(b);
      ends.push_back(b + 1);
      steps.push_back(1);
      axes.push_back(static_cast<std::int64_t>(d));
      shrink.push_back(static_cast<std::int64_t>(d));
      continue;
    }
    if (beginMasked)
      b = s > 0 ? 0 : kMax;
    if (endMasked)
      e = s > 0 ? kMax : kMin;
    starts.push_back(b);
    ends.push_back(e);
    steps.push_back(s);
    axes.push_back(static_cast<std::int64_t>(d));
  }
  Value* v = ctx.add("Slice", {ctx.input(0), ctx.ints("starts", starts), ctx.ints("ends", ends),
                               ctx.ints("axes", axes), ctx.ints("steps", steps)});
  if (!shrink.empty())
    v = ctx.add("Squeeze", {v, ctx.ints("squeeze_axes", shrink)});
  ctx.setOutput(0, v);
}

// SLICE: begin and size (-1: to the end).
void slice(OpContext& ctx) {
  ctx.requireInputs(3, 3);
  const std::vector<std::int64_t>& shape = ctx.inputInfo(0).shape;
  const std::vector<std::int64_t> begin = ctx.constantInts(1, "begin");
  const std::vector<std::int64_t> size = ctx.constantInts(2, "size");
  if (begin.size() != shape.size() || size.size() != shape.size())
    ctx.invalid("has begin and size that do not match the rank");
  std::vector<std::int64_t> ends;
  for (std::size_t d = 0; d < shape.size(); ++d)
    ends.push_back(size[d] < 0 ? shape[d] : begin[d] + size[d]);
  ctx.setOutput(
      0, ctx.add("Slice", {ctx.input(0), ctx.ints("starts", begin), ctx.ints("ends", ends)}));
}

// SPACE_TO_DEPTH / DEPTH_TO_SPACE: TensorFlow orders the moved block as (row, column,
// channel), which is ONNX's DCR order once in NCHW.
void blockMove(OpContext& ctx, bool toDepth) {
  ctx.requireInputs(1, 1);
  if (ctx.inputInfo(0).shape.size() != 4)
    ctx.invalid("needs a rank-4 input");
  std::int64_t block = 0;
  if (toDepth) {
    const auto* o = ctx.options<lathe_tflite::SpaceToDepthOptions>();
    block = o ? o->block_size() : 0;
  } else {
    const auto* o = ctx.options<lathe_tflite::DepthToSpaceOptions>();
    block = o ? o->block_size() : 0;
  }
  if (block < 1)
    ctx.invalid("needs a block size of 1 or more");
  Value* x = toNchw(ctx, ctx.input(0));
  std::map<std::string, Attribute> attrs{{"blocksize", Attribute{block}}};
  if (!toDepth)
    attrs["mode"] = Attribute{std::string("DCR")};
  Value* y = ctx.add(toDepth ? "SpaceToDepth" : "DepthToSpace", {x}, std::move(attrs));
  ctx.setOutput(0, toNhwc(ctx, y));
}

void spaceToDepth(OpContext& ctx) {
  blockMove(ctx, true);
}
void depthToSpace(OpContext& ctx) {
  blockMove(ctx, false);
}

// ARG_MAX: the first index of the largest value along a constant axis; int32 or int64.
void argMax(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  const std::vector<std::int64_t> axis = ctx.constantInts(1, "the axis");
  if (axis.size() != 1)
    ctx.invalid("needs one axis");
  const std::int64_t a = normalizeAxis(ctx, axis[0], ctx.inputInfo(0).shape.size());
  Value* y = ctx.add("ArgMax", {ctx.input(0)},
                     {{"axis", Attribute{a}}, {"keepdims", Attribute{std::int64_t(0)}}});
  const graph::DType out = ctx.outputInfo(0).dtype;
  if (out == graph::DType::I32)
    y = ctx.add("Cast", {y}, {{"to", Attribute{graph::onnxCodeOf(out)}}});
  else if (out != graph::DType::I64)
    ctx.invalid("writes indices of type " + std::string(graph::dtypeName(out)));
  ctx.setOutput(0, y);
}

} // namespace

void registerShapeOps(std::unordered_map<int, OpEntry>& t) {
  auto reg = [&](B op, Handler h) { t[static_cast<int>(op)] = {h, QuantMode::PassThrough}; };
  reg(B::RESHAPE, reshapeToDeclared);
  reg(B::SQUEEZE, squeeze);
  reg(B::EXPAND_DIMS, expandDims);
  reg(B::TRANSPOSE, transpose);
  reg(B::PAD, pad);
  reg(B::PADV2, pad);
  reg(B::CONCATENATION, concatenation);
  reg(B::PACK, pack);
  reg(B::GATHER, gather);
  reg(B::STRIDED_SLICE, stridedSlice);
  reg(B::SLICE, slice);
  reg(B::SPACE_TO_DEPTH, spaceToDepth);
  reg(B::DEPTH_TO_SPACE, depthToSpace);
  reg(B::ARG_MAX, argMax);
}

} // namespace lathe::frontend::tflite
