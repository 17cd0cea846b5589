#pragma once
// What the cost model sees of a scheduled kernel: a fixed-length vector of numbers read off
// its loop IR (work, how it is split across threads and vector lanes, unrolling, memory
// traffic per innermost iteration, loop shapes). Counts and extents enter as log2(1 + x),
// so that kernels of very different sizes share one scale.

#include "engine/loop_ir/ir.h"

#include <array>
#include <string>

namespace lathe::tuner {

inline constexpr int kFeatureCount = 16;
using Features = std::array<float, kFeatureCount>;

// Names of the features, in order, for messages and tests.
const std::array<const char*, kFeatureCount>& featureNames();

Features featuresOf(const loop::Kernel& kernel);

} // namespace lathe::tuner
