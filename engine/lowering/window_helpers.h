#pragma once
// Shared by the convolution, pooling and matrix-product lowerings: sliding-window geometry
// (kernel, strides, dilations, explicit or automatic padding) resolved against static
// shapes, and the small loop helpers their default schedules are built from.

#include "engine/lowering/kernel_builder.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace lathe::lowering {

// One spatial axis of a sliding window. For Conv and the pools output position o reads
// input position o*stride + k*dilation - padBegin for tap k; for ConvTranspose input
// position i writes output position i*stride + k*dilation - padBegin.
struct WindowAxis {
  std::int64_t in = 1, out = 1, kernel = 1, stride = 1, dilation = 1, padBegin = 0, padEnd = 0;
};

// Conv and pool geometry. `in` and `out` are the spatial extents of input and output (out
// as shape inference computed it, ceil_mode included); strides, dilations, pads and
// auto_pad come from the node.
std::vector<WindowAxis> slidingWindow(const graph::Node& node, const std::vector<std::int64_t>& in,
                                      const std::vector<std::int64_t>& out,
                                      const std::vector<std::int64_t>& kernel);

// ConvTranspose geometry: output_shape or auto_pad decide the cropping (ONNX reference
// semantics), else pads.
std::vector<WindowAxis> transposedWindow(const graph::Node& node,
                                         const std::vector<std::int64_t>& in,
                                         const std::vector<std::int64_t>& out,
                                         const std::vector<std::int64_t>& kernel);

// Positions q in [0, count) whose q*stride + offset lies in [0, limit): a contiguous range,
// so that loops run over it instead of testing every element. `extent` may be <= 0 (no
// iteration).
struct IndexRange {
  Expr lo, extent;
};
IndexRange validRange(std::int64_t count, std::int64_t stride, const Expr& offset,
                      std::int64_t limit);
Expr ceilDiv(const Expr& a, std::int64_t b); // b > 0

// for var in [lo, lo + extent)
Stmt forRange(const Expr& var, const Expr& lo, const Expr& extent, Stmt body,
              loop::ForKind kind = loop::ForKind::Serial);
Stmt forCount(const Expr& var, std::int64_t extent, Stmt body,
              loop::ForKind kind = loop::ForKind::Serial);

// Nested serial loops over `ranges` (outermost first); the body gets one variable each.
Stmt nestedLoops(KernelBuilder& kb, const std::vector<IndexRange>& ranges,
                 const std::function<Stmt(const std::vector<Expr>&)>& body,
                 const std::string& hint);
Stmt nestedLoops(KernelBuilder& kb, const std::vector<std::int64_t>& extents,
                 const std::function<Stmt(const std::vector<Expr>&)>& body,
                 const std::string& hint);

// R x V vectors of accumulators in a stack buffer read and written at constant indices, so
// that LLVM keeps them in registers: the register tile of the tiled Conv and MatMul.
class RegisterTile {
public:
  RegisterTile(KernelBuilder& kb, graph::DType dtype, std::int64_t rows, std::int64_t vectors,
               int lanes);
  const TensorRef& scratch() const { return scratch_; }
  Expr load(std::int64_t r, std::int64_t v) const;
  // Every accumulator set to 0, one statement per vector.
  std::vector<Stmt> clear(graph::DType dtype) const;
  // acc[r][v] += rowValues[r] * columnValues[v], one statement per vector.
  Stmt accumulate(const std::vector<Expr>& rowValues, const std::vector<Expr>& columnValues) const;

private:
  Expr at(std::int64_t r, std::int64_t v) const;
  TensorRef scratch_;
  std::int64_t rows_, vectors_;
  int lanes_;
};

// A fresh scalar variable of `type` for a LetStmt: hoists a loop-invariant value (a
// weight) out of the loops that use it.
Expr freshScalar(KernelBuilder& kb, const std::string& hint, loop::Type type);

// Parallel when the kernel does enough work (multiply-adds or element visits) to pay for
// waking the thread pool, else serial.
loop::ForKind parallelFor(std::int64_t work);

// A loop of `extent` tasks around `body`: KernelBuilder::taskLoop, parallel when `work` is
// worth it (parallelFor); on a GPU, where the default trace binds loops instead, the nest
// keeps the parallel loop as the fallbacks always built it.
Stmt taskLoop(KernelBuilder& kb, const Expr& var, std::int64_t extent, Stmt body,
              std::int64_t work);

// The names of those of `loops` (a loop variable and its extent, outermost first) that have
// more than one iteration: a loop of one is gone by the time a trace runs.
std::vector<std::string> loopsOver(const std::vector<std::pair<Expr, std::int64_t>>& loops);

// The steps that vectorize the row loop named `loop` of `extent` positions: split into
// vectors of `lanes`, the last partial vector partitioned off as a shorter one (a row of
// exactly one vector is vectorized whole; nothing when the row is shorter than a vector).
void vectorizeRowSteps(std::vector<std::string>& steps, const std::string& loop,
                       std::int64_t extent, int lanes);

// The steps that make `loops` (outermost first, all task loops of one nest) one parallel
// loop of `tasks` iterations when `work` is worth it: parallel the first, fuse the others.
std::vector<std::string> parallelTaskSteps(const std::vector<std::string>& loops,
                                           std::int64_t tasks, std::int64_t work);

// Row-major index of flat position `flat` in `shape` (empty shape: no index).
std::vector<Expr> unflatten(const Expr& flat, const std::vector<std::int64_t>& shape);

std::int64_t product(const std::vector<std::int64_t>& dims);
std::vector<std::int64_t> dropFront(const std::vector<std::int64_t>& dims, std::size_t n);
void requireFloat(const graph::Node& node, const TensorRef& t);

} // namespace lathe::lowering
