// Register-tiled Conv: the default schedule for Conv without groups when the target's
// vector width is known.
//
// As in wideConv (conv_pool.cpp) the input is seen as a "wide" grid: zero padded when there
// is padding, so that tap k of output position f reads input position f + offset(k) of the
// flattened plane. A task computes a tile of R output channels x V vectors of positions
// and keeps it in registers (a small stack buffer with constant indices, which LLVM
// promotes) across the whole reduction over input channels and taps: per tap it loads V
// input vectors and R broadcast weights for R*V fused multiply-adds, instead of loading and
// storing the accumulators for every multiply-add. Tiles past the end of the plane compute
// positions nobody reads; the input copy has room for what they load. With strides the
// copy splits each plane into its stride phases, so that every tap still reads a
// contiguous run of positions.
//
// Tasks are numbered so that consecutive ones share the same positions with other output
// channels: a thread's chunk reuses the input tile from cache while the weights stream.
#include "engine/lowering/conv_internal.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

struct TileShape {
  std::int64_t R, V; // output channels, vectors of positions
};

// The tile for Mg output channels of a group over F wide positions, by a small cost model:
// per input channel and tap a tile of R channels x V vectors issues R*V multiply-adds and
// V + R loads (two of each per cycle), so a task costs max(R*V, R + V); positions past F
// in the last tile are wasted. Tiles fit the register file: R*V accumulators plus V inputs
// and a broadcast in 32 vector registers with AVX-512, 16 with AVX2.
std::optional<TileShape> tileFor(int lanes, std::int64_t Mg, std::int64_t F) {
  if (Mg == 1) // depthwise: one channel, more positions
    return TileShape{1, lanes >= 16 ? 6 : 4};
  const std::int64_t registers = lanes >= 16 ? 32 : 16;
  std::optional<TileShape> best;
  std::int64_t bestCost = 0;
  for (std::int64_t R : {8, 4, 2}) {
    if (Mg % R != 0)
      continue;
    for (std::int64_t V = 1; V <= 4; ++V) {
      if (R * V + V + 2 > registers)
        continue;
      const std::int64_t tiles = (F + V * lanes - 1) / (V * lanes);
      const std::int64_t cost = (Mg / R) * tiles * std::max(R * V, R + V);
      if (!best || cost < bestCost) {
        best = TileShape{R, V};
        bestCost = cost;
      }
    }
  }
  return best;
}

Expr ramp(const Expr& base, int lanes) {
  return loop::Ramp::make(base, loop::makeIndex(1), lanes);
}

} // namespace

Stmt tiledConv(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue,
               const ConvOperands& ops, const std::vector<WindowAxis>& axes,
               const std::vector<std::int64_t>& subsample) {
  const int lanes = kb.vectorBits() / 32;
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  if (y.dtype != graph::DType::F32 || x.dtype != graph::DType::F32 || lanes < 4)
    return Stmt();
  // With groups a tile's R output channels come from one group (Mg channels reading Cg
  // input channels); depthwise Conv (Mg = Cg = 1) tiles one channel by more positions.
  const std::int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0], Cg = w.shape[1];
  const std::int64_t Mg = M / ops.group;

  // Strided Conv reads each tap from one phase of the input: padded position o*s + k*d is
  // position o + (k*d)/s of phase (k*d)%s, so every phase plane is read with unit stride.
  const std::size_t S = axes.size();
  std::vector<std::int64_t> padded(S), plane(S), wide(S, 1), stride(S), kernel(S), out(S),
      inExtents(S), padBegin(S), phaseStride(S, 1);
  bool anyPad = false;
  std::int64_t P = 1; // phases
  for (std::size_t a = 0; a < S; ++a) {
    const WindowAxis& ax = axes[a];
    padded[a] = ax.in + ax.padBegin + ax.padEnd;
    anyPad = anyPad || padded[a] != ax.in;
    stride[a] = ax.stride;
    kernel[a] = ax.kernel;
    out[a] = ax.out;
    inExtents[a] = ax.in;
    padBegin[a] = ax.padBegin;
    if ((ax.out - 1) * ax.stride + (ax.kernel - 1) * ax.dilation >= padded[a])
      return Stmt();
    const std::int64_t qmax = (ax.kernel - 1) * ax.dilation / ax.stride;
    plane[a] = std::max((padded[a] + ax.stride - 1) / ax.stride, ax.out + qmax);
    P *= ax.stride;
  }
  for (std::size_t a = S - 1; a-- > 0;) {
    wide[a] = wide[a + 1] * plane[a + 1];
    phaseStride[a] = phaseStride[a + 1] * stride[a + 1];
  }
  std::int64_t F = 1, maxOffset = 0; // wide positions up to the last real output
  for (std::size_t a = 0; a < S; ++a) {
    F += (axes[a].out - 1) * wide[a];
    maxOffset += (axes[a].kernel - 1) * axes[a].dilation / axes[a].stride * wide[a];
  }
  const std::optional<TileShape> tile = tileFor(lanes, Mg, F);
  if (!tile)
    return Stmt();
  const std::int64_t R = tile->R, V = tile->V, TW = V * lanes;
  const std::int64_t FT = (F + TW - 1) / TW, Fround = FT * TW;
  const std::int64_t phasePlane = product(plane), KK = product(kernel);
  auto wideIndex = [&](const std::vector<Expr>& pos, const std::vector<std::int64_t>& shift) {
    Expr flat = loop::makeIndex(0);
    for (std::size_t a = 0; a < S; ++a)
      flat = flat + (pos[a] + shift[a]) * wide[a];
    return flat;
  };

  // The input as tiles read it: copied when padded, strided, subsampled, or when the last
  // tile would read past the end of a plane; the copy's zeroed tail covers the overrun.
  const bool copy = anyPad || P > 1 || !subsample.empty() || Fround + maxOffset > phasePlane;
  const std::int64_t tail = std::max<std::int64_t>(0, Fround + maxOffset - phasePlane);
  const std::int64_t rowSize = P * phasePlane; // one input channel: all its phases
  const TensorRef src = copy ? kb.scratch("xpad", x.dtype, {N * C * rowSize + tail})
                             : TensorRef{x.buffer, {N * C * rowSize}, x.dtype};
  // Results: straight into Y when its planes are the wide grid and whole tiles fit.
  const bool dense = F == product(out);
  const bool direct = dense && Fround == F;
  const std::int64_t outRow = direct ? F : Fround;
  const TensorRef result = direct ? TensorRef{y.buffer, {N * M * F}, y.dtype}
                                  : kb.scratch("ywide", y.dtype, {N * M * Fround});

  // --- the tiles ---
  const std::int64_t MB = M / R;
  const Expr t = kb.freshVar("t");
  const Expr n = t / (FT * MB), f0 = ((t / MB) % FT) * TW, m0 = (t % MB) * R;
  const Expr inChannel0 = ops.group == 1 ? loop::makeIndex(0) : (m0 / Mg) * Cg;
  const loop::Type vt = loop::f32().withLanes(lanes);
  const TensorRef acc = kb.scratch("tile", y.dtype, {R * V * lanes});
  auto accAt = [&](std::int64_t r, std::int64_t v) {
    return ramp(loop::makeIndex((r * V + v) * lanes), lanes);
  };
  std::vector<Stmt> body;
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t v = 0; v < V; ++v)
      body.push_back(loop::Store::make(acc.buffer, accAt(r, v),
                                       loop::Broadcast::make(constantOf(y.dtype, 0), lanes)));
  const Expr c = kb.freshVar("c");
  const Stmt taps = nestedLoops(
      kb, kernel,
      [&](const std::vector<Expr>& tap) {
        Expr offset = loop::makeIndex(0), phase = loop::makeIndex(0);
        for (std::size_t a = 0; a < S; ++a) {
          const Expr reach = tap[a] * axes[a].dilation;
          offset = offset + (stride[a] == 1 ? reach : reach / stride[a]) * wide[a];
          if (stride[a] > 1)
            phase = phase + (reach % stride[a]) * phaseStride[a];
        }
        offset = offset + phase * phasePlane;
        std::vector<Expr> xs, ws;
        for (std::int64_t v = 0; v < V; ++v)
          xs.push_back(freshScalar(kb, "xv", vt));
        for (std::int64_t r = 0; r < R; ++r)
          ws.push_back(freshScalar(kb, "wv", vt));
        std::vector<Stmt> updates;
        for (std::int64_t r = 0; r < R; ++r)
          for (std::int64_t v = 0; v < V; ++v)
            updates.push_back(
                loop::Store::make(acc.buffer, accAt(r, v),
                                  loop::Load::make(acc.buffer, accAt(r, v)) + ws[r] * xs[v]));
        Stmt s = loop::Block::make(updates);
        for (std::int64_t r = R; r-- > 0;)
          s = loop::LetStmt::make(
              ws[r], loop::Broadcast::make(w.load(concat({m0 + r, c}, tap)), lanes), s);
        for (std::int64_t v = V; v-- > 0;)
          s = loop::LetStmt::make(
              xs[v],
              loop::Load::make(
                  src.buffer,
                  ramp((n * C + inChannel0 + c) * rowSize + f0 + v * lanes + offset, lanes)),
              s);
        return s;
      },
      "k");
  body.push_back(forCount(c, Cg, taps));
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t v = 0; v < V; ++v)
      body.push_back(loop::Store::make(result.buffer,
                                       ramp((n * M + m0 + r) * outRow + f0 + v * lanes, lanes),
                                       loop::Load::make(acc.buffer, accAt(r, v))));
  Stmt main = forCount(t, N * FT * MB, kb.allocate(acc, loop::Block::make(body)),
                       parallelFor(N * M * Cg * KK * Fround));

  // --- bias and the fused epilogue, from the wide grid into Y ---
  if (!direct || ops.bias || hasEpilogue(node)) {
    const Expr pm = kb.freshVar("pm");
    const Stmt finish = nestedLoops(
        kb, out,
        [&](const std::vector<Expr>& o) {
          const std::vector<Expr> idx = concat({pm / M, pm % M}, o);
          Expr v = result.loadFlat(pm * outRow + wideIndex(o, std::vector<std::int64_t>(S, 0)));
          if (ops.bias)
            v = v + ops.bias->load({pm % M});
          return y.store(idx, epilogue(v, idx));
        },
        "e");
    main = loop::Block::make(main, forCount(pm, N * M, finish, parallelFor(N * M * product(out))));
  }
  if (!direct)
    main = kb.allocate(result, main, true);
  if (!copy)
    return main;

  // --- the zero-padded (or subsampled) copy of the input ---
  const Expr row = kb.freshVar("nc"), q = kb.freshVar("q"), q2 = kb.freshVar("q");
  std::vector<std::int64_t> planes = dropFront(x.shape, 2);
  planes.insert(planes.begin(), N * C);
  const TensorRef xPlanes{x.buffer, planes, x.dtype};
  const Stmt copyIn = nestedLoops(
      kb, inExtents,
      [&](const std::vector<Expr>& i) {
        std::vector<Expr> read{row};
        Expr at = row * rowSize;
        for (std::size_t a = 0; a < S; ++a) {
          read.push_back(subsample.empty() ? i[a] : i[a] * subsample[a]);
          const Expr pos = i[a] + padBegin[a];
          if (stride[a] == 1)
            at = at + pos * wide[a];
          else
            at = at + (pos % stride[a]) * (phaseStride[a] * phasePlane) + pos / stride[a] * wide[a];
        }
        return src.storeFlat(at, xPlanes.load(read));
      },
      "i");
  const bool gaps = anyPad || P > 1;
  const Stmt clear =
      gaps ? forCount(q, rowSize, src.storeFlat(row * rowSize + q, constantOf(x.dtype, 0)))
           : loop::noOp();
  Stmt fill = forCount(row, N * C, loop::Block::make(clear, copyIn), parallelFor(N * C * rowSize));
  if (tail > 0)
    fill = loop::Block::make(
        fill, forCount(q2, tail, src.storeFlat(N * C * rowSize + q2, constantOf(x.dtype, 0))));
  return kb.allocate(src, loop::Block::make(fill, main), true);
}

} // namespace lathe::lowering
