#include "engine/graph/op_table.h"

#include <algorithm>
#include <array>

namespace lathe::graph {
namespace {
constexpr OpInfo kOps[] = {
#define LATHE_OP(NAME, CAT, ROLE, MIN_IN, MAX_IN, MIN_OUT, MAX_OUT, SUMMARY)                       \
  {#NAME, OpCategory::CAT, FusionRole::ROLE, MIN_IN, MAX_IN, MIN_OUT, MAX_OUT, SUMMARY},
#include "engine/graph/ops.def"
#undef LATHE_OP
};
} // namespace

const OpInfo* findOp(std::string_view name) {
  // ops.def is sorted by name.
  auto it = std::lower_bound(std::begin(kOps), std::end(kOps), name,
                             [](const OpInfo& op, std::string_view n) { return op.name < n; });
  return it != std::end(kOps) && it->name == name ? &*it : nullptr;
}

const OpInfo* findOp(std::string_view domain, std::string_view name) {
  static constexpr OpInfo kLatheOps[] = {
      {"ConvNCHWc", OpCategory::Convolution, FusionRole::Anchor, 2, 3, 1, 1,
       "2-D convolution on channel-blocked (NCHW16c) tensors with weights packed at compile "
       "time"},
      {"ConvWinogradNCHWc", OpCategory::Convolution, FusionRole::Anchor, 2, 3, 1, 1,
       "3x3 convolution on channel-blocked tensors by Winograd's minimal filtering, weights "
       "transformed at compile time"},
      {"DepthwiseConvNCHWc", OpCategory::Convolution, FusionRole::Anchor, 2, 3, 1, 1,
       "depthwise 2-D convolution on channel-blocked (NCHW16c) tensors with weights packed at "
       "compile time"},
      {"MaxPoolNCHWc", OpCategory::Reduction, FusionRole::Anchor, 1, 1, 1, 1,
       "max pooling of a channel-blocked (NCHW16c) tensor"},
      {"AveragePoolNCHWc", OpCategory::Reduction, FusionRole::Anchor, 1, 1, 1, 1,
       "average pooling of a channel-blocked (NCHW16c) tensor"},
      {"LpPoolNCHWc", OpCategory::Reduction, FusionRole::Anchor, 1, 1, 1, 1,
       "Lp pooling of a channel-blocked (NCHW16c) tensor"},
      {"GlobalAveragePoolNCHWc", OpCategory::Reduction, FusionRole::Anchor, 1, 1, 1, 1,
       "mean over each plane of a channel-blocked (NCHW16c) tensor"},
      {"GlobalMaxPoolNCHWc", OpCategory::Reduction, FusionRole::Anchor, 1, 1, 1, 1,
       "maximum over each plane of a channel-blocked (NCHW16c) tensor"},
  };
  if (domain.empty())
    return findOp(name);
  if (domain != kLatheDomain)
    return nullptr;
  for (const OpInfo& op : kLatheOps)
    if (op.name == name)
      return &op;
  return nullptr;
}

const UnreadAttribute* findUnreadAttribute(std::string_view op, std::string_view attribute) {
  static constexpr UnreadAttribute kUnread[] = {
#define LATHE_OP_ATTRIBUTE(OP, ATTRIBUTE, USE, REASON) {#OP, #ATTRIBUTE, AttributeUse::USE, REASON},
#include "engine/graph/op_attributes.def"
#undef LATHE_OP_ATTRIBUTE
  };
  for (const UnreadAttribute& a : kUnread)
    if (a.op == op && a.attribute == attribute)
      return &a;
  return nullptr;
}

std::span<const OpInfo> allOps() {
  return kOps;
}

std::string_view categoryName(OpCategory category) {
  switch (category) {
  case OpCategory::Convolution:
    return "convolution";
  case OpCategory::MatMul:
    return "matmul";
  case OpCategory::Elementwise:
    return "elementwise";
  case OpCategory::Normalization:
    return "normalization";
  case OpCategory::Reduction:
    return "reduction";
  case OpCategory::DataMovement:
    return "data movement";
  case OpCategory::ControlFlow:
    return "control flow";
  }
  return "?";
}

} // namespace lathe::graph
