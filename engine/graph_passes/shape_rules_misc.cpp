// Shape rules for ops without a family of their own: GridSample, MaxUnpool, Det, the window
// generators (HannWindow, HammingWindow, BlackmanWindow), MelWeightMatrix and Loop.

#include "engine/graph_passes/shape_rules.h"
#include "engine/graph_passes/shape_rules_internal.h"

namespace lathe::passes {
namespace {

using namespace rules;

// The output_datatype attribute of the generators (default float).
DType outputDType(const Node& n) {
  return graph::dtypeFromOnnxCode(n.attrInt("output_datatype", 1)).value_or(DType::Undefined);
}

// X [N, C, H, W], grid [N, H_out, W_out, 2] -> [N, C, H_out, W_out] of X's type.
std::optional<Types> inferGridSample(const Node& n) {
  const TensorType* x = inputType(n, 0);
  const TensorType* grid = inputType(n, 1);
  if (!x)
    return std::nullopt;
  // GridSample-20 also samples volumes (5-D input, [N, D, H, W, 3] grid): valid, not handled.
  if (rankOf(*x) >= 0 && rankOf(*x) != 4)
    unsupported(n, "only 4-D input is supported, not rank " + std::to_string(rankOf(*x)));
  const Dim unknown = Dim::unknown();
  return Types{makeType(x->dtype, {dimOr(x, 0, dimOr(grid, 0, unknown)), dimOr(x, 1, unknown),
                                   dimOr(grid, 1, unknown), dimOr(grid, 2, unknown)})};
}

// [..., M, M] -> [...].
std::optional<Types> inferDet(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  if (x->shape->size() < 2)
    fail(n, "input must have rank 2 or more");
  return Types{makeType(x->dtype, Shape(x->shape->begin(), x->shape->end() - 2))};
}

// The constant output_shape, else (in - 1) * stride + kernel - pads per spatial axis.
std::optional<Types> inferMaxUnpool(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (inputType(n, 2)) {
    if (auto shape = constantInts(n, 2))
      return Types{makeType(x->dtype, knownDims(*shape))};
    const TensorType* s = inputType(n, 2);
    if (s->shape && s->shape->size() == 1 && (*s->shape)[0].isKnown())
      return Types{unknownDims(x->dtype, static_cast<std::size_t>((*s->shape)[0].value))};
    return Types{unknownRank(x->dtype)};
  }
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  const std::size_t rank = x->shape->size();
  if (rank < 3)
    fail(n, "input must have rank 3 or more");
  const std::size_t spatial = rank - 2;
  const auto kernel = n.attrInts("kernel_shape");
  const auto strides = n.attrInts("strides", std::vector<std::int64_t>(spatial, 1));
  const auto pads = n.attrInts("pads", std::vector<std::int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial)
    fail(n, "kernel_shape, strides and pads must cover the spatial axes");
  Shape out{(*x->shape)[0], (*x->shape)[1]};
  for (std::size_t d = 0; d < spatial; ++d) {
    const Dim& in = (*x->shape)[d + 2];
    out.push_back(in.isKnown() ? Dim::known((in.value - 1) * strides[d] + kernel[d] - pads[d] -
                                            pads[d + spatial])
                               : Dim::unknown());
  }
  return Types{makeType(x->dtype, out)};
}

// [size] when size is a constant.
std::optional<Types> inferWindow(const Node& n) {
  const DType dtype = outputDType(n);
  if (auto size = constantInts(n, 0); size && size->size() == 1)
    return Types{makeType(dtype, knownDims(*size))};
  return Types{unknownDims(dtype, 1)};
}

// [dft_length / 2 + 1, num_mel_bins], each known when its input is a constant.
std::optional<Types> inferMelWeightMatrix(const Node& n) {
  auto dimOf = [&](std::size_t i, bool spectrum) {
    const auto v = constantInts(n, i);
    if (!v || v->size() != 1)
      return Dim::unknown();
    return Dim::known(spectrum ? (*v)[0] / 2 + 1 : (*v)[0]);
  };
  return Types{makeType(outputDType(n), {dimOf(1, true), dimOf(0, false)})};
}

// Loop: the loop-carried outputs keep their initial values' types (Lathe runs loops whose
// carried values keep their shape); each scan output is the body's per-iteration output with
// a leading axis whose length is the trip count, known only at run time.
std::optional<Types> inferLoop(const Node& n) {
  const std::size_t formal = n.inputs.size() - n.capturedInputCount();
  if (formal < 2)
    return std::nullopt;
  const std::size_t carried = formal - 2;
  const graph::Attribute* body = n.findAttribute("body");
  const graph::Graph* g =
      body && body->is<graph::GraphPtr>() ? body->as<graph::GraphPtr>().get() : nullptr;
  Types out;
  for (std::size_t o = 0; o < n.outputs().size(); ++o) {
    if (o < carried) {
      const TensorType* in = inputType(n, 2 + o);
      out.push_back(in ? *in : TensorType{});
      continue;
    }
    const graph::Value* perIteration = g && 1 + o < g->outputs.size() ? g->outputs[1 + o] : nullptr;
    if (!perIteration || !perIteration->type.shape) {
      out.push_back(unknownRank(perIteration ? perIteration->type.dtype : DType::Undefined));
      continue;
    }
    Shape shape{Dim::unknown()};
    shape.insert(shape.end(), perIteration->type.shape->begin(), perIteration->type.shape->end());
    out.push_back(makeType(perIteration->type.dtype, std::move(shape)));
  }
  return out;
}

} // namespace

void rules::addMiscRules(RuleTable& rules) {
  rules["GridSample"] = inferGridSample;
  rules["Det"] = inferDet;
  rules["MaxUnpool"] = inferMaxUnpool;
  addRules(rules, "HannWindow HammingWindow BlackmanWindow", inferWindow);
  rules["MelWeightMatrix"] = inferMelWeightMatrix;
  rules["Loop"] = inferLoop;
}

} // namespace lathe::passes
