#pragma once
// How far a computed tensor is from a reference tensor of the same shape, element by
// element: the numbers `lathe compare` prints per value.

#include "engine/runtime/tensor.h"

#include <cstdint>

namespace lathe::reference {

struct TensorDifference {
  std::int64_t elements = 0;
  // Elements outside atol + rtol * |reference|. A NaN matches only a NaN and an infinity
  // only the same infinity, so a NaN or infinity where the reference has none is outside.
  std::int64_t outside = 0;
  // Over the elements finite on both sides; the relative error only where reference != 0.
  double maxAbsError = 0, maxRelError = 0;
  std::int64_t actualNaN = 0, actualInf = 0, referenceNaN = 0, referenceInf = 0;
  // The first element outside (flat index, -1 if none) and its two values.
  std::int64_t firstOutside = -1;
  double firstActual = 0, firstReference = 0;
};

// `actual` and `reference` must have the same number of elements (any element types).
TensorDifference compareTensors(const runtime::Tensor& actual, const runtime::Tensor& reference,
                                double rtol, double atol);

} // namespace lathe::reference
