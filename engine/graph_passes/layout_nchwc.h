#pragma once
#include "engine/graph/graph.h"

#include <cstdint>

namespace lathe::passes {

// Channels per block of the blocked activation layout: NCHW becomes [N, C/16, H, W, 16], so
// that 16 channels of one position are one AVX-512 vector (two AVX2 vectors).
inline constexpr std::int64_t kChannelBlock = 16;

// Runs chains of 2-D Conv and the elementwise ops between them in the blocked layout
// NCHW16c: each Conv (no groups, channel counts multiples of the block, constant weights)
// becomes lathe::ConvNCHWc with its weights packed at compile time as
// [M/16, C/16, kh, kw, 16, 16] (input channel, then output channel, within the blocks);
// elementwise ops whose operands are all blocked (or scalars) follow the layout; Reshape and
// Transpose convert at the edges of a chain. A chain is converted only when it has at
// least twice as many Convs as conversions, so that isolated Convs stay as they are.
bool layoutNchwc(graph::Graph& graph);

} // namespace lathe::passes
