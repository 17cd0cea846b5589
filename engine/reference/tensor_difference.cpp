#include "engine/reference/tensor_difference.h"

#include <algorithm>
#include <cmath>

namespace lathe::reference {

TensorDifference compareTensors(const runtime::Tensor& actual, const runtime::Tensor& reference,
                                double rtol, double atol) {
  LATHE_CHECK(actual.numElements() == reference.numElements(), "compared tensors differ in size");
  TensorDifference d;
  d.elements = actual.numElements();
  for (std::int64_t i = 0; i < d.elements; ++i) {
    const double a = actual.elementAsDouble(i), r = reference.elementAsDouble(i);
    d.actualNaN += std::isnan(a);
    d.actualInf += std::isinf(a);
    d.referenceNaN += std::isnan(r);
    d.referenceInf += std::isinf(r);
    bool within = false;
    if (std::isnan(r)) {
      within = std::isnan(a);
    } else if (std::isinf(r)) {
      within = a == r;
    } else if (std::isfinite(a)) {
      const double error = std::fabs(a - r);
      d.maxAbsError = std::max(d.maxAbsError, error);
      if (r != 0)
        d.maxRelError = std::max(d.maxRelError, error / std::fabs(r));
      within = error <= atol + rtol * std::fabs(r);
    }
    if (within)
      continue;
    if (d.outside++ == 0) {
      d.firstOutside = i;
      d.firstActual = a;
      d.firstReference = r;
    }
  }
  return d;
}

} // namespace lathe::reference
