#pragma once
#include "engine/graph/graph.h"

#include <cstdint>

namespace lathe::passes {

// The output tile (m x m) Winograd's F(m x m, 3 x 3) would use for a blocked 3x3 Conv with
// stride and dilation 1 (made by layout-nchwc), or 0 when the direct convolution is expected
// to be faster. The choice weighs the multiplies saved (alpha^2 per tile of m^2 outputs
// against 9 per output, counting the part of the last tiles that falls outside the plane)
// against the transformed weights, which are alpha^2/9 times larger and are reused once per
// tile: with few tiles (small planes) reading them costs more than the multiplies saved.
std::int64_t winogradTileFor(std::int64_t images, std::int64_t inChannels, std::int64_t outChannels,
                             std::int64_t outH, std::int64_t outW);

// Replaces each blocked 3x3 Conv with stride and dilation 1 for which winogradTileFor picks
// a tile by lathe::ConvWinogradNCHWc: the same convolution computed by Winograd's minimal
// filtering, its weights transformed at compile time to [M/16, C/16, alpha, alpha, 16, 16].
bool winogradNchwc(graph::Graph& graph);

} // namespace lathe::passes
