#pragma once
// Winograd's minimal filtering F(m x m, 3 x 3) for m = 2 and m = 4 (the transforms of Lavin
// and Gray, interpolation points 0, +-1, +-2 and infinity). A tile of m x m outputs of a 3x3
// correlation (what ONNX Conv computes) comes from an alpha x alpha input tile d, alpha = m + 2:
//   Y = At [ (G g Gt) .* (Bt d B) ] A
// where g is the 3x3 filter. Per tile and channel pair that is alpha^2 multiplies instead of
// 9 m^2: 16 for 4 outputs (m = 2) and 36 for 16 (m = 4), against 36 and 144 directly.

#include <cstdint>

namespace lathe::winograd {

struct Transforms {
  int m = 0, alpha = 0;
  const double* bt = nullptr; // alpha x alpha, row-major: Bt
  const double* g = nullptr;  // alpha x 3: G
  const double* at = nullptr; // m x alpha: At
};

inline constexpr double kBt2[] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
inline constexpr double kG2[] = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
inline constexpr double kAt2[] = {1, 1, 1, 0, 0, 1, -1, -1};

inline constexpr double kBt4[] = {4, 0,  -5, 0, 1, 0, 0, -4, -4, 1,  1, 0, 0, 4, -4, -1, 1, 0,
                                  0, -2, -1, 2, 1, 0, 0, 2,  -1, -2, 1, 0, 0, 4, 0,  -5, 0, 1};
inline constexpr double kG4[] = {1.0 / 4,  0,         0,        -1.0 / 6, -1.0 / 6, -1.0 / 6,
                                 -1.0 / 6, 1.0 / 6,   -1.0 / 6, 1.0 / 24, 1.0 / 12, 1.0 / 6,
                                 1.0 / 24, -1.0 / 12, 1.0 / 6,  0,        0,        1};
inline constexpr double kAt4[] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0,
                                  0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};

// The transforms for output tiles of m x m (2 or 4); m = 0 for any other m.
inline Transforms transforms(std::int64_t m) {
  if (m == 2)
    return {2, 4, kBt2, kG2, kAt2};
  if (m == 4)
    return {4, 6, kBt4, kG4, kAt4};
  return {};
}

} // namespace lathe::winograd
