// Tiles of a window over one plane: the depthwise Conv and the NCHW pools, whose output
// position reads only its own channel's plane. A task per plane; inside it, tiles of Q output
// rows x V vectors of a row kept in registers across the window's taps.
#include "engine/lowering/conv_nchwc_internal.h"

#include <algorithm>

namespace lathe::lowering {

// Per tap a tile loads Q*V input vectors (two loads a strided one) and issues Q*V operations
// on accumulators that each wait for their last one: two loads and two multiply-adds a cycle,
// four cycles from one multiply-add to the next on the same accumulator. One row of 3
// vectors waits on that latency and took 0.0062 ms where a tile of 2 rows x 3 vectors took
// 0.0045 ms (3x3 depthwise over 6 x 56 x 57). Rows end as the NCHW Conv's do, in a tile of
// the whole remaining vectors and one of the shorter last vector.
std::vector<PlaneTile> rankedPlaneTiles(int lanes, std::int64_t OH, std::int64_t OW,
                                        std::int64_t taps, std::int64_t stride) {
  const std::int64_t registers = lanes >= 16 ? 32 : 16;
  const auto tileCost = [&](std::int64_t Q, std::int64_t V) {
    const double loads = double(Q * V * (stride > 1 ? 2 : 1) + 1) / 2;
    return double(taps) * std::max(4.0, loads) + double(Q * V) + 3.0;
  };
  std::vector<PlaneTile> out;
  for (std::int64_t Q : {1, 2, 3, 4}) {
    if (Q > OH || OH % Q != 0)
      continue;
    if (OW < lanes) { // a row narrower than a vector: Q shorter vectors
      out.push_back(PlaneTile{Q, 1, tileCost(Q, 1) * double(OH / Q)});
      continue;
    }
    for (std::int64_t V = 1; V <= 4; ++V) {
      const std::int64_t TW = V * lanes;
      if (Q * V + 4 > registers || TW > OW)
        continue;
      const std::int64_t rem = OW % TW;
      double row = double(OW / TW) * tileCost(Q, V);
      for (const std::int64_t v : {rem / lanes, std::int64_t{rem % lanes > 0}})
        if (v > 0)
          row += tileCost(Q, v);
      out.push_back(PlaneTile{Q, V, row * double(OH / Q)});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PlaneTile& a, const PlaneTile& b) { return a.cost < b.cost; });
  return out;
}

PlaneLoops planeLoops(const Expr& n, std::int64_t N, const Expr& c, std::int64_t C, const Expr& oh,
                      std::int64_t OH, const Expr& ow, const Expr& kh, std::int64_t KH,
                      const Expr& kw, std::int64_t KW) {
  PlaneLoops loops;
  if (N > 1)
    loops.planes.push_back(loopName(n));
  if (C > 1)
    loops.planes.push_back(loopName(c));
  loops.oh = OH > 1 ? loopName(oh) : "";
  loops.ow = loopName(ow);
  loops.kh = KH > 1 ? loopName(kh) : "";
  loops.kw = KW > 1 ? loopName(kw) : "";
  return loops;
}

bool planeRowsApply(const TensorRef& x, const std::vector<WindowAxis>& axes, int lanes,
                    bool anyStride) {
  if (windowRowsApply(x, axes, lanes))
    return true;
  if (axes.size() != 2 || x.rank() != 4 || lanes < 4 || x.numElements() == 0 || axes[1].out < 4)
    return false;
  return axes[1].stride == 1 ? axes[1].out < lanes : anyStride;
}

Expr planeAt(const PaddedPlanes& planes, const Expr& plane, const Expr& row, const Expr& col) {
  if (planes.copy.defined())
    return row * planes.W + col;
  return (plane * planes.H + row) * planes.W + col;
}

Stmt planeTask(KernelBuilder& kb, const PaddedPlanes& planes, Stmt rows) {
  if (!planes.copy.defined())
    return rows;
  // A plane of up to 128 KiB on the task's stack.
  return kb.allocate(planes.planes, loop::Block::make(planes.copy, std::move(rows)),
                     planes.H * planes.W * 4 > (128 << 10));
}

void registerTraces(KernelBuilder& kb, const std::vector<std::vector<std::string>>& traces,
                    std::size_t variants) {
  for (std::size_t i = 0; i < traces.size() && i <= variants; ++i) {
    if (i == 0) {
      for (const std::string& step : traces[i])
        kb.defaultStep(step);
      continue;
    }
    std::string trace;
    for (const std::string& step : traces[i])
      trace += step + "\n";
    kb.traceVariant(std::move(trace));
  }
}

std::vector<std::string> planeTileSteps(const PlaneTile& t, const PlaneLoops& loops,
                                        std::int64_t planes, std::int64_t OH, std::int64_t OW,
                                        int lanes, std::int64_t work) {
  std::vector<std::string> steps;
  // The taps unrolled: each tile then runs the window as straight code.
  for (const std::string& k : {loops.kw, loops.kh})
    if (!k.empty())
      steps.push_back("unroll(" + k + ")");
  std::vector<std::string> tasks;
  std::string rows; // the tile's row loop
  if (t.Q > 1 && t.Q < OH) {
    steps.push_back("split(" + loops.oh + ", " + std::to_string(t.Q) + ")");
    tasks.push_back(loops.oh + ".o");
    rows = loops.oh + ".i";
  } else if (t.Q > 1) {
    rows = loops.oh;
  } else if (!loops.oh.empty()) {
    tasks.push_back(loops.oh);
  }
  const std::string& k = loops.kh.empty() ? loops.kw : loops.kh;
  rowTileSteps(steps, tasks, {}, rows, loops.ow, OW, t.V, lanes, k);
  for (std::string& step : parallelTaskSteps(loops.planes, planes, work))
    steps.push_back(std::move(step));
  return steps;
}

PlaneTile registerPlaneTraces(KernelBuilder& kb, const std::vector<PlaneTile>& tiles,
                              const std::vector<std::string>& prefix, const PlaneLoops& loops,
                              std::int64_t planes, std::int64_t OH, std::int64_t OW, int lanes,
                              std::int64_t work) {
  constexpr std::size_t kVariants = 8; // tiles the tuner may try instead of the best
  std::vector<std::vector<std::string>> traces;
  for (std::size_t i = 0; i < tiles.size() && i <= kVariants; ++i) {
    traces.push_back(prefix);
    for (std::string& step : planeTileSteps(tiles[i], loops, planes, OH, OW, lanes, work))
      traces.back().push_back(std::move(step));
  }
  registerTraces(kb, traces, kVariants);
  return tiles.front();
}

bool reachesPastPadding(const std::vector<WindowAxis>& axes) {
  return std::any_of(axes.begin(), axes.end(), [](const WindowAxis& a) {
    return (a.out - 1) * a.stride + (a.kernel - 1) * a.dilation >= a.in + a.padBegin + a.padEnd;
  });
}

} // namespace lathe::lowering
