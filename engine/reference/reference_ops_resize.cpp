// Reference kernels for Resize (nearest, linear, cubic; every coordinate transformation of
// opset 13) and Upsample, written from the ONNX operator description: each output element
// is a weighted sum of input elements, the taps chosen independently per axis.

#include "engine/graph_passes/constant_evaluator_internal.h"
#include "engine/reference/reference_ops_internal.h"

#include <algorithm>
#include <cmath>

namespace lathe::reference::ops {
namespace {

// One input element an output coordinate reads along one axis, and its weight; index -1:
// outside the input, which tf_crop_and_resize fills with its extrapolation value.
struct Tap {
  std::int64_t index;
  double weight;
};

struct ResizeMode {
  std::string mode = "nearest";               // nearest, linear, cubic
  std::string coordinates = "half_pixel";     // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor"; // nearest_mode, or "legacy" (Upsample, Resize-10)
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0;
};

// The input coordinate of output coordinate `o` along an axis of `in` elements resized to
// `out` with `scale`; roiStart/roiEnd for tf_crop_and_resize.
double sourceCoordinate(const ResizeMode& m, std::int64_t o, std::int64_t in, std::int64_t out,
                        double scale, double roiStart, double roiEnd) {
  const double x = static_cast<double>(o);
  if (m.coordinates == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (m.coordinates == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m.coordinates == "align_corners")
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (m.coordinates == "asymmetric")
    return x / scale;
  if (m.coordinates == "tf_crop_and_resize")
    return out > 1 ? roiStart * static_cast<double>(in - 1) + x * (roiEnd - roiStart) *
                                                                  static_cast<double>(in - 1) /
                                                                  static_cast<double>(out - 1)
                   : 0.5 * (roiStart + roiEnd) * static_cast<double>(in - 1);
  refuse("coordinate_transformation_mode '" + m.coordinates + "'");
}

std::int64_t nearestIndex(const ResizeMode& m, double x, double scale) {
  const double f = std::floor(x);
  const bool half = x - f == 0.5;
  double r;
  if (m.nearest == "round_prefer_floor")
    r = half ? f : std::round(x);
  else if (m.nearest == "round_prefer_ceil")
    r = half ? f + 1 : std::round(x);
  else if (m.nearest == "floor")
    r = f;
  else if (m.nearest == "ceil")
    r = std::ceil(x);
  else if (m.nearest == "legacy") // down when enlarging, up when shrinking
    r = scale >= 1 ? f : std::ceil(x);
  else
    refuse("nearest_mode '" + m.nearest + "'");
  return static_cast<std::int64_t>(r);
}

double cubicWeight(double d, double a) { // d: distance from the sample, in [0, 2)
  d = std::abs(d);
  if (d <= 1)
    return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2)
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

std::vector<Tap> tapsFor(const ResizeMode& m, double x, std::int64_t in, double scale) {
  const auto clampIndex = [&](std::int64_t i) { return std::clamp<std::int64_t>(i, 0, in - 1); };
  if (m.coordinates == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1)))
    return {{-1, 1.0}};
  if (m.mode == "nearest")
    return {{clampIndex(nearestIndex(m, x, scale)), 1.0}};
  const auto base = static_cast<std::int64_t>(std::floor(x));
  const double t = x - static_cast<double>(base);
  if (m.mode == "linear")
    return {{clampIndex(base), 1 - t}, {clampIndex(base + 1), t}};
  std::vector<Tap> taps; // cubic: four samples around x
  double kept = 0;
  for (std::int64_t k = -1; k <= 2; ++k) {
    const std::int64_t i = base + k;
    double w = cubicWeight(static_cast<double>(k) - t, m.cubicA);
    if (m.excludeOutside && (i < 0 || i >= in))
      w = 0;
    kept += w;
    taps.push_back({clampIndex(i), w});
  }
  if (m.excludeOutside && kept != 0)
    for (Tap& tap : taps)
      tap.weight /= kept;
  return taps;
}

Outputs resample(const Node& node, const TensorType& outType, const ResizeMode& m,
                 const std::vector<double>& scales, const std::vector<double>& roi) {
  const TensorData& data = input(node, 0);
  if (m.mode != "nearest" && !isRealFloat(data.dtype()))
    refuse(m.mode + " resizing of " + std::string(graph::dtypeName(data.dtype())));
  const std::vector<double> x = passes::eval::realsOf(data);
  const Dims& in = data.dims();
  const Dims out = outType.staticDims();
  const std::size_t rank = in.size();
  // Per axis, per output coordinate, its taps.
  std::vector<std::vector<std::vector<Tap>>> taps(rank);
  for (std::size_t a = 0; a < rank; ++a)
    for (std::int64_t o = 0; o < out[a]; ++o) {
      const double start = roi.size() == 2 * rank ? roi[a] : 0.0;
      const double end = roi.size() == 2 * rank ? roi[rank + a] : 1.0;
      const double coordinate = sourceCoordinate(m, o, in[a], out[a], scales[a], start, end);
      taps[a].push_back(tapsFor(m, coordinate, in[a], scales[a]));
    }
  const Dims strides = stridesOf(in);
  std::vector<double> y(static_cast<std::size_t>(product(out)));
  Dims at(rank, 0);
  for (double& value : y) {
    // Every combination of one tap per axis, weighted by the product of their weights.
    std::vector<std::size_t> pick(rank, 0);
    double sum = 0;
    bool outside = false;
    for (bool more = true; more;) {
      double weight = 1;
      std::int64_t offset = 0;
      for (std::size_t a = 0; a < rank; ++a) {
        const Tap& tap = taps[a][static_cast<std::size_t>(at[a])][pick[a]];
        outside = outside || tap.index < 0;
        weight *= tap.weight;
        offset += tap.index * strides[a];
      }
      if (!outside)
        sum += weight * x[static_cast<std::size_t>(offset)];
      more = false;
      for (std::size_t a = rank; a-- > 0;) {
        if (++pick[a] < taps[a][static_cast<std::size_t>(at[a])].size()) {
          more = true;
          break;
        }
        pick[a] = 0;
      }
    }
    value = outside ? m.extrapolation : sum;
    for (std::size_t a = rank; a-- > 0;) {
      if (++at[a] < out[a])
        break;
      at[a] = 0;
    }
  }
  return {makeOutput(outType, y)};
}

std::vector<double> scalesFrom(const TensorData* scales, const Dims& in, const Dims& out) {
  std::vector<double> s;
  if (scales && scales->numElements() == static_cast<std::int64_t>(in.size())) {
    s = passes::eval::realsOf(*scales);
  } else { // from the output size
    for (std::size_t a = 0; a < in.size(); ++a)
      s.push_back(static_cast<double>(out[a]) / static_cast<double>(in[a]));
  }
  return s;
}

std::optional<Outputs> resize(const Node& node, const std::vector<TensorType>& out) {
  const Dims& in = input(node, 0).dims();
  const bool legacy = node.inputs.size() == 2; // Resize-10: X, scales
  ResizeMode m;
  m.mode = node.attrString("mode", "nearest");
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    refuse("Resize mode '" + m.mode + "'");
  if (legacy) {
    m.coordinates = "asymmetric";
    m.nearest = "legacy";
    if (m.mode == "cubic")
      refuse("Resize-10 has no cubic mode");
    return resample(node, out[0], m, scalesFrom(optionalInput(node, 1), in, out[0].staticDims()),
                    {});
  }
  m.coordinates = node.attrString("coordinate_transformation_mode", "half_pixel");
  m.nearest = node.attrString("nearest_mode", "round_prefer_floor");
  m.cubicA = node.attrFloat("cubic_coeff_a", -0.75f);
  m.excludeOutside = node.attrInt("exclude_outside", 0) != 0;
  m.extrapolation = node.attrFloat("extrapolation_value", 0.0f);
  std::vector<double> roi;
  if (const TensorData* r = optionalInput(node, 1); r && m.coordinates == "tf_crop_and_resize")
    roi = passes::eval::realsOf(*r);
  const TensorData* sizes = optionalInput(node, 3);
  const TensorData* scales = optionalInput(node, 2);
  return resample(
      node, out[0], m,
      scalesFrom(sizes && sizes->numElements() > 0 ? nullptr : scales, in, out[0].staticDims()),
      roi);
}

std::optional<Outputs> upsample(const Node& node, const std::vector<TensorType>& out) {
  ResizeMode m;
  m.mode = node.attrString("mode", "nearest");
  if (m.mode != "nearest" && m.mode != "linear")
    refuse("Upsample mode '" + m.mode + "'");
  m.coordinates = "asymmetric";
  m.nearest = "legacy";
  return resample(node, out[0], m,
                  scalesFrom(optionalInput(node, 1), input(node, 0).dims(), out[0].staticDims()),
                  {});
}

} // namespace

void addResizeKernels(KernelTable& table) {
  table["Resize"] = resize;
  table["Upsample"] = upsample;
}

} // namespace lathe::reference::ops
