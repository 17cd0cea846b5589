// SPLIT and SPLIT_V (a Slice per part), MIRROR_PAD and CAST.
#include "engine/frontend/tflite/tflite_convert.h"

#include <limits>

namespace lathe::frontend::tflite {
namespace {

using B = lathe_tflite::BuiltinOperator;
using graph::Attribute;
using graph::Value;

// The parts of a SPLIT / SPLIT_V along `axis`, one Slice each.
void splitInto(OpContext& ctx, std::size_t data, std::int64_t axis,
               const std::vector<std::int64_t>& sizes) {
  const std::vector<std::int64_t>& shape = ctx.inputInfo(data).shape;
  if (sizes.size() != ctx.outputCount())
    ctx.invalid("has " + std::to_string(ctx.outputCount()) + " outputs for " +
                std::to_string(sizes.size()) + " parts");
  std::int64_t start = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    std::vector<std::int64_t> starts(shape.size(), 0), ends = shape;
    starts[static_cast<std::size_t>(axis)] = start;
    ends[static_cast<std::size_t>(axis)] = start + sizes[k];
    start += sizes[k];
    ctx.setOutput(
        k, ctx.add("Slice", {ctx.input(data), ctx.ints("starts", starts), ctx.ints("ends", ends)}));
  }
}

std::int64_t constantAxis(OpContext& ctx, std::size_t i, std::size_t rank) {
  const std::vector<std::int64_t> axis = ctx.constantInts(i, "the axis");
  if (axis.size() != 1)
    ctx.invalid("needs one axis");
  return normalizeAxis(ctx, axis[0], rank);
}

// SPLIT: inputs axis, data; num_splits equal parts.
void split(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  const std::vector<std::int64_t>& shape = ctx.inputInfo(1).shape;
  const std::int64_t axis = constantAxis(ctx, 0, shape.size());
  const auto* o = ctx.options<lathe_tflite::SplitOptions>();
  const std::int64_t parts = o ? o->num_splits() : static_cast<std::int64_t>(ctx.outputCount());
  const std::int64_t dim = shape[static_cast<std::size_t>(axis)];
  if (parts < 1 || dim % parts != 0)
    ctx.invalid("cuts " + std::to_string(dim) + " into " + std::to_string(parts) + " equal parts");
  splitInto(ctx, 1, axis, std::vector<std::int64_t>(static_cast<std::size_t>(parts), dim / parts));
}

// SPLIT_V: inputs data, sizes (one may be -1: the rest), axis.
void splitV(OpContext& ctx) {
  ctx.requireInputs(3, 3);
  const std::vector<std::int64_t>& shape = ctx.inputInfo(0).shape;
  const std::int64_t axis = constantAxis(ctx, 2, shape.size());
  std::vector<std::int64_t> sizes = ctx.constantInts(1, "the sizes");
  const std::int64_t dim = shape[static_cast<std::size_t>(axis)];
  std::int64_t known = 0;
  int rest = -1;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == -1 && rest < 0) {
      rest = static_cast<int>(k);
      continue;
    }
    if (sizes[k] < 0 || sizes[k] > dim)
      ctx.invalid("has part size " + std::to_string(sizes[k]) + " for an axis of " +
                  std::to_string(dim));
    known += sizes[k];
  }
  if (rest >= 0 && known <= dim)
    sizes[static_cast<std::size_t>(rest)] = dim - known;
  else if (rest >= 0 || known != dim)
    ctx.invalid("has part sizes that do not add up to the axis' " + std::to_string(dim));
  splitInto(ctx, 0, axis, sizes);
}

// MIRROR_PAD: REFLECT leaves the edge out (ONNX Pad's reflect mode); SYMMETRIC repeats it,
// built per axis from reversed slices on both sides.
void mirrorPad(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  const std::vector<std::int64_t>& shape = ctx.inputInfo(0).shape;
  const std::size_t rank = shape.size();
  const std::vector<std::int64_t> p = ctx.constantInts(1, "the paddings");
  if (p.size() != 2 * rank)
    ctx.invalid("has " + std::to_string(p.size()) + " padding values for rank " +
                std::to_string(rank));
  const auto* o = ctx.options<lathe_tflite::MirrorPadOptions>();
  const bool symmetric = o && o->mode() == lathe_tflite::MirrorPadMode::SYMMETRIC;
  for (std::size_t d = 0; d < rank; ++d)
    for (std::int64_t pad : {p[2 * d], p[2 * d + 1]})
      if (pad < 0 || pad > shape[d] - (symmetric ? 0 : 1))
        ctx.invalid("pads axis " + std::to_string(d) + " of " + std::to_string(shape[d]) + " by " +
                    std::to_string(pad) + ", more than its " +
                    (symmetric ? "length" : "length less one") + " allows");
  Value* x = ctx.input(0);
  if (!symmetric) {
    std::vector<std::int64_t> pads(2 * rank);
    for (std::size_t d = 0; d < rank; ++d) {
      pads[d] = p[2 * d];
      pads[rank + d] = p[2 * d + 1];
    }
    ctx.setOutput(0, ctx.add("Pad", {x, ctx.ints("pads", pads)},
                             {{"mode", Attribute{std::string("reflect")}}}));
    return;
  }
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t before = p[2 * d], after = p[2 * d + 1], n = shape[d];
    if (before == 0 && after == 0)
      continue;
    const auto axis = static_cast<std::int64_t>(d);
    auto reversed = [&](std::int64_t first, std::int64_t count) {
      // Elements first, first - 1, ..., first - count + 1.
      const std::int64_t stop =
          first - count < 0 ? std::numeric_limits<std::int64_t>::min() : first - count;
      return ctx.add("Slice", {x, ctx.ints("starts", {first}), ctx.ints("ends", {stop}),
                               ctx.ints("axes", {axis}), ctx.ints("steps", {-1})});
    };
    std::vector<Value*> parts;
    if (before > 0)
      parts.push_back(reversed(before - 1, before));
    parts.push_back(x);
    if (after > 0)
      parts.push_back(reversed(n - 1, after));
    x = ctx.add("Concat", std::move(parts), {{"axis", Attribute{axis}}});
  }
  ctx.setOutput(0, x);
}

// CAST: to the output tensor's element type.
void cast(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  const graph::DType to = ctx.outputInfo(0).dtype;
  if (to == graph::DType::Undefined)
    ctx.unsupported("casting to this element type");
  ctx.setOutput(0, ctx.add("Cast", {ctx.rawInput(0)}, {{"to", Attribute{graph::onnxCodeOf(to)}}}));
}

} // namespace

void registerPartOps(std::unordered_map<int, OpEntry>& t) {
  t[static_cast<int>(B::SPLIT)] = {split, QuantMode::PassThrough};
  t[static_cast<int>(B::SPLIT_V)] = {splitV, QuantMode::PassThrough};
  t[static_cast<int>(B::MIRROR_PAD)] = {mirrorPad, QuantMode::PassThrough};
  t[static_cast<int>(B::CAST)] = {cast, QuantMode::Native};
}

} // namespace lathe::frontend::tflite
