// 2-D MaxPool (with or without Indices), AveragePool and LpPool in NCHW (f32) as a plain nest
// plus the default trace that tiles it: the pools outside blocked chains.
//
// A task per (batch, channel) plane. The nest, with the plane padded into a scratch of the
// task's own first when there is padding or the window reaches past the input (with the
// type's lowest value for MaxPool, with zeros for the sums):
//   for n, c: [P = padded plane (n, c)]; for oh, ow: Y = start; for kh, kw:
//   Y = Y OP P(oh*s + kh*d, ow*s + kw*d); Y = epilogue(finish(Y))
// where OP keeps the first maximum in tap order (a strictly greater value replaces it, as the
// hand-written pool and ONNX Runtime do) or adds the value (|x|^p for LpPool), and finish
// divides by the number of taps (AveragePool: those inside the input, or inside the padded
// input with count_include_pad) or takes the p-th root. The trace vectorizes the copy's rows,
// unrolls the window, keeps tiles of Q output rows x V vectors in registers across it
// (register_tile; remainder tiles where the width does not divide a row) and runs the planes
// as one parallel loop. Strided windows read with strided vector loads.
//
// With Indices, I = -1 first, and each tap that takes the maximum also sets I to its flat
// position in x; the first tap inside the input always takes it (I < 0), so that a window
// whose values are all the lowest value still reports where one is. The tile keeps I in
// registers beside Y, so tiles are at most 4 vectors (an i64 index vector is two registers).
#include "engine/lowering/conv_nchwc_internal.h"

#include <algorithm>

namespace lathe::lowering {

Stmt tracedNchwPool(KernelBuilder& kb, const Epilogue& epilogue, const TensorRef& x,
                    const TensorRef& y, const std::vector<WindowAxis>& axes, PoolKind kind,
                    std::int64_t p, bool includePad, const TensorRef* indices,
                    std::int64_t storageOrder) {
  const int lanes = kb.vectorBits() / 32;
  if (!planeRowsApply(x, axes, lanes, true) || y.rank() != 4 || x.dtype != graph::DType::F32 ||
      y.dtype != graph::DType::F32)
    return Stmt();
  if (indices &&
      (kind != PoolKind::Max || indices->rank() != 4 || indices->dtype != graph::DType::I64))
    return Stmt();
  const WindowAxis &ar = axes[0], &ac = axes[1];
  const std::int64_t N = x.shape[0], C = x.shape[1];
  const std::int64_t OH = ar.out, OW = ac.out, KH = ar.kernel, KW = ac.kernel;
  // A window of one tap has no loop to keep the tile across.
  if (KH * KW < 2)
    return Stmt();
  // Work in element visits (as the depthwise Conv counts it): a pool does one operation per
  // value it loads, so memory, which two cores move faster, bounds it (a 3x3 stride-2 MaxPool
  // over 8 x 112 x 112 ran serial in 0.021 ms at 2 threads against 0.015 ms in parallel).
  const std::int64_t work = N * C * OH * OW * KH * KW;
  std::vector<PlaneTile> tiles = rankedPlaneTiles(lanes, OH, OW, KH * KW, ac.stride);
  if (indices)
    std::erase_if(tiles, [](const PlaneTile& t) { return t.Q * t.V > 4; });
  if (tiles.empty())
    return Stmt();
  const Expr start = poolStart(kind, y.dtype);
  const Expr n = axisVar(kb, "n", N), c = axisVar(kb, "c", C);
  const Expr plane = n * C + c;
  const PaddedPlanes planes = windowRowPlanes(kb, x, axes, lanes, false, start, plane);
  const TensorRef& src = planes.planes;
  const bool copy = planes.copy.defined();

  // --- the nest (a dim of extent 1 has no loop) ---
  const Expr oh = axisVar(kb, "oh", OH), ow = kb.freshVar("ow");
  const Expr kh = axisVar(kb, "kh", KH), kw = axisVar(kb, "kw", KW);
  const std::vector<Expr> idx{n, c, oh, ow};
  const Expr row = oh * ar.stride + kh * ar.dilation, col = ow * ac.stride + kw * ac.dilation;
  const Expr xv = src.loadFlat(planeAt(planes, plane, row, col));
  const Expr value = poolFinish2d(kind, y.load(idx), y.dtype, p, ar, ac, oh, ow, includePad);
  Stmt tap = y.store(idx, poolUpdate(kind, y.load(idx), xv, p));
  std::vector<Stmt> element{y.store(idx, start)};
  if (indices) {
    // The tap's position in x, and whether it lies inside x (not in the padding).
    const Expr h = row - ar.padBegin, w = col - ac.padBegin;
    const std::int64_t H = x.shape[2], W = x.shape[3];
    const Expr where = storageOrder == 0 ? (plane * H + h) * W + w : plane * (H * W) + w * H + h;
    Expr first = indices->load(idx) < loop::makeIndex(0);
    if (copy)
      first = first && (h >= loop::makeIndex(0) && h < loop::makeIndex(H) &&
                        w >= loop::makeIndex(0) && w < loop::makeIndex(W));
    // Bound once: the Indices update must not see the new maximum.
    const Expr takes = freshScalar(kb, "takes", loop::boolean());
    tap = loop::LetStmt::make(
        takes, xv > y.load(idx) || first,
        loop::Block::make(indices->store(idx, loop::select(takes, where, indices->load(idx))),
                          y.store(idx, loop::select(takes, xv, y.load(idx)))));
    element.push_back(indices->store(idx, loop::makeIndex(-1)));
  }
  element.push_back(loopOver(kh, KH, loopOver(kw, KW, tap)));
  element.push_back(y.store(idx, epilogue(value, idx)));
  const Stmt nest =
      loopOver(n, N,
               loopOver(c, C,
                        planeTask(kb, planes,
                                  loopOver(oh, OH, forCount(ow, OW, loop::Block::make(element))))));

  // --- the trace (the tuner's variants: the next tiles) ---
  const PlaneTile best = registerPlaneTraces(kb, tiles, planes.steps,
                                             planeLoops(n, N, c, C, oh, OH, ow, kh, KH, kw, KW),
                                             N * C, OH, OW, lanes, work);

  const std::int64_t TW = std::min(best.V * lanes, OW), rem = OW % TW;
  kb.describe(std::string(kind == PoolKind::Max  ? "max"
                          : kind == PoolKind::Lp ? "Lp"
                                                 : "average") +
              " pooling (default trace): " + std::to_string(N * C) +
              (parallelFor(work) == loop::ForKind::Parallel ? " parallel" : "") +
              " tasks, one per channel plane; tiles of " + std::to_string(best.Q) + " row(s) x " +
              std::to_string(best.V) + " vector(s) of " + std::to_string(TW / best.V) +
              " positions, kept in registers across the " + std::to_string(KH * KW) +
              " taps of the window" + (indices ? ", with the position of each maximum" : ""));
  if (rem > 0)
    kb.describe("the last " + std::to_string(rem) +
                " positions of each row run as smaller remainder tiles");
  kb.describe(copy ? std::string("each task first copies its plane into a scratch padded with ") +
                         (kind == PoolKind::Max ? "the lowest value" : "zeros")
                   : "the input is read in place");
  return nest;
}

} // namespace lathe::lowering
