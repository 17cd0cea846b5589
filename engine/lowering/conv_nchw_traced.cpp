// 2-D, 3-D and 1-D (as one row) Conv in NCHW (f32; groups of several output channels) as a
// plain nest plus the default trace that tiles it: the kernel of Convs outside blocked chains
// (too few channels to fill blocks, grouped, or volumes).
//
// The nest, over the input planes (zero padded into a copy first when there is padding):
//   for n, g, m, oh, ow: Y = 0; for c, kh, kw: Y += X(n, g*Cg + c, oh*s + kh*d, ow*s + kw*d) *
//   W(g*Mg + m, c, kh, kw); Y = epilogue(Y + bias(g*Mg + m))
// (Y at channel g*Mg + m; no g loop with one group). A 3-D Conv has an od loop after m and a kd
// loop after c, and reads plane od*s + kd*d of the (padded) volume.
// The trace splits m into R output channels and ow into tiles of V vectors, moves the tile
// (R channels x V vectors of one output row) inside the tasks, keeps it in registers across
// the whole reduction over input channels and taps (register_tile: per tap V input vectors
// and R broadcast weights feed R*V multiply-adds), and runs the tasks (batch, row, column
// tile, group, channel block) as one parallel loop. Consecutive tasks share positions and move
// along the output channels, so a thread reuses its input rows from cache while the small
// weights stream. A row the tile width does not divide ends in remainder tiles (partition:
// whole vectors, then one shorter vector). Strided Convs read every V-th input with a
// strided vector load. Bias and the fused epilogue run on the registers before the store.
#include "engine/lowering/conv_nchwc_internal.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

struct NchwTile {
  std::int64_t R = 1, V = 1; // output channels, vectors of positions
  double cost = 0;
};

// Tiles that fit the registers (R*V accumulators, V input vectors and a broadcast weight in
// 32 vector registers with AVX-512, 16 with AVX2), cheapest first. Per input channel and tap
// a tile issues R*V multiply-adds and V + R loads (two of each per cycle, a strided input
// vector counting twice) plus a few of loop upkeep; a row that the width does not divide
// ends in a tile of its remaining whole vectors and one of the shorter last vector (as
// remainderTiles makes them); each tile also stores R*V vectors.
std::vector<NchwTile> rankedTiles(int lanes, std::int64_t M, std::int64_t OW,
                                  std::int64_t reduction, std::int64_t stride) {
  const std::int64_t registers = lanes >= 16 ? 32 : 16;
  const auto stepCost = [&](std::int64_t R, std::int64_t V) {
    return double(std::max(R * V, R + V * (stride > 1 ? 2 : 1)) + 3);
  };
  // A row narrower than a vector fills few lanes, so the tile takes more output channels:
  // every divisor of M up to 16 (12 channels x 7-wide rows: 0.0019 ms with all 12 in the
  // tile, 0.0027 with 4).
  std::vector<std::int64_t> rows{1, 2, 4, 8};
  if (OW < lanes)
    for (std::int64_t r = 3; r <= std::min<std::int64_t>(M, 16); ++r)
      if (M % r == 0 && r != 4 && r != 8)
        rows.push_back(r);
  std::vector<NchwTile> out;
  for (std::int64_t R : rows) {
    if (M % R != 0 || R > M)
      continue;
    for (std::int64_t V = 1; V <= 4; ++V) {
      // A row narrower than a vector is one shorter vector (V = 1).
      const std::int64_t TW = std::min(V * lanes, OW);
      if (R * V + V + 1 > registers || V * lanes > std::max<std::int64_t>(OW, lanes))
        continue;
      const std::int64_t full = OW / TW, rem = OW % TW;
      double row = double(full) * (stepCost(R, V) * double(reduction) + 4.0 * double(R * V));
      // The remainder: a tile of its whole vectors, then one of the shorter vector.
      for (const std::int64_t v : {rem / lanes, std::int64_t{rem % lanes > 0}})
        if (v > 0)
          row += stepCost(R, v) * double(reduction) + 4.0 * double(R * v);
      out.push_back(NchwTile{R, V, row * double(M / R)});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const NchwTile& a, const NchwTile& b) { return a.cost < b.cost; });
  return out;
}

constexpr std::size_t kVariants = 8; // tiles the tuner may try instead of the best

// A 1-D Conv runs as a 2-D Conv of one row, over views of X, W and Y with a unit axis; the
// epilogue sees the index without it.
bool isOneRow(const ConvOperands& ops, const std::vector<WindowAxis>& axes) {
  return axes.size() == 1 && ops.x.rank() == 3 && ops.y.rank() == 3 && ops.w.rank() == 3;
}

template <typename Lower>
Stmt asOneRow(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
              const std::vector<WindowAxis>& axes, Lower lower) {
  const auto withRow = [](const TensorRef& t) {
    return TensorRef{t.buffer, {t.shape[0], t.shape[1], 1, t.shape[2]}, t.dtype};
  };
  ConvOperands rows = ops;
  rows.x = withRow(ops.x);
  rows.w = withRow(ops.w);
  rows.y = withRow(ops.y);
  const Epilogue dropRow = [&](Expr value, const std::vector<Expr>& idx) {
    return epilogue(std::move(value), {idx[0], idx[1], idx[3]});
  };
  return lower(kb, dropRow, rows, {WindowAxis{}, axes[0]});
}

// A Conv whose every output reads one input value (one input channel a group, a 1x1 window:
// depthwise, with a channel multiplier of Mg outputs per input channel, or one input channel
// fanned out to M) scales planes: y[n, g*Mg + m] = epilogue(x[n, g] * w[g*Mg + m] + bias),
// the plane zero padded into the task's copy first when there is padding (the border is
// bias alone). The trace vectorizes the output rows and runs the planes as one parallel
// loop; there is no sum to keep in registers.
Stmt scaledPlanes(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                  const std::vector<WindowAxis>& axes) {
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const int lanes = kb.vectorBits() / 32;
  const WindowAxis &ar = axes[0], &ac = axes[1];
  const std::int64_t N = x.shape[0], C = x.shape[1], M = y.shape[1], Mg = M / C, OH = ar.out,
                     OW = ac.out;
  const std::int64_t work = N * M * OH * OW;
  const Expr n = axisVar(kb, "n", N), g = axisVar(kb, "g", C), m = axisVar(kb, "m", Mg);
  const Expr plane = n * C + g, channel = Mg > 1 ? g * Mg + m : g;
  const PaddedPlanes planes = windowRowPlanes(kb, x, axes, lanes, false, Expr(), plane);
  const Expr oh = axisVar(kb, "oh", OH), ow = kb.freshVar("ow");
  const std::vector<Expr> idx{n, channel, oh, ow};
  const Expr zero = loop::makeIndex(0);
  Expr value = planes.planes.loadFlat(planeAt(planes, plane, oh * ar.stride, ow * ac.stride)) *
               w.load({channel, zero, zero, zero});
  if (ops.bias)
    value = value + ops.bias->load({channel});
  const Stmt rows = loopOver(oh, OH, forCount(ow, OW, y.store(idx, epilogue(value, idx))));
  const Stmt nest = loopOver(n, N, loopOver(g, C, planeTask(kb, planes, loopOver(m, Mg, rows))));
  std::vector<std::string> steps = planes.steps;
  // Without a copy to share, the output planes of an input plane are tasks of their own.
  const bool planeTasks = Mg > 1 && !planes.copy.defined();
  const std::vector<std::string> tasks = loopsOver({{n, N}, {g, C}, {m, planeTasks ? Mg : 1}});
  for (std::string& step : parallelTaskSteps(tasks, N * (planeTasks ? M : C), work))
    steps.push_back(std::move(step));
  vectorizeRow(steps, ow, OW, lanes);
  for (const std::string& step : steps)
    kb.defaultStep(step);
  kb.describe(
      std::string(Mg > 1 ? "1x1 convolution of one input channel a group"
                         : "depthwise 1x1 convolution") +
      " (default trace): " + std::to_string(N * (planeTasks ? M : C)) +
      (parallelFor(work) == loop::ForKind::Parallel ? " parallel" : "") +
      (planeTasks ? " tasks, one per output plane"
       : Mg > 1   ? " tasks, one per input plane"
                  : " tasks, one per channel plane") +
      ", each scaling its rows in vectors" +
      (Mg > 1 && !planeTasks ? " into " + std::to_string(Mg) + " output planes" : std::string()));
  if (planes.copy.defined())
    kb.describe("each task first copies its plane into a zero-padded scratch of its own");
  return nest;
}

} // namespace

Stmt tracedNchwConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                    const std::vector<WindowAxis>& axes) {
  if (isOneRow(ops, axes))
    return asOneRow(kb, epilogue, ops, axes, tracedNchwConv);
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const int lanes = kb.vectorBits() / 32;
  // A 3-D Conv's output rows are those of a 2-D one over the volume's planes: its depth is
  // one more task loop, and its depth taps one more reduction loop.
  const bool volume = axes.size() == 3 && x.rank() == 5 && y.rank() == 5 && w.rank() == 5;
  const std::vector<WindowAxis> planeAxes =
      volume ? std::vector<WindowAxis>{axes[1], axes[2]} : axes;
  const TensorRef rowsOfX =
      volume ? TensorRef{x.buffer,
                         {x.shape[0], x.shape[1], x.shape[2] * x.shape[3], x.shape[4]},
                         x.dtype}
             : x;
  // Rows too narrow for vectors of a row may still run as wide rows (below). Strided rows
  // narrower than two vectors, and strided volumes, read stride-phase planes instead (their
  // strided vector loads lost to the hand-written phase copies: a stride-2 5x5 Conv on 31
  // columns 0.007 against 0.005 ms; 3 -> 16 channels 3x7x7 s2 over 16 x 112 x 112 3.5
  // against 3.2 ms).
  if (planeAxes.size() != 2)
    return Stmt();
  const bool strided = planeAxes[0].stride > 1 || planeAxes[1].stride > 1;
  const bool rowsApply = planeRowsApply(rowsOfX, planeAxes, lanes, false) && !(volume && strided);
  const bool phased = strided && !rowsApply;
  if (lanes < 4 || x.numElements() == 0 || (!volume && (x.rank() != 4 || y.rank() != 4)) ||
      x.dtype != graph::DType::F32 || w.dtype != graph::DType::F32 || y.dtype != graph::DType::F32)
    return Stmt();
  const WindowAxis ad = volume ? axes[0] : WindowAxis{};
  const WindowAxis &ar = planeAxes[0], &ac = planeAxes[1];
  const std::int64_t N = x.shape[0], C = x.shape[1];
  const std::int64_t M = y.shape[1], OD = ad.out, OH = ar.out, OW = ac.out, KD = ad.kernel,
                     KH = ar.kernel, KW = ac.kernel;
  // With groups, output channel g*Mg + m reads input channels g*Cg .. g*Cg + Cg - 1.
  const std::int64_t G = ops.group, Mg = M / G, Cg = C / G;
  // A reduction of one term has no loop to keep the tile across. One output channel a group
  // (depthwise) shares no input within a tile: tracedDepthwiseConv pads each plane inside its
  // task instead of copying the whole input first (1.2-1.8x faster), where its rows take
  // vectors; narrower rows and volumes come here.
  if (M == 0 || Cg * KD * KH * KW < 2 ||
      (G > 1 && Mg == 1 && !volume && planeRowsApply(x, axes, lanes, true)))
    return Stmt();
  if (reachesPastPadding(axes))
    return Stmt();
  // Work in vector multiply-adds: a kernel of fewer than 2^16 finishes before a second
  // thread has woken (3 -> 8 channels on 64x64: 0.010 ms at 1 thread, 0.015 ms at 2).
  const std::int64_t work = N * M * OD * OH * OW * Cg * KD * KH * KW / lanes;
  const bool parallel = parallelFor(work) == loop::ForKind::Parallel;
  // A plane of one output position leaves before any copy is built: the hand-written kernel
  // takes it (traced, its tile of output channels by one position ran 0.035 ms against 0.024,
  // 128 -> 128 channels 3x3 over 1x1). Wide rows shorter than a vector are one shorter vector
  // (256 -> 256 channels 3x3 over 2x2: 0.092 -> 0.085 ms at 1 thread, 0.047 -> 0.043 at 2).
  const std::int64_t widest =
      std::max(x.shape.back(), (OW - 1) * ac.stride + (KW - 1) * ac.dilation + 1);
  if (!rowsApply && !(phased && OW >= 4) && (OH - 1) * widest + OW < 2)
    return Stmt();
  const PaddedPlanes planes = phased ? phasePlanes(kb, x, axes, lanes, parallel)
                                     : windowRowPlanes(kb, x, axes, lanes, parallel);
  const TensorRef& src = planes.planes;
  const bool copy = planes.copy.defined();

  const std::int64_t reduction = Cg * KD * KH * KW;
  // Rows of phase planes are unit-stride rows of the output; one shorter vector from 4.
  const std::vector<NchwTile> rowTiles =
      rowsApply           ? rankedTiles(lanes, Mg, OW, reduction, ac.stride)
      : phased && OW >= 4 ? rankedTiles(lanes, Mg, OW, reduction, 1)
                          : std::vector<NchwTile>{};
  // A plane's rows may instead run as one "wide" row: the output positions over the padded
  // plane's width, f = oh * Wp + ow, so that tap (kh, kw) reads position f + kh*d*Wp + kw*d
  // and tiles run on across rows (the columns past OW are computed and dropped). Worth it
  // when the rows are narrow for the tiles (64 channels on 28-wide rows: a row is one vector
  // and one shorter one); it costs a second pass that finishes the wide rows into Y. Volumes
  // take whichever costs less; planes only when their rows are too narrow for vectors (the
  // hand-written kernel before them did the same), down to planes of two positions.
  const std::int64_t F = (OH - 1) * planes.W + OW; // the last row needs no dropped columns
  std::vector<NchwTile> wideTiles;
  if ((volume || !rowsApply) && (!strided || phased) && F >= 2)
    wideTiles = rankedTiles(lanes, Mg, F, reduction, 1);
  // Without dropped columns (the copy's rows as wide as the output's: 1x1 windows, and
  // strided ones through a phase plane; or a single output row) the wide rows are Y's own
  // layout: the tiles store into Y with the bias and epilogue, and there is no second pass.
  const bool direct = planes.W == OW || OH == 1;
  const double finishCost =
      direct ? 0.0 : 4.0 * double(M * OH * ((OW + lanes - 1) / lanes)) / double(G);
  if (rowTiles.empty() && wideTiles.empty())
    return Stmt();
  const bool wide = !wideTiles.empty() &&
                    (rowTiles.empty() ||
                     wideTiles.front().cost + finishCost < rowTiles.front().cost * double(OH));
  const std::vector<NchwTile>& tiles = wide ? wideTiles : rowTiles;
  const std::int64_t RW = wide ? F : OW; // a row's positions (the wide row: a plane's)
  const std::int64_t RH = wide ? 1 : OH; // rows a plane

  // --- the nest (a dim of extent 1 has no loop) ---
  const Expr n = axisVar(kb, "n", N), g = axisVar(kb, "g", G), m = axisVar(kb, "m", Mg),
             od = volume ? axisVar(kb, "od", OD) : loop::makeIndex(0),
             oh = wide ? loop::makeIndex(0) : axisVar(kb, "oh", OH),
             ow = kb.freshVar(wide ? "f" : "ow");
  const Expr c = axisVar(kb, "c", Cg), kd = volume ? axisVar(kb, "kd", KD) : loop::makeIndex(0),
             kh = axisVar(kb, "kh", KH), kw = axisVar(kb, "kw", KW);
  const Expr channel = G > 1 ? g * Mg + m : m, inChannel = G > 1 ? g * Cg + c : c;
  Expr plane = n * C + inChannel; // the input plane read (of a volume: its first)
  if (volume)
    plane = plane * planes.D + od * ad.stride + kd * ad.dilation;
  // Phase planes: the tap picks the phase and offsets the row and column within it.
  Expr rowTap = kh * ar.dilation, colTap = kw * ac.dilation;
  if (phased) {
    plane = (plane * planes.phaseRows +
             (planes.phaseRows > 1 ? rowTap % planes.sh : loop::makeIndex(0))) *
                planes.phaseCols +
            (planes.phaseCols > 1 ? colTap % planes.sw : loop::makeIndex(0));
    if (planes.sh > 1)
      rowTap = rowTap / planes.sh;
    if (planes.sw > 1)
      colTap = colTap / planes.sw;
  }
  Expr xv;
  if (wide && phased) {
    xv = src.loadFlat(plane * (planes.H * planes.W) + ow + (rowTap * planes.W + colTap));
  } else if (wide) {
    xv = src.loadFlat(plane * (planes.H * planes.W) + ow +
                      (kh * (ar.dilation * planes.W) + kw * ac.dilation));
  } else if (phased) {
    xv = src.loadFlat((plane * planes.H + (oh + rowTap)) * planes.W + (ow + colTap));
  } else {
    const Expr row = oh * ar.stride + kh * ar.dilation, col = ow * ac.stride + kw * ac.dilation;
    xv = src.loadFlat((plane * planes.H + row) * planes.W + col);
  }
  const Expr wv = volume ? w.load({channel, c, kd, kh, kw}) : w.load({channel, c, kh, kw});
  // The wide rows' sums go to a scratch, finished into Y by a second nest (or, direct, to
  // Y's elements in order).
  const bool finishing = wide && !direct;
  const TensorRef yw = finishing ? kb.scratch("ywide", y.dtype, {N * M * OD * F})
                       : wide    ? TensorRef{y.buffer, {y.numElements()}, y.dtype}
                                 : TensorRef{};
  const std::vector<Expr> idx = wide     ? std::vector<Expr>{((n * M + channel) * OD + od) * F + ow}
                                : volume ? std::vector<Expr>{n, channel, od, oh, ow}
                                         : std::vector<Expr>{n, channel, oh, ow};
  const TensorRef& acc = wide ? yw : y;
  const Stmt update = acc.store(idx, acc.load(idx) + xv * wv);
  const Stmt taps = loopOver(kh, KH, loopOver(kw, KW, update));
  std::vector<Stmt> element{acc.store(idx, constantOf(y.dtype, 0)),
                            loopOver(c, Cg, volume ? loopOver(kd, KD, taps) : taps)};
  if (!finishing) {
    Expr value = acc.load(idx);
    if (ops.bias)
      value = value + ops.bias->load({channel});
    // The epilogue sees Y's index: a wide row's position is row f / OW, column f % OW.
    const Expr row = wide ? ow / OW : oh, col = wide ? ow % OW : ow;
    const std::vector<Expr> at = volume ? std::vector<Expr>{n, channel, od, row, col}
                                        : std::vector<Expr>{n, channel, row, col};
    element.push_back(acc.store(idx, epilogue(value, wide ? at : idx)));
  }
  const Stmt rows = loopOver(oh, RH, forCount(ow, RW, loop::Block::make(element)));
  const Stmt nest =
      loopOver(n, N, loopOver(g, G, loopOver(m, Mg, volume ? loopOver(od, OD, rows) : rows)));

  // The finishing nest of wide rows: for n, channel, od, oh, ow: Y = epilogue(Yw + bias),
  // vectorized along the row, the rows one parallel loop.
  Stmt finish;
  std::vector<std::string> finishSteps;
  if (finishing) {
    const Expr fn = axisVar(kb, "n", N), fm = axisVar(kb, "m", M), fd = axisVar(kb, "od", OD),
               fh = axisVar(kb, "oh", OH), fw = kb.freshVar("ow");
    const std::vector<Expr> at =
        volume ? std::vector<Expr>{fn, fm, fd, fh, fw} : std::vector<Expr>{fn, fm, fh, fw};
    Expr value = yw.loadFlat(((fn * M + fm) * OD + fd) * F + fh * planes.W + fw);
    if (ops.bias)
      value = value + ops.bias->load({fm});
    finish = loopOver(
        fn, N,
        loopOver(fm, M,
                 loopOver(fd, OD,
                          loopOver(fh, OH, forCount(fw, OW, y.store(at, epilogue(value, at)))))));
    finishSteps = parallelTaskSteps(loopsOver({{fn, N}, {fm, M}, {fd, OD}, {fh, OH}}),
                                    N * M * OD * OH, N * M * OD * OH * OW);
    vectorizeRow(finishSteps, fw, OW, lanes);
  }

  // --- the trace ---
  const std::string mn = Mg > 1 ? loopName(m) : "", own = loopName(ow);
  // the reduction's outermost loop
  const std::string kn = loopName(Cg > 1 ? c : KD > 1 ? kd : KH > 1 ? kh : kw);
  const auto stepsOf = [&](const NchwTile& t) {
    std::vector<std::string> steps = planes.steps;
    std::vector<std::string> tasks = loopsOver({{n, N}, {od, OD}, {oh, RH}}), tile;
    if (!mn.empty() && t.R > 1 && t.R < Mg) {
      steps.push_back("split(" + mn + ", " + std::to_string(t.R) + ")");
      tile.push_back(mn + ".i");
    } else if (!mn.empty() && t.R == Mg) {
      tile.push_back(mn);
    }
    std::vector<std::string> after;
    if (G > 1)
      after.push_back(loopName(g));
    if (!mn.empty() && t.R < Mg)
      after.push_back(t.R > 1 ? mn + ".o" : mn);
    const std::int64_t TW = t.V * lanes;
    rowTileSteps(steps, tasks, after, tile.empty() ? "" : tile.front(), own, RW, t.V, lanes, kn);
    const std::int64_t taskCount = N * OD * RH * ((RW + TW - 1) / TW) * G * (Mg / t.R);
    for (std::string& step : parallelTaskSteps(tasks, taskCount, work))
      steps.push_back(std::move(step));
    steps.insert(steps.end(), finishSteps.begin(), finishSteps.end());
    return steps;
  };
  std::vector<std::vector<std::string>> traces;
  for (const NchwTile& t : tiles)
    traces.push_back(stepsOf(t));
  registerTraces(kb, traces, kVariants);
  const NchwTile& best = tiles.front();

  const std::int64_t TW = std::min(best.V * lanes, RW);
  kb.describe("register-tiled convolution (default trace): " +
              std::to_string(N * OD * RH * ((RW + TW - 1) / TW) * G * (Mg / best.R)) +
              " tasks, each " + std::to_string(best.R) + " output channel(s) x " +
              std::to_string(best.V) + " vector(s) of " +
              std::to_string(std::min<std::int64_t>(lanes, RW)) +
              (wide ? " positions of a plane's rows run together" : " positions of one row") +
              ", accumulated in registers over " + std::to_string(Cg) + " input channels x " +
              std::to_string(KD * KH * KW) + " taps" +
              (G > 1 ? ", in each of " + std::to_string(G) + " groups" : std::string()));
  if (finishing)
    kb.describe("a plane's rows run as one row over the padded width (" + std::to_string(planes.W) +
                " columns, " + std::to_string(OW) +
                " kept): a second pass adds the bias and the fused epilogue into Y");
  else if (wide)
    kb.describe("a plane's rows run as one row, stored into Y with the bias and the fused "
                "epilogue");
  if (RW % TW != 0)
    kb.describe("the last " + std::to_string(RW % TW) + " positions of each " +
                (wide ? "plane" : "row") + " run as smaller remainder tiles");
  kb.describe(phased ? "the input is first copied into zero-padded stride-phase planes, so "
                       "that every tap reads consecutive values"
              : copy ? "the input is first copied into zero-padded planes"
                     : "the input is read in place");
  Stmt body = finishing ? kb.allocate(yw, loop::Block::make(nest, finish), true) : nest;
  if (!copy)
    return body;
  return kb.allocate(src, loop::Block::make(planes.copy, body), true);
}

// Depthwise (one input and one output channel a group, as in MobileNet): a task per (batch,
// channel) plane. The nest, with the plane zero padded into a scratch of the task's own first
// (when there is padding; the copy is part of the task, so the plane stays in the cache of the
// core that reads it, where one copy of the whole input first was 1.2-1.8x slower):
//   for n, g: [P = padded plane (n, g)]; for oh, ow: Y = 0; for kh, kw:
//   Y += P(oh*s + kh*d, ow*s + kw*d) * W(g, 0, kh, kw); Y = epilogue(Y + bias(g))
// The trace vectorizes the copy's rows, unrolls the taps, splits oh and ow into tiles of Q
// rows x V vectors kept in registers across the taps (register_tile), remainder tiles where
// the width does not divide the row, and runs the planes as one parallel loop. A 1-D one is a 2-D
// one of one row.
Stmt tracedDepthwiseConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                         const std::vector<WindowAxis>& axes) {
  if (isOneRow(ops, axes))
    return asOneRow(kb, epilogue, ops, axes, tracedDepthwiseConv);
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const int lanes = kb.vectorBits() / 32;
  if (!planeRowsApply(x, axes, lanes, true) || y.rank() != 4 || w.rank() != 4 ||
      x.dtype != graph::DType::F32 || w.dtype != graph::DType::F32 || y.dtype != graph::DType::F32)
    return Stmt();
  const WindowAxis &ar = axes[0], &ac = axes[1];
  const std::int64_t N = x.shape[0], C = x.shape[1];
  const std::int64_t OH = ar.out, OW = ac.out, KH = ar.kernel, KW = ac.kernel;
  // (1x1 windows scale planes: scaledConv.)
  if (C < 2 || ops.group != C || y.shape[1] != C || w.shape[0] != C || w.shape[1] != 1 ||
      KH * KW < 2)
    return Stmt();
  if (reachesPastPadding(axes))
    return Stmt();
  const std::vector<PlaneTile> tiles = rankedPlaneTiles(lanes, OH, OW, KH * KW, ac.stride);
  if (tiles.empty())
    return Stmt();
  // Work in multiply-adds, not vectors of them as for the Conv above: a plane's copy and its
  // few taps per value make the kernel move more bytes a multiply-add, and two cores move
  // more of them (as the hand-written kernel had it).
  const std::int64_t work = N * C * OH * OW * KH * KW;

  // --- the nest (a dim of extent 1 has no loop) ---
  const Expr n = axisVar(kb, "n", N), g = axisVar(kb, "g", C);
  const Expr plane = n * C + g;
  const PaddedPlanes planes = windowRowPlanes(kb, x, axes, lanes, false, Expr(), plane);
  const TensorRef& src = planes.planes;
  const bool copy = planes.copy.defined();
  const Expr oh = axisVar(kb, "oh", OH), ow = kb.freshVar("ow");
  const Expr kh = axisVar(kb, "kh", KH), kw = axisVar(kb, "kw", KW);
  const std::vector<Expr> idx{n, g, oh, ow};
  const Expr row = oh * ar.stride + kh * ar.dilation, col = ow * ac.stride + kw * ac.dilation;
  const Expr at = planeAt(planes, plane, row, col);
  const Expr zero = loop::makeIndex(0);
  const Stmt update = y.store(idx, y.load(idx) + src.loadFlat(at) * w.load({g, zero, kh, kw}));
  Expr value = y.load(idx);
  if (ops.bias)
    value = value + ops.bias->load({g});
  const Stmt element = loop::Block::make({y.store(idx, constantOf(y.dtype, 0)),
                                          loopOver(kh, KH, loopOver(kw, KW, update)),
                                          y.store(idx, epilogue(value, idx))});
  const Stmt nest = loopOver(
      n, N, loopOver(g, C, planeTask(kb, planes, loopOver(oh, OH, forCount(ow, OW, element)))));

  // --- the trace ---
  const PlaneTile best = registerPlaneTraces(kb, tiles, planes.steps,
                                             planeLoops(n, N, g, C, oh, OH, ow, kh, KH, kw, KW),
                                             N * C, OH, OW, lanes, work);

  const std::int64_t TW = std::min(best.V * lanes, OW);
  kb.describe("depthwise convolution (default trace): " + std::to_string(N * C) +
              (parallelFor(work) == loop::ForKind::Parallel ? " parallel" : "") +
              " tasks, one per channel plane; tiles of " + std::to_string(best.Q) + " row(s) x " +
              std::to_string(best.V) + " vector(s) of " + std::to_string(TW / best.V) +
              " positions, accumulated in registers over the " + std::to_string(KH * KW) + " taps");
  if (OW % TW != 0)
    kb.describe("the last " + std::to_string(OW % TW) +
                " positions of each row run as smaller remainder tiles");
  kb.describe(copy ? "each task first copies its plane into a zero-padded scratch of its own"
                   : "the input is read in place");
  return nest;
}

Stmt scaledConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                const std::vector<WindowAxis>& axes) {
  if (isOneRow(ops, axes))
    return asOneRow(kb, epilogue, ops, axes, scaledConv);
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const int lanes = kb.vectorBits() / 32;
  if (axes.size() != 2 || x.rank() != 4 || y.rank() != 4 || w.rank() != 4 ||
      x.dtype != graph::DType::F32 || w.dtype != graph::DType::F32 ||
      y.dtype != graph::DType::F32 || !planeRowsApply(x, axes, lanes, true))
    return Stmt();
  const std::int64_t C = x.shape[1], M = y.shape[1];
  if (C < 1 || M < 1 || ops.group != C || w.shape[1] != 1 || M % C != 0 || axes[0].kernel != 1 ||
      axes[1].kernel != 1 || reachesPastPadding(axes))
    return Stmt();
  return scaledPlanes(kb, epilogue, ops, axes);
}

} // namespace lathe::lowering
