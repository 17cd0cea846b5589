#pragma once
// int64 arithmetic that reports overflow instead of wrapping: extents, trip counts and
// element counts computed at compile time must be exact or refused.

#include <cstdint>
#include <optional>

namespace lathe {

// a + b, a - b, a * b, or nothing when the exact result does not fit in an int64.
inline std::optional<std::int64_t> checkedAdd(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

inline std::optional<std::int64_t> checkedSub(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

inline std::optional<std::int64_t> checkedMul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

// a / b rounded toward minus infinity, and toward plus infinity (b != 0; b == -1 with
// a == INT64_MIN overflows, as a / b does).
inline std::int64_t floorDivide(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

inline std::int64_t ceilDivide(std::int64_t a, std::int64_t b) {
  return a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
}

} // namespace lathe
