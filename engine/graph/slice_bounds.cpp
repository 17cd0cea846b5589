#include "engine/graph/slice_bounds.h"

#include <algorithm>
#include <limits>

namespace lathe::graph {
namespace {

// For a > 0 and b > 0, without the overflow of (a + b - 1) / b when b is huge.
std::int64_t ceilDivPositive(std::int64_t a, std::int64_t b) {
  return (a - 1) / b + 1;
}

} // namespace

SliceAxis clampSlice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  if (dim <= 0)
    return {0, step, 0};
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<std::int64_t>(start, 0, dim);
    end = std::clamp<std::int64_t>(end, 0, dim);
    return {start, step, end > start ? ceilDivPositive(end - start, step) : 0};
  }
  start = std::clamp<std::int64_t>(start, 0, dim - 1);
  end = std::clamp<std::int64_t>(end, -1, dim - 1);
  if (step == std::numeric_limits<std::int64_t>::min()) // -step would overflow; one element
    return {start, step, start > end ? 1 : 0};
  return {start, step, start > end ? ceilDivPositive(start - end, -step) : 0};
}

} // namespace lathe::graph
