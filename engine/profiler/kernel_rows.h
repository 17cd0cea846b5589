#pragma once
// The per-kernel table: call events of a Profile summed per kernel name.

#include "engine/profiler/profile.h"

#include <vector>

namespace lathe::profiler {

// One row per kernel, by total time (largest first; ties by name). `peakGflops` <= 0 leaves
// percentOfPeak unknown. Chunk events are not counted (they lie inside their call).
std::vector<KernelRow> kernelRows(const Profile& profile, double peakGflops);

// Wall time of the runs, summed (ms).
double runWallMs(const Profile& profile);

} // namespace lathe::profiler
