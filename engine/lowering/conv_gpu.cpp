// Plain window nests for GPU targets (LoweringOptions::gpu): Conv and the pools as one
// output element per iteration of the outer loops, its window summed (or maxed) into a
// scalar in tap order and stored once, finished. The GPU default trace spreads the outer
// loops over blocks and threads; taps that fall in the padding are skipped by a test.
#include "engine/lowering/conv_internal.h"

namespace lathe::lowering {

Stmt gpuWindowNest(KernelBuilder& kb, const TensorRef& y, const std::vector<WindowAxis>& axes,
                   const WindowNest& w) {
  const Expr n = kb.freshVar("n"), ch = kb.freshVar("c");
  std::vector<Expr> o, t;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    o.push_back(kb.freshVar("o"));
    t.push_back(kb.freshVar("t"));
  }
  const Expr rc = w.channels > 0 ? kb.freshVar("rc") : Expr();
  const TensorRef acc = kb.scratch("acc", y.dtype, {1});
  const Expr zero = loop::makeIndex(0);
  const Expr sum = acc.load({zero});

  // The input position each tap reads, and the test that it is inside the input (only for
  // axes whose window can leave it).
  std::vector<Expr> pos;
  Expr inside;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const WindowAxis& ax = axes[a];
    pos.push_back(o[a] * ax.stride + t[a] * ax.dilation - ax.padBegin);
    const std::int64_t last =
        (ax.out - 1) * ax.stride + (ax.kernel - 1) * ax.dilation - ax.padBegin;
    if (ax.padBegin == 0 && last < ax.in)
      continue;
    const Expr test = pos[a] >= loop::makeIndex(0) && pos[a] < loop::makeIndex(ax.in);
    inside = inside.defined() ? (inside && test) : test;
  }
  Stmt update = acc.store({zero}, w.update(sum, n, ch, rc, pos, t));
  if (inside.defined())
    update = loop::IfThenElse::make(inside, update);
  for (std::size_t a = axes.size(); a-- > 0;)
    update = forCount(t[a], axes[a].kernel, update);
  if (w.channels > 0)
    update = forCount(rc, w.channels, update);

  std::vector<Expr> idx{n, ch};
  idx.insert(idx.end(), o.begin(), o.end());
  Stmt nest = kb.allocate(acc, loop::Block::make({acc.store({zero}, w.init), update,
                                                  y.store(idx, w.finish(sum, idx))}));
  for (std::size_t a = axes.size(); a-- > 0;)
    nest = forCount(o[a], axes[a].out, nest);
  nest = forCount(ch, y.shape[1], nest);
  return forCount(n, y.shape[0], nest);
}

Stmt gpuConv(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue,
             const ConvOperands& ops, const std::vector<WindowAxis>& axes) {
  const loop::Type t = loopType(ops.y.dtype);
  if (loopType(ops.x.dtype) != t || loopType(ops.w.dtype) != t)
    return Stmt();
  const std::int64_t M = ops.w.shape[0], Cg = ops.w.shape[1];
  const std::int64_t perGroup = M / ops.group;
  WindowNest w;
  w.channels = Cg;
  w.init = constantOf(ops.y.dtype, 0);
  w.update = [&](const Expr& acc, const Expr& n, const Expr& m, const Expr& c,
                 const std::vector<Expr>& pos, const std::vector<Expr>& taps) {
    const Expr inChannel = ops.group > 1 ? (m / perGroup) * Cg + c : c;
    std::vector<Expr> xi{n, inChannel}, wi{m, c};
    xi.insert(xi.end(), pos.begin(), pos.end());
    wi.insert(wi.end(), taps.begin(), taps.end());
    return acc + ops.x.load(xi) * ops.w.load(wi);
  };
  // Bias after the sum, as ONNX Runtime adds it; then the fused epilogue.
  w.finish = [&](const Expr& sum, const std::vector<Expr>& idx) {
    return epilogue(ops.bias ? sum + ops.bias->load({idx[1]}) : sum, idx);
  };
  kb.describe("plain convolution for a GPU: one output element per iteration of the outer " +
              std::string("loops, its ") + std::to_string(Cg) +
              " input channel(s) x taps summed in order into a scalar" +
              (ops.group > 1 ? ", " + std::to_string(ops.group) + " groups" : ""));
  return gpuWindowNest(kb, ops.y, axes, w);
}

} // namespace lathe::lowering
