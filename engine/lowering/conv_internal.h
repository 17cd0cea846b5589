#pragma once
// Internal to the Conv lowerings (conv_pool.cpp, conv_tiled.cpp).
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

struct ConvOperands {
  TensorRef x, w, y;
  std::optional<TensorRef> bias;
  std::int64_t group = 1;
};

// Conv (any strides and dilations; or a 1x1 Conv whose strided inputs `subsample` picks)
// with a tile of output channels x positions kept in vector registers across the whole
// reduction. An undefined Stmt when the schedule does not apply (groups, no vector
// width known, odd channel counts); the caller then uses another.
Stmt tiledConv(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue,
               const ConvOperands& ops, const std::vector<WindowAxis>& axes,
               const std::vector<std::int64_t>& subsample);

} // namespace lathe::lowering
