// Stride-phase planes for strided windows over NCHW (or NCDHW) input: the zero-padded input
// split by the strides of its rows and columns, so that every tap of a strided window reads
// a contiguous run of one phase plane (conv_nchwc_internal.h).
//
// Phase (ph, pw) of a plane holds padded positions (r*sh + ph, q*sw + pw) at (r, q). Output
// position (oh, ow) reads padded position (oh*sh + kh*dh, ow*sw + kw*dw) at tap (kh, kw):
// phase ((kh*dh) % sh, (kw*dw) % sw), row oh + (kh*dh) / sh, column ow + (kw*dw) / sw, so
// consecutive outputs along a row read consecutive values. Each phase is a nest of its own
// with constant bounds: for each row of the phase over all planes, the left padding, the
// copied values (a strided read of x) and the right padding, each vectorized along the row;
// rows that lie in the padding are zeros. Phases no tap reads are not copied. A volume's depth
// stays as it is (its stride picks a plane): its planes are padded in depth like windowRowPlanes
// pads them.
#include "engine/lowering/conv_nchwc_internal.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::lowering {

PaddedPlanes phasePlanes(KernelBuilder& kb, const TensorRef& x, const std::vector<WindowAxis>& axes,
                         int lanes, bool parallel) {
  LATHE_CHECK(axes.size() == 2 || axes.size() == 3, "phase planes are for 2-D or 3-D windows");
  const bool volume = axes.size() == 3;
  const WindowAxis ad = volume ? axes[0] : WindowAxis{};
  const WindowAxis &ar = axes[axes.size() - 2], &ac = axes[axes.size() - 1];
  const auto extent = [](const WindowAxis& a) {
    return (a.out - 1) * a.stride + (a.kernel - 1) * a.dilation + 1;
  };
  const std::int64_t planes = x.shape[0] * x.shape[1];
  const std::int64_t D = volume ? x.shape[2] : 1, H = x.shape[x.rank() - 2],
                     W = x.shape[x.rank() - 1];
  PaddedPlanes out;
  out.sh = ar.stride;
  out.sw = ac.stride;
  out.D = volume ? extent(ad) : 1;
  const std::int64_t Hp = extent(ar), Wp = extent(ac);
  out.H = (Hp + out.sh - 1) / out.sh;
  out.W = (Wp + out.sw - 1) / out.sw;
  const std::int64_t Dp = out.D, Hq = out.H, Wq = out.W, sh = out.sh, sw = out.sw;
  const std::int64_t top = ar.padBegin, left = ac.padBegin, front = ad.padBegin;
  // The phases some tap reads: the others are never copied, and an axis whose taps read
  // phase 0 alone (a 1x1 window) holds that one.
  const auto phasesRead = [](const WindowAxis& a) {
    std::vector<bool> read(static_cast<std::size_t>(a.stride), false);
    for (std::int64_t k = 0; k < a.kernel; ++k)
      read[static_cast<std::size_t>(k * a.dilation % a.stride)] = true;
    return read;
  };
  const std::vector<bool> rowsRead = phasesRead(ar), colsRead = phasesRead(ac);
  const auto onlyFirst = [](const std::vector<bool>& read) {
    return std::count(read.begin(), read.end(), true) == 1 && read[0];
  };
  out.phaseRows = onlyFirst(rowsRead) ? 1 : sh;
  out.phaseCols = onlyFirst(colsRead) ? 1 : sw;
  const std::int64_t PR = out.phaseRows, PC = out.phaseCols;
  out.planes = kb.scratch("xphase", x.dtype, {planes * Dp * PR * PC * Hq * Wq});
  const TensorRef& src = out.planes;
  const Expr zero = constantOf(x.dtype, 0);
  std::vector<Stmt> copies;
  for (std::int64_t ph = 0; ph < sh; ++ph)
    for (std::int64_t pw = 0; pw < sw; ++pw) {
      if (!rowsRead[static_cast<std::size_t>(ph)] || !colsRead[static_cast<std::size_t>(pw)])
        continue;
      // Columns q of this phase: padding while q*sw + pw < left, then x's columns
      // q*sw + pw - left while they are inside x, then padding.
      const std::int64_t lp = std::min(Wq, left > pw ? (left - pw + sw - 1) / sw : 0);
      const std::int64_t lastInside = W - 1 + left - pw; // the last padded column inside x
      const std::int64_t mc =
          lastInside < 0 ? 0 : std::max<std::int64_t>(0, std::min(Wq, lastInside / sw + 1) - lp);
      const std::int64_t rp = Wq - lp - mc;
      const Expr plane = axisVar(kb, "plane", planes), dp = axisVar(kb, "dp", Dp),
                 r = axisVar(kb, "r", Hq);
      const Expr wl = kb.freshVar("wl"), w = kb.freshVar("w"), wr = kb.freshVar("wr"),
                 wz = kb.freshVar("wz");
      const Expr copyPlane = volume ? plane * Dp + dp : plane;
      const Expr at = (((copyPlane * PR + ph) * PC + pw) * Hq + r) * Wq;
      const Expr from = volume ? plane * D + dp - front : plane; // x's plane
      const Expr row = r * sh + (ph - top);                      // x's row
      std::vector<Stmt> inside;
      if (lp > 0)
        inside.push_back(forCount(wl, lp, src.storeFlat(at + wl, zero)));
      if (mc > 0)
        inside.push_back(forCount(
            w, mc,
            src.storeFlat(at + lp + w,
                          x.loadFlat((from * H + row) * W + (w * sw + (lp * sw + pw - left))))));
      if (rp > 0)
        inside.push_back(forCount(wr, rp, src.storeFlat(at + lp + mc + wr, zero)));
      // Rows of padding only where there are some.
      bool paddingRows = false;
      for (std::int64_t rr = 0; rr < Hq; ++rr)
        paddingRows = paddingRows || rr * sh + ph < top || rr * sh + ph >= top + H;
      const bool paddingPlanes = volume && (front > 0 || Dp > front + D);
      Expr isInput;
      if (paddingRows)
        isInput = row >= loop::makeIndex(0) && row < loop::makeIndex(H);
      if (paddingPlanes) {
        const Expr inDepth = dp >= front && dp < front + D;
        isInput = isInput.defined() ? isInput && inDepth : inDepth;
      }
      const Stmt rowCopy =
          isInput.defined() ? loop::IfThenElse::make(isInput, loop::Block::make(inside),
                                                     forCount(wz, Wq, src.storeFlat(at + wz, zero)))
                            : loop::Block::make(inside);
      copies.push_back(loopOver(r, Hq, loopOver(dp, Dp, loopOver(plane, planes, rowCopy))));
      const std::vector<std::string> rows = loopsOver({{r, Hq}, {dp, Dp}, {plane, planes}});
      if (parallel)
        for (std::string& step :
             parallelTaskSteps(rows, planes * Dp * Hq, planes * Dp * Hq * Wq * 4))
          out.steps.push_back(std::move(step));
      // Rows of 4 to lanes - 1 values are one shorter vector (a strided 1x1 Conv's 14 x 14
      // phase: scalar, the copy took half its 2 microseconds).
      const auto vectorizeRun = [&](const Expr& var, std::int64_t extent) {
        if (extent >= 4 && extent < lanes)
          out.steps.push_back("vectorize(" + loopName(var) + ")");
        else
          vectorizeRow(out.steps, var, extent, lanes);
      };
      vectorizeRun(w, mc);
      if (isInput.defined())
        vectorizeRun(wz, Wq);
      vectorizeRun(wl, lp);
      vectorizeRun(wr, rp);
    }
  out.copy = loop::Block::make(copies);
  return out;
}

} // namespace lathe::lowering
