// Shape rules for indexing, shape-computing, reduction and encoding ops.

#include "engine/graph_passes/shape_rules.h"
#include "engine/graph_passes/shape_rules_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lathe::passes {
namespace {

using namespace rules;

// Exporters write "to the end" as INT64_MAX, INT32_MAX and the like.
constexpr std::int64_t kToTheEnd = std::numeric_limits<std::int32_t>::max();

// --- indexing ----------------------------------------------------------------------------

// Whether a slice along an axis of unknown extent keeps the whole axis.
bool keepsWholeAxis(std::int64_t start, std::int64_t end, std::int64_t step) {
  if (step == 1)
    return (start == 0 || start <= -kToTheEnd) && end >= kToTheEnd;
  return step == -1 && (start == -1 || start >= kToTheEnd) && end <= -kToTheEnd;
}

std::optional<Types> inferSlice(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  const auto params = sliceParameters(n, rankOf(*x));
  if (!params)
    return Types{unknownDims(x->dtype, x->rank())};
  Shape out = *x->shape;
  for (std::size_t i = 0; i < params->axes.size(); ++i) {
    Dim& d = out[static_cast<std::size_t>(params->axes[i])];
    const std::int64_t start = params->starts[i], end = params->ends[i], step = params->steps[i];
    if (d.isKnown())
      d = Dim::known(clampSlice(d.value, start, end, step).count);
    else if (!keepsWholeAxis(start, end, step))
      d = Dim::unknown();
  }
  return Types{makeType(x->dtype, out)};
}

std::optional<Types> inferGather(const Node& n) {
  const TensorType *data = inputType(n, 0), *indices = inputType(n, 1);
  if (!data || !indices)
    return std::nullopt;
  if (!data->shape || !indices->shape)
    return Types{unknownRank(data->dtype)};
  const auto axis = normalizeAxis(n, n.attrInt("axis", 0), rankOf(*data));
  Shape out(data->shape->begin(), data->shape->begin() + axis);
  out.insert(out.end(), indices->shape->begin(), indices->shape->end());
  out.insert(out.end(), data->shape->begin() + axis + 1, data->shape->end());
  return Types{makeType(data->dtype, out)};
}

std::optional<Types> inferGatherElements(const Node& n) {
  const TensorType *data = inputType(n, 0), *indices = inputType(n, 1);
  if (!data || !indices)
    return std::nullopt;
  return Types{indices->shape ? makeType(data->dtype, *indices->shape) : unknownRank(data->dtype)};
}

std::optional<Types> inferGatherND(const Node& n) {
  const TensorType *data = inputType(n, 0), *indices = inputType(n, 1);
  if (!data || !indices)
    return std::nullopt;
  if (!data->shape || !indices->shape || indices->rank() == 0 || !indices->shape->back().isKnown())
    return Types{unknownRank(data->dtype)};
  const auto batch = static_cast<std::size_t>(n.attrInt("batch_dims", 0));
  const auto depth = static_cast<std::size_t>(indices->shape->back().value);
  if (batch + depth > data->rank())
    fail(n, "index tuples of length " + std::to_string(depth) + " exceed the data's rank");
  Shape out(indices->shape->begin(), indices->shape->end() - 1);
  out.insert(out.end(), data->shape->begin() + static_cast<std::ptrdiff_t>(batch + depth),
             data->shape->end());
  return Types{makeType(data->dtype, out)};
}

// --- shape computations ------------------------------------------------------------------

std::optional<Types> inferShape(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownDims(DType::I64, 1)};
  const std::int64_t rank = rankOf(*x);
  auto clampAxis = [rank](std::int64_t a) {
    return std::clamp<std::int64_t>(a < 0 ? a + rank : a, 0, rank);
  };
  const std::int64_t start = clampAxis(n.attrInt("start", 0));
  const std::int64_t end = clampAxis(n.attrInt("end", rank));
  return Types{TensorType::of(DType::I64, {std::max<std::int64_t>(end - start, 0)})};
}

std::optional<Types> inferSize(const Node&) {
  return Types{TensorType::of(DType::I64, {})};
}

std::optional<Types> inferConstantOfShape(const Node& n) {
  const graph::Attribute* value = n.findAttribute("value");
  const DType dtype =
      value && value->is<graph::TensorData>() ? value->as<graph::TensorData>().dtype() : DType::F32;
  const TensorType* s = inputType(n, 0);
  if (!s)
    return std::nullopt;
  if (const auto dims = constantInts(n, 0)) {
    for (std::int64_t d : *dims)
      if (d < 0)
        fail(n, "negative extent " + std::to_string(d) + " in the shape");
    return Types{TensorType::of(dtype, *dims)};
  }
  if (s->isStatic() && s->rank() == 1)
    return Types{unknownDims(dtype, static_cast<std::size_t>(s->staticDims()[0]))};
  return Types{unknownRank(dtype)};
}

std::optional<Types> inferConstant(const Node& n) {
  if (const graph::Attribute* a = n.findAttribute("value"); a && a->is<graph::TensorData>())
    return Types{
        TensorType::of(a->as<graph::TensorData>().dtype(), a->as<graph::TensorData>().dims())};
  if (n.hasAttribute("value_float"))
    return Types{TensorType::of(DType::F32, {})};
  if (n.hasAttribute("value_int"))
    return Types{TensorType::of(DType::I64, {})};
  if (const graph::Attribute* a = n.findAttribute("value_floats"))
    if (a->is<std::vector<float>>())
      return Types{TensorType::of(DType::F32,
                                  {static_cast<std::int64_t>(a->as<std::vector<float>>().size())})};
  if (const graph::Attribute* a = n.findAttribute("value_ints"))
    if (a->is<std::vector<std::int64_t>>())
      return Types{TensorType::of(
          DType::I64, {static_cast<std::int64_t>(a->as<std::vector<std::int64_t>>().size())})};
  return std::nullopt; // strings and sparse tensors
}

std::optional<Types> inferRange(const Node& n) {
  const DType dtype = inputDType(n, 0);
  const auto start = constantReals(n, 0), limit = constantReals(n, 1), delta = constantReals(n, 2);
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return Types{unknownDims(dtype, 1)};
  if ((*delta)[0] == 0)
    fail(n, "delta is zero");
  std::int64_t count = 0;
  if (graph::isInteger(dtype)) {
    const auto s = constantInts(n, 0)->front(), l = constantInts(n, 1)->front(),
               d = constantInts(n, 2)->front();
    count = ceilDiv(l - s, d);
  } else {
    // The difference is taken in the element type, then divided in double, as ORT does.
    double span = (*limit)[0] - (*start)[0];
    if (dtype == DType::F32)
      span = double(float((*limit)[0]) - float((*start)[0]));
    const double steps = std::ceil(span / (*delta)[0]);
    if (!std::isfinite(steps) || steps > double(std::numeric_limits<std::int32_t>::max()))
      return Types{unknownDims(dtype, 1)};
    count = static_cast<std::int64_t>(steps);
  }
  return Types{TensorType::of(dtype, {std::max<std::int64_t>(count, 0)})};
}

// --- reductions --------------------------------------------------------------------------

// Removes or keeps (as 1) the reduced axes.
Shape reducedShape(const Shape& in, const std::vector<std::int64_t>& axes, bool keepDims) {
  Shape out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const bool reduced = std::count(axes.begin(), axes.end(), static_cast<std::int64_t>(i)) > 0;
    if (!reduced)
      out.push_back(in[i]);
    else if (keepDims)
      out.push_back(Dim::known(1));
  }
  return out;
}

std::optional<Types> inferReduce(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const bool keepDims = n.attrInt("keepdims", 1) != 0;
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  const auto axes = reductionAxes(n, rankOf(*x));
  if (!axes)
    return Types{keepDims ? unknownDims(x->dtype, x->rank()) : unknownRank(x->dtype)};
  return Types{makeType(x->dtype, reducedShape(*x->shape, *axes, keepDims))};
}

std::optional<Types> inferArgReduce(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownRank(DType::I64)};
  const std::int64_t axis = normalizeAxis(n, n.attrInt("axis", 0), rankOf(*x));
  return Types{
      makeType(DType::I64, reducedShape(*x->shape, {axis}, n.attrInt("keepdims", 1) != 0))};
}

std::optional<Types> inferTopK(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownRank(x->dtype), unknownRank(DType::I64)};
  const auto axis = static_cast<std::size_t>(normalizeAxis(n, n.attrInt("axis", -1), rankOf(*x)));
  Shape out = *x->shape;
  const auto k = constantInts(n, 1);
  if (k && k->size() == 1) {
    if (k->front() < 0 || (out[axis].isKnown() && k->front() > out[axis].value))
      fail(n, "k = " + std::to_string(k->front()) + " is outside [0, " +
                  std::to_string(out[axis].value) + "]");
    out[axis] = Dim::known(k->front());
  } else {
    out[axis] = Dim::unknown();
  }
  return Types{makeType(x->dtype, out), makeType(DType::I64, out)};
}

// --- encoding ----------------------------------------------------------------------------

std::optional<Types> inferOneHot(const Node& n) {
  const TensorType* indices = inputType(n, 0);
  const DType dtype = inputDType(n, 2);
  if (!indices)
    return std::nullopt;
  if (!indices->shape)
    return Types{unknownRank(dtype)};
  const std::int64_t rank = rankOf(*indices) + 1;
  const std::int64_t axis = normalizeAxis(n, n.attrInt("axis", -1), rank);
  const auto depth = constantReals(n, 1);
  Dim extent = Dim::unknown();
  if (depth && depth->size() == 1) {
    if (!((*depth)[0] >= 1 && (*depth)[0] < 9.0e18)) // also rejects NaN
      fail(n, "depth must be a positive count");
    extent = Dim::known(static_cast<std::int64_t>((*depth)[0]));
  }
  Shape out = *indices->shape;
  out.insert(out.begin() + axis, extent);
  return Types{makeType(dtype, out)};
}

std::optional<Types> inferNonZero(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const Dim rank = x->shape ? Dim::known(rankOf(*x)) : Dim::unknown();
  return Types{makeType(DType::I64, {rank, Dim::unknown()})};
}

// The selected extent: a constant condition's true entries within the extent it selects
// from (entries past that extent are discarded), else unknown.
Dim compressedExtent(const Node& n, const Dim& extent) {
  const auto condition = constantInts(n, 1);
  if (!condition)
    return Dim::unknown();
  std::int64_t length = static_cast<std::int64_t>(condition->size());
  if (extent.isKnown())
    length = std::min(length, extent.value);
  else if (length > 0)
    return Dim::unknown(); // how much of the condition applies is not known
  return Dim::known(std::count_if(condition->begin(), condition->begin() + length,
                                  [](std::int64_t c) { return c != 0; }));
}

std::optional<Types> inferCompress(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!n.hasAttribute("axis")) {
    // The flattened input: its size is known when every dim is.
    Dim size = Dim::unknown();
    if (x->shape &&
        std::all_of(x->shape->begin(), x->shape->end(), [](const Dim& d) { return d.isKnown(); })) {
      std::int64_t total = 1;
      for (const Dim& d : *x->shape)
        total *= d.value;
      size = Dim::known(total);
    }
    return Types{makeType(x->dtype, {compressedExtent(n, size)})};
  }
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  Shape out = *x->shape;
  const auto axis = static_cast<std::size_t>(normalizeAxis(n, n.attrInt("axis", 0), rankOf(*x)));
  out[axis] = compressedExtent(n, out[axis]);
  return Types{makeType(x->dtype, out)};
}

} // namespace

std::optional<std::vector<std::int64_t>> reductionAxes(const graph::Node& node, std::int64_t rank) {
  auto axes = intsFromInputOrAttribute(node, 1, "axes");
  if (!axes)
    return std::nullopt;
  if (axes->empty()) {
    if (node.attrInt("noop_with_empty_axes", 0) != 0)
      return axes;
    for (std::int64_t a = 0; a < rank; ++a)
      axes->push_back(a);
    return axes;
  }
  for (std::int64_t& a : *axes)
    a = normalizeAxis(node, a, rank);
  std::sort(axes->begin(), axes->end());
  if (std::adjacent_find(axes->begin(), axes->end()) != axes->end())
    fail(node, "an axis is reduced twice");
  return axes;
}

std::optional<SliceParameters> sliceParameters(const graph::Node& node, std::int64_t rank) {
  SliceParameters p;
  const auto starts = intsFromInputOrAttribute(node, 1, "starts");
  const auto ends = intsFromInputOrAttribute(node, 2, "ends");
  bool axesGiven = false, stepsGiven = false;
  const auto axes = intsFromInputOrAttribute(node, 3, "axes", &axesGiven);
  const auto steps = intsFromInputOrAttribute(node, 4, "steps", &stepsGiven);
  if (!starts || !ends || !axes || !steps)
    return std::nullopt;
  p.starts = *starts;
  p.ends = *ends;
  const std::size_t count = p.starts.size();
  p.axes = axesGiven ? *axes : std::vector<std::int64_t>();
  p.steps = stepsGiven ? *steps : std::vector<std::int64_t>(count, 1);
  if (!axesGiven)
    for (std::size_t i = 0; i < count; ++i)
      p.axes.push_back(static_cast<std::int64_t>(i));
  if (p.ends.size() != count || p.axes.size() != count || p.steps.size() != count)
    fail(node, "starts, ends, axes and steps must have the same length");
  std::vector<bool> seen(static_cast<std::size_t>(rank), false);
  for (std::size_t i = 0; i < count; ++i) {
    p.axes[i] = normalizeAxis(node, p.axes[i], rank);
    if (seen[static_cast<std::size_t>(p.axes[i])])
      fail(node, "axis " + std::to_string(p.axes[i]) + " is sliced twice");
    seen[static_cast<std::size_t>(p.axes[i])] = true;
    if (p.steps[i] == 0)
      fail(node, "slice step is zero");
  }
  return p;
}

void rules::addIndexingRules(RuleTable& rules) {
  addRules(rules,
           "ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin "
           "ReduceProd ReduceSum ReduceSumSquare",
           inferReduce);
  rules["ArgMax"] = rules["ArgMin"] = inferArgReduce;
  rules["Slice"] = inferSlice;
  rules["Gather"] = inferGather;
  rules["GatherElements"] = inferGatherElements;
  rules["GatherND"] = inferGatherND;
  rules["Shape"] = inferShape;
  rules["Size"] = inferSize;
  rules["ConstantOfShape"] = inferConstantOfShape;
  rules["Constant"] = inferConstant;
  rules["Range"] = inferRange;
  rules["TopK"] = inferTopK;
  rules["OneHot"] = inferOneHot;
  rules["NonZero"] = inferNonZero;
  rules["Compress"] = inferCompress;
}

} // namespace lathe::passes
