// Shape rules for data-movement, shape-computing, reduction and indexing ops.

#include "engine/graph_passes/shape_rules.h"
#include "engine/graph_passes/shape_rules_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace lathe::passes {
namespace {

using namespace rules;

// Exporters write "to the end" as INT64_MAX, INT32_MAX and the like.
constexpr std::int64_t kToTheEnd = std::numeric_limits<std::int32_t>::max();

std::int64_t ceilDivSigned(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if (a % b != 0 && ((a > 0) == (b > 0)))
    ++q;
  return q;
}

std::int64_t rankOf(const TensorType& t) {
  return static_cast<std::int64_t>(t.rank());
}

// --- reshaping ---------------------------------------------------------------------------

// The extent of Reshape's -1 entry: what the input's element count leaves over after the
// other output dims. Dims copied by 0 cancel; a lone leftover symbol passes through.
Dim reshapeInferredDim(const Node& n, const Shape& in, const Shape& out,
                       const std::vector<bool>& copied) {
  std::int64_t knownIn = 1, knownOut = 1;
  std::multiset<std::string> symbolsIn, symbolsOut;
  bool unknown = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i < copied.size() && copied[i])
      continue;
    if (in[i].isKnown())
      knownIn *= in[i].value;
    else if (in[i].isSymbolic())
      symbolsIn.insert(in[i].symbol);
    else
      unknown = true;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (copied[i])
      continue;
    if (out[i].isKnown())
      knownOut *= out[i].value;
    else if (out[i].isSymbolic())
      symbolsOut.insert(out[i].symbol);
  }
  for (auto it = symbolsOut.begin(); it != symbolsOut.end();) {
    auto match = symbolsIn.find(*it);
    if (match == symbolsIn.end()) {
      ++it;
      continue;
    }
    symbolsIn.erase(match);
    it = symbolsOut.erase(it);
  }
  if (unknown || !symbolsOut.empty() || knownOut == 0)
    return Dim::unknown();
  if (symbolsIn.empty()) {
    if (knownIn % knownOut != 0)
      fail(n, "cannot reshape " + std::to_string(knownIn) + " elements into a multiple of " +
                  std::to_string(knownOut));
    return Dim::known(knownIn / knownOut);
  }
  if (symbolsIn.size() == 1 && knownIn == knownOut)
    return Dim::symbolic(*symbolsIn.begin());
  return Dim::unknown();
}

std::optional<Types> inferReshape(const Node& n) {
  const TensorType *x = inputType(n, 0), *s = inputType(n, 1);
  if (!x || !s)
    return std::nullopt;
  const auto target = constantInts(n, 1);
  if (!target) {
    if (s->isStatic() && s->rank() == 1)
      return Types{unknownDims(x->dtype, static_cast<std::size_t>(s->staticDims()[0]))};
    return Types{unknownRank(x->dtype)};
  }
  const bool allowZero = n.attrInt("allowzero", 0) != 0;
  Shape out;
  std::vector<bool> copied(target->size(), false);
  std::optional<std::size_t> inferAt;
  for (std::size_t i = 0; i < target->size(); ++i) {
    const std::int64_t v = (*target)[i];
    if (v == -1) {
      if (inferAt)
        fail(n, "the target shape has more than one -1");
      inferAt = i;
      out.push_back(Dim::unknown());
    } else if (v == 0 && !allowZero) {
      if (x->shape && i >= x->rank())
        fail(n, "target entry " + std::to_string(i) + " is 0 but the input has rank " +
                    std::to_string(x->rank()));
      copied[i] = true;
      out.push_back(x->shape ? (*x->shape)[i] : Dim::unknown());
    } else if (v < 0) {
      fail(n, "invalid target extent " + std::to_string(v));
    } else {
      out.push_back(Dim::known(v));
    }
  }
  if (!x->shape)
    return Types{makeType(x->dtype, out)};
  if (inferAt) {
    out[*inferAt] = reshapeInferredDim(n, *x->shape, out, copied);
  } else if (x->isStatic() && makeType(x->dtype, out).isStatic()) {
    const auto inCount = x->numElements(), outCount = makeType(x->dtype, out).numElements();
    if (inCount && outCount && *inCount != *outCount)
      fail(n, "cannot reshape " + std::to_string(*inCount) + " elements into " +
                  std::to_string(*outCount));
  }
  return Types{makeType(x->dtype, out)};
}

std::optional<Types> inferFlatten(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownDims(x->dtype, 2)};
  const std::int64_t rank = rankOf(*x);
  std::int64_t axis = n.attrInt("axis", 1);
  if (axis < -rank || axis > rank)
    fail(n, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0)
    axis += rank;
  const Shape& s = *x->shape;
  return Types{makeType(x->dtype, {productOfDims(s.begin(), s.begin() + axis),
                                   productOfDims(s.begin() + axis, s.end())})};
}

std::optional<Types> inferTranspose(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{n.hasAttribute("perm") ? unknownDims(x->dtype, n.attrInts("perm").size())
                                        : unknownRank(x->dtype)};
  Shape out;
  for (std::int64_t axis : transposePermutation(n, rankOf(*x)))
    out.push_back((*x->shape)[static_cast<std::size_t>(axis)]);
  return Types{makeType(x->dtype, out)};
}

std::optional<Types> inferSqueeze(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  bool given = false;
  const auto axes = intsFromInputOrAttribute(n, 1, "axes", &given);
  if (!x->shape || !axes)
    return Types{unknownRank(x->dtype)};
  given = given && !axes->empty(); // an empty axes list squeezes every 1, like no list
  const Shape& in = *x->shape;
  std::vector<bool> drop(in.size(), false);
  for (std::int64_t a : *axes) {
    const auto axis = static_cast<std::size_t>(normalizeAxis(n, a, rankOf(*x)));
    if (in[axis].isKnown() && in[axis].value != 1)
      fail(n, "cannot squeeze axis " + std::to_string(axis) + " of extent " +
                  std::to_string(in[axis].value));
    drop[axis] = true;
  }
  Shape out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!given && !in[i].isKnown()) // every 1 is dropped: the rank depends on this dim
      return Types{unknownRank(x->dtype)};
    if (!(drop[i] || (!given && in[i].value == 1)))
      out.push_back(in[i]);
  }
  return Types{makeType(x->dtype, out)};
}

std::optional<Types> inferUnsqueeze(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const auto axes = intsFromInputOrAttribute(n, 1, "axes");
  if (!x->shape || !axes)
    return Types{unknownRank(x->dtype)};
  const std::int64_t rank = rankOf(*x) + static_cast<std::int64_t>(axes->size());
  std::vector<bool> inserted(static_cast<std::size_t>(rank), false);
  for (std::int64_t a : *axes) {
    const auto axis = static_cast<std::size_t>(normalizeAxis(n, a, rank));
    if (inserted[axis])
      fail(n, "axis " + std::to_string(a) + " is given twice");
    inserted[axis] = true;
  }
  Shape out;
  auto next = x->shape->begin();
  for (bool ones : inserted)
    out.push_back(ones ? Dim::known(1) : *next++);
  return Types{makeType(x->dtype, out)};
}

// --- joining and splitting ---------------------------------------------------------------

std::optional<Types> inferConcat(const Node& n) {
  std::vector<const TensorType*> types;
  const TensorType* ranked = nullptr;
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    if (const TensorType* t = inputType(n, i)) {
      types.push_back(t);
      if (t->shape && !ranked)
        ranked = t;
    }
  if (types.empty())
    return std::nullopt;
  const DType dtype = types.front()->dtype;
  if (!ranked)
    return Types{unknownRank(dtype)};
  const std::int64_t rank = rankOf(*ranked);
  const auto axis = static_cast<std::size_t>(normalizeAxis(n, n.attrInt("axis", 0), rank));
  Shape out = *ranked->shape;
  std::int64_t total = 0;
  bool totalKnown = true;
  for (const TensorType* t : types) {
    if (!t->shape) {
      totalKnown = false;
      continue;
    }
    if (rankOf(*t) != rank)
      fail(n, "inputs have ranks " + std::to_string(rank) + " and " + std::to_string(t->rank()));
    for (std::size_t i = 0; i < out.size(); ++i) {
      const Dim& d = (*t->shape)[i];
      if (i != axis)
        out[i] = unifyDims(n, out[i], d, "extents on axis " + std::to_string(i));
      else if (d.isKnown())
        total += d.value;
      else
        totalKnown = false;
    }
  }
  if (totalKnown)
    out[axis] = Dim::known(total);
  else if (types.size() > 1)
    out[axis] = Dim::unknown();
  return Types{makeType(dtype, out)};
}

std::optional<Types> inferSplit(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const std::size_t parts = n.outputs().size();
  if (!x->shape)
    return Types(parts, unknownRank(x->dtype));
  const auto axis = static_cast<std::size_t>(normalizeAxis(n, n.attrInt("axis", 0), rankOf(*x)));
  const Dim extent = (*x->shape)[axis];
  bool given = false;
  const auto split = intsFromInputOrAttribute(n, 1, "split", &given);
  std::vector<Dim> sizes(parts, Dim::unknown());
  if (split && given) {
    if (split->size() != parts)
      fail(n, "split has " + std::to_string(split->size()) + " entries for " +
                  std::to_string(parts) + " outputs");
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < parts; ++i) {
      sum += (*split)[i];
      sizes[i] = Dim::known((*split)[i]);
    }
    if (extent.isKnown() && sum != extent.value)
      fail(n, "split sizes add up to " + std::to_string(sum) + ", not " +
                  std::to_string(extent.value));
  } else if (split && extent.isKnown()) {
    // num_outputs (opset 18) allows a smaller last part; opset 17 needs an even split.
    const auto count = static_cast<std::int64_t>(parts);
    const bool uneven = n.hasAttribute("num_outputs");
    if (!uneven && extent.value % count != 0)
      fail(n, "cannot split extent " + std::to_string(extent.value) + " into " +
                  std::to_string(count) + " equal parts");
    const std::int64_t chunk = (extent.value + count - 1) / count;
    for (std::size_t i = 0; i < parts; ++i)
      sizes[i] = Dim::known(
          std::clamp<std::int64_t>(extent.value - chunk * static_cast<std::int64_t>(i), 0, chunk));
  }
  Types out;
  for (const Dim& d : sizes) {
    Shape s = *x->shape;
    s[axis] = d;
    out.push_back(makeType(x->dtype, s));
  }
  return out;
}

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

std::optional<Types> inferExpand(const Node& n) {
  const TensorType *x = inputType(n, 0), *s = inputType(n, 1);
  if (!x || !s)
    return std::nullopt;
  const auto dims = constantInts(n, 1);
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  if (!dims) {
    if (s->isStatic() && s->rank() == 1)
      return Types{
          unknownDims(x->dtype, std::max(x->rank(), static_cast<std::size_t>(s->staticDims()[0])))};
    return Types{unknownRank(x->dtype)};
  }
  const Shape target = knownDims(*dims);
  return Types{makeType(x->dtype, broadcastShapes(n, {&*x->shape, &target}))};
}

std::optional<Types> inferTile(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  const auto repeats = constantInts(n, 1);
  if (!repeats)
    return Types{unknownDims(x->dtype, x->rank())};
  if (repeats->size() != x->rank())
    fail(n, "repeats has " + std::to_string(repeats->size()) + " entries for rank " +
                std::to_string(x->rank()));
  Shape out = *x->shape;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t r = (*repeats)[i];
    if (r < 0)
      fail(n, "negative repeat count " + std::to_string(r));
    if (out[i].isKnown())
      out[i] = Dim::known(out[i].value * r);
    else if (r != 1)
      out[i] = Dim::unknown();
  }
  return Types{makeType(x->dtype, out)};
}

std::optional<Types> inferPad(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  const std::int64_t rank = rankOf(*x);
  const auto pads = intsFromInputOrAttribute(n, 1, "pads");
  std::vector<std::int64_t> axes;
  if (n.input(3)) { // opset 18
    const auto given = constantInts(n, 3);
    if (!given)
      return Types{unknownDims(x->dtype, x->rank())};
    for (std::int64_t a : *given)
      axes.push_back(normalizeAxis(n, a, rank));
  } else {
    for (std::int64_t a = 0; a < rank; ++a)
      axes.push_back(a);
  }
  if (!pads)
    return Types{unknownDims(x->dtype, x->rank())};
  if (pads->size() != 2 * axes.size())
    fail(n, "pads has " + std::to_string(pads->size()) + " entries for " +
                std::to_string(axes.size()) + " axes");
  Shape out = *x->shape;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    Dim& d = out[static_cast<std::size_t>(axes[i])];
    const std::int64_t added = (*pads)[i] + (*pads)[i + axes.size()];
    if (d.isKnown()) {
      if (d.value + added < 0)
        fail(n, "padding leaves a negative extent on axis " + std::to_string(axes[i]));
      d = Dim::known(d.value + added);
    } else if (added != 0) {
      d = Dim::unknown();
    }
  }
  return Types{makeType(x->dtype, out)};
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
    count = ceilDivSigned(l - s, d);
  } else {
    const double steps = std::ceil(((*limit)[0] - (*start)[0]) / (*delta)[0]);
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
    if (out[axis].isKnown() && (k->front() < 0 || k->front() > out[axis].value))
      fail(n, "k = " + std::to_string(k->front()) + " is outside [0, " +
                  std::to_string(out[axis].value) + "]");
    out[axis] = Dim::known(k->front());
  } else {
    out[axis] = Dim::unknown();
  }
  return Types{makeType(x->dtype, out), makeType(DType::I64, out)};
}

// --- resampling and encoding -------------------------------------------------------------

std::optional<Types> inferResize(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  const bool upsample = n.opType() == "Upsample" || n.inputs.size() == 2;
  const auto scales = constantReals(n, upsample ? 1 : 2);
  const auto sizes = upsample ? std::nullopt : constantInts(n, 3);
  const auto axesAttr = n.attrInts("axes");
  std::vector<std::int64_t> axes;
  for (std::int64_t a : axesAttr)
    axes.push_back(normalizeAxis(n, a, rankOf(*x)));
  if (axes.empty())
    for (std::int64_t a = 0; a < rankOf(*x); ++a)
      axes.push_back(a);
  Shape out = *x->shape;
  const bool stretch = n.attrString("keep_aspect_ratio_policy", "stretch") == "stretch";
  const bool crops = n.attrString("coordinate_transformation_mode", "") == "tf_crop_and_resize";
  if (sizes && !sizes->empty() && stretch) {
    if (sizes->size() != axes.size())
      fail(n, "sizes has " + std::to_string(sizes->size()) + " entries for " +
                  std::to_string(axes.size()) + " axes");
    for (std::size_t i = 0; i < axes.size(); ++i)
      out[static_cast<std::size_t>(axes[i])] = Dim::known((*sizes)[i]);
  } else if (scales && !scales->empty() && !crops) {
    if (scales->size() != axes.size())
      fail(n, "scales has " + std::to_string(scales->size()) + " entries for " +
                  std::to_string(axes.size()) + " axes");
    for (std::size_t i = 0; i < axes.size(); ++i) {
      Dim& d = out[static_cast<std::size_t>(axes[i])];
      if (d.isKnown())
        d = Dim::known(static_cast<std::int64_t>(std::floor(double(d.value) * (*scales)[i])));
      else if ((*scales)[i] != 1.0)
        d = Dim::unknown();
    }
  } else {
    return Types{unknownDims(x->dtype, x->rank())};
  }
  return Types{makeType(x->dtype, out)};
}

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
  Shape out = *indices->shape;
  out.insert(out.begin() + axis, depth && depth->size() == 1
                                     ? Dim::known(static_cast<std::int64_t>((*depth)[0]))
                                     : Dim::unknown());
  return Types{makeType(dtype, out)};
}

std::optional<Types> inferNonZero(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const Dim rank = x->shape ? Dim::known(rankOf(*x)) : Dim::unknown();
  return Types{makeType(DType::I64, {rank, Dim::unknown()})};
}

std::optional<Types> inferCompress(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!n.hasAttribute("axis"))
    return Types{unknownDims(x->dtype, 1)};
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  Shape out = *x->shape;
  out[static_cast<std::size_t>(normalizeAxis(n, n.attrInt("axis", 0), rankOf(*x)))] =
      Dim::unknown();
  return Types{makeType(x->dtype, out)};
}

// DepthToSpace and SpaceToDepth on NCHW.
std::optional<Types> inferDepthSpace(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownDims(x->dtype, 4)};
  if (x->rank() != 4)
    fail(n, "needs a rank-4 input, got rank " + std::to_string(x->rank()));
  const std::int64_t b = n.attrInt("blocksize", 0);
  if (b < 1)
    fail(n, "blocksize must be positive");
  const bool toSpace = n.opType() == "DepthToSpace";
  Shape out = *x->shape;
  auto scale = [&](Dim& d, bool grow, std::int64_t f, const char* what) {
    if (!d.isKnown())
      return;
    if (!grow && d.value % f != 0)
      fail(n, std::string(what) + " extent " + std::to_string(d.value) + " is not divisible by " +
                  std::to_string(f));
    d = Dim::known(grow ? d.value * f : d.value / f);
  };
  scale(out[1], !toSpace, b * b, "channel");
  scale(out[2], toSpace, b, "height");
  scale(out[3], toSpace, b, "width");
  return Types{makeType(x->dtype, out)};
}

} // namespace

std::vector<std::int64_t> transposePermutation(const graph::Node& node, std::int64_t rank) {
  std::vector<std::int64_t> perm;
  if (!node.hasAttribute("perm")) {
    for (std::int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
    return perm;
  }
  perm = node.attrInts("perm");
  std::vector<bool> seen(static_cast<std::size_t>(rank), false);
  if (static_cast<std::int64_t>(perm.size()) != rank)
    fail(node,
         "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  for (std::int64_t& p : perm) {
    p = normalizeAxis(node, p, rank);
    if (seen[static_cast<std::size_t>(p)])
      fail(node, "perm is not a permutation");
    seen[static_cast<std::size_t>(p)] = true;
  }
  return perm;
}

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

SliceAxis clampSlice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  if (dim <= 0)
    return {0, step, 0};
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<std::int64_t>(start, 0, dim);
    end = std::clamp<std::int64_t>(end, 0, dim);
    return {start, step, end > start ? ceilDivSigned(end - start, step) : 0};
  }
  start = std::clamp<std::int64_t>(start, 0, dim - 1);
  end = std::clamp<std::int64_t>(end, -1, dim - 1);
  return {start, step, start > end ? ceilDivSigned(start - end, -step) : 0};
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

namespace rules {

Rule findDataRule(const std::string& op) {
  static const std::map<std::string, Rule, std::less<>> kRules = [] {
    std::map<std::string, Rule, std::less<>> m{
        {"Reshape", inferReshape},
        {"Flatten", inferFlatten},
        {"Transpose", inferTranspose},
        {"Squeeze", inferSqueeze},
        {"Unsqueeze", inferUnsqueeze},
        {"Concat", inferConcat},
        {"Split", inferSplit},
        {"Slice", inferSlice},
        {"Gather", inferGather},
        {"GatherElements", inferGatherElements},
        {"GatherND", inferGatherND},
        {"Shape", inferShape},
        {"Size", inferSize},
        {"ConstantOfShape", inferConstantOfShape},
        {"Constant", inferConstant},
        {"Expand", inferExpand},
        {"Tile", inferTile},
        {"Pad", inferPad},
        {"Range", inferRange},
        {"ArgMax", inferArgReduce},
        {"ArgMin", inferArgReduce},
        {"TopK", inferTopK},
        {"Resize", inferResize},
        {"Upsample", inferResize},
        {"OneHot", inferOneHot},
        {"NonZero", inferNonZero},
        {"Compress", inferCompress},
        {"DepthToSpace", inferDepthSpace},
        {"SpaceToDepth", inferDepthSpace},
    };
    for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                           "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"})
      m[op] = inferReduce;
    return m;
  }();
  auto it = kRules.find(op);
  return it == kRules.end() ? nullptr : it->second;
}

} // namespace rules
} // namespace lathe::passes
