// Shape rules for ops that move data without computing it: reshapes, transposes, joins,
// splits, broadcasts, tiling and padding.

#include "engine/graph_passes/shape_rules.h"
#include "engine/graph_passes/shape_rules_internal.h"

#include <algorithm>
#include <set>

namespace lathe::passes {
namespace {

using namespace rules;

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

// --- broadcasting and padding ------------------------------------------------------------

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

void rules::addLayoutRules(RuleTable& rules) {
  rules["Reshape"] = inferReshape;
  rules["Flatten"] = inferFlatten;
  rules["Transpose"] = inferTranspose;
  rules["Squeeze"] = inferSqueeze;
  rules["Unsqueeze"] = inferUnsqueeze;
  rules["Concat"] = inferConcat;
  rules["Split"] = inferSplit;
  rules["Expand"] = inferExpand;
  rules["Tile"] = inferTile;
  rules["Pad"] = inferPad;
}

} // namespace lathe::passes
