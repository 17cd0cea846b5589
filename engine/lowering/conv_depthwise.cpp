// Depthwise 2-D Conv (one input and one output channel per group, as in MobileNet): one
// parallel task per (batch, channel) plane.
//
// The task copies its input plane into a small zero-padded scratch, split into the stride
// phases (as tiledConv does), so that tap (kh, kw) of output row oh reads a contiguous run of
// the scratch: phase (kh % sh, kw % sw), row oh + kh/sh, columns ow + kw/sw. Each output row
// is then a few vectors along W (the last one shifted back to end at the row's end; it
// recomputes a few outputs rather than running past them), every vector summing its taps in
// registers with the weights held in broadcast registers for the whole plane, and bias and
// the fused epilogue applied to the vector before its one store.
#include "engine/lowering/conv_internal.h"
#include "engine/lowering/vector_epilogue.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

Expr ramp(const Expr& base, int lanes) {
  return loop::Ramp::make(base, loop::makeIndex(1), lanes);
}

} // namespace

Stmt depthwiseConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                   const std::vector<WindowAxis>& axes) {
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const int maxLanes = kb.vectorBits() / 32;
  const std::int64_t N = x.shape[0], C = x.shape[1];
  if (axes.size() != 2 || x.dtype != graph::DType::F32 || y.dtype != graph::DType::F32 ||
      maxLanes < 4 || ops.group != C || w.shape[0] != C || w.shape[1] != 1)
    return Stmt();
  const WindowAxis &ah = axes[0], &aw = axes[1];
  const std::int64_t OH = ah.out, OW = aw.out;
  int lanes = maxLanes;
  while (lanes > 4 && lanes > OW)
    lanes /= 2;
  if (lanes > OW)
    return Stmt();

  // The phase planes: padded position o*s + k*d is position o + (k*d)/s of phase (k*d)%s.
  std::int64_t plane[2];
  for (int a = 0; a < 2; ++a) {
    const WindowAxis& ax = axes[a];
    const std::int64_t padded = ax.in + ax.padBegin + ax.padEnd;
    if ((ax.out - 1) * ax.stride + (ax.kernel - 1) * ax.dilation >= padded)
      return Stmt();
    plane[a] = std::max((padded + ax.stride - 1) / ax.stride,
                        ax.out + (ax.kernel - 1) * ax.dilation / ax.stride);
  }
  const std::int64_t PH = plane[0], PW = plane[1], phaseSize = PH * PW;
  const std::int64_t planeSize = ah.stride * aw.stride * phaseSize;
  const TensorRef xp = kb.scratch("xplane", x.dtype, {planeSize});
  const Expr task = kb.freshVar("nc");
  const Expr n = task / C, c = task % C;
  auto at = [&](std::int64_t py, std::int64_t px, const Expr& row, const Expr& col) {
    return (py * aw.stride + px) * phaseSize + row * PW + col;
  };

  // --- the padded, phase-split copy of the plane ---
  // Rows and columns outside the input are cleared, the others copied a vector at a time
  // (a strided load per phase when strided).
  std::vector<Stmt> body;
  for (std::int64_t py = 0; py < ah.stride; ++py)
    for (std::int64_t px = 0; px < aw.stride; ++px) {
      const auto [r0, r1] = validSpan(PH, ah.stride, py - ah.padBegin, ah.in);
      const auto [q0, q1] = validSpan(PW, aw.stride, px - aw.padBegin, aw.in);
      const std::int64_t base = (py * aw.stride + px) * phaseSize;
      auto clear = [&](std::int64_t from, std::int64_t count) {
        if (count <= 0)
          return;
        const Expr z = kb.freshVar("z");
        body.push_back(forCount(z, count, xp.storeFlat(base + from + z, constantOf(x.dtype, 0))));
      };
      if (r1 <= r0 || q1 <= q0) {
        clear(0, phaseSize);
        continue;
      }
      clear(0, r0 * PW);
      clear(r1 * PW, (PH - r1) * PW);
      const Expr r = kb.freshVar("r");
      const Expr ih = r * ah.stride + (py - ah.padBegin);
      std::vector<Stmt> perRow;
      auto clearColumns = [&](std::int64_t from, std::int64_t count) {
        if (count <= 0)
          return;
        const Expr z = kb.freshVar("z");
        perRow.push_back(
            forCount(z, count, xp.storeFlat(at(py, px, r, from + z), constantOf(x.dtype, 0))));
      };
      clearColumns(0, q0);
      clearColumns(q1, PW - q1);
      const std::int64_t columns = q1 - q0;
      if (columns >= lanes) {
        for (std::int64_t b = 0; b < columns; b += lanes) {
          const std::int64_t q = q0 + std::min(b, columns - lanes);
          const Expr from =
              flatIndex(x.shape, {n, c, ih, loop::makeIndex(q * aw.stride + px - aw.padBegin)});
          perRow.push_back(loop::Store::make(
              xp.buffer, ramp(at(py, px, r, loop::makeIndex(q)), lanes),
              loop::Load::make(x.buffer,
                               loop::Ramp::make(from, loop::makeIndex(aw.stride), lanes))));
        }
      } else {
        const Expr q = kb.freshVar("q");
        perRow.push_back(
            forRange(q, loop::makeIndex(q0), loop::makeIndex(columns),
                     xp.storeFlat(at(py, px, r, q),
                                  x.load({n, c, ih, q * aw.stride + (px - aw.padBegin)}))));
      }
      body.push_back(
          forRange(r, loop::makeIndex(r0), loop::makeIndex(r1 - r0), loop::Block::make(perRow)));
    }

  // --- the output rows ---
  const loop::Type vt = loop::f32(lanes);
  std::vector<Expr> weights;
  for (std::int64_t kh = 0; kh < ah.kernel; ++kh)
    for (std::int64_t kw = 0; kw < aw.kernel; ++kw)
      weights.push_back(freshScalar(kb, "wv", vt));
  const VectorEpilogue finish(kb, epilogue, y.dtype, y.rank(), lanes);
  const Expr oh = kb.freshVar("oh");
  std::vector<Stmt> row;
  for (std::int64_t ow0 = 0; ow0 < OW; ow0 += lanes) {
    const std::int64_t col = std::min(ow0, OW - lanes);
    Expr sum;
    for (std::int64_t kh = 0; kh < ah.kernel; ++kh)
      for (std::int64_t kw = 0; kw < aw.kernel; ++kw) {
        const std::int64_t reachH = kh * ah.dilation, reachW = kw * aw.dilation;
        const Expr in = loop::Load::make(
            xp.buffer, ramp(at(reachH % ah.stride, reachW % aw.stride, oh + reachH / ah.stride,
                               loop::makeIndex(col + reachW / aw.stride)),
                            lanes));
        const Expr term = weights[kh * aw.kernel + kw] * in;
        sum = sum.defined() ? sum + term : term;
      }
    if (ops.bias)
      sum = sum + loop::Broadcast::make(ops.bias->load({c}), lanes);
    const std::vector<Expr> idx{n, c, oh, loop::makeIndex(col)};
    const Expr flat = flatIndex(y.shape, idx);
    if (finish.defined()) {
      row.push_back(loop::Store::make(y.buffer, ramp(flat, lanes), finish(sum, idx)));
      continue;
    }
    row.push_back(loop::Store::make(y.buffer, ramp(flat, lanes), sum));
  }
  if (!finish.defined()) { // a scalar pass over the row, in cache
    const Expr e = kb.freshVar("e");
    const std::vector<Expr> idx{n, c, oh, e};
    row.push_back(forCount(e, OW, y.store(idx, epilogue(y.load(idx), idx))));
  }
  Stmt rows = forCount(oh, OH, loop::Block::make(row));
  for (std::size_t k = weights.size(); k-- > 0;) {
    const std::int64_t kh = static_cast<std::int64_t>(k) / aw.kernel,
                       kw = static_cast<std::int64_t>(k) % aw.kernel;
    rows = loop::LetStmt::make(
        weights[k],
        loop::Broadcast::make(
            w.load({c, loop::makeIndex(0), loop::makeIndex(kh), loop::makeIndex(kw)}), lanes),
        rows);
  }
  body.push_back(rows);
  kb.describe("depthwise convolution: " + std::to_string(N * C) +
              " parallel tasks, one per channel; output rows as vectors of " +
              std::to_string(lanes) + " along W, the " + std::to_string(ah.kernel * aw.kernel) +
              " taps unrolled with their weights in registers");
  kb.describe("each channel's input is copied into a small padded" +
              std::string(ah.stride * aw.stride > 1 ? ", stride-phase" : "") + " plane first");
  kb.describe(finish.defined() ? "bias and the fused epilogue are applied in registers"
                               : "the fused epilogue runs as a scalar pass over each row");
  const bool onHeap = planeSize * 4 > (128 << 10);
  const std::int64_t work = N * C * OH * OW * ah.kernel * aw.kernel;
  return forCount(task, N * C, kb.allocate(xp, loop::Block::make(body), onHeap), parallelFor(work));
}

} // namespace lathe::lowering
