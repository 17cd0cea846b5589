#pragma once
// Internal to engine/api: min/max/mean/std and a histogram of a sequence of values, for
// Session::constantStats (weights) and lathe compare (both sides of a value).
#include "engine/api/session.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

namespace lathe::api {

// Fills s.count, nonFinite, min, max, mean, std and a `bins`-bin histogram of the finite
// values at(0) .. at(n - 1). The bins span [min, max], widened to `range` when given (so
// that two histograms line up). Two passes (sums, then deviations and bins), each a tight
// loop when `at` inlines: a 2.4M-float weight takes milliseconds.
template <typename At>
void accumulateStats(std::int64_t n, At at, int bins, ConstantStats& s,
                     std::optional<std::pair<double, double>> range = std::nullopt) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  std::int64_t finite = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = at(i);
    if (!std::isfinite(v))
      continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    ++finite;
  }
  s.count = n;
  s.nonFinite = n - finite;
  s.histogram.assign(static_cast<std::size_t>(bins), 0);
  if (finite == 0)
    return;
  s.min = lo;
  s.max = hi;
  s.mean = sum / static_cast<double>(finite);
  s.histogramMin = range ? std::min(range->first, lo) : lo;
  s.histogramMax = range ? std::max(range->second, hi) : hi;
  // Deviations from the mean in a second pass: no cancellation from a sum of squares.
  double squares = 0;
  const double base = s.histogramMin;
  const double scale = s.histogramMax > base ? bins / (s.histogramMax - base) : 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = at(i);
    if (!std::isfinite(v))
      continue;
    squares += (v - s.mean) * (v - s.mean);
    ++s.histogram[static_cast<std::size_t>(
        std::clamp(static_cast<int>((v - base) * scale), 0, bins - 1))];
  }
  s.std = std::sqrt(squares / static_cast<double>(finite));
}

} // namespace lathe::api
