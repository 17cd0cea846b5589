// 2-D MaxPool, AveragePool and LpPool in NCHW (f32, no Indices output) as a plain nest plus
// the default trace that tiles it: the pools outside blocked chains.
//
// The nest, over the input planes (padded into a copy first when there is padding: with the
// type's lowest value for MaxPool, with zeros for the sums):
//   for n, c, oh, ow: Y = start; for kh, kw: Y = Y OP X(n, c, oh*s + kh*d, ow*s + kw*d);
//   Y = epilogue(finish(Y))
// where OP keeps the first maximum in tap order (a strictly greater value replaces it, as the
// hand-written pool and ONNX Runtime do) or adds the value (|x|^p for LpPool), and finish
// divides by the number of taps (AveragePool: those inside the input, or inside the padded
// input with count_include_pad) or takes the p-th root. The trace splits ow into tiles of V
// vectors, keeps a tile in registers across the window (register_tile) and runs the tasks
// (batch, output row, column tile, channel) as one parallel loop; a row the width does not
// divide ends in remainder tiles. Strided windows read with strided vector loads.
#include "engine/lowering/conv_nchwc_internal.h"

namespace lathe::lowering {
namespace {

// The widest tile (at most 4 vectors) that fits a row, by the cost of its full tiles and its
// remainder: V vectors per tap cost V loads (two when strided) and V operations, plus a
// fixed part per tile and tap.
std::int64_t vectorsFor(int lanes, std::int64_t OW, std::int64_t stride) {
  std::int64_t best = 1;
  double bestCost = 0;
  for (std::int64_t V = 1; V <= 4 && V * lanes <= OW; ++V) {
    const std::int64_t TW = V * lanes, full = OW / TW, rem = OW % TW;
    const auto tileCost = [&](std::int64_t v) { return double(v * (stride > 1 ? 3 : 2) + 3); };
    const double cost =
        double(full) * tileCost(V) + (rem > 0 ? tileCost((rem + lanes - 1) / lanes) : 0);
    if (V == 1 || cost < bestCost) {
      best = V;
      bestCost = cost;
    }
  }
  return best;
}

} // namespace

Stmt tracedNchwPool(KernelBuilder& kb, const Epilogue& epilogue, const TensorRef& x,
                    const TensorRef& y, const std::vector<WindowAxis>& axes, PoolKind kind,
                    std::int64_t p, bool includePad) {
  const int lanes = kb.vectorBits() / 32;
  if (!windowRowsApply(x, axes, lanes) || y.rank() != 4 || x.dtype != graph::DType::F32 ||
      y.dtype != graph::DType::F32)
    return Stmt();
  const WindowAxis &ar = axes[0], &ac = axes[1];
  const std::int64_t N = x.shape[0], C = x.shape[1];
  const std::int64_t OH = ar.out, OW = ac.out, KH = ar.kernel, KW = ac.kernel;
  // A window of one tap has no loop to keep the tile across.
  if (KH * KW < 2)
    return Stmt();
  // Work in vector operations (as for the NCHW Conv): a 3x3 MaxPool over 2 x 3 x 40 x 50
  // took 0.012 ms on 2 threads and 0.004 ms on 1.
  const std::int64_t work = N * C * OH * OW * KH * KW / lanes;
  const bool parallel = parallelFor(work) == loop::ForKind::Parallel;
  const Expr start = kind == PoolKind::Max ? lowestOf(y.dtype) : constantOf(y.dtype, 0);
  const PaddedPlanes planes = windowRowPlanes(kb, x, axes, lanes, parallel, start);
  const TensorRef& src = planes.planes;
  const bool copy = planes.copy.defined();

  // --- the nest (a dim of extent 1 has no loop) ---
  const Expr n = axisVar(kb, "n", N), c = axisVar(kb, "c", C), oh = axisVar(kb, "oh", OH),
             ow = kb.freshVar("ow");
  const Expr kh = axisVar(kb, "kh", KH), kw = axisVar(kb, "kw", KW);
  const std::vector<Expr> idx{n, c, oh, ow};
  const Expr row = oh * ar.stride + kh * ar.dilation, col = ow * ac.stride + kw * ac.dilation;
  const Expr xv = src.loadFlat(((n * C + c) * planes.H + row) * planes.W + col);
  const Expr acc = y.load(idx);
  const Expr next = kind == PoolKind::Max  ? loop::select(xv > acc, xv, acc)
                    : kind == PoolKind::Lp ? acc + lpPower(xv, p)
                                           : acc + xv;
  Expr value = y.load(idx);
  if (kind == PoolKind::Average)
    value = value / loop::cast(loopType(y.dtype),
                               tapCount(ar, oh, includePad) * tapCount(ac, ow, includePad));
  else if (kind == PoolKind::Lp)
    value = lpRoot(value, p);
  const Stmt element = loop::Block::make({y.store(idx, start),
                                          loopOver(kh, KH, loopOver(kw, KW, y.store(idx, next))),
                                          y.store(idx, epilogue(value, idx))});
  const Stmt nest = loopOver(n, N, loopOver(c, C, loopOver(oh, OH, forCount(ow, OW, element))));

  // --- the trace: tasks (n, oh, ow tiles, c), a tile of V vectors of a row ---
  const std::int64_t V = vectorsFor(lanes, OW, ac.stride), TW = V * lanes, rem = OW % TW;
  const std::string own = loopName(ow), kn = loopName(KH > 1 ? kh : kw);
  for (const std::string& step : planes.steps)
    kb.defaultStep(step);
  std::vector<std::string> tasks, steps;
  if (N > 1)
    tasks.push_back(loopName(n));
  if (OH > 1)
    tasks.push_back(loopName(oh));
  std::vector<std::string> after;
  if (C > 1)
    after.push_back(loopName(c));
  rowTileSteps(steps, tasks, after, "", own, OW, V, lanes, kn);
  const std::int64_t taskCount = N * C * OH * ((OW + TW - 1) / TW);
  for (std::string& step : parallelTaskSteps(tasks, taskCount, work))
    steps.push_back(std::move(step));
  for (const std::string& step : steps)
    kb.defaultStep(step);

  kb.describe(std::string(kind == PoolKind::Max  ? "max"
                          : kind == PoolKind::Lp ? "Lp"
                                                 : "average") +
              " pooling (default trace): " + std::to_string(taskCount) + " tasks, each " +
              std::to_string(V) + " vector(s) of " + std::to_string(lanes) +
              " positions of one row, kept in registers across the " + std::to_string(KH * KW) +
              " taps of the window");
  if (rem > 0)
    kb.describe("the last " + std::to_string(rem) +
                " positions of each row run as smaller remainder tiles");
  kb.describe(copy ? std::string("the input is first copied into planes padded with ") +
                         (kind == PoolKind::Max ? "the lowest value" : "zeros")
                   : "the input is read in place");
  if (!copy)
    return nest;
  return kb.allocate(src, loop::Block::make(planes.copy, nest), true);
}

} // namespace lathe::lowering
