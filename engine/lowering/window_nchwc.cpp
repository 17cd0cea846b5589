// Windows over one channel at a time on channel-blocked tensors, made by the layout-nchwc
// pass: lathe::DepthwiseConvNCHWc (one filter per channel; weights packed at compile time as
// [C/16, kh, kw, 16], bias [C]) and the pools lathe::MaxPoolNCHWc, AveragePoolNCHWc and
// LpPoolNCHWc (ONNX's attributes). X is [N, C/16, H, W, 16] and Y [N, C/16, OH, OW, 16].
//
// A channel block is one vector (two with AVX2), so every tap of every output position is a
// vector operation with no lane wasted however small the plane, and strides cost nothing: a
// tap reads one whole vector of 16 channels at its input position. There is no padded copy
// of the input: each output row runs the taps whose rows lie inside the input (the tap
// loop's bounds depend on the row), and splits into the positions whose window reaches past
// the left edge, the interior ones whose every tap is inside, and those past the right edge
// (tap columns bounded per position). The kernel is that plain nest plus a default trace:
// the interior is split into tiles of P positions, each kept in registers across the taps
// (register_tile), a remainder tile of its own where P does not divide the interior
// (partition), the edge positions one vector tile each, and (image, channel block, row) as
// one parallel loop of tasks.
#include "engine/lowering/conv_nchwc_internal.h"
#include "engine/lowering/reduce_helpers.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>

namespace lathe::lowering {
namespace {

constexpr std::int64_t kBlock = kNchwcBlock;

struct WindowGeometry {
  std::int64_t N = 0, Cb = 0, H = 0, W = 0, OH = 0, OW = 0, KH = 0, KW = 0;
  WindowAxis rows, cols;
};

// One part of an output row (the positions past the left edge, the interior ones, those past
// the right edge): how many positions, and the names of its position loop (empty when it has
// one position), channel loop and outermost tap loop.
struct RowPart {
  std::int64_t positions = 0;
  std::string ow, j, k;
};

// Positions per interior tile: the whole interior when it fits the registers, else the
// largest divisor of it in the upper half of what fits (no remainder tile), else as many as
// fit. Each position holds S = 16 / lanes accumulators; the S weights of a tap and an input
// vector in flight need registers too.
std::int64_t maxTileWidth(int lanes) {
  const std::int64_t registers = lanes >= 16 ? 32 : 16, S = kBlock / lanes;
  return std::min<std::int64_t>((registers - S - 2) / S, 14);
}
std::int64_t tileWidth(std::int64_t positions, int lanes) {
  const std::int64_t fit = maxTileWidth(lanes);
  if (positions <= fit)
    return positions;
  for (std::int64_t p = fit; p * 2 > fit; --p)
    if (positions % p == 0)
      return p;
  return fit;
}

// The default trace with interior tiles of P positions: each part's tile kept in registers
// across its taps (the interior's split into tiles of P, a remainder tile of its own when P
// does not divide it; an edge position is a tile of one), then the task loops as one
// parallel loop.
std::vector<std::string> windowSteps(const WindowGeometry& g, int lanes, std::int64_t P,
                                     const std::vector<std::string>& tasks,
                                     const std::array<RowPart, 3>& parts) {
  std::vector<std::string> steps;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const RowPart& part = parts[i];
    if (part.positions == 0)
      continue;
    std::string top = lanes < kBlock ? part.j + ".o" : part.j;
    bool remainder = false;
    if (i == 1 && !part.ow.empty()) {
      if (P < part.positions) {
        steps.push_back("split(" + part.ow + ", " + std::to_string(P) + ")");
        top = part.ow + ".i";
        remainder = part.positions % P != 0;
      } else {
        top = part.ow;
      }
    }
    if (lanes < kBlock)
      steps.push_back("split(" + part.j + ", " + std::to_string(lanes) + ")");
    if (remainder)
      steps.push_back("partition(" + top + ")");
    steps.push_back("register_tile(" + top + ", " + part.k + ")");
    if (remainder)
      steps.push_back("register_tile(" + top + ".r1, " + part.k + ".r1)");
  }
  const std::int64_t taskCount = g.N * g.Cb * g.OH;
  for (std::string& step :
       parallelTaskSteps(tasks, taskCount, taskCount * g.OW * kBlock * g.KH * g.KW))
    steps.push_back(std::move(step));
  return steps;
}

// The window op of a node: a depthwise Conv (weights and an optional bias) or a pool (its
// kind, LpPool's p, AveragePool's count_include_pad).
struct WindowOp {
  TensorRef x, y;
  std::optional<TensorRef> w, bias;
  std::int64_t KH = 0, KW = 0;
  PoolKind kind = PoolKind::Max;
  std::int64_t p = 2;
  bool includePad = false;
  bool pool() const { return !w.has_value(); }
  // What the kernel describes itself as.
  std::string what() const {
    return !pool()                 ? "depthwise convolution"
           : kind == PoolKind::Max ? "max pooling"
           : kind == PoolKind::Lp  ? "Lp pooling"
                                   : "average pooling";
  }
};

Stmt lowerWindowNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue,
                      const WindowOp& op) {
  const TensorRef &x = op.x, &y = op.y;
  if (x.rank() != 5 || y.rank() != 5 || x.shape[4] != kBlock || y.shape[4] != kBlock ||
      x.dtype != graph::DType::F32 || y.shape[1] != x.shape[1] || y.shape[0] != x.shape[0])
    unsupportedNode(node, "needs blocked [N, C/16, H, W, 16] input and output");
  WindowGeometry g;
  g.N = x.shape[0];
  g.Cb = x.shape[1];
  g.H = x.shape[2];
  g.W = x.shape[3];
  g.OH = y.shape[2];
  g.OW = y.shape[3];
  g.KH = op.KH;
  g.KW = op.KW;
  if (g.KH < 2 || g.KW < 2)
    unsupportedNode(node, "needs a window of at least 2 x 2 taps");
  const std::vector<WindowAxis> axes = slidingWindow(node, {g.H, g.W}, {g.OH, g.OW}, {g.KH, g.KW});
  g.rows = axes[0];
  g.cols = axes[1];
  const WindowAxis &ar = g.rows, &ac = g.cols;

  // The parts of a row: positions whose first tap lies left of the input, those whose every
  // tap lies inside, the rest.
  const std::int64_t left = std::min(g.OW, (ac.padBegin + ac.stride - 1) / ac.stride);
  const std::int64_t reach = g.W - 1 - (g.KW - 1) * ac.dilation + ac.padBegin;
  const std::int64_t lastInside = reach < 0 ? -1 : std::min(g.OW - 1, reach / ac.stride);
  const std::int64_t interior = std::max<std::int64_t>(0, lastInside - left + 1);
  const std::array<std::int64_t, 3> positions{left, interior, g.OW - left - interior};

  // --- the nest: for n, cb, oh: for each part: for ow, j: y = 0 (or -inf); for the taps
  // inside the input: y += x * w (or y = max(y, x)); y = epilogue(y + b) ---
  const Expr n = axisVar(kb, "n", g.N), cb = axisVar(kb, "cb", g.Cb), oh = axisVar(kb, "oh", g.OH);
  const IndexRange tapRows = validRange(g.KH, ar.dilation, oh * ar.stride - ar.padBegin, g.H);
  std::array<RowPart, 3> parts;
  std::vector<Stmt> row;
  std::int64_t first = 0; // the part's first position
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::int64_t count = positions[i];
    parts[i].positions = count;
    if (count == 0)
      continue;
    const Expr p = axisVar(kb,
                           i == 1   ? "ow"
                           : i == 0 ? "owl"
                                    : "owr",
                           count),
               j = kb.freshVar("j"), kh = kb.freshVar("kh"), kw = kb.freshVar("kw");
    const Expr ow = first == 0 ? p : p + first;
    const std::vector<Expr> idx{n, cb, oh, ow, j};
    const Expr ih = oh * ar.stride + kh * ar.dilation - ar.padBegin;
    const Expr iw = ow * ac.stride + kw * ac.dilation - ac.padBegin;
    const Expr acc = y.load(idx), in = x.load({n, cb, ih, iw, j});
    const Stmt update = y.store(idx, op.pool() ? poolUpdate(op.kind, acc, in, op.p)
                                               : acc + in * op.w->load({cb, kh, kw, j}));
    const IndexRange tapCols =
        i == 1 ? IndexRange{loop::makeIndex(0), loop::makeIndex(g.KW)}
               : validRange(g.KW, ac.dilation, ow * ac.stride - ac.padBegin, g.W);
    Expr value = y.load(idx);
    if (op.bias)
      value = value + op.bias->load({cb * kBlock + j});
    if (op.pool())
      value = poolFinish2d(op.kind, value, y.dtype, op.p, ar, ac, oh, ow, op.includePad);
    const Stmt element = loop::Block::make(
        {y.store(idx, op.pool() && op.kind == PoolKind::Max ? lowestOf(loop::f32())
                                                            : constantOf(y.dtype, 0)),
         forRange(kh, tapRows.lo, tapRows.extent, forRange(kw, tapCols.lo, tapCols.extent, update)),
         y.store(idx, epilogue(value, idx))});
    row.push_back(loopOver(p, count, forCount(j, kBlock, element)));
    parts[i].ow = count > 1 ? loopName(p) : std::string();
    parts[i].j = loopName(j);
    parts[i].k = loopName(kh);
    first += count;
  }
  const Stmt nest =
      loopOver(n, g.N, loopOver(cb, g.Cb, loopOver(oh, g.OH, loop::Block::make(row))));

  const int lanes = kb.vectorBits() / 32;
  if (lanes < 4 || kBlock % lanes != 0) {
    kb.describe("blocked " + op.what() + ", one output element at a time (no vector width known)");
    return nest;
  }
  std::vector<std::string> tasks;
  for (const auto& [var, extent] : {std::pair{n, g.N}, {cb, g.Cb}, {oh, g.OH}})
    if (extent > 1)
      tasks.push_back(loopName(var));
  const std::int64_t P = tileWidth(interior, lanes);
  for (const std::string& step : windowSteps(g, lanes, P, tasks, parts))
    kb.defaultStep(step);
  // The tuner's variants: other interior tile widths.
  std::set<std::int64_t> widths{P};
  for (std::int64_t p = 2; p <= std::min(interior, maxTileWidth(lanes)); ++p)
    if (widths.insert(p).second) {
      std::string trace;
      for (const std::string& step : windowSteps(g, lanes, p, tasks, parts))
        trace += step + "\n";
      kb.traceVariant(std::move(trace));
    }
  kb.describe(
      "blocked (NCHW16c) " + op.what() + ", default trace: " + std::to_string(g.N * g.Cb * g.OH) +
      " tasks, one output row of 16 channels each; " + "interior tiles of " + std::to_string(P) +
      " positions in registers across the " + std::to_string(g.KH * g.KW) + " taps");
  if (interior % std::max<std::int64_t>(P, 1) != 0)
    kb.describe("the interior positions the tile does not divide run as a smaller tile");
  if (left + interior < g.OW || left > 0)
    kb.describe("positions whose window reaches past the left or right edge run the taps "
                "inside the input only, one position a tile; rows likewise at the top and "
                "bottom");
  if (!op.pool())
    kb.describe("weights were packed at compile time as [C/16, kh, kw, 16]");
  return nest;
}

} // namespace

Stmt lowerDepthwiseConvNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const ConvOperands ops = blockedConvOperands(node, kb);
  const TensorRef& w = ops.w;
  if (w.rank() != 4 || w.shape[3] != kBlock || w.shape[0] != ops.x.shape[1])
    unsupportedNode(node, "needs weights packed as [C/16, kh, kw, 16]");
  if (node.hasAttribute("kernel_shape") &&
      node.attrInts("kernel_shape") != std::vector<std::int64_t>{w.shape[1], w.shape[2]})
    unsupportedNode(node, "kernel_shape differs from the weight's spatial dims");
  return lowerWindowNchwc(node, kb, epilogue,
                          WindowOp{ops.x, ops.y, w, ops.bias, w.shape[1], w.shape[2]});
}

namespace {

Stmt lowerPoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue,
                    PoolKind kind) {
  if (node.outputs().size() != 1)
    unsupportedNode(node, "the blocked pools have no Indices output");
  const std::vector<std::int64_t> kernel = node.attrInts("kernel_shape", {});
  if (kernel.size() != 2)
    unsupportedNode(node, "needs a 2-D kernel_shape");
  WindowOp op{kb.input(*node.input(0), node),
              kb.output(*node.output(0), node),
              std::nullopt,
              std::nullopt,
              kernel[0],
              kernel[1]};
  op.kind = kind;
  op.p = node.attrInt("p", 2);
  if (kind == PoolKind::Lp && op.p < 1)
    unsupportedNode(node, "p must be positive");
  op.includePad = node.attrInt("count_include_pad", 0) != 0;
  return lowerWindowNchwc(node, kb, epilogue, op);
}

} // namespace

Stmt lowerMaxPoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerPoolNchwc(node, kb, epilogue, PoolKind::Max);
}
Stmt lowerAveragePoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerPoolNchwc(node, kb, epilogue, PoolKind::Average);
}
Stmt lowerLpPoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerPoolNchwc(node, kb, epilogue, PoolKind::Lp);
}

} // namespace lathe::lowering
