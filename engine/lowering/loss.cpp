// Loss functions as kernel rules: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss,
// which is the NLL loss of LogSoftmax(scores) along axis 1 (and may also return those
// log-probabilities). Inputs [N, C, d1..dk] are seen as [N, C, D] and targets [N, d1..dk]
// as [N, D], with D the product of the trailing dims (1 when there are none).
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/lowering/reduce_helpers.h"
#include "engine/support/diagnostics.h"

#include <functional>
#include <limits>
#include <optional>

namespace lathe::lowering {
namespace {

using graph::DType;
using graph::Node;
using loop::Intrinsic;

enum class Reduction { None, Sum, Mean };

struct LossOperands {
  TensorRef scores; // [N, C, d1..dk], float: log-probabilities for NLL, logits for SCE
  TensorRef target; // [N, d1..dk], integer class indices
  TensorRef weight; // [C] of the scores' type, or undefined
  TensorRef loss;   // output 0: the target's shape, or a scalar when reduced
  std::int64_t n = 0, c = 0, d = 1;
  Reduction reduction = Reduction::Mean;
  std::optional<std::int64_t> ignoreIndex;
};

Reduction reductionOf(const Node& node) {
  const std::string r = node.attrString("reduction", "mean");
  if (r == "none")
    return Reduction::None;
  if (r == "sum")
    return Reduction::Sum;
  if (r == "mean")
    return Reduction::Mean;
  unsupportedNode(node, "reduction '" + r + "' (expected none, sum or mean)");
}

LossOperands lossOperands(const Node& node, KernelBuilder& kb) {
  LossOperands ops;
  ops.scores = kb.input(*node.input(0), node);
  ops.target = kb.input(*node.input(1), node);
  if (node.input(2))
    ops.weight = kb.input(*node.input(2), node);
  ops.loss = kb.output(*node.output(0), node);
  ops.reduction = reductionOf(node);
  if (node.hasAttribute("ignore_index"))
    ops.ignoreIndex = node.attrInt("ignore_index", 0);

  const TensorRef &x = ops.scores, &t = ops.target;
  if (!loopType(x.dtype).isFloat())
    unsupportedNode(node, "needs floating-point scores, not " + loopType(x.dtype).toString());
  if (!loopType(t.dtype).isIntOrUInt())
    unsupportedNode(node, "needs integer targets, not " + loopType(t.dtype).toString());
  if (x.rank() < 2)
    unsupportedNode(node, "expects scores [N, C, ...]");
  std::vector<std::int64_t> expected{x.shape[0]};
  expected.insert(expected.end(), x.shape.begin() + 2, x.shape.end());
  if (t.shape != expected)
    unsupportedNode(node, "the target's shape does not match the scores' [N, d1, ...]");
  ops.n = x.shape[0];
  ops.c = x.shape[1];
  for (std::size_t i = 2; i < x.rank(); ++i)
    ops.d *= x.shape[i];
  if (ops.weight.buffer.defined() &&
      (ops.weight.dtype != x.dtype || ops.weight.shape != std::vector<std::int64_t>{ops.c}))
    unsupportedNode(node, "the weight must be [C] of the scores' type");
  const bool reduced = ops.reduction != Reduction::None;
  if (ops.loss.dtype != x.dtype ||
      (reduced ? ops.loss.numElements() != 1 : ops.loss.shape != t.shape))
    unsupportedNode(node, "unexpected type of the loss output");
  return ops;
}

// The loss at one target element and the weight it counts with in a mean: the weight of
// its class (1 without weights), 0 for an ignored target, whose loss is exactly 0 (not
// -logp * 0, which is NaN for logp = -inf).
struct Term {
  Expr loss, weight;
};

// `body` of the term at sample n and position d, with the target and its class bound once.
Stmt withTerm(KernelBuilder& kb, const LossOperands& ops, const TensorRef& logp, const Expr& n,
              const Expr& d, const std::function<Stmt(const Term&)>& body) {
  const loop::Type type = loopType(ops.scores.dtype);
  const Expr target = kb.freshVar("target"), cls = kb.freshVar("class");
  Expr weight = ops.weight.buffer.defined() ? ops.weight.loadFlat(cls) : loop::makeOne(type);
  Expr loss = -logp.loadFlat((n * ops.c + cls) * ops.d + d) * weight;
  if (ops.ignoreIndex) {
    const Expr ignored = loop::eq(target, *ops.ignoreIndex);
    loss = loop::select(ignored, loop::makeZero(type), loss);
    weight = loop::select(ignored, loop::makeZero(type), weight);
  }
  // Targets are assumed to be in [0, C); clamping keeps an ignored (or bad) target from
  // reading outside the buffers, as numpy's take(mode="clip") does in the reference.
  return loop::LetStmt::make(
      target, loop::cast(loop::indexType(), ops.target.loadFlat(n * ops.d + d)),
      loop::LetStmt::make(cls, loop::max(loop::min(target, ops.c - 1), std::int64_t{0}),
                          body({loss, weight})));
}

// Output 0 from the log-probabilities `logp` ([N, C, D] flat).
Stmt nllLoss(KernelBuilder& kb, const LossOperands& ops, const TensorRef& logp,
             const Epilogue& epilogue) {
  const TensorRef& target = ops.target;
  if (ops.reduction == Reduction::None) {
    const std::vector<std::int64_t> trailing(target.shape.begin() + 1, target.shape.end());
    return kb.loopNest(target.shape, [&](const std::vector<Expr>& idx) {
      const Expr d = flatIndex(trailing, std::vector<Expr>(idx.begin() + 1, idx.end()));
      return withTerm(kb, ops, logp, idx[0], d,
                      [&](const Term& t) { return ops.loss.store(idx, epilogue(t.loss, idx)); });
    });
  }
  // Sums accumulate in f64, in order: a mean over many elements stays accurate in f32 and
  // the result does not depend on the thread count.
  const loop::Type f64 = loop::f64();
  const TensorRef acc = kb.scratch("loss_sums", DType::F64, {2});
  const Expr zero = loop::makeIndex(0), one = loop::makeIndex(1);
  Stmt init = loop::Block::make(acc.storeFlat(zero, loop::makeZero(f64)),
                                acc.storeFlat(one, loop::makeZero(f64)));
  Stmt sum = kb.loopNest(
      {ops.n, ops.d},
      [&](const std::vector<Expr>& nd) {
        return withTerm(kb, ops, logp, nd[0], nd[1], [&](const Term& t) {
          return loop::Block::make(
              acc.storeFlat(zero, acc.loadFlat(zero) + loop::cast(f64, t.loss)),
              acc.storeFlat(one, acc.loadFlat(one) + loop::cast(f64, t.weight)));
        });
      },
      "i", std::numeric_limits<std::int64_t>::max());
  // The mean divides by the total weight of the targets that count (their number without
  // weights); with every target ignored that is 0/0 = NaN, as in the reference.
  Expr total = acc.loadFlat(zero);
  if (ops.reduction == Reduction::Mean)
    total = total / acc.loadFlat(one);
  Stmt write =
      ops.loss.storeFlat(zero, epilogue(loop::cast(loopType(ops.loss.dtype), total),
                                        std::vector<Expr>(ops.loss.rank(), loop::makeIndex(0))));
  return kb.allocate(acc, loop::Block::make({init, sum, write}));
}

Stmt lowerNLLLoss(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const LossOperands ops = lossOperands(node, kb);
  return nllLoss(kb, ops, ops.scores, epilogue);
}

// LogSoftmax along axis 1 of the scores into `logp`: x - (max + log(sum(exp(x - max)))),
// the maximum taken first so that exp cannot overflow. Per sample, the statistics of its D
// positions sit in rows that the passes over classes update side by side, so the inner
// loops run over contiguous positions.
Stmt logSoftmax(KernelBuilder& kb, const LossOperands& ops, const TensorRef& logp) {
  const TensorRef& x = ops.scores;
  const loop::Type type = loopType(x.dtype);
  const std::int64_t classes = ops.c, positions = ops.d;
  const bool parallel = worthParallel(ops.n * classes * positions * 3);
  return kb.loopNest(
      {ops.n},
      [&](const std::vector<Expr>& nv) {
        const Expr n = nv[0];
        const TensorRef max = kb.scratch("max", x.dtype, {positions});
        const TensorRef lse = kb.scratch("logsumexp", x.dtype, {positions});
        auto at = [&](const Expr& c, const Expr& d) { return (n * classes + c) * positions + d; };
        auto overPositions = [&](const std::function<Stmt(const Expr&)>& body) {
          const Expr d = kb.freshVar("d");
          return kb.serialLoop(d, positions, body(d));
        };
        auto overAll = [&](const std::function<Stmt(const Expr&, const Expr&)>& body) {
          const Expr c = kb.freshVar("c"), d = kb.freshVar("d");
          return kb.serialLoop(c, classes, kb.serialLoop(d, positions, body(c, d)));
        };
        Stmt body = loop::Block::make({
            overPositions([&](const Expr& d) { return max.storeFlat(d, lowestOf(type)); }),
            overAll([&](const Expr& c, const Expr& d) {
              return max.storeFlat(d, loop::max(max.loadFlat(d), x.loadFlat(at(c, d))));
            }),
            overPositions([&](const Expr& d) { return lse.storeFlat(d, loop::makeZero(type)); }),
            overAll([&](const Expr& c, const Expr& d) {
              const Expr e = callIntrinsic(Intrinsic::Exp, x.loadFlat(at(c, d)) - max.loadFlat(d));
              return lse.storeFlat(d, lse.loadFlat(d) + e);
            }),
            overPositions([&](const Expr& d) {
              return lse.storeFlat(d, max.loadFlat(d) +
                                          callIntrinsic(Intrinsic::Log, lse.loadFlat(d)));
            }),
            overAll([&](const Expr& c, const Expr& d) {
              return logp.storeFlat(at(c, d), x.loadFlat(at(c, d)) - lse.loadFlat(d));
            }),
        });
        // Rows of many positions (large images) would not fit on a thread's stack.
        const bool onHeap = positions * type.bytes() > 16384;
        return kb.allocate(max, kb.allocate(lse, body, onHeap), onHeap);
      },
      "n", parallel ? 1 : std::numeric_limits<std::int64_t>::max());
}

Stmt lowerSoftmaxCrossEntropy(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const LossOperands ops = lossOperands(node, kb);
  const bool returnsLogProb = node.outputs().size() > 1 && node.output(1);
  // The log-probabilities go to output 1 when it is used, else to a scratch tensor.
  const TensorRef logp = returnsLogProb
                             ? kb.output(*node.output(1), node)
                             : kb.scratch("log_prob", ops.scores.dtype, ops.scores.shape);
  if (logp.dtype != ops.scores.dtype || logp.shape != ops.scores.shape)
    unsupportedNode(node, "log_prob must have the scores' type and shape");
  Stmt body = loop::Block::make(logSoftmax(kb, ops, logp), nllLoss(kb, ops, logp, epilogue));
  return returnsLogProb ? body : kb.allocate(logp, body, /*onHeap=*/true);
}

} // namespace

void registerLossRules(RuleTable& table) {
  auto& k = table.kernels;
  k["NegativeLogLikelihoodLoss"] = lowerNLLLoss;
  k["SoftmaxCrossEntropyLoss"] = lowerSoftmaxCrossEntropy;
}

} // namespace lathe::lowering
