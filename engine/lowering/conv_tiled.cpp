// Register-tiled Conv, hand-written: the default schedule, when the target's vector width is
// known, for the Convs the traced NCHW tile (conv_nchw_traced.cpp) does not take: planes of a
// single output position.
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
//
// When the wide grid is the output plane itself (1x1 kernels) the tiles store straight into
// Y, the last tile of a plane shifted back to end at the plane's end (it recomputes a few
// positions rather than running past them), with bias and the fused epilogue applied to the
// registers before the store.
#include "engine/lowering/conv_internal.h"
#include "engine/lowering/vector_epilogue.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

struct TileShape {
  std::int64_t R, V;     // output channels, vectors of positions
  std::int64_t cost = 0; // the cost model's estimate for the whole convolution
};

// The tile for Mg output channels of a group over F wide positions, by a small cost model:
// per input channel and tap a tile of R channels x V vectors issues R*V multiply-adds and
// V + R loads (two of each per cycle), so a task costs max(R*V, R + V); positions past F
// in the last tile are wasted. Tiles fit the register file: R*V accumulators plus V inputs
// and a broadcast in 32 vector registers with AVX-512, 16 with AVX2. `maxWidth` bounds the
// positions of a tile (0: no bound). With `rowWidth`, tiles do not cross rows of that many
// positions (F / rowWidth rows), so each row rounds up on its own. The cost covers the
// whole reduction (`reduction` input channels x taps); each tile also pays a fixed part for
// clearing, finishing and storing its registers, which matters when the reduction is short
// (a stem Conv over 3 channels).
std::optional<TileShape> tileFor(int lanes, std::int64_t Mg, std::int64_t F, std::int64_t maxWidth,
                                 std::int64_t reduction, std::int64_t rowWidth = 0) {
  if (Mg == 1) { // depthwise: one channel, more positions
    const std::int64_t V = lanes >= 16 ? 6 : 4;
    return TileShape{1,
                     maxWidth > 0 ? std::max<std::int64_t>(1, std::min(V, maxWidth / lanes)) : V};
  }
  const std::int64_t registers = lanes >= 16 ? 32 : 16;
  std::optional<TileShape> best;
  std::int64_t bestCost = 0;
  for (std::int64_t R : {8, 4, 2}) {
    if (Mg % R != 0)
      continue;
    for (std::int64_t V = 1; V <= 4; ++V) {
      if (R * V + V + 2 > registers || (maxWidth > 0 && V * lanes > maxWidth))
        continue;
      const std::int64_t TW = V * lanes;
      const std::int64_t tiles =
          rowWidth > 0 ? F / rowWidth * ((rowWidth + TW - 1) / TW) : (F + TW - 1) / TW;
      const std::int64_t cost =
          (Mg / R) * tiles * (std::max(R * V, R + V) * reduction + 4 * R * V + 16);
      if (!best || cost < bestCost) {
        best = TileShape{R, V, cost};
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
  // A dense plane of at least one vector takes tiles that fit in it, the last one shifted.
  const bool dense = F == product(out);
  const bool shifted = dense && F >= lanes;
  // Bias and the epilogue on the registers, when the epilogue has a vector form.
  const VectorEpilogue finish(kb, epilogue, y.dtype, y.rank(), lanes);
  // Row tiles: when the wide grid is wider than the output (padding, strides) but an output
  // row holds a whole vector, tiles run along output rows, the last one of a row shifted
  // back, and store into Y with bias and the epilogue applied: no second pass.
  // Chosen when rounding each row up to whole tiles costs no more than the wide grid does
  // with its padding columns plus the second pass (about 8 units per output vector in the
  // cost model's terms: a load, bias, epilogue and store that go to memory).
  const std::int64_t outW = out[S - 1];
  const std::int64_t reduction = Cg * product(kernel);
  const std::optional<TileShape> flatTile = tileFor(lanes, Mg, F, shifted ? F : 0, reduction);
  const std::optional<TileShape> rowTile =
      !dense && subsample.empty() && outW >= lanes && finish.defined()
          ? tileFor(lanes, Mg, product(out), outW, reduction, outW)
          : std::nullopt;
  const std::int64_t secondPass = Mg * product(out) / lanes * 8;
  const bool rowTiles = rowTile && (!flatTile || rowTile->cost <= flatTile->cost + secondPass);
  const std::int64_t rows = product(out) / outW;
  const std::optional<TileShape> tile = rowTiles ? rowTile : flatTile;
  if (!tile)
    return Stmt();
  const std::int64_t R = tile->R, V = tile->V, TW = V * lanes;
  const std::int64_t CT = (outW + TW - 1) / TW; // tiles per output row, in row mode
  const std::int64_t FT = rowTiles ? rows * CT : (F + TW - 1) / TW;
  const std::int64_t Fround = shifted || rowTiles ? F : FT * TW;
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
  const bool direct = (dense && Fround == F) || rowTiles;
  const std::int64_t outRow = direct ? F : Fround;
  const TensorRef result = direct ? TensorRef{y.buffer, {N * M * product(out)}, y.dtype}
                                  : kb.scratch("ywide", y.dtype, {N * M * Fround});

  // --- the tiles ---
  const std::int64_t MB = M / R;
  const Expr t = kb.freshVar("t");
  const Expr n = t / (FT * MB), m0 = (t % MB) * R, fBlock = (t / MB) % FT;
  Expr f0;                 // the tile's first position in the wide grid
  std::vector<Expr> rowAt; // row mode: the output row's coordinates, then its first column
  if (rowTiles) {
    const Expr rowIndex = fBlock / CT, column = fBlock % CT;
    const Expr ow0 =
        outW % TW == 0 ? column * TW : loop::min(column * TW, loop::makeIndex(outW - TW));
    f0 = ow0;
    std::int64_t inner = 1;
    for (std::size_t a = S - 1; a-- > 0;) {
      const Expr o = (rowIndex / inner) % out[a];
      rowAt.insert(rowAt.begin(), o);
      f0 = f0 + o * wide[a];
      inner *= out[a];
    }
    rowAt.push_back(ow0);
  } else {
    f0 = shifted && F % TW != 0 ? loop::min(fBlock * TW, loop::makeIndex(F - TW)) : fBlock * TW;
  }
  const Expr inChannel0 = ops.group == 1 ? loop::makeIndex(0) : (m0 / Mg) * Cg;
  const loop::Type vt = loop::f32().withLanes(lanes);
  const RegisterTile acc(kb, y.dtype, R, V, lanes);
  std::vector<Stmt> body = acc.clear(y.dtype);
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
        Stmt s = acc.accumulate(ws, xs);
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
  // Bias and the epilogue on the registers: the epilogue sees position f of the plane as
  // index (n, m, 0, .., f), which needs its operands whole or constant over the plane.
  const bool inRegisters =
      rowTiles || (direct && finish.defined() && kb.epilogueFlattens(y.shape, 2));
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t v = 0; v < V; ++v) {
      Expr value = acc.load(r, v);
      std::vector<Expr> idx{n, m0 + r};
      if (rowTiles) {
        idx.insert(idx.end(), rowAt.begin(), rowAt.end());
        idx.back() = idx.back() + v * lanes;
      } else {
        while (idx.size() + 1 < y.rank())
          idx.push_back(loop::makeIndex(0));
        idx.push_back(f0 + v * lanes);
      }
      if (inRegisters) {
        if (ops.bias)
          value = value + loop::Broadcast::make(ops.bias->load({m0 + r}), lanes);
        value = finish(value, idx);
      }
      const Expr at =
          rowTiles ? flatIndex(y.shape, idx) : (n * M + m0 + r) * outRow + f0 + v * lanes;
      body.push_back(loop::Store::make(result.buffer, ramp(at, lanes), value));
    }
  Stmt main = taskLoop(kb, t, N * FT * MB, kb.allocate(acc.scratch(), loop::Block::make(body)),
                       N * M * Cg * KK * Fround);
  kb.describe("register-tiled convolution: " + std::to_string(N * FT * MB) +
              " parallel tasks, each " + std::to_string(R) + " output channels x " +
              std::to_string(V) + " vector(s) of " + std::to_string(lanes) +
              " positions, accumulated in registers over " + std::to_string(Cg) +
              " input channels x " + std::to_string(KK) + " taps");
  kb.describe(copy ? "the input is first copied into zero-padded" +
                         std::string(P > 1 ? ", stride-phase" : "") +
                         " planes, so every tap reads whole vectors"
                   : "the input is read in place");
  kb.describe(inRegisters ? "bias and the fused epilogue are applied in registers before the "
                            "single store"
              : (!direct || ops.bias || hasEpilogue(node))
                  ? "bias and the fused epilogue run as a second pass over the output"
                  : "results are stored straight into the output");

  // --- bias and the fused epilogue, from the wide grid into Y ---
  if (!inRegisters && (!direct || ops.bias || hasEpilogue(node))) {
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
    main = loop::Block::make(main, taskLoop(kb, pm, N * M, finish, N * M * product(out)));
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
  // Phase by phase, the positions that hold input elements form a box known at compile
  // time: loops without index division, the innermost axis copied a vector at a time (a
  // strided load when strided or subsampled).
  std::vector<Stmt> copies;
  std::vector<std::int64_t> phase(S, 0);
  do {
    std::vector<std::pair<std::int64_t, std::int64_t>> spans(S);
    bool empty = false;
    std::int64_t phaseBase = 0;
    for (std::size_t a = 0; a < S; ++a) {
      spans[a] = validSpan(plane[a], stride[a], phase[a] - padBegin[a], inExtents[a]);
      empty = empty || spans[a].second <= spans[a].first;
      phaseBase += phase[a] * phaseStride[a];
    }
    if (!empty) {
      std::vector<Expr> qs;
      for (std::size_t a = 0; a < S; ++a)
        qs.push_back(kb.freshVar("i"));
      // Element q of the box: destination, and the input position it copies along axis a.
      auto source = [&](std::size_t a, const Expr& qa) {
        const std::int64_t sub = subsample.empty() ? 1 : subsample[a];
        return (qa * stride[a] + (phase[a] - padBegin[a])) * sub;
      };
      auto copyAt = [&](const Expr& last) -> std::pair<Expr, std::vector<Expr>> {
        Expr at = row * rowSize + phaseBase * phasePlane;
        std::vector<Expr> read{row};
        for (std::size_t a = 0; a < S; ++a) {
          const Expr qa = a + 1 == S ? last : qs[a];
          at = at + qa * wide[a];
          read.push_back(source(a, qa));
        }
        return {at, read};
      };
      const std::int64_t q0 = spans[S - 1].first, count = spans[S - 1].second - q0;
      const std::int64_t step = stride[S - 1] * (subsample.empty() ? 1 : subsample[S - 1]);
      Stmt inner;
      if (count >= lanes) {
        std::vector<Stmt> vectors;
        for (std::int64_t b = 0; b < count; b += lanes) {
          const auto [at, read] = copyAt(loop::makeIndex(q0 + std::min(b, count - lanes)));
          vectors.push_back(loop::Store::make(
              src.buffer, ramp(at, lanes),
              loop::Load::make(x.buffer, loop::Ramp::make(flatIndex(planes, read),
                                                          loop::makeIndex(step), lanes))));
        }
        inner = loop::Block::make(vectors);
      } else {
        const auto [at, read] = copyAt(qs[S - 1]);
        inner = forRange(qs[S - 1], loop::makeIndex(q0), loop::makeIndex(count),
                         src.storeFlat(at, xPlanes.load(read)));
      }
      for (std::size_t a = S - 1; a-- > 0;)
        inner = forRange(qs[a], loop::makeIndex(spans[a].first),
                         loop::makeIndex(spans[a].second - spans[a].first), inner);
      copies.push_back(inner);
    }
    std::size_t a = S;
    while (a-- > 0 && ++phase[a] == stride[a])
      phase[a] = 0;
    if (a == static_cast<std::size_t>(-1))
      break;
  } while (true);
  const Stmt copyIn = loop::Block::make(copies);
  const bool gaps = anyPad || P > 1;
  const Stmt clear =
      gaps ? forCount(q, rowSize, src.storeFlat(row * rowSize + q, constantOf(x.dtype, 0)))
           : loop::noOp();
  Stmt fill = taskLoop(kb, row, N * C, loop::Block::make(clear, copyIn), N * C * rowSize);
  if (tail > 0)
    fill = loop::Block::make(
        fill, forCount(q2, tail, src.storeFlat(N * C * rowSize + q2, constantOf(x.dtype, 0))));
  return kb.allocate(src, loop::Block::make(fill, main), true);
}

} // namespace lathe::lowering
