#include "engine/lowering/window_helpers.h"

#include "engine/lowering/op_rules.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

struct WindowAttributes {
  std::vector<std::int64_t> strides, dilations, pads;
  std::string autoPad;
};

WindowAttributes readAttributes(const graph::Node& node, std::size_t spatial) {
  WindowAttributes a;
  a.strides = node.attrInts("strides", std::vector<std::int64_t>(spatial, 1));
  a.dilations = node.attrInts("dilations", std::vector<std::int64_t>(spatial, 1));
  a.pads = node.attrInts("pads", std::vector<std::int64_t>(2 * spatial, 0));
  a.autoPad = node.attrString("auto_pad", "NOTSET");
  if (a.strides.size() != spatial || a.dilations.size() != spatial || a.pads.size() != 2 * spatial)
    unsupportedNode(node, "strides, dilations and pads must cover the " + std::to_string(spatial) +
                              " spatial axes");
  if (a.autoPad != "NOTSET" && a.autoPad != "VALID" && a.autoPad != "SAME_UPPER" &&
      a.autoPad != "SAME_LOWER")
    unsupportedNode(node, "auto_pad '" + a.autoPad + "'");
  for (std::size_t i = 0; i < spatial; ++i)
    if (a.strides[i] < 1 || a.dilations[i] < 1 || a.pads[i] < 0 || a.pads[i + spatial] < 0)
      unsupportedNode(node, "strides and dilations must be positive and pads non-negative");
  return a;
}

bool isSame(const std::string& autoPad) {
  return autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
}

} // namespace

std::vector<WindowAxis> slidingWindow(const graph::Node& node, const std::vector<std::int64_t>& in,
                                      const std::vector<std::int64_t>& out,
                                      const std::vector<std::int64_t>& kernel) {
  const std::size_t spatial = in.size();
  if (out.size() != spatial || kernel.size() != spatial)
    unsupportedNode(node, "kernel_shape must cover the spatial axes");
  const WindowAttributes a = readAttributes(node, spatial);
  std::vector<WindowAxis> axes(spatial);
  for (std::size_t i = 0; i < spatial; ++i) {
    WindowAxis& w = axes[i];
    w.in = in[i];
    w.out = out[i];
    w.kernel = kernel[i];
    w.stride = a.strides[i];
    w.dilation = a.dilations[i];
    if (isSame(a.autoPad)) {
      // The padding that makes out = ceil(in / stride); the odd one goes to the end for
      // SAME_UPPER and to the beginning for SAME_LOWER.
      const std::int64_t total = std::max<std::int64_t>(
          0, (w.out - 1) * w.stride + (w.kernel - 1) * w.dilation + 1 - w.in);
      w.padBegin = a.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd = total - w.padBegin;
    } else if (a.autoPad == "NOTSET") {
      w.padBegin = a.pads[i];
      w.padEnd = a.pads[i + spatial];
    }
  }
  return axes;
}

std::vector<WindowAxis> transposedWindow(const graph::Node& node,
                                         const std::vector<std::int64_t>& in,
                                         const std::vector<std::int64_t>& out,
                                         const std::vector<std::int64_t>& kernel) {
  const std::size_t spatial = in.size();
  if (out.size() != spatial || kernel.size() != spatial)
    unsupportedNode(node, "kernel_shape must cover the spatial axes");
  const WindowAttributes a = readAttributes(node, spatial);
  const auto outputPadding = node.attrInts("output_padding", std::vector<std::int64_t>(spatial, 0));
  if (outputPadding.size() != spatial)
    unsupportedNode(node, "output_padding must cover the spatial axes");
  const bool derived = node.hasAttribute("output_shape") || isSame(a.autoPad);
  std::vector<WindowAxis> axes(spatial);
  for (std::size_t i = 0; i < spatial; ++i) {
    WindowAxis& w = axes[i];
    w.in = in[i];
    w.out = out[i];
    w.kernel = kernel[i];
    w.stride = a.strides[i];
    w.dilation = a.dilations[i];
    if (derived) {
      // The full (uncropped) result is cropped to `out`; a negative total pads at the end
      // (left zero), like output_padding.
      const std::int64_t full =
          w.stride * (w.in - 1) + outputPadding[i] + (w.kernel - 1) * w.dilation + 1;
      const std::int64_t total = std::max<std::int64_t>(0, full - w.out);
      w.padBegin = a.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd = total - w.padBegin;
    } else if (a.autoPad == "NOTSET") {
      w.padBegin = a.pads[i];
      w.padEnd = a.pads[i + spatial];
    }
  }
  return axes;
}

Expr ceilDiv(const Expr& a, std::int64_t b) {
  return b == 1 ? a : loop::floorDiv(a + (b - 1), b);
}

IndexRange validRange(std::int64_t count, std::int64_t stride, const Expr& offset,
                      std::int64_t limit) {
  // q*stride + offset >= 0  <=>  q >= ceil(-offset / stride)
  // q*stride + offset < limit  <=>  q <= floor((limit - 1 - offset) / stride)
  const Expr lo = loop::max(loop::makeIndex(0), ceilDiv(-offset, stride));
  const Expr last =
      stride == 1 ? (limit - 1) - offset : loop::floorDiv((limit - 1) - offset, stride);
  const Expr hi = loop::min(loop::makeIndex(count), last + 1);
  return {lo, hi - lo};
}

Stmt forRange(const Expr& var, const Expr& lo, const Expr& extent, Stmt body, loop::ForKind kind) {
  return loop::For::make(var, lo, extent, kind, std::move(body));
}

Stmt forCount(const Expr& var, std::int64_t extent, Stmt body, loop::ForKind kind) {
  return loop::For::make(var, loop::makeIndex(0), loop::makeIndex(extent), kind, std::move(body));
}

Stmt nestedLoops(KernelBuilder& kb, const std::vector<IndexRange>& ranges,
                 const std::function<Stmt(const std::vector<Expr>&)>& body,
                 const std::string& hint) {
  std::vector<Expr> vars;
  for (std::size_t i = 0; i < ranges.size(); ++i)
    vars.push_back(kb.freshVar(hint));
  Stmt s = body(vars);
  for (std::size_t i = ranges.size(); i-- > 0;)
    s = forRange(vars[i], ranges[i].lo, ranges[i].extent, s);
  return s;
}

Stmt nestedLoops(KernelBuilder& kb, const std::vector<std::int64_t>& extents,
                 const std::function<Stmt(const std::vector<Expr>&)>& body,
                 const std::string& hint) {
  std::vector<IndexRange> ranges;
  for (std::int64_t e : extents)
    ranges.push_back({loop::makeIndex(0), loop::makeIndex(e)});
  return nestedLoops(kb, ranges, body, hint);
}

Expr freshScalar(KernelBuilder& kb, const std::string& hint, loop::Type type) {
  // freshVar hands out unique names; the binding takes the value's own type.
  return loop::Var::make(type, kb.freshVar(hint).as<loop::Var>()->name);
}

loop::ForKind parallelFor(std::int64_t work) {
  return work >= (std::int64_t{1} << 16) ? loop::ForKind::Parallel : loop::ForKind::Serial;
}

Stmt taskLoop(KernelBuilder& kb, const Expr& var, std::int64_t extent, Stmt body,
              std::int64_t work) {
  const loop::ForKind kind = parallelFor(work);
  if (kb.gpu())
    return forCount(var, extent, std::move(body), kind);
  return kb.taskLoop(var, extent, std::move(body), kind == loop::ForKind::Parallel);
}

std::vector<std::string> loopsOver(const std::vector<std::pair<Expr, std::int64_t>>& loops) {
  std::vector<std::string> names;
  for (const auto& [var, extent] : loops)
    if (extent > 1)
      names.push_back(loopName(var));
  return names;
}

void vectorizeRowSteps(std::vector<std::string>& steps, const std::string& loop,
                       std::int64_t extent, int lanes) {
  if (extent < lanes)
    return;
  if (extent == lanes) {
    steps.push_back("vectorize(" + loop + ")");
    return;
  }
  steps.push_back("split(" + loop + ", " + std::to_string(lanes) + ")");
  if (extent % lanes != 0)
    steps.push_back("partition(" + loop + ".i)");
  steps.push_back("vectorize(" + loop + ".i)");
  if (extent % lanes > 1)
    steps.push_back("vectorize(" + loop + ".i.r1)");
}

std::vector<std::string> parallelTaskSteps(const std::vector<std::string>& loops,
                                           std::int64_t tasks, std::int64_t work) {
  std::vector<std::string> steps;
  if (loops.empty())
    return steps;
  // One parallel loop over the tasks: the outermost made parallel, then the others fused
  // into it (each fuse checks that the loop it takes in has independent iterations).
  std::string fused = loops.front();
  if (tasks > 1 && parallelFor(work) == loop::ForKind::Parallel)
    steps.push_back("parallel(" + fused + ")");
  for (std::size_t l = 1; l < loops.size(); ++l) {
    steps.push_back("fuse(" + fused + ", " + loops[l] + ")");
    fused += "." + loops[l] + ".fused";
  }
  return steps;
}

std::vector<Expr> unflatten(const Expr& flat, const std::vector<std::int64_t>& shape) {
  std::vector<Expr> index(shape.size());
  Expr rest = flat;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (i == 0) {
      index[i] = rest;
    } else {
      index[i] = rest % shape[i]; // non-negative operands: truncation is floor
      rest = rest / shape[i];
    }
  }
  return index;
}

std::int64_t product(const std::vector<std::int64_t>& dims) {
  std::int64_t p = 1;
  for (std::int64_t d : dims)
    p *= d;
  return p;
}

std::vector<std::int64_t> dropFront(const std::vector<std::int64_t>& dims, std::size_t n) {
  return {dims.begin() + static_cast<std::ptrdiff_t>(std::min(n, dims.size())), dims.end()};
}

void requireFloat(const graph::Node& node, const TensorRef& t) {
  if (!loopType(t.dtype).isFloat())
    unsupportedNode(node,
                    "needs a floating-point tensor, not " + std::string(graph::dtypeName(t.dtype)));
}

RegisterTile::RegisterTile(KernelBuilder& kb, graph::DType dtype, std::int64_t rows,
                           std::int64_t vectors, int lanes)
    : scratch_(kb.scratch("tile", dtype, {rows * vectors * lanes})), rows_(rows), vectors_(vectors),
      lanes_(lanes) {}

Expr RegisterTile::at(std::int64_t r, std::int64_t v) const {
  return loop::Ramp::make(loop::makeIndex((r * vectors_ + v) * lanes_), loop::makeIndex(1), lanes_);
}

Expr RegisterTile::load(std::int64_t r, std::int64_t v) const {
  return loop::Load::make(scratch_.buffer, at(r, v));
}

std::vector<Stmt> RegisterTile::clear(graph::DType dtype) const {
  std::vector<Stmt> stmts;
  for (std::int64_t r = 0; r < rows_; ++r)
    for (std::int64_t v = 0; v < vectors_; ++v)
      stmts.push_back(loop::Store::make(scratch_.buffer, at(r, v),
                                        loop::Broadcast::make(constantOf(dtype, 0), lanes_)));
  return stmts;
}

Stmt RegisterTile::accumulate(const std::vector<Expr>& rowValues,
                              const std::vector<Expr>& columnValues) const {
  std::vector<Stmt> updates;
  for (std::int64_t r = 0; r < rows_; ++r)
    for (std::int64_t v = 0; v < vectors_; ++v)
      updates.push_back(loop::Store::make(scratch_.buffer, at(r, v),
                                          load(r, v) + rowValues[r] * columnValues[v]));
  return loop::Block::make(updates);
}

} // namespace lathe::lowering
