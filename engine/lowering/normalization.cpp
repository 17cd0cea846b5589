// Normalizations as kernel rules: Softmax, LogSoftmax, Hardmax (opset 13 semantics: along
// one axis), LayerNormalization, InstanceNormalization, LpNormalization, LRN and
// MeanVarianceNormalization. Each computes statistics over some axes (tasks and rows from
// reduce_helpers.h) and then writes every element of its input's shape.
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/lowering/reduce_helpers.h"
#include "engine/lowering/window_helpers.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

using graph::DType;
using graph::Node;
using loop::Intrinsic;

// The data input and output 0, which all of these ops have with one float type and shape.
struct Operands {
  TensorRef x, out;
  loop::Type type;
};

Operands floatOperands(const Node& node, KernelBuilder& kb) {
  Operands ops{kb.input(*node.input(0), node), kb.output(*node.output(0), node), {}};
  ops.type = loopType(ops.x.dtype);
  if (!ops.type.isFloat())
    unsupportedNode(node, "needs a floating-point input, not " + ops.type.toString());
  if (ops.out.dtype != ops.x.dtype || ops.out.shape != ops.x.shape)
    unsupportedNode(node, "the result type differs from the input's");
  return ops;
}

std::vector<std::int64_t> axesFrom(std::int64_t first, std::size_t rank) {
  std::vector<std::int64_t> axes;
  for (auto a = first; a < static_cast<std::int64_t>(rank); ++a)
    axes.push_back(a);
  return axes;
}

// For a GPU: Softmax along the last axis (of at least a warp's worth of elements) with a
// block per row: a block maximum, then a block sum of the exponentials (kept in the output
// for Softmax), then every element scaled. Undefined otherwise.
template <bool isLog>
Stmt gpuSoftmax(KernelBuilder& kb, const Epilogue& epilogue, const Operands& ops,
                std::int64_t axis) {
  const TensorRef &x = ops.x, &out = ops.out;
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < x.rank(); ++d)
    if (x.shape[d] != 1)
      return Stmt();
  const std::int64_t count = x.shape[static_cast<std::size_t>(axis)];
  if (!kb.gpu() || count < 32)
    return Stmt();
  const BlockRow block(kb, x.dtype, count);
  const Expr row = kb.freshVar("row"), zero = loop::makeIndex(0);
  const TensorRef max = kb.scratch("max", x.dtype, {1});
  const TensorRef sum = kb.scratch("sum", x.dtype, {1});
  auto flat = [&](const Expr& at) { return row * count + at; };
  auto exp = [&](const Expr& at) {
    return callIntrinsic(Intrinsic::Exp, x.loadFlat(flat(at)) - max.load({zero}));
  };
  std::vector<Stmt> steps;
  steps.push_back(block.reduce(
      lowestOf(ops.type), [](const Expr& a, const Expr& b) { return loop::max(a, b); },
      [&](const Expr& at) { return x.loadFlat(flat(at)); }));
  steps.push_back(max.store({zero}, block.total()));
  steps.push_back(loop::Barrier::make()); // every thread has read the maximum
  auto add = [](const Expr& a, const Expr& b) { return a + b; };
  if constexpr (isLog)
    steps.push_back(block.reduce(loop::makeZero(ops.type), add, exp));
  else // the exponentials stay in the output for the scaling
    steps.push_back(
        block.reduce(loop::makeZero(ops.type), add, exp,
                     [&](const Expr& at, const Expr& v) { return out.storeFlat(flat(at), v); }));
  steps.push_back(sum.store({zero}, isLog ? callIntrinsic(Intrinsic::Log, block.total())
                                          : constLike(block.total(), 1.0) / block.total()));
  steps.push_back(block.forEachElement([&](const Expr& at) {
    const Expr v = isLog ? x.loadFlat(flat(at)) - max.load({zero}) - sum.load({zero})
                         : out.loadFlat(flat(at)) * sum.load({zero});
    return out.storeFlat(flat(at), epilogue(v, unflatten(flat(at), x.shape)));
  }));
  kb.describe(std::string(isLog ? "LogSoftmax" : "Softmax") + " for a GPU: a block per row of " +
              std::to_string(count) + ", " + std::to_string(block.threads()) +
              " threads, block maximum and sum through shared memory");
  const Stmt body = kb.allocate(max, kb.allocate(sum, loop::Block::make(steps)));
  return forCount(row, x.numElements() / count, block.inShared(body));
}

// Softmax and LogSoftmax: exp(x - max) / sum and (x - max) - log(sum), the maximum taken
// first so that exp cannot overflow.
template <bool isLog>
Stmt lowerSoftmax(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const Operands ops = floatOperands(node, kb);
  const TensorRef &x = ops.x, &out = ops.out;
  if (x.rank() == 0)
    unsupportedNode(node, "a scalar input");
  const std::int64_t axis =
      normalizeAxis(node, node.attrInt("axis", -1), static_cast<std::int64_t>(x.rank()));
  if (Stmt block = gpuSoftmax<isLog>(kb, epilogue, ops, axis); block.defined())
    return block;
  const ReduceLayout layout(x.shape, {axis});
  return forEachTask(kb, layout, 3, [&](ReduceTask& task) {
    const TensorRef max = task.row("max", x.dtype);
    const TensorRef sum = task.row("sum", x.dtype);
    auto read = [&](const std::vector<Expr>& r, const Expr& c) {
      return x.loadFlat(task.inputFlat(r, c));
    };
    std::vector<Stmt> passes;
    passes.push_back(task.overColumns([&](const Expr& l, const Expr&) {
      return loop::Block::make(max.storeFlat(l, lowestOf(ops.type)),
                               sum.storeFlat(l, loop::makeZero(ops.type)));
    }));
    passes.push_back(
        task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
          return max.storeFlat(l, loop::max(max.loadFlat(l), read(r, c)));
        }));
    task.vectorizePass(passes.back());
    // sum += exp(x - max). With one column per task the exponentials first go to the
    // output in a loop of their own, which the default trace puts on vectors, and the sum
    // runs as partial sums in vectors (rfactor) after it. With a block of columns the sums
    // are independent and the fused loop vectorises across them.
    auto exp = [&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
      return callIntrinsic(Intrinsic::Exp, read(r, c) - max.loadFlat(l));
    };
    const bool split = task.maxWidth() == 1;
    if (split)
      passes.push_back(
          task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
            return out.storeFlat(task.inputFlat(r, c), exp(r, l, c));
          }));
    if (split)
      task.vectorizePass(passes.back());
    passes.push_back(
        task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
          const Expr e = split ? out.loadFlat(task.inputFlat(r, c)) : exp(r, l, c);
          Stmt add = sum.storeFlat(l, sum.loadFlat(l) + e);
          // Softmax keeps the exponentials in the output for the scaling pass.
          if (split || isLog)
            return add;
          return loop::Block::make(out.storeFlat(task.inputFlat(r, c), e), add);
        }));
    task.vectorizePass(passes.back());
    if constexpr (isLog) {
      passes.push_back(task.overColumns([&](const Expr& l, const Expr&) {
        return sum.storeFlat(l, callIntrinsic(Intrinsic::Log, sum.loadFlat(l)));
      }));
      passes.push_back(
          task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
            const Expr v = read(r, c) - max.loadFlat(l) - sum.loadFlat(l);
            return out.storeFlat(task.inputFlat(r, c), epilogue(v, task.fullIndex(r, c)));
          }));
      task.vectorizePass(passes.back());
    } else {
      passes.push_back(task.overColumns([&](const Expr& l, const Expr&) {
        return sum.storeFlat(l, constLike(sum.loadFlat(l), 1.0) / sum.loadFlat(l));
      }));
      passes.push_back(
          task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
            const Expr flat = task.inputFlat(r, c);
            return out.storeFlat(
                flat, epilogue(out.loadFlat(flat) * sum.loadFlat(l), task.fullIndex(r, c)));
          }));
      task.vectorizePass(passes.back());
    }
    return loop::Block::make(passes);
  });
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
Stmt lowerHardmax(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const Operands ops = floatOperands(node, kb);
  const TensorRef &x = ops.x, &out = ops.out;
  if (x.rank() == 0)
    unsupportedNode(node, "a scalar input");
  const std::int64_t axis =
      normalizeAxis(node, node.attrInt("axis", -1), static_cast<std::int64_t>(x.rank()));
  const ReduceLayout layout(x.shape, {axis});
  return forEachTask(kb, layout, 2, [&](ReduceTask& task) {
    const TensorRef max = task.row("max", x.dtype);
    const TensorRef at = task.row("at", DType::I64);
    Stmt init = task.overColumns([&](const Expr& l, const Expr&) {
      return loop::Block::make(max.storeFlat(l, lowestOf(ops.type)),
                               at.storeFlat(l, loop::makeIndex(0)));
    });
    Stmt find = task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
      const Expr v = x.loadFlat(task.inputFlat(r, c));
      const Expr better = v > max.loadFlat(l);
      // The position first: `better` reads the maximum before it is updated.
      return loop::Block::make(at.storeFlat(l, loop::select(better, r[0], at.loadFlat(l))),
                               max.storeFlat(l, loop::select(better, v, max.loadFlat(l))));
    });
    Stmt write = task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
      const Expr v = loop::select(loop::eq(r[0], at.loadFlat(l)), constLike(max.loadFlat(l), 1),
                                  constLike(max.loadFlat(l), 0));
      return out.storeFlat(task.inputFlat(r, c), epilogue(v, task.fullIndex(r, c)));
    });
    return loop::Block::make({init, find, write});
  });
}

// Mean and variance of each task's column over the reduced axes, into rows (two passes:
// the variance from the centered values, not E[x^2] - E[x]^2, which can come out negative).
struct Moments {
  TensorRef mean, scale; // scale holds the variance until the caller turns it into 1/std
};

Moments moments(ReduceTask& task, const TensorRef& x, std::vector<Stmt>& passes) {
  const Moments m{task.row("mean", x.dtype), task.row("inv_std", x.dtype)};
  const loop::Type t = loopType(x.dtype);
  const Expr count = loop::makeFloatConst(t, static_cast<double>(task.layout().reducedCount()));
  passes.push_back(task.overColumns([&](const Expr& l, const Expr&) {
    return loop::Block::make(m.mean.storeFlat(l, loop::makeZero(t)),
                             m.scale.storeFlat(l, loop::makeZero(t)));
  }));
  passes.push_back(task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
    return m.mean.storeFlat(l, m.mean.loadFlat(l) + x.loadFlat(task.inputFlat(r, c)));
  }));
  passes.push_back(task.overColumns(
      [&](const Expr& l, const Expr&) { return m.mean.storeFlat(l, m.mean.loadFlat(l) / count); }));
  passes.push_back(task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
    const Expr d = x.loadFlat(task.inputFlat(r, c)) - m.mean.loadFlat(l);
    return m.scale.storeFlat(l, m.scale.loadFlat(l) + d * d);
  }));
  passes.push_back(task.overColumns([&](const Expr& l, const Expr&) {
    return m.scale.storeFlat(l, m.scale.loadFlat(l) / count);
  }));
  return m;
}

// The variance row becomes 1/sqrt(variance + epsilon).
Stmt invStdDev(const ReduceTask& task, const Moments& m, double epsilon) {
  return task.overColumns([&](const Expr& l, const Expr&) {
    const Expr var = m.scale.loadFlat(l);
    return m.scale.storeFlat(l, constLike(var, 1.0) /
                                    callIntrinsic(Intrinsic::Sqrt, var + constLike(var, epsilon)));
  });
}

// (x - mean) * scale at a reduced index and column.
Expr normalized(const ReduceTask& task, const TensorRef& x, const Moments& m,
                const std::vector<Expr>& r, const Expr& l, const Expr& c) {
  return (x.loadFlat(task.inputFlat(r, c)) - m.mean.loadFlat(l)) * m.scale.loadFlat(l);
}

// LayerNormalization: normalizes over the axes from `axis` on, then scale and bias
// (broadcast against the input); optional outputs Mean and InvStdDev.
Stmt lowerLayerNorm(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const Operands ops = floatOperands(node, kb);
  const TensorRef &x = ops.x, &out = ops.out;
  const std::int64_t axis =
      normalizeAxis(node, node.attrInt("axis", -1), static_cast<std::int64_t>(x.rank()));
  const TensorRef scale = kb.input(*node.input(1), node);
  const TensorRef bias = node.input(2) ? kb.input(*node.input(2), node) : TensorRef{};
  TensorRef stats[2];
  for (std::size_t i = 0; i < 2; ++i)
    if (node.outputs().size() > i + 1 && node.output(i + 1))
      stats[i] = kb.output(*node.output(i + 1), node);
  for (const TensorRef* p : {&scale, &bias})
    if (p->buffer.defined() && (p->dtype != x.dtype || p->rank() > x.rank()))
      unsupportedNode(node, "scale and bias must have the input's type and broadcast to it");
  const ReduceLayout layout(x.shape, axesFrom(axis, x.rank()));
  const double epsilon = node.attrFloat("epsilon", 1e-5f);
  // Scale and bias usually have the normalized shape: then the position in the normalized
  // block (the one reduced loop) indexes them directly, without splitting it into dims.
  auto dropLeadingOnes = [](std::vector<std::int64_t> dims) {
    dims.erase(dims.begin(), std::find_if(dims.begin(), dims.end(), [](auto d) { return d != 1; }));
    return dims;
  };
  const std::vector<std::int64_t> normalizedShape =
      dropLeadingOnes({x.shape.begin() + axis, x.shape.end()});
  auto affine = [&](const TensorRef& p, const std::vector<Expr>& r, const std::vector<Expr>& idx) {
    if (r.size() == 1 && dropLeadingOnes(p.shape) == normalizedShape)
      return p.loadFlat(r[0]);
    return p.load(broadcastIndex(p.shape, idx));
  };
  return forEachTask(kb, layout, 3, [&](ReduceTask& task) {
    std::vector<Stmt> passes;
    const Moments m = moments(task, x, passes);
    passes.push_back(invStdDev(task, m, epsilon));
    const TensorRef* rows[2] = {&m.mean, &m.scale};
    for (std::size_t i = 0; i < 2; ++i)
      if (stats[i].buffer.defined())
        passes.push_back(task.overColumns([&](const Expr& l, const Expr& c) {
          Expr v = rows[i]->loadFlat(l);
          if (stats[i].dtype != x.dtype)
            v = loop::cast(loopType(stats[i].dtype), v);
          return stats[i].storeFlat(task.keptFlat(c), v);
        }));
    passes.push_back(
        task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
          const std::vector<Expr> idx = task.fullIndex(r, c);
          Expr y = normalized(task, x, m, r, l, c) * affine(scale, r, idx);
          if (bias.buffer.defined())
            y = y + affine(bias, r, idx);
          return out.storeFlat(task.inputFlat(r, c), epilogue(y, idx));
        }));
    return loop::Block::make(passes);
  });
}

// InstanceNormalization: per sample and channel (axis 1), over the spatial axes.
Stmt lowerInstanceNorm(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const Operands ops = floatOperands(node, kb);
  const TensorRef &x = ops.x, &out = ops.out;
  const TensorRef scale = kb.input(*node.input(1), node);
  const TensorRef bias = kb.input(*node.input(2), node);
  if (x.rank() < 2 || scale.rank() != 1 || bias.rank() != 1 || scale.shape[0] != x.shape[1] ||
      bias.shape[0] != x.shape[1] || scale.dtype != x.dtype || bias.dtype != x.dtype)
    unsupportedNode(node, "expects X [N, C, ...] with scale and bias [C] of its type");
  const ReduceLayout layout(x.shape, axesFrom(2, x.rank()));
  const double epsilon = node.attrFloat("epsilon", 1e-5f);
  return forEachTask(kb, layout, 3, [&](ReduceTask& task) {
    std::vector<Stmt> passes;
    const Moments m = moments(task, x, passes);
    passes.push_back(invStdDev(task, m, epsilon));
    passes.push_back(task.overReduced([&](const std::vector<Expr>& r, const Expr& l,
                                          const Expr& c) {
      const std::vector<Expr> idx = task.fullIndex(r, c);
      const Expr y = normalized(task, x, m, r, l, c) * scale.load({idx[1]}) + bias.load({idx[1]});
      return out.storeFlat(task.inputFlat(r, c), epilogue(y, idx));
    }));
    return loop::Block::make(passes);
  });
}

// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over `axes`.
Stmt lowerMeanVarianceNorm(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const Operands ops = floatOperands(node, kb);
  const TensorRef &x = ops.x, &out = ops.out;
  std::vector<std::int64_t> axes = node.attrInts("axes", {0, 2, 3});
  for (std::int64_t& a : axes)
    a = normalizeAxis(node, a, static_cast<std::int64_t>(x.rank()));
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    unsupportedNode(node, "an axis appears twice");
  const ReduceLayout layout(x.shape, axes);
  const loop::Type t = ops.type;
  return forEachTask(kb, layout, 3, [&](ReduceTask& task) {
    std::vector<Stmt> passes;
    const Moments m = moments(task, x, passes);
    // ONNX's definition adds the epsilon to the standard deviation, not to the variance.
    passes.push_back(task.overColumns([&](const Expr& l, const Expr&) {
      const Expr std = callIntrinsic(Intrinsic::Sqrt, m.scale.loadFlat(l));
      return m.scale.storeFlat(l, loop::makeFloatConst(t, 1.0) /
                                      (std + loop::makeFloatConst(t, 1e-9)));
    }));
    passes.push_back(
        task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
          return out.storeFlat(task.inputFlat(r, c),
                               epilogue(normalized(task, x, m, r, l, c), task.fullIndex(r, c)));
        }));
    return loop::Block::make(passes);
  });
}

// LpNormalization: x / ||x||_p along the axis (p = 1 or 2); a zero norm gives zeros, as in
// ONNX Runtime.
Stmt lowerLpNorm(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const Operands ops = floatOperands(node, kb);
  const TensorRef &x = ops.x, &out = ops.out;
  if (x.rank() == 0)
    unsupportedNode(node, "a scalar input");
  const std::int64_t p = node.attrInt("p", 2);
  if (p != 1 && p != 2)
    unsupportedNode(node, "p = " + std::to_string(p) + " (only 1 and 2 are defined)");
  const std::int64_t axis =
      normalizeAxis(node, node.attrInt("axis", -1), static_cast<std::int64_t>(x.rank()));
  const ReduceLayout layout(x.shape, {axis});
  const loop::Type t = ops.type;
  return forEachTask(kb, layout, 2, [&](ReduceTask& task) {
    const TensorRef norm = task.row("norm", x.dtype);
    Stmt init = task.overColumns(
        [&](const Expr& l, const Expr&) { return norm.storeFlat(l, loop::makeZero(t)); });
    Stmt sum = task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
      const Expr v = x.loadFlat(task.inputFlat(r, c));
      return norm.storeFlat(l,
                            norm.loadFlat(l) + (p == 1 ? callIntrinsic(Intrinsic::Abs, v) : v * v));
    });
    Stmt root = p == 1 ? loop::noOp() : task.overColumns([&](const Expr& l, const Expr&) {
      return norm.storeFlat(l, callIntrinsic(Intrinsic::Sqrt, norm.loadFlat(l)));
    });
    Stmt write = task.overReduced([&](const std::vector<Expr>& r, const Expr& l, const Expr& c) {
      const Expr n = norm.loadFlat(l);
      const Expr y = loop::select(loop::eq(n, loop::makeZero(t)), loop::makeZero(t),
                                  x.loadFlat(task.inputFlat(r, c)) / n);
      return out.storeFlat(task.inputFlat(r, c), epilogue(y, task.fullIndex(r, c)));
    });
    return loop::Block::make({init, sum, root, write});
  });
}

// LRN: x / (bias + alpha/size * sum of x^2 over nearby channels)^beta. Per sample and
// channel, the squares of the window's channel rows accumulate into the output row, so the
// inner loop runs over contiguous spatial positions.
Stmt lowerLRN(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const Operands ops = floatOperands(node, kb);
  const TensorRef &x = ops.x, &out = ops.out;
  if (x.rank() < 2)
    unsupportedNode(node, "expects an input [N, C, ...]");
  const std::int64_t size = node.attrInt("size", 0);
  if (size <= 0)
    unsupportedNode(node, "size must be positive");
  const loop::Type t = ops.type;
  const Expr alpha =
      loop::makeFloatConst(t, node.attrFloat("alpha", 1e-4f) / static_cast<float>(size));
  const Expr beta = loop::makeFloatConst(t, node.attrFloat("beta", 0.75f));
  const Expr bias = loop::makeFloatConst(t, node.attrFloat("bias", 1.0f));
  const std::int64_t channels = x.shape[1];
  const std::int64_t before = (size - 1) / 2, after = size - 1 - before;
  // Spatial dims after the channel dim form one contiguous row; rows are numbered
  // q = sample * channels + channel, in one (parallel) loop.
  const std::vector<std::int64_t> spatialShape(x.shape.begin() + 2, x.shape.end());
  std::int64_t spatial = 1;
  for (std::int64_t d : spatialShape)
    spatial *= d;
  const Expr q = kb.freshVar("q");
  const Expr channel = loop::floorMod(q, loop::makeIndex(channels));
  const Expr lo = loop::max(channel - before, loop::makeIndex(0));
  const Expr hi = loop::min(channel + after, loop::makeIndex(channels - 1));
  const Expr s = kb.freshVar("s"), s2 = kb.freshVar("s"), s3 = kb.freshVar("s");
  const Expr w = kb.freshVar("w");
  Stmt init = kb.serialLoop(s, spatial, out.storeFlat(q * spatial + s, loop::makeZero(t)));
  const Expr v = x.loadFlat((q - channel + w) * spatial + s2);
  Stmt sum = loop::For::make(
      w, lo, hi - lo + 1, loop::ForKind::Serial,
      kb.serialLoop(s2, spatial,
                    out.storeFlat(q * spatial + s2, out.loadFlat(q * spatial + s2) + v * v)));
  std::vector<Expr> idx{loop::floorDiv(q, loop::makeIndex(channels)), channel};
  for (Expr& e : splitFlatIndex(s3, spatialShape))
    idx.push_back(std::move(e));
  const Expr y =
      x.loadFlat(q * spatial + s3) /
      loop::Call::make(Intrinsic::Pow, {bias + alpha * out.loadFlat(q * spatial + s3), beta});
  Stmt write = kb.serialLoop(s3, spatial, out.storeFlat(q * spatial + s3, epilogue(y, idx)));
  return kb.taskLoop(q, x.shape[0] * channels, loop::Block::make({init, sum, write}),
                     worthParallel(x.numElements() * size));
}

} // namespace

void registerNormalizationRules(RuleTable& table) {
  auto& k = table.kernels;
  k["Softmax"] = lowerSoftmax<false>;
  k["LogSoftmax"] = lowerSoftmax<true>;
  k["Hardmax"] = lowerHardmax;
  k["LayerNormalization"] = lowerLayerNorm;
  k["InstanceNormalization"] = lowerInstanceNorm;
  k["MeanVarianceNormalization"] = lowerMeanVarianceNorm;
  k["LpNormalization"] = lowerLpNorm;
  k["LRN"] = lowerLRN;
}

} // namespace lathe::lowering
