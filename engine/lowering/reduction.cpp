// Reductions as kernel rules: Reduce* over a set of axes, ArgMax/ArgMin, CumSum and TopK.
// The loop structure (tasks over the kept axes, contiguous column rows) is in
// reduce_helpers.h.
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/lowering/reduce_helpers.h"
#include "engine/lowering/window_helpers.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <functional>

namespace lathe::lowering {
namespace {

using graph::DType;
using graph::Node;
using loop::Intrinsic;

// Scratch beyond this goes on the heap: kernels run on worker threads with ordinary stacks.
constexpr std::int64_t kMaxStackBytes = 64 << 10;

enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

// Axes given at run time: with static shapes they follow from the input and output shapes
// and the number of axes (the axes operand's static length). Every set of that many axes
// that turns `in` into `out` is a candidate. When they agree (except on axes of extent 1,
// where reducing one element leaves it unchanged for `unitSafe` kinds) the result is one
// set; otherwise all candidates, for the caller to choose between at run time.
std::vector<std::vector<std::int64_t>> inferReduceAxes(const Node& node,
                                                       const std::vector<std::int64_t>& in,
                                                       const std::vector<std::int64_t>& out,
                                                       bool keepDims, bool unitSafe) {
  const graph::Value* axesValue = node.input(1);
  const auto given = axesValue->type.isStatic() ? axesValue->type.numElements() : std::nullopt;
  const std::size_t rank = in.size();
  if (!given || rank > 16)
    unsupportedNode(node, "the axes input must be a compile-time constant");
  const auto m = static_cast<std::size_t>(*given);
  if (m == 0) { // empty axes: all axes, or none with noop_with_empty_axes
    std::vector<std::int64_t> all;
    if (node.attrInt("noop_with_empty_axes", 0) == 0)
      for (std::size_t a = 0; a < rank; ++a)
        all.push_back(static_cast<std::int64_t>(a));
    return {all};
  }
  std::vector<std::vector<std::int64_t>> candidates;
  for (std::uint32_t mask = 0; mask < (1u << rank); ++mask) {
    if (static_cast<std::size_t>(__builtin_popcount(mask)) != m)
      continue;
    std::vector<std::int64_t> axes, shape;
    for (std::size_t a = 0; a < rank; ++a) {
      if (mask & (1u << a)) {
        axes.push_back(static_cast<std::int64_t>(a));
        if (keepDims)
          shape.push_back(1);
      } else {
        shape.push_back(in[a]);
      }
    }
    if (shape == out)
      candidates.push_back(axes);
  }
  if (candidates.empty())
    unsupportedNode(node, "no set of axes gives the result shape");
  auto nonUnit = [&](const std::vector<std::int64_t>& axes) {
    std::vector<std::int64_t> kept;
    for (std::int64_t a : axes)
      if (in[static_cast<std::size_t>(a)] != 1)
        kept.push_back(a);
    return kept;
  };
  for (const auto& c : candidates)
    if (unitSafe ? nonUnit(c) != nonUnit(candidates[0]) : c != candidates[0]) {
      if (candidates.size() > 8)
        unsupportedNode(node, "the axes input is not a compile-time constant and the shapes "
                              "do not determine the reduced axes");
      return candidates;
    }
  return {candidates[0]};
}

// The axes a Reduce* node reduces, as the shape rules compute them: the axes input (ReduceSum
// from opset 13) or attribute, all axes when empty, none with noop_with_empty_axes.
std::vector<std::int64_t> reduceAxes(const Node& node, std::size_t rank) {
  std::vector<std::int64_t> axes;
  if (node.input(1))
    axes = constantInts(node, 1, "the axes input");
  else
    axes = node.attrInts("axes");
  if (axes.empty()) {
    if (node.attrInt("noop_with_empty_axes", 0) != 0)
      return axes;
    for (std::size_t a = 0; a < rank; ++a)
      axes.push_back(static_cast<std::int64_t>(a));
    return axes;
  }
  for (std::int64_t& a : axes)
    a = normalizeAxis(node, a, static_cast<std::int64_t>(rank));
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    unsupportedNode(node, "an axis is reduced twice");
  return axes;
}

bool needsFloat(Reduce kind) {
  return kind == Reduce::L2 || kind == Reduce::LogSum || kind == Reduce::LogSumExp;
}

// The value each element contributes, before combining.
Expr mapElement(Reduce kind, const Expr& x) {
  switch (kind) {
  case Reduce::L1:
    return x.type().isUInt() ? x : callIntrinsic(Intrinsic::Abs, x);
  case Reduce::L2:
  case Reduce::SumSquare:
    return x * x;
  default:
    return x;
  }
}

Expr identityOf(Reduce kind, loop::Type t) {
  switch (kind) {
  case Reduce::Max:
    return lowestOf(t);
  case Reduce::Min:
    return highestOf(t);
  case Reduce::Prod:
    return loop::makeOne(t);
  default:
    return loop::makeZero(t);
  }
}

Expr combine(Reduce kind, const Expr& acc, const Expr& v) {
  switch (kind) {
  case Reduce::Max:
    return loop::max(acc, v);
  case Reduce::Min:
    return loop::min(acc, v);
  case Reduce::Prod:
    return acc * v;
  default:
    return acc + v;
  }
}

Expr finish(Reduce kind, const Expr& acc, std::int64_t count) {
  switch (kind) {
  case Reduce::Mean:
    return acc / constLike(acc, static_cast<double>(count));
  case Reduce::L2:
    return callIntrinsic(Intrinsic::Sqrt, acc);
  case Reduce::LogSum:
    return callIntrinsic(Intrinsic::Log, acc);
  default:
    return acc;
  }
}

// Where a task keeps its per-column accumulator: in a scratch row when each task has one
// column (a register after promotion), else in the output row itself, which keeps the
// inner loop contiguous without another buffer.
struct Accumulator {
  TensorRef buffer;
  bool inOutput = false;
  Expr at(const ReduceTask& t, const Expr& local, const Expr& column) const {
    return inOutput ? t.keptFlat(column) : local;
  }
  Expr load(const ReduceTask& t, const Expr& local, const Expr& column) const {
    return buffer.loadFlat(at(t, local, column));
  }
  Stmt store(const ReduceTask& t, const Expr& local, const Expr& column, Expr v) const {
    return buffer.storeFlat(at(t, local, column), std::move(v));
  }
};

// Sums of many f32 (or narrower) elements accumulate in f64: in f32 a running sum stops
// growing once the elements fall below its rounding step (2^30 halves of 2.0 sum to 2^25),
// and 10^6 additions of 0.1 are 1% off. Below this many elements f32 is accurate enough and
// keeps the wider vectors.
constexpr std::int64_t kWideSumElements = 4096;

bool accumulatesWide(Reduce kind, loop::Type t, std::int64_t count) {
  const bool additive = kind == Reduce::Sum || kind == Reduce::Mean || kind == Reduce::L1 ||
                        kind == Reduce::L2 || kind == Reduce::LogSum || kind == Reduce::SumSquare;
  return additive && t.isFloat() && t.bits() < 64 && count >= kWideSumElements;
}

Accumulator accumulator(ReduceTask& t, const TensorRef& out, const std::string& hint) {
  if (t.maxWidth() > 1)
    return {out, true};
  return {t.row(hint, out.dtype), false};
}

template <Reduce kind>
Stmt reduceNest(const Node& node, KernelBuilder& kb, const Epilogue& epilogue, const TensorRef& x,
                const TensorRef& out, const std::vector<std::int64_t>& axes, bool keepDims);

template <Reduce kind>
Stmt lowerReduce(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef x = kb.input(*node.input(0), node);
  const TensorRef out = kb.output(*node.output(0), node);
  const loop::Type t = loopType(x.dtype);
  if (x.dtype != out.dtype)
    unsupportedNode(node, "the result type differs from the input type");
  if (t.isBool() || (needsFloat(kind) && !t.isFloat()))
    unsupportedNode(node, "element type " + t.toString());
  const bool keepDims = node.attrInt("keepdims", 1) != 0;
  const graph::Value* axesValue = node.input(1);
  const bool runtimeAxes =
      axesValue && !(axesValue->isConstant() && !axesValue->constant().isElided());
  // Reducing a single element leaves it unchanged for these kinds.
  constexpr bool unitSafe = kind == Reduce::Sum || kind == Reduce::Mean || kind == Reduce::Max ||
                            kind == Reduce::Min || kind == Reduce::Prod;
  const std::vector<std::vector<std::int64_t>> choices =
      runtimeAxes ? inferReduceAxes(node, x.shape, out.shape, keepDims, unitSafe)
                  : std::vector<std::vector<std::int64_t>>{reduceAxes(node, x.rank())};
  auto nest = [&](const std::vector<std::int64_t>& axes) {
    return reduceNest<kind>(node, kb, epilogue, x, out, axes, keepDims);
  };
  if (choices.size() == 1)
    return nest(choices[0]);
  // The shapes leave several sets of axes possible: one nest each, chosen at run time by
  // the loaded axes (distinct, negative ones counting from the end); the last is the
  // fallback.
  const TensorRef axesRef = kb.input(*axesValue, node);
  const auto rank = static_cast<std::int64_t>(x.rank());
  std::vector<Expr> loaded, vars;
  for (std::size_t j = 0; j < choices[0].size(); ++j) {
    const Expr v = kb.freshVar("axis");
    vars.push_back(v);
    loaded.push_back(loop::cast(loop::indexType(),
                                axesRef.loadFlat(loop::makeIndex(static_cast<std::int64_t>(j)))));
  }
  Stmt chosen = nest(choices.back());
  for (std::size_t k = choices.size() - 1; k-- > 0;) {
    Expr all;
    for (std::int64_t c : choices[k]) {
      Expr any;
      for (const Expr& v : vars) {
        Expr hit = loop::eq(v, loop::makeIndex(c)) || loop::eq(v, loop::makeIndex(c - rank));
        any = any.defined() ? any || hit : hit;
      }
      all = all.defined() ? all && any : any;
    }
    chosen = loop::IfThenElse::make(all, nest(choices[k]), chosen);
  }
  for (std::size_t j = vars.size(); j-- > 0;)
    chosen = loop::LetStmt::make(vars[j], loaded[j], chosen);
  return chosen;
}

// For a GPU: trailing axes of at least a warp's worth of elements reduced by a block per
// row (gpuRowReduction). Undefined otherwise, and for LogSumExp and wide sums.
template <Reduce kind>
Stmt gpuReduceNest(KernelBuilder& kb, const Epilogue& epilogue, const TensorRef& x,
                   const TensorRef& out, std::vector<std::int64_t> axes, std::int64_t count) {
  const loop::Type t = loopType(x.dtype);
  if (!kb.gpu() || kind == Reduce::LogSumExp || count < 32 || accumulatesWide(kind, t, count))
    return Stmt();
  std::sort(axes.begin(), axes.end());
  const auto rank = static_cast<std::int64_t>(x.rank());
  const auto n = static_cast<std::int64_t>(axes.size());
  for (std::int64_t i = 0; i < n; ++i)
    if (axes[static_cast<std::size_t>(i)] != rank - n + i)
      return Stmt();
  RowReduction r;
  r.rows = x.numElements() / count;
  r.count = count;
  r.dtype = x.dtype;
  r.identity = identityOf(kind, t);
  r.combine = [](const Expr& a, const Expr& b) { return combine(kind, a, b); };
  r.element = [&](const Expr& row, const Expr& at) {
    return mapElement(kind, x.loadFlat(row * count + at));
  };
  r.write = [&](const Expr& row, const Expr& total) {
    return out.storeFlat(row, epilogue(finish(kind, total, count), unflatten(row, out.shape)));
  };
  return gpuRowReduction(kb, r);
}

template <Reduce kind>
Stmt reduceNest(const Node& node, KernelBuilder& kb, const Epilogue& epilogue, const TensorRef& x,
                const TensorRef& out, const std::vector<std::int64_t>& axes, bool keepDims) {
  const loop::Type t = loopType(x.dtype);
  if (out.rank() != (keepDims ? x.rank() : x.rank() - axes.size()))
    unsupportedNode(node, "the result rank does not match the reduced axes");
  const ReduceLayout layout(x.shape, axes);
  const std::int64_t count = layout.reducedCount();
  if (kind == Reduce::Mean && count == 0 && !t.isFloat())
    unsupportedNode(node, "integer mean of no elements");
  if (Stmt block = gpuReduceNest<kind>(kb, epilogue, x, out, axes, count); block.defined())
    return block;

  return forEachTask(kb, layout, kind == Reduce::LogSumExp ? 2 : 1, [&](ReduceTask& task) {
    auto read = [&](const std::vector<Expr>& r, const Expr& column) {
      return x.loadFlat(task.inputFlat(r, column));
    };
    auto write = [&](const Expr& column, const Expr& v) {
      return out.storeFlat(task.keptFlat(column), epilogue(v, task.keptIndex(column, keepDims)));
    };
    const bool wide = accumulatesWide(kind, t, count);
    const loop::Type accType = wide ? loopType(DType::F64) : t;
    const Accumulator acc =
        wide ? Accumulator{task.row("acc", DType::F64), false} : accumulator(task, out, "acc");
    std::vector<Stmt> passes;
    passes.push_back(task.overColumns([&](const Expr& l, const Expr& c) {
      return acc.store(task, l, c,
                       identityOf(kind == Reduce::LogSumExp ? Reduce::Max : kind, accType));
    }));
    if constexpr (kind == Reduce::LogSumExp) {
      // log(sum(exp(x - m))) + m with m the maximum, so that exp cannot overflow. An
      // infinite m is replaced by 0: x - m would be NaN where x is the same infinity.
      passes.push_back(
          task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
            return acc.store(task, l, c, loop::max(acc.load(task, l, c), read(r, c)));
          }));
      const TensorRef sum = task.row("sum", x.dtype);
      auto shift = [&](const Expr& l, const Expr& c) {
        Expr m = acc.load(task, l, c);
        return loop::select(loop::eq(callIntrinsic(Intrinsic::Abs, m), highestOf(t)),
                            constLike(m, 0), m);
      };
      passes.push_back(task.overColumns(
          [&](const Expr& l, const Expr&) { return sum.storeFlat(l, loop::makeZero(t)); }));
      passes.push_back(
          task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
            return sum.storeFlat(l, sum.loadFlat(l) +
                                        callIntrinsic(Intrinsic::Exp, read(r, c) - shift(l, c)));
          }));
      passes.push_back(task.overColumns([&](const Expr& l, const Expr& c) {
        return write(c, shift(l, c) + callIntrinsic(Intrinsic::Log, sum.loadFlat(l)));
      }));
    } else {
      passes.push_back(
          task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
            const Expr element = wide ? loop::cast(accType, read(r, c)) : read(r, c);
            return acc.store(task, l, c,
                             combine(kind, acc.load(task, l, c), mapElement(kind, element)));
          }));
      task.vectorizePass(passes.back());
      passes.push_back(task.overColumns([&](const Expr& l, const Expr& c) -> Stmt {
        // Sum, Max... accumulated in the output with an identity epilogue are done.
        const Expr total = acc.load(task, l, c);
        const Expr result =
            wide ? loop::cast(t, finish(kind, total, count)) : finish(kind, total, count);
        const Expr v = epilogue(result, task.keptIndex(c, keepDims));
        if (acc.inOutput && v.sameAs(total))
          return loop::noOp();
        return out.storeFlat(task.keptFlat(c), v);
      }));
    }
    return loop::Block::make(passes);
  });
}

// ArgMax / ArgMin: the first (or, with select_last_index, last) position of the extreme.
template <bool isMax>
Stmt lowerArgReduce(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef x = kb.input(*node.input(0), node);
  const TensorRef out = kb.output(*node.output(0), node);
  const loop::Type t = loopType(x.dtype);
  if (t.isBool() || out.dtype != DType::I64)
    unsupportedNode(node, "element types " + t.toString() + " -> " +
                              std::string(graph::dtypeName(out.dtype)));
  const std::int64_t axis =
      normalizeAxis(node, node.attrInt("axis", 0), static_cast<std::int64_t>(x.rank()));
  const bool keepDims = node.attrInt("keepdims", 1) != 0;
  const bool last = node.attrInt("select_last_index", 0) != 0;
  if (x.rank() == 0 || out.rank() != (keepDims ? x.rank() : x.rank() - 1))
    unsupportedNode(node, "the result rank does not match the reduced axis");
  const ReduceLayout layout(x.shape, {axis});

  return forEachTask(kb, layout, 1, [&](ReduceTask& task) {
    const TensorRef best = task.row("best", x.dtype);
    const Accumulator index = accumulator(task, out, "index");
    std::vector<Stmt> passes;
    passes.push_back(task.overColumns([&](const Expr& l, const Expr& c) {
      return loop::Block::make(best.storeFlat(l, isMax ? lowestOf(t) : highestOf(t)),
                               index.store(task, l, c, loop::makeIndex(0)));
    }));
    passes.push_back(
        task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
          const Expr v = x.loadFlat(task.inputFlat(r, c));
          const Expr b = best.loadFlat(l);
          // Strict comparisons keep the first extreme; non-strict ones move to the last. The
          // position is stored first: `better` reads the extreme before it is updated.
          const Expr better = isMax ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
          return loop::Block::make(
              index.store(task, l, c, loop::select(better, r[0], index.load(task, l, c))),
              best.storeFlat(l, loop::select(better, v, b)));
        }));
    passes.push_back(task.overColumns([&](const Expr& l, const Expr& c) -> Stmt {
      const Expr found = index.load(task, l, c);
      const Expr v = epilogue(found, task.keptIndex(c, keepDims));
      if (index.inOutput && v.sameAs(found)) // already in place
        return loop::noOp();
      return out.storeFlat(task.keptFlat(c), v);
    }));
    return loop::Block::make(passes);
  });
}

Stmt cumSumNest(KernelBuilder& kb, const TensorRef& x, const TensorRef& out, std::int64_t axis,
                bool exclusive, bool reverse, const Epilogue& epilogue);

// CumSum: running sums along the axis (input 1), optionally exclusive and/or reversed.
Stmt lowerCumSum(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef x = kb.input(*node.input(0), node);
  const TensorRef out = kb.output(*node.output(0), node);
  const loop::Type t = loopType(x.dtype);
  if (t.isBool() || x.dtype != out.dtype)
    unsupportedNode(node, "element type " + t.toString());
  if (x.rank() == 0)
    unsupportedNode(node, "CumSum on a scalar");
  const bool exclusive = node.attrInt("exclusive", 0) != 0;
  const bool reverse = node.attrInt("reverse", 0) != 0;
  const graph::Value* axisValue = node.input(1);
  if (axisValue && !(axisValue->isConstant() && !axisValue->constant().isElided())) {
    // The axis arrives at run time: one loop nest per axis, chosen by the loaded value
    // (negative axes count from the end).
    if (!axisValue->type.isStatic() || axisValue->type.numElements() != 1)
      unsupportedNode(node, "axis must be a single value");
    const TensorRef axisRef = kb.input(*axisValue, node);
    const Expr loaded = loop::cast(loop::indexType(), axisRef.loadFlat(loop::makeIndex(0)));
    const Expr axisVar = kb.freshVar("axis");
    const auto rank = static_cast<std::int64_t>(x.rank());
    Stmt chosen;
    for (std::int64_t a = rank - 1; a >= 0; --a) {
      Stmt nest = cumSumNest(kb, x, out, a, exclusive, reverse, epilogue);
      chosen = loop::IfThenElse::make(loop::eq(axisVar, loop::makeIndex(a)) ||
                                          loop::eq(axisVar, loop::makeIndex(a - rank)),
                                      nest, chosen);
    }
    return loop::LetStmt::make(axisVar, loaded, chosen);
  }
  const std::vector<std::int64_t> axisInput = constantInts(node, 1, "the axis input");
  if (axisInput.size() != 1)
    unsupportedNode(node, "axis must be a single value on a tensor of rank >= 1");
  const std::int64_t axis = normalizeAxis(node, axisInput[0], static_cast<std::int64_t>(x.rank()));
  return cumSumNest(kb, x, out, axis, exclusive, reverse, epilogue);
}

Stmt cumSumNest(KernelBuilder& kb, const TensorRef& x, const TensorRef& out, std::int64_t axis,
                bool exclusive, bool reverse, const Epilogue& epilogue) {
  const loop::Type t = loopType(x.dtype);
  const ReduceLayout layout(x.shape, {axis});
  return forEachTask(kb, layout, 1, [&](ReduceTask& task) {
    const TensorRef sum = task.row("sum", x.dtype);
    Stmt init = task.overColumns(
        [&](const Expr& l, const Expr&) { return sum.storeFlat(l, loop::makeZero(t)); });
    Stmt scan = task.overReduced(
        [&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
          const Expr flat = task.inputFlat(r, c);
          Stmt add = sum.storeFlat(l, sum.loadFlat(l) + x.loadFlat(flat));
          Stmt write = out.storeFlat(flat, epilogue(sum.loadFlat(l), task.fullIndex(r, c)));
          return exclusive ? loop::Block::make(write, add) : loop::Block::make(add, write);
        },
        reverse);
    return loop::Block::make(init, scan);
  });
}

// A column's candidates in order, best first: values and their positions along the axis,
// filled by `body`, in scratch buffers that the caller allocates.
struct RankedColumn {
  Stmt body;
  TensorRef values, indices;
  std::vector<TensorRef> scratch;
};

using Better = std::function<Expr(const Expr&, const Expr&)>;

// The best k of a column by insertion: a sorted list of the best so far; an element that
// beats the list's last one goes before every entry it beats strictly (on a tie the earlier
// position stays first), and the entries from there move down one slot. O(n) for random
// data and small k, O(n k) at worst.
RankedColumn bestByInsertion(KernelBuilder& kb, ReduceTask& task, const TensorRef& x,
                             std::int64_t k, const Better& better, const Expr& worstValue) {
  const TensorRef best = kb.scratch("best", x.dtype, {k});
  const TensorRef where = kb.scratch("where", DType::I64, {k});
  const TensorRef filled = kb.scratch("filled", DType::I64, {1});
  const Expr zero = loop::makeIndex(0);
  // Empty slots are compared too (the conditions below are not short-circuits), so they
  // hold a defined value.
  const Expr slot = kb.freshVar("j");
  Stmt clear = loop::Block::make(filled.storeFlat(zero, zero),
                                 kb.serialLoop(slot, k, best.storeFlat(slot, worstValue)));
  Stmt scan = task.overReduced([&](const std::vector<Expr>& r, const Expr&, const Expr& c) {
    const Expr v = x.loadFlat(task.inputFlat(r, c));
    const Expr count = kb.freshVar("n");
    const Expr slots = loop::min(count + 1, loop::makeIndex(k));
    const Expr step = kb.freshVar("j");
    const Expr j = slots - 1 - step;
    const Expr prev = loop::max(j - 1, zero);
    const Expr beatsHere = j >= count || better(v, best.loadFlat(j));
    const Expr beatsPrev = j > 0 && (prev >= count || better(v, best.loadFlat(prev)));
    // The position first: both conditions read best[j] before it is overwritten.
    Stmt shift = loop::For::make(
        step, zero, slots, loop::ForKind::Serial,
        loop::Block::make(
            where.storeFlat(j, loop::select(beatsPrev, where.loadFlat(prev),
                                            loop::select(beatsHere, r[0], where.loadFlat(j)))),
            best.storeFlat(j, loop::select(beatsPrev, best.loadFlat(prev),
                                           loop::select(beatsHere, v, best.loadFlat(j))))));
    Stmt insert = loop::Block::make(shift, filled.storeFlat(zero, slots));
    const Expr worst = best.loadFlat(loop::makeIndex(k - 1));
    return loop::LetStmt::make(count, filled.loadFlat(zero),
                               loop::IfThenElse::make(count < k || better(v, worst), insert));
  });
  return {loop::Block::make(clear, scan), best, where, {best, where, filled}};
}

// The whole column sorted by a stable bottom-up merge sort (ties keep position order):
// O(n log n) whatever the data, for large k. Runs of width w merge from one pair of
// buffers into the other, one level per width, choosing each output element without
// branches.
RankedColumn sortColumn(KernelBuilder& kb, ReduceTask& task, const TensorRef& x, std::int64_t n,
                        const Better& better) {
  const TensorRef v[2] = {kb.scratch("sort_values", x.dtype, {n}),
                          kb.scratch("sort_values", x.dtype, {n})};
  const TensorRef ix[2] = {kb.scratch("sort_indices", DType::I64, {n}),
                           kb.scratch("sort_indices", DType::I64, {n})};
  const TensorRef cursor = kb.scratch("cursor", DType::I64, {2});
  const Expr zero = loop::makeIndex(0), one = loop::makeIndex(1), last = loop::makeIndex(n - 1);
  std::vector<Stmt> steps;
  steps.push_back(task.overReduced([&](const std::vector<Expr>& r, const Expr&, const Expr& c) {
    return loop::Block::make(v[0].storeFlat(r[0], x.loadFlat(task.inputFlat(r, c))),
                             ix[0].storeFlat(r[0], r[0]));
  }));
  int src = 0;
  for (std::int64_t w = 1; w < n; w *= 2, src ^= 1) {
    const int dst = src ^ 1;
    const Expr run = kb.freshVar("run"), p = kb.freshVar("p");
    const Expr i = kb.freshVar("i"), j = kb.freshVar("j");
    const Expr lo = run * (2 * w);
    const Expr mid = loop::min(lo + w, loop::makeIndex(n));
    const Expr hi = loop::min(lo + 2 * w, loop::makeIndex(n));
    // Exhausted cursors read the last element (a defined value) and lose the comparison.
    const Expr ic = loop::min(i, last), jc = loop::min(j, last);
    const Expr right = j < hi && (i >= mid || better(v[src].loadFlat(jc), v[src].loadFlat(ic)));
    Stmt take = loop::Block::make(
        {v[dst].storeFlat(p, loop::select(right, v[src].loadFlat(jc), v[src].loadFlat(ic))),
         ix[dst].storeFlat(p, loop::select(right, ix[src].loadFlat(jc), ix[src].loadFlat(ic))),
         cursor.storeFlat(zero, i + loop::cast(loop::indexType(), !right)),
         cursor.storeFlat(one, j + loop::cast(loop::indexType(), right))});
    Stmt merge =
        loop::For::make(p, lo, hi - lo, loop::ForKind::Serial,
                        loop::LetStmt::make(i, cursor.loadFlat(zero),
                                            loop::LetStmt::make(j, cursor.loadFlat(one), take)));
    steps.push_back(kb.serialLoop(
        run, (n + 2 * w - 1) / (2 * w),
        loop::Block::make({cursor.storeFlat(zero, lo), cursor.storeFlat(one, mid), merge})));
  }
  return {loop::Block::make(steps), v[src], ix[src], {v[0], v[1], ix[0], ix[1], cursor}};
}

// TopK: the k largest (or smallest) along the axis with their positions, sorted, ties in
// position order; one column per task.
Stmt lowerTopK(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef x = kb.input(*node.input(0), node);
  if (x.rank() == 0)
    unsupportedNode(node, "TopK on a scalar");
  const std::int64_t axis =
      normalizeAxis(node, node.attrInt("axis", -1), static_cast<std::int64_t>(x.rank()));
  std::int64_t k = 0;
  const graph::Value* kValue = node.input(1);
  if (kValue && kValue->isConstant() && !kValue->constant().isElided()) {
    const std::vector<std::int64_t> kInput = constantInts(node, 1, "K");
    if (kInput.size() != 1)
      unsupportedNode(node, "K must be a single value");
    k = kInput[0];
  } else {
    // K given at run time: with static shapes it is the outputs' extent along the axis.
    const graph::Value* out = node.output(0) ? node.output(0) : node.output(1);
    if (!out)
      return loop::noOp();
    k = staticShape(*out, node)[static_cast<std::size_t>(axis)];
  }
  const bool largest = node.attrInt("largest", 1) != 0;
  const loop::Type t = loopType(x.dtype);
  if (t.isBool())
    unsupportedNode(node, "element type bool");
  const std::int64_t n = x.shape[static_cast<std::size_t>(axis)];
  if (k < 0 || k > n)
    unsupportedNode(node, "K is outside [0, axis extent]");
  const TensorRef values = node.output(0) ? kb.output(*node.output(0), node) : TensorRef{};
  const TensorRef indices = node.output(1) ? kb.output(*node.output(1), node) : TensorRef{};
  if (k == 0)
    return loop::noOp();
  const ReduceLayout layout(x.shape, {axis});
  const Better better = [largest](const Expr& a, const Expr& b) { return largest ? a > b : a < b; };
  const bool insertion = k <= 16 || k * k <= n;

  return forEachTask(
      kb, layout, insertion ? std::min<std::int64_t>(k, 16) : 16,
      [&](ReduceTask& task) {
        const RankedColumn ranked =
            insertion
                ? bestByInsertion(kb, task, x, k, better, largest ? lowestOf(t) : highestOf(t))
                : sortColumn(kb, task, x, n, better);
        Stmt emit = task.overColumns([&](const Expr&, const Expr& c) {
          const Expr j = kb.freshVar("j");
          const std::vector<Expr> idx = task.fullIndex({j}, c);
          std::vector<Stmt> stores;
          if (values.buffer.defined())
            stores.push_back(values.store(idx, epilogue(ranked.values.loadFlat(j), idx)));
          if (indices.buffer.defined())
            stores.push_back(indices.store(idx, ranked.indices.loadFlat(j)));
          return kb.serialLoop(j, k, loop::Block::make(stores));
        });
        Stmt body = loop::Block::make(ranked.body, emit);
        std::int64_t bytes = 0;
        for (const TensorRef& s : ranked.scratch)
          bytes += s.numElements() * static_cast<std::int64_t>(graph::dtypeSize(s.dtype));
        for (const TensorRef& s : ranked.scratch)
          body = kb.allocate(s, body, bytes > kMaxStackBytes);
        return body;
      },
      1);
}

} // namespace

void registerReductionRules(RuleTable& table) {
  auto& k = table.kernels;
  k["ReduceSum"] = lowerReduce<Reduce::Sum>;
  k["ReduceMean"] = lowerReduce<Reduce::Mean>;
  k["ReduceMax"] = lowerReduce<Reduce::Max>;
  k["ReduceMin"] = lowerReduce<Reduce::Min>;
  k["ReduceProd"] = lowerReduce<Reduce::Prod>;
  k["ReduceL1"] = lowerReduce<Reduce::L1>;
  k["ReduceL2"] = lowerReduce<Reduce::L2>;
  k["ReduceLogSum"] = lowerReduce<Reduce::LogSum>;
  k["ReduceLogSumExp"] = lowerReduce<Reduce::LogSumExp>;
  k["ReduceSumSquare"] = lowerReduce<Reduce::SumSquare>;
  k["ArgMax"] = lowerArgReduce<true>;
  k["ArgMin"] = lowerArgReduce<false>;
  k["CumSum"] = lowerCumSum;
  k["TopK"] = lowerTopK;
}

} // namespace lathe::lowering
