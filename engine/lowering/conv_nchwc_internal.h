#pragma once
// Internal to the blocked (NCHW16c) convolutions: conv_nchwc.cpp and conv_winograd.cpp.
#include "engine/lowering/conv_internal.h"

#include <string>
#include <vector>

namespace lathe::lowering {

inline constexpr std::int64_t kNchwcBlock = 16;

// A blocked convolution: X [N, C/16, H, W, 16] (or planes of another size, see PaddedPlanes),
// W [M/16, C/16, KH, KW, 16, 16], Y [N, M/16, OH, OW, 16]. With `batchedWeights` (KH = KW =
// 1) image n has weights of its own: W is [M/16, C/16, N, 16, 16] (Winograd's products, one
// matrix per point of the transformed tile). With `plainInput` X is [N, C, H, W] (fewer than
// 16 channels, an image's) and W [M/16, 1, KH, KW, C, 16]: one block of all C channels.
struct NchwcGeometry {
  std::int64_t N = 0, Cb = 0, C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0, KH = 0, KW = 0;
  WindowAxis rows, cols;
  bool batchedWeights = false, plainInput = false;
};

// The input planes a convolution reads: a zero-padded copy of x, each plane Hp x Wp with x's
// H x W values at (top, left) (a nest and the default trace steps that vectorize and
// parallelize it), or x itself when `copy` is false. A position holds `block` values: 16
// channels, or 1 for NCHW planes (copied row by row over all planes). The padding holds
// `fill` (zero when undefined). With `firstPlane` (NCHW planes only) the copy's plane p holds
// x's plane firstPlane + p.
struct PaddedPlanes {
  Stmt copy; // undefined without a copy
  std::vector<std::string> steps;
  TensorRef planes; // flat
  std::int64_t H = 0, W = 0;
  std::int64_t D = 1; // a volume's planes (3-D windows), each H x W
  // Stride phases (phasePlanes): the strides sh x sw, and the phase planes of H x W each
  // plane holds along rows and columns (the stride, or 1 where only phase 0 is read: a 1x1
  // window).
  std::int64_t sh = 1, sw = 1, phaseRows = 1, phaseCols = 1;
};
PaddedPlanes paddedPlanes(KernelBuilder& kb, const TensorRef& x, std::int64_t planes,
                          std::int64_t H, std::int64_t W, std::int64_t top, std::int64_t left,
                          std::int64_t Hp, std::int64_t Wp, bool copy, int lanes,
                          std::int64_t block = kNchwcBlock, const Expr& fill = Expr(),
                          const Expr& firstPlane = Expr());

// The convolution over `src` as a plain nest (for n, mb, oh, ow, j: y = 0; for cb, kh, kw,
// ci: y += src * w; y = epilogue(y + bias)) whose default trace keeps a tile of Q rows x P
// columns x R vectors of output channels in registers across the reduction, registered on
// `kb` with the tuner's variants; every trace starts with `prefix` (the steps of the other
// nests of the kernel).
struct TiledNchwcConv {
  Stmt nest;
  std::int64_t R = 1, Q = 1, P = 1, tasks = 0;
  bool remainders = false, weightsStay = false;
};
TiledNchwcConv tiledNchwcConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                              const NchwcGeometry& g, int lanes, const PaddedPlanes& src,
                              const std::vector<std::string>& prefix);

// The loop variable of a nest axis of `extent`, or the constant 0 when the extent is 1 (the
// blocked kernels' nests have no loop for such an axis); and `body` inside a loop over it.
Expr axisVar(KernelBuilder& kb, const char* hint, std::int64_t extent);
Stmt loopOver(const Expr& var, std::int64_t extent, Stmt body);

// X, W, the optional bias and Y of a blocked convolution node.
ConvOperands blockedConvOperands(const graph::Node& node, KernelBuilder& kb);

// Whether a 2-D window over NCHW x [N, C, H, W] may run as vectors of output rows (the traced
// NCHW Conv and pools): a vector width known, something to compute, rows of at least a
// vector (strided: two; the hand-written tiles read those through stride-phase copies in
// whole vectors, where a strided row loads every other value: a stride-2 5x5 Conv on 31
// columns took 0.007 ms against 0.005). A window may reach past the padded input (ceil_mode
// pools): the copy covers it.
bool windowRowsApply(const TensorRef& x, const std::vector<WindowAxis>& axes, int lanes);

// The planes such a window reads: x itself, or a copy of (OH-1)*s + (K-1)*d + 1 rows and
// columns when there is padding or the window reaches past the input, its padding holding
// `fill` (zero when undefined). Three axes (a 3-D window over NCDHW x): volumes of D planes
// each, copied likewise. The copy runs in parallel only when `parallel` (its reader
// does): copied by two threads and read by one, half of what the reader reads comes from the
// other core's cache (a 3x3 MaxPool over 8 x 112 x 112 took 0.032 ms against 0.022 ms).
// With `onePlane` only that plane of x (flat over N*C) is copied, serially: a copy made inside
// the task that reads it (the depthwise Conv's).
PaddedPlanes windowRowPlanes(KernelBuilder& kb, const TensorRef& x,
                             const std::vector<WindowAxis>& axes, int lanes, bool parallel,
                             const Expr& fill = Expr(), const Expr& onePlane = Expr());

// The steps that vectorize a row loop `var` of `extent` values: whole vectors, then the rest
// as one shorter vector (nothing when the row is shorter than a vector).
void vectorizeRow(std::vector<std::string>& steps, const Expr& var, std::int64_t extent, int lanes);

// The stride-phase planes a strided 2-D or 3-D window over NCHW (NCDHW) x reads
// (phase_planes.cpp): the zero-padded input split by the row and column strides, so that tap
// (kh, kw) of output (oh, ow) reads row oh + (kh*dh)/sh, column ow + (kw*dw)/sw of phase
// ((kh*dh) % sh, (kw*dw) % sw), and consecutive outputs of a row consecutive values. Phase
// (ph, pw) of plane p (of a volume: of its padded depth plane p*D + dp) is phase plane
// (p*phaseRows + ph)*phaseCols + pw. Always a copy; its rows run in parallel when
// `parallel`.
PaddedPlanes phasePlanes(KernelBuilder& kb, const TensorRef& x, const std::vector<WindowAxis>& axes,
                         int lanes, bool parallel);

// The steps that tile an output row `ow` of OW positions into V vectors of `lanes` kept in
// registers across the reduction loop `k` (the NCHW Conv and pools): ow split into tiles,
// the loops reordered as `tasks` (outermost, first), the tile-column loop, `after` (more task
// loops), then the tile (`rows`, when the tile has a row loop, and the columns); remainder
// tiles when the width does not divide the row; a row narrower than a vector (OW < lanes)
// is one shorter vector, not split. `tasks` gets the tile-column loop and `after` appended:
// all the task loops, for parallelTaskSteps.
void rowTileSteps(std::vector<std::string>& steps, std::vector<std::string>& tasks,
                  const std::vector<std::string>& after, const std::string& rows,
                  const std::string& ow, std::int64_t OW, std::int64_t V, int lanes,
                  const std::string& k);

// A window over one plane a task (the depthwise Conv and the NCHW pools, plane_tiles.cpp):
// tiles of Q output rows x V vectors of a row kept in registers across the taps, cheapest
// first by a model of loads, operations and their latency (Q divides the rows; at most 4 of
// each; a row narrower than a vector is one shorter vector).
struct PlaneTile {
  std::int64_t Q = 1, V = 1;
  double cost = 0;
};
std::vector<PlaneTile> rankedPlaneTiles(int lanes, std::int64_t OH, std::int64_t OW,
                                        std::int64_t taps, std::int64_t stride);

// The loops of such a nest: the plane loops (outermost first), the output rows and columns
// and the taps; a name is empty where the nest has no loop (an extent of 1), except ow's.
struct PlaneLoops {
  std::vector<std::string> planes;
  std::string oh, ow, kh, kw;
};

// The loops of a plane window's nest: n and c (those of an extent above 1) are the plane
// loops.
PlaneLoops planeLoops(const Expr& n, std::int64_t N, const Expr& c, std::int64_t C, const Expr& oh,
                      std::int64_t OH, const Expr& ow, const Expr& kh, std::int64_t KH,
                      const Expr& kw, std::int64_t KW);

// Whether such a window may run on vectors of output rows: as windowRowsApply, or rows of 4
// to lanes - 1 positions at unit stride as one shorter vector each (14 x 14 or 7 x 7
// planes with 16 lanes), and with `anyStride` strided rows of 4 positions and more. The
// plane kernels take those: their strided vector loads beat the (since removed) hand-written
// depthwise kernel's stride-phase copy or matched it, and the hand-written pools ran element by
// element (3x3 s2 MaxPool over 8 x 56 x 56: 0.041 -> 0.0028 ms). The NCHW Conv does not: a stride-2
// 5x5 Conv on 31 columns took 0.007 ms against the hand-written tiles' 0.005.
bool planeRowsApply(const TensorRef& x, const std::vector<WindowAxis>& axes, int lanes,
                    bool anyStride);

// Where (row, col) of plane `plane` (flat over N*C) lies in `planes`: in the task's copy when
// there is one, else in x.
Expr planeAt(const PaddedPlanes& planes, const Expr& plane, const Expr& row, const Expr& col);

// A plane's task: its padded copy (allocated inside the task, on the heap when large) before
// `rows`, or `rows` alone when the planes are read in place.
Stmt planeTask(KernelBuilder& kb, const PaddedPlanes& planes, Stmt rows);

// The first trace as the kernel's default, the next ones (at most `variants`) as the tuner's
// whole-trace variants.
void registerTraces(KernelBuilder& kb, const std::vector<std::vector<std::string>>& traces,
                    std::size_t variants);

// Registers the default trace (the best tile's) and the tuner's variants (the next ones) of
// a plane window's nest whose other steps are `prefix` (the padded copy's), and returns the
// best tile.
PlaneTile registerPlaneTraces(KernelBuilder& kb, const std::vector<PlaneTile>& tiles,
                              const std::vector<std::string>& prefix, const PlaneLoops& loops,
                              std::int64_t planes, std::int64_t OH, std::int64_t OW, int lanes,
                              std::int64_t work);

// Whether a window reaches past the padded input along some axis (a Conv's never should; the
// traced Convs leave such geometry to the hand-written kernels).
bool reachesPastPadding(const std::vector<WindowAxis>& axes);

// The steps that unroll the taps, tile the rows into `t` (remainder tiles where the width
// does not divide a row) and run the `planes` tasks as one parallel loop when `work` is worth
// it.
std::vector<std::string> planeTileSteps(const PlaneTile& t, const PlaneLoops& loops,
                                        std::int64_t planes, std::int64_t OH, std::int64_t OW,
                                        int lanes, std::int64_t work);

// lathe::ConvWinogradNCHWc (conv_winograd.cpp).
Stmt lowerConvWinogradNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue);

} // namespace lathe::lowering
