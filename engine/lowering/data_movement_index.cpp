// Indexing ops: Slice, Pad, the Gathers, ReverseSequence and OneHot as pointwise rules;
// the Scatters and Compress as kernel rules (they write, or choose, whole regions); NonZero
// is refused, its output shape depending on the input values.
//
// Indices read from tensors are wrapped (negative counts from the end) and then clamped into
// the axis: ONNX leaves out-of-range indices undefined, and a clamped load cannot fault.
#include "engine/graph/slice_bounds.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace lathe::lowering {
namespace {

using graph::Node;
using Shape = std::vector<std::int64_t>;

// Loops that must run in order (scatters with repeated indices) never become parallel.
constexpr std::int64_t kSerialOnly = std::numeric_limits<std::int64_t>::max();

Shape inputShape(const Node& n, std::size_t i) {
  const graph::Value* v = n.input(i);
  if (!v)
    unsupportedNode(n, "input " + std::to_string(i) + " is absent");
  return staticShape(*v, n);
}

Shape outputShape(const Node& n) {
  return staticShape(*n.output(0), n);
}

std::int64_t numElements(const Shape& s) {
  std::int64_t count = 1;
  for (std::int64_t d : s)
    count *= d;
  return count;
}

[[noreturn]] void invalidNode(const Node& n, const std::string& reason) {
  throw Error(ErrorKind::Invalid, reason, {{}, n.name, n.opType()});
}

// A constant input, or the attribute that older opsets used instead; nullopt when neither.
std::optional<Shape> intsFrom(const Node& n, std::size_t input, const char* attribute,
                              const char* what) {
  if (n.input(input))
    return constantInts(n, input, what);
  if (n.hasAttribute(attribute))
    return n.attrInts(attribute);
  return std::nullopt;
}

// Element i of constant data as an immediate of `dtype`.
Expr elementConst(const graph::TensorData& t, std::int64_t i, graph::DType dtype) {
  const loop::Type type = loopType(dtype);
  if (type.isFloat())
    return loop::makeFloatConst(type, t.elementAsDouble(i));
  if (type.isBool())
    return loop::makeBool(t.elementAsInt(i) != 0);
  return loop::makeIntConst(type, t.elementAsInt(i));
}

// Element `i` of operand `input` in the element type `dtype`: an immediate when the operand
// is constant, a load otherwise (so the operand need not be known at compile time).
Expr operandElement(const Node& n, std::size_t input, std::int64_t i, OperandReader& in,
                    graph::DType dtype) {
  const graph::Value* v = n.input(input);
  if (v->isConstant() && !v->constant().isElided())
    return elementConst(v->constant(), i, dtype);
  Expr e = in.readFlat(input, loop::makeIndex(i));
  return e.type() == loopType(dtype) ? e : loop::cast(loopType(dtype), e);
}

Expr toIndex(const Expr& e) {
  return e.type() == loop::indexType() ? e : loop::cast(loop::indexType(), e);
}

// An index read from a tensor, for an axis of extent `dim`: negative values count from the
// end; the result is clamped into [0, dim) so that a bad index cannot read out of bounds.
Expr axisIndex(const Expr& value, std::int64_t dim) {
  Expr v = toIndex(value);
  v = loop::select(v < std::int64_t{0}, v + dim, v);
  return loop::max(loop::min(v, std::max<std::int64_t>(dim - 1, 0)), std::int64_t{0});
}

// --- Slice -------------------------------------------------------------------------------

using graph::clampSlice;
using graph::SliceAxis;

bool runtimeOperand(const Node& n, std::size_t i) {
  const graph::Value* v = n.input(i);
  return v && !(v->isConstant() && !v->constant().isElided());
}

// Slice whose starts, ends, axes or steps arrive at run time. The output shape is static,
// so the ends are not needed: each sliced axis reads start + i * step, with the start
// wrapped and clamped by the ONNX rules at run time. An entry whose axis is a runtime value
// applies to whichever axis it names. Indices are clamped into the axis so that values that
// disagree with the static output shape cannot read out of bounds.
Expr lowerRuntimeSlice(const Node& n, const std::vector<Expr>& idx, OperandReader& in,
                       const Shape& inShape) {
  const Shape startsShape = inputShape(n, 1);
  if (startsShape.size() != 1)
    invalidNode(n, "starts must be a 1-D tensor");
  const std::int64_t entries = startsShape[0];
  const auto rank = static_cast<std::int64_t>(idx.size());
  if (n.input(3) && !runtimeOperand(n, 3) && n.input(3)->constant().numElements() != entries)
    invalidNode(n, "starts and axes must have the same length");
  if (n.input(4) && !runtimeOperand(n, 4) && n.input(4)->constant().numElements() != entries)
    invalidNode(n, "starts and steps must have the same length");
  std::vector<Expr> src = idx;
  for (std::int64_t i = 0; i < entries; ++i) {
    const Expr start = toIndex(operandElement(n, 1, i, in, graph::DType::I64));
    const Expr step =
        n.input(4) ? toIndex(operandElement(n, 4, i, in, graph::DType::I64)) : loop::makeIndex(1);
    const std::optional<std::int64_t> constStep = loop::asConstInt(step);
    if (constStep && *constStep == 0)
      invalidNode(n, "slice step is zero");
    Expr axis =
        n.input(3) ? toIndex(operandElement(n, 3, i, in, graph::DType::I64)) : loop::makeIndex(i);
    std::optional<std::int64_t> constAxis = loop::asConstInt(axis);
    if (constAxis)
      constAxis = normalizeAxis(n, *constAxis, static_cast<std::int64_t>(idx.size()));
    else
      axis = loop::select(axis < std::int64_t{0}, axis + rank, axis);
    for (std::int64_t a = 0; a < rank; ++a) {
      if (constAxis && *constAxis != a)
        continue;
      const std::int64_t dim = inShape[static_cast<std::size_t>(a)];
      if (dim <= 0) // the output is empty and never read
        continue;
      auto clamp = [](const Expr& v, std::int64_t lo, std::int64_t hi) {
        return loop::max(loop::min(v, hi), lo);
      };
      const Expr wrapped = loop::select(start < std::int64_t{0}, start + dim, start);
      const Expr forward = clamp(wrapped, 0, dim), backward = clamp(wrapped, 0, dim - 1);
      const Expr first = constStep ? (*constStep > 0 ? forward : backward)
                                   : loop::select(step > std::int64_t{0}, forward, backward);
      const auto ai = static_cast<std::size_t>(a);
      const Expr at = clamp(idx[ai] * step + first, 0, dim - 1);
      src[ai] = constAxis ? at : loop::select(loop::eq(axis, loop::makeIndex(a)), at, src[ai]);
    }
  }
  return in.read(0, src);
}

Expr lowerSlice(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape inShape = inputShape(n, 0), outShape = outputShape(n);
  if (runtimeOperand(n, 1) || runtimeOperand(n, 2) || runtimeOperand(n, 3) || runtimeOperand(n, 4))
    return lowerRuntimeSlice(n, idx, in, inShape);
  const auto starts = intsFrom(n, 1, "starts", "starts");
  const auto ends = intsFrom(n, 2, "ends", "ends");
  if (!starts || !ends)
    invalidNode(n, "starts and ends are required");
  Shape axes, steps(starts->size(), 1);
  if (const auto given = intsFrom(n, 3, "axes", "axes"))
    axes = *given;
  else
    for (std::size_t i = 0; i < starts->size(); ++i)
      axes.push_back(static_cast<std::int64_t>(i));
  if (n.input(4))
    steps = constantInts(n, 4, "steps");
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    invalidNode(n, "starts, ends, axes and steps must have the same length");
  std::vector<Expr> src = idx;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto a =
        static_cast<std::size_t>(normalizeAxis(n, axes[i], static_cast<std::int64_t>(idx.size())));
    if (steps[i] == 0)
      invalidNode(n, "slice step is zero");
    const SliceAxis s = clampSlice(inShape[a], (*starts)[i], (*ends)[i], steps[i]);
    if (s.count != outShape[a])
      invalidNode(n, "slice of axis " + std::to_string(a) + " has " + std::to_string(s.count) +
                         " elements, the output " + std::to_string(outShape[a]));
    src[a] = s.count <= 1 ? loop::makeIndex(s.start) : idx[a] * s.step + s.start;
  }
  return in.read(0, src);
}

// --- Pad ---------------------------------------------------------------------------------

// The leading pads of every axis: immediates when the pads are constant; loads otherwise
// (the output shape, which the pads decide, must still be static).
std::vector<Expr> leadingPads(const Node& n, std::size_t rank, OperandReader& in) {
  Shape axes;
  if (n.input(3)) // opset 18
    for (std::int64_t a : constantInts(n, 3, "axes"))
      axes.push_back(normalizeAxis(n, a, static_cast<std::int64_t>(rank)));
  else
    for (std::size_t a = 0; a < rank; ++a)
      axes.push_back(static_cast<std::int64_t>(a));
  std::vector<Expr> begin(rank, loop::makeIndex(0));
  const graph::Value* pads = n.input(1);
  if (pads && !(pads->isConstant() && !pads->constant().isElided())) {
    const Shape shape = inputShape(n, 1);
    if (shape.size() != 1 || shape[0] != static_cast<std::int64_t>(2 * axes.size()))
      invalidNode(n, "pads must have 2 entries per padded axis");
    for (std::size_t i = 0; i < axes.size(); ++i)
      begin[static_cast<std::size_t>(axes[i])] =
          toIndex(in.readFlat(1, loop::makeIndex(static_cast<std::int64_t>(i))));
    return begin;
  }
  const auto given = intsFrom(n, 1, "pads", "pads");
  if (!given)
    invalidNode(n, "pads is required");
  if (given->size() != 2 * axes.size())
    invalidNode(n, "pads has " + std::to_string(given->size()) + " entries for " +
                       std::to_string(axes.size()) + " axes");
  for (std::size_t i = 0; i < axes.size(); ++i)
    begin[static_cast<std::size_t>(axes[i])] = loop::makeIndex((*given)[i]);
  return begin;
}

Expr lowerPad(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape inShape = inputShape(n, 0), outShape = outputShape(n);
  const std::size_t rank = idx.size();
  const std::vector<Expr> begin = leadingPads(n, rank, in);

  const std::string mode = n.attrString("mode", "constant");
  const graph::DType dtype = n.output(0)->type.dtype;
  Expr padValue = constantOf(dtype, 0);
  if (n.input(2))
    padValue = operandElement(n, 2, 0, in, dtype);
  else if (n.hasAttribute("value")) // before opset 11
    padValue = constantOf(dtype, n.attrFloat("value", 0.0f));
  if (numElements(inShape) == 0) {
    if (mode != "constant")
      invalidNode(n, "cannot pad an empty tensor in mode '" + mode + "'");
    return padValue;
  }

  std::vector<Expr> src;
  Expr inside;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t len = inShape[d];
    // Output positions [0, out) read input positions [-begin, out - begin): with a known
    // begin, an axis that stays inside the input needs no bounds handling.
    const auto known = loop::asConstInt(begin[d]);
    if (known && *known <= 0 && outShape[d] - *known <= len) {
      src.push_back(*known == 0 ? idx[d] : idx[d] - *known);
      continue;
    }
    Expr x = idx[d] - begin[d];
    if (mode == "constant") {
      Expr within = x >= std::int64_t{0} && x < len;
      inside = inside.defined() ? inside && within : within;
      src.push_back(loop::max(loop::min(x, len - 1), std::int64_t{0}));
    } else if (mode == "edge") {
      src.push_back(loop::max(loop::min(x, len - 1), std::int64_t{0}));
    } else if (mode == "reflect") {
      // Reflection is periodic with period 2*(len-1); fold into one period, then mirror.
      if (len == 1) {
        src.push_back(loop::makeIndex(0));
        continue;
      }
      const std::int64_t period = 2 * (len - 1);
      Expr m = loop::floorMod(x, period);
      src.push_back(loop::select(m >= len, period - m, m));
    } else if (mode == "wrap") {
      src.push_back(loop::floorMod(x, len));
    } else {
      unsupportedNode(n, "pad mode '" + mode + "'");
    }
  }
  Expr value = in.read(0, src);
  return inside.defined() ? loop::select(inside, value, padValue) : value;
}

// --- gathers -----------------------------------------------------------------------------

// out[a..., j..., b...] = data[a..., indices[j...], b...]
Expr lowerGather(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape dataShape = inputShape(n, 0), indShape = inputShape(n, 1);
  const auto axis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("axis", 0), static_cast<std::int64_t>(dataShape.size())));
  if (dataShape.empty() || idx.size() != dataShape.size() - 1 + indShape.size())
    invalidNode(n, "output rank does not match data and indices");
  const auto first = idx.begin() + static_cast<std::ptrdiff_t>(axis);
  const auto last = first + static_cast<std::ptrdiff_t>(indShape.size());
  Expr k = axisIndex(in.read(1, std::vector<Expr>(first, last)), dataShape[axis]);
  std::vector<Expr> src(idx.begin(), first);
  src.push_back(k);
  src.insert(src.end(), last, idx.end());
  return in.read(0, src);
}

// out[i] = data[i with i[axis] = indices[i]]
Expr lowerGatherElements(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape dataShape = inputShape(n, 0);
  const auto axis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("axis", 0), static_cast<std::int64_t>(idx.size())));
  if (dataShape.size() != idx.size())
    invalidNode(n, "data and indices have different ranks");
  std::vector<Expr> src = idx;
  src[axis] = axisIndex(in.read(1, idx), dataShape[axis]);
  return in.read(0, src);
}

// indices [batch..., rest..., k]: out[batch..., rest..., tail...] =
// data[batch..., indices[batch..., rest..., 0..k), tail...]
Expr lowerGatherND(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape dataShape = inputShape(n, 0), indShape = inputShape(n, 1);
  const auto batch = static_cast<std::size_t>(n.attrInt("batch_dims", 0));
  if (indShape.empty())
    invalidNode(n, "indices must have rank 1 or more");
  const auto depth = static_cast<std::size_t>(indShape.back());
  const std::size_t tuples = indShape.size() - 1; // output dims that pick a tuple
  if (batch > tuples || batch + depth > dataShape.size() ||
      idx.size() != tuples + dataShape.size() - batch - depth)
    invalidNode(n, "indices do not match the data's rank");
  std::vector<Expr> tuple(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(tuples));
  tuple.push_back(loop::makeIndex(0));
  std::vector<Expr> src(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(batch));
  for (std::size_t j = 0; j < depth; ++j) {
    tuple.back() = loop::makeIndex(static_cast<std::int64_t>(j));
    src.push_back(axisIndex(in.read(1, tuple), dataShape[batch + j]));
  }
  src.insert(src.end(), idx.begin() + static_cast<std::ptrdiff_t>(tuples), idx.end());
  return in.read(0, src);
}

// The first sequence_lens[b] steps of batch entry b reversed in time, the rest copied.
Expr lowerReverseSequence(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  if (idx.size() < 2)
    invalidNode(n, "needs an input of rank 2 or more");
  const auto batchAxis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("batch_axis", 1), static_cast<std::int64_t>(idx.size())));
  const auto timeAxis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("time_axis", 0), static_cast<std::int64_t>(idx.size())));
  const std::int64_t steps = inputShape(n, 0)[timeAxis];
  Expr len = toIndex(in.read(1, {idx[batchAxis]}));
  len = loop::max(loop::min(len, steps), std::int64_t{0});
  const Expr& t = idx[timeAxis];
  std::vector<Expr> src = idx;
  src[timeAxis] = loop::select(t < len, len - t - std::int64_t{1}, t);
  return in.read(0, src);
}

// out[..., d, ...] = indices[...] (negative counts from depth) == d ? on : off.
Expr lowerOneHot(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const auto axis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("axis", -1), static_cast<std::int64_t>(idx.size())));
  const std::int64_t depth = outputShape(n)[axis]; // shape inference read the depth input
  std::vector<Expr> indIdx = idx;
  indIdx.erase(indIdx.begin() + static_cast<std::ptrdiff_t>(axis));
  Expr k = toIndex(in.read(0, indIdx)); // float indices truncate, as ONNX Runtime does
  k = loop::select(k < std::int64_t{0}, k + depth, k);
  const graph::DType dtype = n.output(0)->type.dtype;
  Expr off = operandElement(n, 2, 0, in, dtype), on = operandElement(n, 2, 1, in, dtype);
  return loop::select(loop::eq(k, idx[axis]), on, off);
}

// --- scatters: copy the data, then apply the updates in order -----------------------------

Expr combine(const Node& n, const std::string& reduction, const Expr& old, const Expr& update) {
  if (reduction == "none")
    return update;
  if (update.type().isBool())
    unsupportedNode(n, "reduction '" + reduction + "' on booleans");
  if (reduction == "add")
    return old + update;
  if (reduction == "mul")
    return old * update;
  if (reduction == "max")
    return loop::max(old, update);
  if (reduction == "min")
    return loop::min(old, update);
  unsupportedNode(n, "reduction '" + reduction + "'");
}

// The kernel's epilogue, as a last pass over the output; none when it is the identity (a
// lone op: it hands back the very value it is given).
Stmt epiloguePass(KernelBuilder& kb, const TensorRef& out, const Epilogue& epilogue) {
  const Expr probe = loop::Var::make(out.buffer.elementType(), "epilogue_probe");
  const std::vector<Expr> zeros(out.rank(), loop::makeIndex(0));
  if (epilogue(probe, zeros).sameAs(probe))
    return loop::noOp();
  return kb.loopNest(out.shape, [&](const std::vector<Expr>& idx) {
    return out.store(idx, epilogue(out.load(idx), idx));
  });
}

Stmt copyAll(KernelBuilder& kb, const TensorRef& from, const TensorRef& to) {
  return kb.loopNest(to.shape,
                     [&](const std::vector<Expr>& idx) { return to.store(idx, from.load(idx)); });
}

// ScatterElements (and the older Scatter): out[i with i[axis] = indices[i]] op= updates[i].
Stmt lowerScatterElements(const Node& n, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef data = kb.input(*n.input(0), n);
  const TensorRef indices = kb.input(*n.input(1), n);
  const TensorRef updates = kb.input(*n.input(2), n);
  const TensorRef out = kb.output(*n.output(0), n);
  if (indices.rank() != data.rank() || updates.shape != indices.shape)
    invalidNode(n, "data, indices and updates must have one rank, indices and updates one shape");
  const auto axis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("axis", 0), static_cast<std::int64_t>(data.rank())));
  const std::string reduction = n.attrString("reduction", "none");
  Stmt scatter = kb.loopNest(
      indices.shape,
      [&](const std::vector<Expr>& idx) {
        std::vector<Expr> target = idx;
        target[axis] = axisIndex(indices.load(idx), data.shape[axis]);
        return out.store(target, combine(n, reduction, out.load(target), updates.load(idx)));
      },
      "j", kSerialOnly);
  return loop::Block::make({copyAll(kb, data, out), scatter, epiloguePass(kb, out, epilogue)});
}

// indices [..., k], updates [..., tail...]: out[indices[...], tail...] op= updates[..., tail...]
Stmt lowerScatterND(const Node& n, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef data = kb.input(*n.input(0), n);
  const TensorRef indices = kb.input(*n.input(1), n);
  const TensorRef updates = kb.input(*n.input(2), n);
  const TensorRef out = kb.output(*n.output(0), n);
  if (indices.rank() == 0)
    invalidNode(n, "indices must have rank 1 or more");
  const auto depth = static_cast<std::size_t>(indices.shape.back());
  const std::size_t tuples = indices.rank() - 1;
  if (depth > data.rank() || updates.rank() != tuples + data.rank() - depth)
    invalidNode(n, "updates do not match data and indices");
  const std::string reduction = n.attrString("reduction", "none");
  Stmt scatter = kb.loopNest(
      updates.shape,
      [&](const std::vector<Expr>& idx) {
        std::vector<Expr> tuple(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(tuples));
        tuple.push_back(loop::makeIndex(0));
        std::vector<Expr> target;
        for (std::size_t j = 0; j < depth; ++j) {
          tuple.back() = loop::makeIndex(static_cast<std::int64_t>(j));
          target.push_back(axisIndex(indices.load(tuple), data.shape[j]));
        }
        target.insert(target.end(), idx.begin() + static_cast<std::ptrdiff_t>(tuples), idx.end());
        return out.store(target, combine(n, reduction, out.load(target), updates.load(idx)));
      },
      "j", kSerialOnly);
  return loop::Block::make({copyAll(kb, data, out), scatter, epiloguePass(kb, out, epilogue)});
}

// --- Compress: a constant condition picks runs of slices; one copy loop per run ------------

Stmt lowerCompress(const Node& n, KernelBuilder& kb, const Epilogue& epilogue) {
  const graph::TensorData& condition = constantInput(n, 1, "condition");
  const TensorRef x = kb.input(*n.input(0), n);
  const TensorRef out = kb.output(*n.output(0), n);
  const bool flat = !n.hasAttribute("axis"); // no axis: the input is flattened first
  const auto axis = flat ? std::size_t{0}
                         : static_cast<std::size_t>(normalizeAxis(
                               n, n.attrInt("axis", 0), static_cast<std::int64_t>(x.rank())));
  const std::int64_t extent = flat ? x.numElements() : x.shape[axis];
  struct Run {
    std::int64_t from, to, length;
  };
  std::vector<Run> runs;
  std::int64_t selected = 0;
  // Entries past the end of the condition count as false.
  for (std::int64_t i = 0; i < std::min(condition.numElements(), extent); ++i) {
    if (condition.elementAsInt(i) == 0)
      continue;
    if (!runs.empty() && runs.back().from + runs.back().length == i)
      ++runs.back().length;
    else
      runs.push_back({i, selected, 1});
    ++selected;
  }
  const std::int64_t outExtent = flat ? out.numElements() : out.shape[axis];
  if (selected != outExtent || (flat && out.rank() != 1))
    invalidNode(n, "the condition selects " + std::to_string(selected) +
                       " entries but the output has " + std::to_string(outExtent));
  std::vector<Stmt> copies;
  for (const Run& run : runs) {
    if (flat) {
      copies.push_back(kb.loopNest({run.length}, [&](const std::vector<Expr>& idx) {
        const std::vector<Expr> dst{idx[0] + run.to};
        return out.store(dst, epilogue(x.loadFlat(idx[0] + run.from), dst));
      }));
      continue;
    }
    Shape shape = out.shape;
    shape[axis] = run.length;
    copies.push_back(kb.loopNest(shape, [&](const std::vector<Expr>& idx) {
      std::vector<Expr> src = idx, dst = idx;
      src[axis] = idx[axis] + run.from;
      dst[axis] = idx[axis] + run.to;
      return out.store(dst, epilogue(x.load(src), dst));
    }));
  }
  return loop::Block::make(copies);
}

Stmt lowerNonZero(const Node& n, KernelBuilder&, const Epilogue&) {
  // With a constant input fold-constants would have replaced it; here it depends on data.
  unsupportedNode(n, "output shape depends on input values");
}

} // namespace

void registerDataMovementIndexRules(RuleTable& t) {
  auto& p = t.pointwise;
  p["Slice"] = lowerSlice;
  p["Pad"] = lowerPad;
  p["Gather"] = lowerGather;
  p["GatherElements"] = lowerGatherElements;
  p["GatherND"] = lowerGatherND;
  p["ReverseSequence"] = lowerReverseSequence;
  p["OneHot"] = lowerOneHot;
  auto& k = t.kernels;
  k["Scatter"] = k["ScatterElements"] = lowerScatterElements;
  k["ScatterND"] = lowerScatterND;
  k["Compress"] = lowerCompress;
  k["NonZero"] = lowerNonZero;
}

} // namespace lathe::lowering
