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
// Padding is handled by a zero-padded copy of the input planes. With a vector width, the
// kernel is a plain nest plus the default trace that makes this tile (tracedConv); without,
// one element at a time.
#include "engine/lowering/conv_nchwc_internal.h"
#include "engine/lowering/matrix_product.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <map>
#include <set>

namespace lathe::lowering {
namespace {

constexpr std::int64_t kBlock = kNchwcBlock;
// Tuner variants of the default trace (loop::Kernel::traceVariants): the tiles ranked next by
// the cost model, the best of each vector count, and the other task order for the first.
constexpr std::size_t kVariantsByCost = 12;
constexpr int kVariantsPerVectors = 4;
constexpr std::size_t kReorderedVariants = 4;

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

// Every tile that fits the registers, cheapest first by the cost model above.
std::vector<NchwcTile> rankedTiles(int lanes, std::int64_t vectors, std::int64_t outH,
                                   std::int64_t outW, std::int64_t reduction) {
  const std::int64_t registers = lanes >= 16 ? 32 : 16;
  std::vector<std::pair<double, NchwcTile>> costed;
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
        costed.emplace_back(cost * double(vectors / R), NchwcTile{R, Q, P});
      }
  }
  // Stable: among equal costs the first found (fewest vectors, then rows) stays first.
  std::stable_sort(costed.begin(), costed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<NchwcTile> out;
  for (const auto& c : costed)
    out.push_back(c.second);
  return out;
}

using Geometry = NchwcGeometry;

// NCHW planes (one value a position), row by row: a row of the padding is set to `zero` (the
// padding value), a row of the input sets its left and right margins and copies its values
// between them, each part vectorized along the row. The rows run as one parallel loop, row
// by row over all planes: the convolutions' tasks go by output row, so a thread copies the rows its
// own tasks read and the padded input stays in its core's cache (copied plane by plane, a stride-2
// Conv over 3 x 224 x 224 took 0.080 ms at 2 threads against 0.050 ms at 1).
// Volumes (3-D windows) copy the same way, their depth outside the rows: a volume of
// `depth.D` planes of x (the input's depth) is `out.D` planes of the copy, the first `front`
// of them and those past the input padding.
struct CopyDepth {
  std::int64_t D = 1, front = 0;
};
void plainPaddedCopy(KernelBuilder& kb, const TensorRef& x, PaddedPlanes& out, std::int64_t planes,
                     std::int64_t H, std::int64_t W, std::int64_t top, std::int64_t left, int lanes,
                     const Expr& zero, const Expr& firstPlane, const CopyDepth& depth = {}) {
  const std::int64_t Hp = out.H, Wp = out.W, Dp = out.D;
  const std::int64_t Wc = std::min(W, Wp - left), right = Wp - left - Wc;
  const TensorRef& src = out.planes;
  const Expr plane = axisVar(kb, "plane", planes), dp = axisVar(kb, "dp", Dp),
             hp = axisVar(kb, "hp", Hp);
  const Expr wl = kb.freshVar("wl"), w = kb.freshVar("w"), wr = kb.freshVar("wr"),
             wp = kb.freshVar("wp");
  Expr from = firstPlane.defined() ? firstPlane + plane : plane; // x's plane
  Expr copyPlane = plane;
  if (Dp > 1) {
    copyPlane = plane * Dp + dp;
    from = from * depth.D + dp - depth.front;
  }
  const Expr at = (copyPlane * Hp + hp) * Wp;
  std::vector<Stmt> inside;
  if (left > 0)
    inside.push_back(forCount(wl, left, src.storeFlat(at + wl, zero)));
  inside.push_back(
      forCount(w, Wc, src.storeFlat(at + left + w, x.loadFlat((from * H + hp - top) * W + w))));
  if (right > 0)
    inside.push_back(forCount(wr, right, src.storeFlat(at + left + Wc + wr, zero)));
  // Rows of padding only when there are some (a 1-D Conv's one row has none).
  const bool paddingRows = top > 0 || Hp > top + H;
  const bool paddingPlanes = depth.front > 0 || Dp > depth.front + depth.D;
  Expr isInput;
  if (paddingRows)
    isInput = hp >= top && hp < top + H;
  if (paddingPlanes) {
    const Expr inDepth = dp >= depth.front && dp < depth.front + depth.D;
    isInput = isInput.defined() ? isInput && inDepth : inDepth;
  }
  const Stmt row = isInput.defined()
                       ? loop::IfThenElse::make(isInput, loop::Block::make(inside),
                                                forCount(wp, Wp, src.storeFlat(at + wp, zero)))
                       : loop::Block::make(inside);
  out.copy = loopOver(hp, Hp, loopOver(dp, Dp, loopOver(plane, planes, row)));
  out.steps = parallelTaskSteps(loopsOver({{hp, Hp}, {dp, Dp}, {plane, planes}}), planes * Dp * Hp,
                                planes * Dp * Hp * Wp * 4);
  vectorizeRow(out.steps, w, Wc, lanes);
  if (isInput.defined()) // rows of padding (or of depth padding) are zeroed in vectors too
    vectorizeRow(out.steps, wp, Wp, lanes);
  vectorizeRow(out.steps, wl, left, lanes);
  vectorizeRow(out.steps, wr, right, lanes);
}

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
          const Expr cb = g.plainInput ? loop::makeIndex(0) : r[0] / kBlock;
          const Expr ci = g.plainInput ? r[0] : r[0] % kBlock;
          const Expr xv = g.plainInput ? x.load({n, ci, ih, iw}) : x.load({n, cb, ih, iw, ci});
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

void vectorizeRow(std::vector<std::string>& steps, const Expr& var, std::int64_t extent,
                  int lanes) {
  if (extent >= lanes)
    vectorizeRowSteps(steps, loopName(var), extent, lanes);
}

PaddedPlanes paddedPlanes(KernelBuilder& kb, const TensorRef& x, std::int64_t planes,
                          std::int64_t H, std::int64_t W, std::int64_t top, std::int64_t left,
                          std::int64_t Hp, std::int64_t Wp, bool copy, int lanes,
                          std::int64_t block, const Expr& fill, const Expr& firstPlane) {
  LATHE_CHECK(!firstPlane.defined() || block == 1, "a first plane offsets NCHW planes only");
  PaddedPlanes out;
  if (!copy) {
    out.planes = TensorRef{x.buffer, {x.numElements()}, x.dtype};
    out.H = H;
    out.W = W;
    return out;
  }
  out.planes = kb.scratch("xpad", x.dtype, {planes * Hp * Wp * block});
  out.H = Hp;
  out.W = Wp;
  const TensorRef& src = out.planes;
  const Expr padding = fill.defined() ? fill : constantOf(x.dtype, 0);
  if (block == 1) {
    plainPaddedCopy(kb, x, out, planes, H, W, top, left, lanes, padding, firstPlane);
    return out;
  }
  const Expr plane = kb.freshVar("plane"), hp = kb.freshVar("hp"), wp = kb.freshVar("wp"),
             c = kb.freshVar("c");
  const Expr inside = hp >= top && hp < top + H && wp >= left && wp < left + W;
  const Expr at = ((plane * Hp + hp) * Wp + wp) * block + c;
  const Expr from = ((plane * H + hp - top) * W + wp - left) * block + c;
  const Stmt element = loop::IfThenElse::make(inside, src.storeFlat(at, x.loadFlat(from)),
                                              src.storeFlat(at, padding));
  out.copy =
      forCount(plane, planes, forCount(hp, Hp, forCount(wp, Wp, forCount(c, block, element))));
  if (block == lanes) {
    out.steps.push_back("vectorize(" + loopName(c) + ")");
  } else {
    out.steps.push_back("split(" + loopName(c) + ", " + std::to_string(lanes) + ")");
    out.steps.push_back("vectorize(" + loopName(c) + ".i)");
  }
  if (parallelFor(planes * Hp * Wp * kBlock) == loop::ForKind::Parallel && planes > 1)
    out.steps.push_back("parallel(" + loopName(plane) + ")");
  return out;
}

namespace {

// `steps` without their parallel steps.
std::vector<std::string> serialSteps(std::vector<std::string> steps) {
  std::erase_if(steps, [](const std::string& s) { return s.rfind("parallel(", 0) == 0; });
  return steps;
}

} // namespace

bool windowRowsApply(const TensorRef& x, const std::vector<WindowAxis>& axes, int lanes) {
  if (axes.size() != 2 || x.rank() != 4 || lanes < 4 || x.numElements() == 0)
    return false;
  const WindowAxis& cols = axes[1];
  return cols.out >= lanes && (cols.stride == 1 || cols.out >= 2 * lanes) && axes[0].out >= 1;
}

PaddedPlanes windowRowPlanes(KernelBuilder& kb, const TensorRef& x,
                             const std::vector<WindowAxis>& axes, int lanes, bool parallel,
                             const Expr& fill, const Expr& onePlane) {
  const auto extent = [](const WindowAxis& a) {
    return (a.out - 1) * a.stride + (a.kernel - 1) * a.dilation + 1;
  };
  const auto needsCopy = [&](const WindowAxis& a, std::int64_t in) {
    return a.padBegin > 0 || extent(a) > in + a.padBegin;
  };
  if (axes.size() == 3) { // a volume: planes of depth, rows, columns
    LATHE_CHECK(x.rank() == 5 && !onePlane.defined(), "a volume's window copies whole volumes");
    const WindowAxis &ad = axes[0], &ar = axes[1], &ac = axes[2];
    const std::int64_t D = x.shape[2], H = x.shape[3], W = x.shape[4];
    const bool copy = needsCopy(ad, D) || needsCopy(ar, H) || needsCopy(ac, W);
    const std::int64_t planes = x.shape[0] * x.shape[1];
    PaddedPlanes out;
    if (!copy) {
      out.planes = TensorRef{x.buffer, {x.numElements()}, x.dtype};
      out.D = D;
      out.H = H;
      out.W = W;
      return out;
    }
    out.D = extent(ad);
    out.H = extent(ar);
    out.W = extent(ac);
    out.planes = kb.scratch("xpad", x.dtype, {planes * out.D * out.H * out.W});
    plainPaddedCopy(kb, x, out, planes, H, W, ar.padBegin, ac.padBegin, lanes,
                    fill.defined() ? fill : constantOf(x.dtype, 0), Expr(), {D, ad.padBegin});
    if (!parallel)
      out.steps = serialSteps(std::move(out.steps));
    return out;
  }
  const WindowAxis &ar = axes[0], &ac = axes[1];
  const std::int64_t H = x.shape[2], W = x.shape[3];
  const std::int64_t Hp = extent(ar), Wp = extent(ac);
  const bool copy = needsCopy(ar, H) || needsCopy(ac, W);
  PaddedPlanes planes =
      paddedPlanes(kb, x, onePlane.defined() ? 1 : x.shape[0] * x.shape[1], H, W, ar.padBegin,
                   ac.padBegin, Hp, Wp, copy, lanes, 1, fill, onePlane);
  if (!parallel || onePlane.defined())
    planes.steps = serialSteps(std::move(planes.steps));
  return planes;
}

void rowTileSteps(std::vector<std::string>& steps, std::vector<std::string>& tasks,
                  const std::vector<std::string>& after, const std::string& rows,
                  const std::string& ow, std::int64_t OW, std::int64_t V, int lanes,
                  const std::string& k) {
  if (OW < lanes) { // the row is one shorter vector: nothing to split
    tasks.insert(tasks.end(), after.begin(), after.end());
    std::vector<std::string> order = tasks;
    if (!rows.empty())
      order.push_back(rows);
    order.push_back(ow);
    if (order.size() > 1)
      steps.push_back("reorder(" + loopList(order) + ")");
    steps.push_back("register_tile(" + (rows.empty() ? ow : rows) + ", " + k + ")");
    return;
  }
  const std::int64_t TW = V * lanes, rem = OW % TW;
  std::string cols = ow; // the tile's column loop (split into vectors below)
  if (TW < OW) {
    steps.push_back("split(" + ow + ", " + std::to_string(TW) + ")");
    tasks.push_back(ow + ".o");
    cols = ow + ".i";
  }
  tasks.insert(tasks.end(), after.begin(), after.end());
  if (rem == 0 && V > 1)
    steps.push_back("split(" + cols + ", " + std::to_string(lanes) + ")");
  std::vector<std::string> order = tasks;
  if (!rows.empty())
    order.push_back(rows);
  if (rem == 0 && V > 1) {
    order.push_back(cols + ".o");
    order.push_back(cols + ".i");
  } else {
    order.push_back(cols);
  }
  if (order.size() > 1)
    steps.push_back("reorder(" + loopList(order) + ")");
  if (rem > 0)
    remainderTiles(steps, rows, ow, k, rem, lanes);
  else
    steps.push_back("register_tile(" +
                    (!rows.empty() ? rows
                     : V > 1       ? cols + ".o"
                                   : cols) +
                    ", " + k + ")");
}

// The plain nest and the default trace that tiles it (kernel notes at the top of the file):
// the trace splits oh, ow and the channels into the tile (Q rows, P columns, R vectors of
// channels), moves the tile inside the tasks, lifts the remainder of a split that does not
// divide the plane into tiles of their own (partition), keeps each tile in registers across
// the whole reduction (register_tile) and runs the tasks as one parallel loop.
TiledNchwcConv tiledNchwcConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                              const NchwcGeometry& g, int lanes, const PaddedPlanes& planes,
                              const std::vector<std::string>& prefix) {
  const TensorRef &w = ops.w, &y = ops.y, &src = planes.planes;
  const WindowAxis &ar = g.rows, &ac = g.cols;
  const std::int64_t planeH = planes.H, planeW = planes.W;
  const std::int64_t reduction = g.C * g.KH * g.KW;

  // --- the nest (a dim of extent 1 has no loop: the kernel drops such loops) ---
  const Expr n = axisVar(kb, "n", g.N), mb = axisVar(kb, "mb", g.M / kBlock),
             oh = axisVar(kb, "oh", g.OH), ow = axisVar(kb, "ow", g.OW), j = kb.freshVar("j");
  const Expr cb = axisVar(kb, "cb", g.Cb), kh = axisVar(kb, "kh", g.KH),
             kw = axisVar(kb, "kw", g.KW), ci = kb.freshVar("ci");
  const std::vector<Expr> idx{n, mb, oh, ow, j};
  const Expr row = oh * ar.stride + kh * ar.dilation, col = ow * ac.stride + kw * ac.dilation;
  const Expr xv =
      g.plainInput ? src.loadFlat(((n * g.C + ci) * planeH + row) * planeW + col)
                   : src.loadFlat((((n * g.Cb + cb) * planeH + row) * planeW + col) * kBlock + ci);
  const std::int64_t channelsPerBlock = g.plainInput ? g.C : kBlock;
  const Expr wv = g.batchedWeights ? w.load({mb, cb, n, ci, j}) : w.load({mb, cb, kh, kw, ci, j});
  const Stmt update = y.store(idx, y.load(idx) + xv * wv);
  Expr value = y.load(idx);
  if (ops.bias)
    value = value + ops.bias->load({mb * kBlock + j});
  const Stmt element = loop::Block::make(
      {y.store(idx, constantOf(y.dtype, 0)),
       loopOver(cb, g.Cb,
                loopOver(kh, g.KH, loopOver(kw, g.KW, loopOver(ci, channelsPerBlock, update)))),
       y.store(idx, epilogue(value, idx))});
  TiledNchwcConv out;
  out.nest =
      loopOver(n, g.N,
               loopOver(mb, g.M / kBlock,
                        loopOver(oh, g.OH, loopOver(ow, g.OW, forCount(j, kBlock, element)))));
  if (lanes < 4)
    return out; // no vector width known: the plain nest, no trace

  // --- the trace: tasks outside, the tile of Q x P positions x R vectors inside ---
  const std::int64_t S = kBlock / lanes; // vectors per block of 16 channels
  const std::vector<NchwcTile> tiles = rankedTiles(lanes, g.M / lanes, g.OH, g.OW, reduction);
  const std::string jn = loopName(j);
  const Expr& k0 = g.Cb > 1 ? cb : g.KH > 1 ? kh : g.KW > 1 ? kw : ci; // the reduction's outermost
  const auto taskCountOf = [&](const NchwcTile& t) {
    return g.N * (g.M / lanes / t.R) * ((g.OH + t.Q - 1) / t.Q) * ((g.OW + t.P - 1) / t.P);
  };
  // The steps of the tile `t`, with tasks ordered channels first (`weightsStay`) or
  // positions first.
  const auto convSteps = [&](const NchwcTile& t, bool weightsStay) {
    std::vector<std::string> steps;
    std::vector<std::string> rowTask, colTask, chanTask, tile;
    std::size_t remainders = 0; // splits of the tile whose factor leaves a remainder
    const auto splitInto = [&](const Expr& var, std::int64_t extent, std::int64_t factor,
                               std::vector<std::string>& task) {
      if (extent == 1)
        return;
      const std::string name = loopName(var);
      if (factor == 1) {
        task.push_back(name);
      } else if (factor >= extent) {
        tile.push_back(name);
      } else {
        steps.push_back("split(" + name + ", " + std::to_string(factor) + ")");
        task.push_back(name + ".o");
        tile.push_back(name + ".i");
        remainders += extent % factor != 0;
      }
    };
    // Channels: R vectors of `lanes` out of blocks of 16 (S vectors each).
    std::vector<std::string> chanTile;
    if (t.R > S) {
      const std::string mbn = loopName(mb);
      steps.push_back("split(" + mbn + ", " + std::to_string(t.R / S) + ")");
      chanTask.push_back(mbn + ".o");
      chanTile.push_back(mbn + ".i");
    } else if (g.M > kBlock) {
      chanTask.push_back(loopName(mb));
    }
    if (S > 1) {
      steps.push_back("split(" + jn + ", " + std::to_string(lanes) + ")");
      if (t.R >= S) {
        chanTile.push_back(jn + ".o");
      } else if (t.R == 1) {
        chanTask.push_back(jn + ".o");
      } else {
        steps.push_back("split(" + jn + ".o, " + std::to_string(t.R) + ")");
        chanTask.push_back(jn + ".o.o");
        chanTile.push_back(jn + ".o.i");
      }
      chanTile.push_back(jn + ".i");
    } else {
      chanTile.push_back(jn);
    }
    splitInto(oh, g.OH, t.Q, rowTask);
    splitInto(ow, g.OW, t.P, colTask);
    tile.insert(tile.end(), chanTile.begin(), chanTile.end());
    std::vector<std::string> task;
    if (g.N > 1)
      task.push_back(loopName(n));
    for (const auto* part : weightsStay ? std::vector{&chanTask, &rowTask, &colTask}
                                        : std::vector{&rowTask, &colTask, &chanTask})
      task.insert(task.end(), part->begin(), part->end());
    std::vector<std::string> order = task;
    order.insert(order.end(), tile.begin(), tile.end());
    if (order.size() > 1)
      steps.push_back("reorder(" + loopList(order) + ")");
    const std::string top = tile.front(), k = loopName(k0);
    if (remainders > 0)
      steps.push_back("partition(" + top + ")");
    for (std::size_t c = 0; c < (std::size_t{1} << remainders); ++c) {
      const std::string suffix = c == 0 ? "" : ".r" + std::to_string(c);
      steps.push_back("register_tile(" + top + suffix + ", " + k + suffix + ")");
    }
    const std::int64_t taskCount = taskCountOf(t);
    for (std::string& step :
         parallelTaskSteps(task, taskCount, taskCount * t.R * t.Q * t.P * lanes * reduction))
      steps.push_back(std::move(step));
    return steps;
  };
  // A whole trace: the other nests' steps, then the convolution's.
  const auto traceOf = [&](const std::vector<std::string>& steps) {
    std::string text;
    for (const std::string& step : prefix)
      text += step + "\n";
    for (const std::string& step : steps)
      text += step + "\n";
    return text;
  };
  // Task order: when the weights outweigh an input plane set twice over, consecutive tasks
  // (one thread's chunk) keep the same output channels and move along the rows, so that
  // their slice of the weights stays in cache while the small input streams; otherwise they
  // keep the same positions and move along the output channels, reusing the input tile.
  // Twice, not once: ResNet-50's 1x1 convs from 1024 to 256 channels on 14x14 (weights 1.3
  // input planes) took 0.51 ms channels first and 0.35 ms positions first at 2 threads, where
  // channels first has each thread stream the whole input (at 1 thread: 0.51 and 0.55 ms).
  const bool weightsStay = g.M * g.C * g.KH * g.KW > 2 * g.C * planeH * planeW;
  const NchwcTile& best = tiles.front();
  const std::vector<std::string> bestSteps = convSteps(best, weightsStay);
  out.R = best.R;
  out.Q = best.Q;
  out.P = best.P;
  out.tasks = taskCountOf(best);
  out.weightsStay = weightsStay;
  out.remainders = std::any_of(bestSteps.begin(), bestSteps.end(),
                               [](const auto& step) { return step.rfind("partition(", 0) == 0; });
  for (const std::string& step : prefix)
    kb.defaultStep(step);
  for (const std::string& step : bestSteps)
    kb.defaultStep(step);
  // What the tuner may try instead: the next tiles by the cost model, the best few of each
  // vector count, and the other task order for the first few.
  // (With one task loop or none both orders are one trace: each trace is offered once.)
  std::set<std::string> offered{traceOf(bestSteps)};
  std::map<std::int64_t, int> perVectors;
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const NchwcTile& t = tiles[i];
    const int ofR = perVectors[t.R]++;
    std::vector<std::string> traces;
    if (i < kVariantsByCost || ofR < kVariantsPerVectors)
      traces.push_back(traceOf(convSteps(t, weightsStay)));
    if (i < kReorderedVariants)
      traces.push_back(traceOf(convSteps(t, !weightsStay)));
    for (std::string& trace : traces)
      if (offered.insert(trace).second)
        kb.traceVariant(std::move(trace));
  }
  return out;
}

namespace {

// The convolution: a zero-padded copy of the input planes when there is padding, then the
// tiled nest.
Stmt tracedConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                const Geometry& g, int lanes) {
  const WindowAxis &ar = g.rows, &ac = g.cols;
  const std::int64_t Hp = (g.OH - 1) * ar.stride + (g.KH - 1) * ar.dilation + 1;
  const std::int64_t Wp = (g.OW - 1) * ac.stride + (g.KW - 1) * ac.dilation + 1;
  const bool copy =
      ar.padBegin > 0 || ac.padBegin > 0 || Hp > g.H + ar.padBegin || Wp > g.W + ac.padBegin;
  const PaddedPlanes planes =
      paddedPlanes(kb, ops.x, g.N * (g.plainInput ? g.C : g.Cb), g.H, g.W, ar.padBegin, ac.padBegin,
                   Hp, Wp, copy, lanes, g.plainInput ? 1 : kBlock);
  const TiledNchwcConv conv = tiledNchwcConv(kb, epilogue, ops, g, lanes, planes, planes.steps);

  kb.describe("blocked (NCHW16c) convolution, default trace: " + std::to_string(conv.tasks) +
              " tasks, each " + std::to_string(conv.Q) + " row(s) x " + std::to_string(conv.P) +
              " positions x " + std::to_string(conv.R) + " vector(s) of " + std::to_string(lanes) +
              " output channels, accumulated in registers over " + std::to_string(g.C) +
              " input channels x " + std::to_string(g.KH * g.KW) + " taps");
  if (conv.remainders)
    kb.describe("the rows or columns the tile does not divide run as smaller remainder tiles");
  kb.describe("weights were packed at compile time as [M/16, C/16, kh, kw, 16, 16]");
  kb.describe(conv.weightsStay ? "consecutive tasks share output channels: their weights stay in "
                                 "cache while the rows stream"
                               : "consecutive tasks share positions: the input tile stays in "
                                 "cache while the weights stream");
  kb.describe(copy ? "the input is first copied into zero-padded planes"
                   : "the input is read in place");
  if (!copy)
    return conv.nest;
  return kb.allocate(planes.planes, loop::Block::make(planes.copy, conv.nest), true);
}

} // namespace

Expr axisVar(KernelBuilder& kb, const char* hint, std::int64_t extent) {
  return extent > 1 ? kb.freshVar(hint) : loop::makeIndex(0);
}

Stmt loopOver(const Expr& var, std::int64_t extent, Stmt body) {
  return extent > 1 ? forCount(var, extent, std::move(body)) : body;
}

ConvOperands blockedConvOperands(const graph::Node& node, KernelBuilder& kb) {
  ConvOperands ops{kb.input(*node.input(0), node), kb.input(*node.input(1), node), {}, {}, 1};
  if (node.input(2))
    ops.bias = kb.input(*node.input(2), node);
  ops.y = kb.output(*node.output(0), node);
  return ops;
}

Stmt lowerConvNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const ConvOperands ops = blockedConvOperands(node, kb);
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const bool plain = x.rank() == 4; // NCHW input: one block of all its channels
  const std::int64_t xBlock = plain ? x.shape[1] : kBlock;
  if ((x.rank() != 5 && !plain) || w.rank() != 6 || y.rank() != 5 ||
      (!plain && x.shape[4] != kBlock) || w.shape[4] != xBlock || w.shape[5] != kBlock ||
      y.shape[4] != kBlock || x.dtype != graph::DType::F32 ||
      w.shape[1] != (plain ? 1 : x.shape[1]) || w.shape[0] != y.shape[1])
    unsupportedNode(node, "needs blocked [N, C/16, H, W, 16] (or NCHW) input, blocked output "
                          "and weights packed as [M/16, C/16, kh, kw, 16, 16] (or [M/16, 1, kh, "
                          "kw, C, 16])");
  Geometry g;
  g.plainInput = plain;
  g.N = x.shape[0];
  g.Cb = plain ? 1 : x.shape[1];
  g.C = plain ? x.shape[1] : g.Cb * kBlock;
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
  return tracedConv(kb, epilogue, ops, g, lanes);
}

} // namespace lathe::lowering
