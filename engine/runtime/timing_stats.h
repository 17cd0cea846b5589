#pragma once
// Summary statistics of repeated timings, for `--print-time` and the profiler views.

#include <cstddef>
#include <span>
#include <string>

namespace lathe::runtime {

struct TimingStats {
  std::size_t count = 0;
  double mean = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  // Sample standard deviation (divides by n - 1): the runs are a sample of what the kernel
  // takes, and this is what numpy.std(ddof=1) and most benchmark tools report. 0 for n < 2.
  double stddev = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
};

// All fields are 0 for an empty input. Units are whatever the input uses (ms by convention).
TimingStats computeTimingStats(std::span<const double> durations);

// The q-th percentile (q in [0, 100]) with linear interpolation between closest ranks,
// numpy.percentile's default: rank q/100 * (n - 1). 0 for an empty input.
double percentile(std::span<const double> values, double q);

// "mean 1.234 ms  median 1.2 ms  min 1.1 ms  max 1.6 ms  std 0.05 ms  p90 1.4 ms (n=10)".
std::string formatTimingStats(const TimingStats& stats, const std::string& unit = "ms");

} // namespace lathe::runtime
