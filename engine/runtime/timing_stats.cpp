#include "engine/runtime/timing_stats.h"

#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace lathe::runtime {

namespace {

double percentileOfSorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty())
    return 0;
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

} // namespace

double percentile(std::span<const double> values, double q) {
  LATHE_CHECK(q >= 0 && q <= 100, "percentile must be in [0, 100]");
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return percentileOfSorted(sorted, q);
}

TimingStats computeTimingStats(std::span<const double> durations) {
  TimingStats stats;
  stats.count = durations.size();
  if (durations.empty())
    return stats;
  std::vector<double> sorted(durations.begin(), durations.end());
  std::sort(sorted.begin(), sorted.end());

  double sum = 0;
  for (double value : sorted)
    sum += value;
  stats.mean = sum / static_cast<double>(sorted.size());
  // Two passes (mean, then squared deviations) to avoid the cancellation of sum-of-squares.
  if (sorted.size() > 1) {
    double squares = 0;
    for (double value : sorted)
      squares += (value - stats.mean) * (value - stats.mean);
    stats.stddev = std::sqrt(squares / static_cast<double>(sorted.size() - 1));
  }
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.median = percentileOfSorted(sorted, 50);
  stats.p90 = percentileOfSorted(sorted, 90);
  stats.p95 = percentileOfSorted(sorted, 95);
  stats.p99 = percentileOfSorted(sorted, 99);
  return stats;
}

std::string formatTimingStats(const TimingStats& stats, const std::string& unit) {
  const char* u = unit.c_str();
  char text[320];
  std::snprintf(text, sizeof text,
                "mean %.4g %s  median %.4g %s  min %.4g %s  max %.4g %s  std %.3g %s  "
                "p90 %.4g %s  p99 %.4g %s (n=%zu)",
                stats.mean, u, stats.median, u, stats.min, u, stats.max, u, stats.stddev, u,
                stats.p90, u, stats.p99, u, stats.count);
  return text;
}

} // namespace lathe::runtime
