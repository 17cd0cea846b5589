#pragma once
// Internal to the Conv lowerings (conv_pool.cpp, conv_nchw_traced.cpp, conv_pointwise.cpp).
#include "engine/lowering/op_rules.h"
#include "engine/lowering/window_helpers.h"

#include <optional>

namespace lathe::lowering {

// Output 0 of a node in a fused group is stored through a real epilogue.
inline bool hasEpilogue(const graph::Node& node) {
  return node.group >= 0;
}

inline std::vector<Expr> concat(std::vector<Expr> a, const std::vector<Expr>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The positions q in [0, count) with q*stride + offset in [0, limit): [first, second).
inline std::pair<std::int64_t, std::int64_t> validSpan(std::int64_t count, std::int64_t stride,
                                                       std::int64_t offset, std::int64_t limit) {
  std::int64_t lo = 0;
  while (lo < count && lo * stride + offset < 0)
    ++lo;
  std::int64_t hi = lo;
  while (hi < count && hi * stride + offset < limit)
    ++hi;
  return {lo, hi};
}

struct ConvOperands {
  TensorRef x, w, y;
  std::optional<TensorRef> bias;
  std::int64_t group = 1;
};

// A Conv whose output plane is one position, as a matrix product over the input values that
// position reads (conv_pointwise.cpp). An undefined Stmt when it does not apply.
Stmt onePositionConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                     const std::vector<WindowAxis>& axes);

// 2-D Conv in NCHW (one group, or groups of several output channels) as a plain nest and its
// default trace: a tile of output channels x vectors of one output row kept in registers
// across the reduction (conv_nchw_traced.cpp). An undefined Stmt when it does not apply
// (depthwise, 3-D, other types, no vector width known, rows narrower than a vector). A 1-D
// Conv is one row of a 2-D one.
Stmt tracedNchwConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                    const std::vector<WindowAxis>& axes);

// Depthwise 2-D Conv (group == channels, one output channel per group) as a plain nest and its
// default trace: a task per channel plane that pads its plane into a scratch of its own, then
// keeps vectors of one output row in registers across the taps (conv_nchw_traced.cpp). An
// undefined Stmt when it does not apply (rows narrower than the window kernels take, 1x1
// windows, other types).
Stmt tracedDepthwiseConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                         const std::vector<WindowAxis>& axes);

// A Conv whose every output reads one input value (one input channel a group and a 1x1
// window: channel multipliers, one channel fanned out) as a plain nest and its default trace
// that scales each input plane's rows in vectors into its output planes
// (conv_nchw_traced.cpp). An undefined Stmt when it does not apply.
Stmt scaledConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                const std::vector<WindowAxis>& axes);

// Pooling (conv_pool.cpp): the kinds, |x|^p and its root for LpPool, and the number of taps
// of output position `o` along one axis that AveragePool divides by.
enum class PoolKind { Max, Average, Lp };
Expr lpPower(const Expr& v, std::int64_t p);
Expr lpRoot(const Expr& sum, std::int64_t p);
Expr tapCount(const WindowAxis& a, const Expr& o, bool includePad);
// A pool's accumulator: its start, one tap's update (MaxPool keeps the first maximum in tap
// order: only a strictly greater value replaces it) and, for output position (oh, ow) of a
// 2-D window, the finished value (AveragePool's mean over tapCount, LpPool's root).
Expr poolStart(PoolKind kind, graph::DType dtype);
Expr poolUpdate(PoolKind kind, const Expr& acc, const Expr& v, std::int64_t p);
Expr poolFinish2d(PoolKind kind, Expr value, graph::DType dtype, std::int64_t p,
                  const WindowAxis& rows, const WindowAxis& cols, const Expr& oh, const Expr& ow,
                  bool includePad);

// 2-D pooling in NCHW (f32) as a plain nest and its default trace: a task per plane that pads
// its plane into a scratch of its own, then keeps tiles of output rows x vectors of a row in
// registers across the window (pool_nchw_traced.cpp). `p` is LpPool's. A MaxPool's Indices
// (flat positions in x, column-major over H and W with `storageOrder` 1) are kept in
// registers beside the maximum. An undefined Stmt when it does not apply.
Stmt tracedNchwPool(KernelBuilder& kb, const Epilogue& epilogue, const TensorRef& x,
                    const TensorRef& y, const std::vector<WindowAxis>& axes, PoolKind kind,
                    std::int64_t p, bool includePad, const TensorRef* indices = nullptr,
                    std::int64_t storageOrder = 0);

// Pointwise 2-D Conv (1x1, unit stride, unpadded, one group) as a matrix product: a plain
// nest and the product's default trace (conv_pointwise.cpp). An undefined Stmt when it does
// not apply.
Stmt pointwiseConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                   const std::vector<WindowAxis>& axes);

// What a plain window nest (conv_gpu.cpp) computes per output element y[n, ch, o...]: acc
// starts at `init`; for each of `channels` reduced input channels rc (none when 0) and each
// tap t inside the input, acc = update(acc, n, ch, rc, input position, t); then y = finish.
struct WindowNest {
  std::int64_t channels = 0;
  Expr init;
  std::function<Expr(const Expr& acc, const Expr& n, const Expr& ch, const Expr& rc,
                     const std::vector<Expr>& pos, const std::vector<Expr>& taps)>
      update;
  std::function<Expr(const Expr& acc, const std::vector<Expr>& outIndex)> finish;
};

// The plain window nest for GPU targets: loops over n, channel and the output positions,
// each element reduced into a scalar over its window (conv_gpu.cpp).
Stmt gpuWindowNest(KernelBuilder& kb, const TensorRef& y, const std::vector<WindowAxis>& axes,
                   const WindowNest& nest);

// Conv as a plain window nest for GPU targets; undefined when the operand types differ.
Stmt gpuConv(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue,
             const ConvOperands& ops, const std::vector<WindowAxis>& axes);

// lathe::ConvNCHWc, the blocked-layout Conv of the layout-nchwc pass (conv_nchwc.cpp).
Stmt lowerConvNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue);
// lathe::DepthwiseConvNCHWc, its depthwise counterpart, and the blocked pools
// lathe::MaxPoolNCHWc, AveragePoolNCHWc and LpPoolNCHWc (window_nchwc.cpp).
Stmt lowerDepthwiseConvNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue);
Stmt lowerMaxPoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue);
Stmt lowerAveragePoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue);
Stmt lowerLpPoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue);
// lathe::GlobalAveragePoolNCHWc and lathe::GlobalMaxPoolNCHWc (pool_nchwc.cpp).
Stmt lowerGlobalAveragePoolNchwc(const graph::Node& node, KernelBuilder& kb,
                                 const Epilogue& epilogue);
Stmt lowerGlobalMaxPoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue);

} // namespace lathe::lowering
