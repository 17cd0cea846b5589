// lathe::ConvNCHWc: 2-D convolution on channel-blocked tensors, made by the layout-nchwc
// graph pass. X is [N, C/16, H, W, 16], the weights were packed at compile time as
// [M/16, C/16, kh, kw, 16, 16] (16 input channels of 16 output channels each, so that the
// innermost loop streams them), the bias is [M] and Y is [N, M/16, OH, OW, 16].
//
// Vectors run along output channels: a task keeps a tile of Q rows x P columns of output
// positions x R vectors of output channels in registers across the whole reduction over
// input channels and taps. Per input channel and tap it broadcasts Q*P input elements and
// loads R weight vectors for R*Q*P fused multiply-adds (with R = 1 each broadcast folds into
// its multiply-add). Unlike the NCHW tiles, no lanes are wasted on small planes (a 7x7 plane
// is 7 positions a row, whatever the vector width), strides cost nothing (inputs are
// broadcast one by one), and the epilogue reads blocked operands a whole vector at a time.
// Padding is handled by a zero-padded copy of the input planes.
#include "engine/lowering/conv_internal.h"
#include "engine/lowering/vector_epilogue.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

constexpr std::int64_t kBlock = 16;

struct NchwcTile {
  std::int64_t R = 1, Q = 1, P = 1; // vectors of output channels, rows, columns
};

// The tile by a small cost model. Per input channel and tap a tile of Q x P positions and R
// channel vectors issues R*Q*P multiply-adds and Q*P + R loads (two of each per cycle), plus
// a few instructions of loop upkeep: max(R*Q*P, Q*P + R) + 3. With R = 1 each broadcast
// input folds into its multiply-add; with R > 1 it takes a register, and LLVM's scheduler
// keeps a couple in flight, so the accumulators, R weights and those leave a spare register
// (spills cost far more than a smaller tile). When Q or P does not divide the plane, the
// last row or column of tiles is a smaller remainder tile with its own cost.
std::int64_t tileStepCost(std::int64_t R, std::int64_t positions) {
  return std::max(R * positions, positions + R) + 3;
}

NchwcTile tileFor(int lanes, std::int64_t vectors, std::int64_t outH, std::int64_t outW,
                  std::int64_t reduction) {
  const std::int64_t registers = lanes >= 16 ? 32 : 16;
  NchwcTile best;
  double bestCost = -1;
  for (std::int64_t R : {1, 2, 4}) {
    if (vectors % R != 0)
      continue;
    for (std::int64_t Q = 1; Q <= outH; ++Q)
      for (std::int64_t P = 1; P <= outW; ++P) {
        if (R * Q * P + R + (R > 1 ? 3 : 1) > registers)
          break;
        // Tiles by height (Q or the row remainder) and width (P or the column remainder).
        double cost = 0;
        for (const auto& [rows, heights] :
             {std::pair{outH / Q, Q}, std::pair{outH % Q ? std::int64_t{1} : 0, outH % Q}})
          for (const auto& [cols, width] :
               {std::pair{outW / P, P}, std::pair{outW % P ? std::int64_t{1} : 0, outW % P}}) {
            const std::int64_t positions = heights * width;
            // Each tile also stores its R * positions vectors through the epilogue.
            cost += double(rows * cols) * (double(tileStepCost(R, positions)) * double(reduction) +
                                           4.0 * double(R * positions));
          }
        cost *= double(vectors / R);
        if (bestCost < 0 || cost < bestCost) {
          best = {R, Q, P};
          bestCost = cost;
        }
      }
  }
  return best;
}

Expr ramp(const Expr& base, int lanes) {
  return loop::Ramp::make(base, loop::makeIndex(1), lanes);
}

struct Geometry {
  std::int64_t N = 0, Cb = 0, C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0, KH = 0, KW = 0;
  WindowAxis rows, cols;
};

// The reference form for targets without a known vector width: one output element at a
// time, taps outside the input skipped by the loop bounds.
Stmt scalarConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                const Geometry& g) {
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  return kb.loopNest(y.shape, [&](const std::vector<Expr>& o) {
    const Expr &n = o[0], &mb = o[1], &oh = o[2], &ow = o[3], &j = o[4];
    const TensorRef acc = kb.scratch("acc", y.dtype, {1});
    const IndexRange kh =
        validRange(g.KH, g.rows.dilation, oh * g.rows.stride - g.rows.padBegin, g.H);
    const IndexRange kw =
        validRange(g.KW, g.cols.dilation, ow * g.cols.stride - g.cols.padBegin, g.W);
    const Stmt sum = nestedLoops(
        kb, {{loop::makeIndex(0), loop::makeIndex(g.C)}, kh, kw},
        [&](const std::vector<Expr>& r) {
          const Expr ih = oh * g.rows.stride + r[1] * g.rows.dilation - g.rows.padBegin;
          const Expr iw = ow * g.cols.stride + r[2] * g.cols.dilation - g.cols.padBegin;
          const Expr cb = r[0] / kBlock, ci = r[0] % kBlock;
          const Expr xv = x.load({n, cb, ih, iw, ci});
          return acc.store({loop::makeIndex(0)}, acc.load({loop::makeIndex(0)}) +
                                                     xv * w.load({mb, cb, r[1], r[2], ci, j}));
        },
        "r");
    Expr value = acc.load({loop::makeIndex(0)});
    if (ops.bias)
      value = value + ops.bias->load({mb * kBlock + j});
    return kb.allocate(acc,
                       loop::Block::make({acc.store({loop::makeIndex(0)}, constantOf(y.dtype, 0)),
                                          sum, y.store(o, epilogue(value, o))}));
  });
}

} // namespace

Stmt lowerConvNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  ConvOperands ops{kb.input(*node.input(0), node), kb.input(*node.input(1), node), {}, {}, 1};
  if (node.input(2))
    ops.bias = kb.input(*node.input(2), node);
  ops.y = kb.output(*node.output(0), node);
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  if (x.rank() != 5 || w.rank() != 6 || y.rank() != 5 || x.shape[4] != kBlock ||
      w.shape[4] != kBlock || w.shape[5] != kBlock || y.shape[4] != kBlock ||
      x.dtype != graph::DType::F32 || w.shape[1] != x.shape[1] || w.shape[0] != y.shape[1])
    unsupportedNode(node, "needs blocked [N, C/16, H, W, 16] input and output and weights "
                          "packed as [M/16, C/16, kh, kw, 16, 16]");
  Geometry g;
  g.N = x.shape[0];
  g.Cb = x.shape[1];
  g.C = g.Cb * kBlock;
  g.H = x.shape[2];
  g.W = x.shape[3];
  g.M = y.shape[1] * kBlock;
  g.OH = y.shape[2];
  g.OW = y.shape[3];
  g.KH = w.shape[2];
  g.KW = w.shape[3];
  if (node.hasAttribute("kernel_shape") &&
      node.attrInts("kernel_shape") != std::vector<std::int64_t>{g.KH, g.KW})
    unsupportedNode(node, "kernel_shape differs from the weight's spatial dims");
  const std::vector<WindowAxis> axes = slidingWindow(node, {g.H, g.W}, {g.OH, g.OW}, {g.KH, g.KW});
  g.rows = axes[0];
  g.cols = axes[1];
  for (const WindowAxis& a : axes)
    if ((a.out - 1) * a.stride + (a.kernel - 1) * a.dilation >= a.in + a.padBegin + a.padEnd)
      unsupportedNode(node, "the output reads past the padded input");

  const int lanes = kb.vectorBits() / 32;
  if (lanes < 4 || kBlock % lanes != 0) {
    kb.describe("blocked convolution, one output element at a time (no vector width known)");
    return scalarConv(kb, epilogue, ops, g);
  }
  const VectorEpilogue finish(kb, epilogue, y.dtype, y.rank(), lanes);

  // The input as tiles read it: zero-padded planes when the Conv pads.
  const WindowAxis &ar = g.rows, &ac = g.cols;
  const std::int64_t Hp = (g.OH - 1) * ar.stride + (g.KH - 1) * ar.dilation + 1;
  const std::int64_t Wp = (g.OW - 1) * ac.stride + (g.KW - 1) * ac.dilation + 1;
  const bool copy =
      ar.padBegin > 0 || ac.padBegin > 0 || Hp > g.H + ar.padBegin || Wp > g.W + ac.padBegin;
  const std::int64_t planeH = copy ? Hp : g.H, planeW = copy ? Wp : g.W;
  const TensorRef src = copy ? kb.scratch("xpad", x.dtype, {g.N * g.Cb * Hp * Wp * kBlock})
                             : TensorRef{x.buffer, {x.numElements()}, x.dtype};

  // --- the tiles ---
  const std::int64_t vectors = g.M / lanes, reduction = g.C * g.KH * g.KW;
  const NchwcTile tile = tileFor(lanes, vectors, g.OH, g.OW, reduction);
  const std::int64_t R = tile.R, Q = tile.Q, P = tile.P, MR = vectors / R;
  const std::int64_t RT = (g.OH + Q - 1) / Q, CT = (g.OW + P - 1) / P;
  // Task order: when the weights outweigh an input plane set, consecutive tasks (one
  // thread's chunk) keep the same output channels and move along the rows, so that their
  // slice of the weights stays in cache while the small input streams; otherwise they keep
  // the same positions and move along the output channels, reusing the input tile.
  const bool weightsStay = g.M * g.C * g.KH * g.KW > g.C * planeH * planeW;
  const Expr t = kb.freshVar("t");
  Expr n, rowBlock, column, mr;
  if (weightsStay) {
    n = t / (MR * RT * CT);
    mr = (t / (RT * CT)) % MR;
    rowBlock = (t / CT) % RT;
    column = t % CT;
  } else {
    n = t / (RT * CT * MR);
    rowBlock = (t / (CT * MR)) % RT;
    column = (t / MR) % CT;
    mr = t % MR;
  }
  const Expr v0 = mr * R; // the tile's first vector of output channels
  const loop::Type vt = loop::f32().withLanes(lanes);
  // The reduction of one tile of q rows x p columns at (oh0, ow0) into `acc`.
  auto reduce = [&](const RegisterTile& acc, std::int64_t q, std::int64_t p, const Expr& oh0,
                    const Expr& ow0) {
    const Expr cb = kb.freshVar("cb");
    const Expr ci = kb.freshVar("ci"), kh = kb.freshVar("kh"), kw = kb.freshVar("kw");
    std::vector<Expr> xs, ws;
    for (std::int64_t i = 0; i < q * p; ++i)
      xs.push_back(freshScalar(kb, "xb", vt));
    for (std::int64_t r = 0; r < R; ++r)
      ws.push_back(freshScalar(kb, "wv", vt));
    Stmt s = acc.accumulate(xs, ws);
    for (std::int64_t r = R; r-- > 0;) {
      // Vector v0 + r of output channels: block (v0 + r) * lanes / 16, lanes at its offset.
      const Expr m = (v0 + r) * lanes;
      const Expr at =
          (((((m / kBlock) * g.Cb + cb) * g.KH + kh) * g.KW + kw) * kBlock + ci) * kBlock +
          m % kBlock;
      s = loop::LetStmt::make(ws[r], loop::Load::make(w.buffer, ramp(at, lanes)), s);
    }
    for (std::int64_t i = q * p; i-- > 0;) {
      const Expr row = (oh0 + i / p) * ar.stride + kh * ar.dilation;
      const Expr col = (ow0 + i % p) * ac.stride + kw * ac.dilation;
      const Expr at = (((n * g.Cb + cb) * planeH + row) * planeW + col) * kBlock + ci;
      s = loop::LetStmt::make(xs[i], loop::Broadcast::make(src.loadFlat(at), lanes), s);
    }
    return forCount(cb, g.Cb, forCount(kh, g.KH, forCount(kw, g.KW, forCount(ci, kBlock, s))));
  };
  // Bias, the epilogue and the stores of a tile's sums.
  auto finishTile = [&](const RegisterTile& acc, std::int64_t q, std::int64_t p, const Expr& oh0,
                        const Expr& ow0) {
    std::vector<Stmt> body;
    for (std::int64_t i = 0; i < q * p; ++i)
      for (std::int64_t r = 0; r < R; ++r) {
        const Expr m = (v0 + r) * lanes;
        const std::vector<Expr> idx{n, m / kBlock, oh0 + i / p, ow0 + i % p, m % kBlock};
        Expr value = acc.load(i, r);
        if (ops.bias)
          value = value + loop::Load::make(ops.bias->buffer, ramp(m, lanes));
        if (finish.defined())
          value = finish(value, idx);
        body.push_back(loop::Store::make(y.buffer, ramp(flatIndex(y.shape, idx), lanes), value));
      }
    // Without a vector form of the epilogue, it runs element by element over the tile.
    if (!finish.defined()) {
      const Expr e = kb.freshVar("p"), c = kb.freshVar("q");
      const Expr m = v0 * lanes + c;
      const std::vector<Expr> idx{n, m / kBlock, oh0 + e / p, ow0 + e % p, m % kBlock};
      body.push_back(
          forCount(e, q * p, forCount(c, R * lanes, y.store(idx, epilogue(y.load(idx), idx)))));
    }
    return loop::Block::make(body);
  };
  // One tile of q rows x p columns at (oh0, ow0): accumulators cleared, the reduction, then
  // bias and the epilogue on the registers and the stores.
  auto tileAt = [&](std::int64_t q, std::int64_t p, const Expr& oh0, const Expr& ow0) {
    const RegisterTile acc(kb, y.dtype, q * p, R, lanes);
    std::vector<Stmt> body = acc.clear(y.dtype);
    body.push_back(reduce(acc, q, p, oh0, ow0));
    body.push_back(finishTile(acc, q, p, oh0, ow0));
    return kb.allocate(acc.scratch(), loop::Block::make(body));
  };
  // The last row (column) of tiles covers what is left of the plane when Q (P) does not
  // divide it.
  const std::int64_t lastQ = g.OH - (RT - 1) * Q, lastP = g.OW - (CT - 1) * P;
  auto tilesInRow = [&](std::int64_t q, const Expr& oh0) {
    const Stmt full = tileAt(q, P, oh0, column * P);
    return lastP == P ? full
                      : loop::IfThenElse::make(loop::eq(column, loop::makeIndex(CT - 1)),
                                               tileAt(q, lastP, oh0, column * P), full);
  };
  const std::int64_t tasks = g.N * RT * CT * MR;
  const Stmt tiles =
      lastQ == Q
          ? tilesInRow(Q, rowBlock * Q)
          : loop::IfThenElse::make(loop::eq(rowBlock, loop::makeIndex(RT - 1)),
                                   tilesInRow(lastQ, rowBlock * Q), tilesInRow(Q, rowBlock * Q));
  const Stmt main = forCount(t, tasks, tiles, parallelFor(tasks * R * Q * P * lanes * reduction));
  kb.describe("blocked (NCHW16c) convolution: " + std::to_string(tasks) + " parallel tasks, each " +
              std::to_string(Q) + " row(s) x " + std::to_string(P) + " positions x " +
              std::to_string(R) + " vector(s) of " + std::to_string(lanes) +
              " output channels, accumulated in registers over " + std::to_string(g.C) +
              " input channels x " + std::to_string(g.KH * g.KW) + " taps");
  kb.describe("weights were packed at compile time as [M/16, C/16, kh, kw, 16, 16]");
  kb.describe(weightsStay ? "consecutive tasks share output channels: their weights stay in "
                            "cache while the rows stream"
                          : "consecutive tasks share positions: the input tile stays in cache "
                            "while the weights stream");
  kb.describe(copy ? "the input is first copied into zero-padded planes"
                   : "the input is read in place");
  kb.describe(finish.defined()
                  ? "bias and the fused epilogue are applied in registers before the store"
                  : "the fused epilogue runs element by element over each stored tile");
  if (!copy)
    return main;

  // --- the zero-padded copy: each plane cleared, then its rows copied a vector at a time ---
  const Expr plane = kb.freshVar("plane"), e = kb.freshVar("e"), r = kb.freshVar("ih"),
             q = kb.freshVar("q");
  const std::int64_t planeSize = Hp * Wp * kBlock;
  const std::int64_t rowLo = std::min(ar.padBegin, Hp), rowHi = std::min(ar.padBegin + g.H, Hp);
  const std::int64_t colLo = std::min(ac.padBegin, Wp), colHi = std::min(ac.padBegin + g.W, Wp);
  const std::int64_t rowElems = std::max<std::int64_t>(0, colHi - colLo) * kBlock;
  const Stmt clear =
      forCount(e, planeSize / lanes,
               loop::Store::make(src.buffer, ramp(plane * planeSize + e * lanes, lanes),
                                 loop::Broadcast::make(constantOf(x.dtype, 0), lanes)));
  const Expr to = plane * planeSize + ((r + rowLo) * Wp + colLo) * kBlock + q * lanes;
  const Expr from = (plane * g.H + r + rowLo - ar.padBegin) * g.W * kBlock +
                    (colLo - ac.padBegin) * kBlock + q * lanes;
  const Stmt rows =
      forCount(r, std::max<std::int64_t>(0, rowHi - rowLo),
               forCount(q, rowElems / lanes,
                        loop::Store::make(src.buffer, ramp(to, lanes),
                                          loop::Load::make(x.buffer, ramp(from, lanes)))));
  const Stmt fill = forCount(plane, g.N * g.Cb, loop::Block::make(clear, rows),
                             parallelFor(g.N * g.Cb * planeSize));
  return kb.allocate(src, loop::Block::make(fill, main), true);
}

} // namespace lathe::lowering
