// Resize (opset 10..19) and Upsample as a pointwise rule: per resized axis, the output
// coordinate is mapped to an input coordinate (coordinate_transformation_mode), which picks
// one input index (nearest) or weights 2 (linear) or 4 (cubic) neighbours; the axes combine
// separably, as in the ONNX reference implementation. Coordinates are computed in f64 like
// that reference; the weighted sum is taken in f32 (f64 for f64 data).
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace lathe::lowering {
namespace {

using graph::Node;
using loop::Call;
using loop::Intrinsic;
using Shape = std::vector<std::int64_t>;

[[noreturn]] void invalidNode(const Node& n, const std::string& reason) {
  throw Error(ErrorKind::Invalid, reason, {{}, n.name, n.opType()});
}

Expr f64(double v) {
  return loop::makeFloatConst(loop::f64(), v);
}
Expr floorOf(const Expr& x) {
  return Call::make(Intrinsic::Floor, {x});
}
Expr ceilOf(const Expr& x) {
  return Call::make(Intrinsic::Ceil, {x});
}

std::vector<double> constantReals(const Node& n, std::size_t i, const char* what) {
  const graph::TensorData& t = constantInput(n, i, what);
  std::vector<double> out;
  for (std::int64_t k = 0; k < t.numElements(); ++k)
    out.push_back(t.elementAsDouble(k));
  return out;
}

// Everything the rule needs to know about one op, read from inputs and attributes.
struct ResizeParams {
  std::string mode;        // nearest, linear, cubic
  std::string coordinates; // coordinate_transformation_mode
  std::string nearestMode; // round_prefer_floor, ..., or "simple" (Upsample, Resize-10)
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0;
  std::vector<double> scales;         // per input axis
  std::vector<double> resizedLengths; // per axis: in * scale, what align_corners divides by
  std::vector<double> roiStart, roiEnd;
  // Scales (and roi) given as runtime operands: per axis, whether the scale is known at
  // compile time; otherwise scaleExpr/resizedExpr hold f64 expressions loaded from the
  // operand, and roiStartExpr/roiEndExpr the roi elements in the roi's own element type.
  std::vector<bool> scaleKnown;
  std::vector<Expr> scaleExpr, resizedExpr;
  std::vector<Expr> roiStartExpr, roiEndExpr;
  graph::DType roiType = graph::DType::F32;
};

bool isCompileTimeConstant(const Node& n, std::size_t i) {
  const graph::Value* v = n.input(i);
  return v && v->isConstant() && !v->constant().isElided();
}

// Element k of a runtime operand, as f64 or in its own type.
Expr runtimeElement(OperandReader& in, std::size_t input, std::int64_t k) {
  return in.read(input, {loop::makeIndex(k)});
}

ResizeParams resizeParams(const Node& n, const Shape& inShape, const Shape& outShape,
                          OperandReader& in) {
  ResizeParams p;
  const std::size_t rank = inShape.size();
  // Upsample and Resize-10 (two inputs) have asymmetric coordinates and "simple" rounding.
  const bool legacy = n.opType() == "Upsample" || n.inputs.size() == 2;
  p.mode = n.attrString("mode", "nearest");
  if (p.mode == "bilinear")
    p.mode = "linear";
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    unsupportedNode(n, "resize mode '" + p.mode + "'");
  p.coordinates =
      legacy ? "asymmetric" : n.attrString("coordinate_transformation_mode", "half_pixel");
  p.nearestMode = legacy ? "simple" : n.attrString("nearest_mode", "round_prefer_floor");
  p.cubicA = n.attrFloat("cubic_coeff_a", -0.75f);
  p.excludeOutside = n.attrInt("exclude_outside", 0) != 0;
  p.extrapolation = n.attrFloat("extrapolation_value", 0.0f);

  std::vector<std::size_t> axes;
  for (std::int64_t a : n.attrInts("axes")) // opset 18
    axes.push_back(static_cast<std::size_t>(normalizeAxis(n, a, static_cast<std::int64_t>(rank))));
  if (axes.empty())
    for (std::size_t a = 0; a < rank; ++a)
      axes.push_back(a);

  std::vector<double> given;   // scales of the listed axes
  std::vector<Expr> givenExpr; // scales given at run time
  const std::size_t scalesInput = legacy ? 1 : 2;
  // An empty scales operand (exporters write one next to sizes) counts as absent.
  const graph::Value* scales = n.input(scalesInput);
  if (scales && !(scales->type.isStatic() && scales->type.numElements() == 0)) {
    if (isCompileTimeConstant(n, scalesInput) || !scales->type.isStatic()) {
      given = constantReals(n, scalesInput, "scales");
    } else {
      // Runtime scales: the output shape is static, so only the coordinate math needs them.
      for (std::int64_t k = 0; k < *scales->type.numElements(); ++k)
        givenExpr.push_back(loop::cast(loop::f64(), runtimeElement(in, scalesInput, k)));
      given.assign(givenExpr.size(), 0.0);
    }
  } else if (const graph::Attribute* a = n.findAttribute("scales"); // Upsample-7
             a && a->is<std::vector<float>>())
    given.assign(a->as<std::vector<float>>().begin(), a->as<std::vector<float>>().end());

  p.scales.assign(rank, 1.0);
  p.scaleKnown.assign(rank, true);
  p.scaleExpr.assign(rank, Expr());
  p.resizedExpr.assign(rank, Expr());
  p.resizedLengths.assign(rank, 0);
  for (std::size_t a = 0; a < rank; ++a)
    p.resizedLengths[a] = static_cast<double>(inShape[a]);
  if (!given.empty()) {
    if (given.size() != axes.size())
      invalidNode(n, "scales has " + std::to_string(given.size()) + " entries for " +
                         std::to_string(axes.size()) + " axes");
    for (std::size_t i = 0; i < axes.size(); ++i) {
      p.scales[axes[i]] = given[i];
      p.resizedLengths[axes[i]] = given[i] * static_cast<double>(inShape[axes[i]]);
      if (!givenExpr.empty()) {
        p.scaleKnown[axes[i]] = false;
        p.scaleExpr[axes[i]] = givenExpr[i];
        p.resizedExpr[axes[i]] = givenExpr[i] * f64(static_cast<double>(inShape[axes[i]]));
      }
    }
  } else if (!legacy && n.input(3)) {
    const std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") { // the sizes are the output extents
      for (std::size_t a : axes) {
        p.scales[a] = static_cast<double>(outShape[a]) / static_cast<double>(inShape[a]);
        p.resizedLengths[a] = static_cast<double>(outShape[a]);
      }
    } else if (policy == "not_larger" || policy == "not_smaller") {
      const Shape sizes = constantInts(n, 3, "sizes");
      if (sizes.size() != axes.size())
        invalidNode(n, "sizes does not have one entry per axis");
      double scale = policy == "not_larger" ? INFINITY : 0.0;
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const double s = static_cast<double>(sizes[i]) / static_cast<double>(inShape[axes[i]]);
        scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      for (std::size_t a : axes) {
        p.scales[a] = scale;
        p.resizedLengths[a] = scale * static_cast<double>(inShape[a]);
      }
    } else {
      invalidNode(n, "unknown keep_aspect_ratio_policy '" + policy + "'");
    }
  } else {
    invalidNode(n, "needs scales or sizes");
  }

  if (n.attrInt("antialias", 0) != 0 && p.mode != "nearest")
    for (std::size_t a = 0; a < rank; ++a)
      // With a static output, a runtime scale is below 1 exactly when the axis shrinks.
      if (p.scaleKnown[a] ? p.scales[a] < 1.0 : outShape[a] < inShape[a])
        unsupportedNode(n, "antialiased downsampling");

  if (p.coordinates == "tf_crop_and_resize" && !isCompileTimeConstant(n, 1) && n.input(1) &&
      n.input(1)->type.isStatic()) {
    const std::int64_t count = *n.input(1)->type.numElements();
    if (count != static_cast<std::int64_t>(2 * axes.size()))
      invalidNode(n, "roi has " + std::to_string(count) + " entries for " +
                         std::to_string(axes.size()) + " axes");
    p.roiType = n.input(1)->type.dtype;
    if (!loopType(p.roiType).isFloat())
      unsupportedNode(n, "non-float roi");
    p.roiStartExpr.assign(rank, constantOf(p.roiType, 0.0));
    p.roiEndExpr.assign(rank, constantOf(p.roiType, 1.0));
    for (std::size_t i = 0; i < axes.size(); ++i) {
      p.roiStartExpr[axes[i]] = runtimeElement(in, 1, static_cast<std::int64_t>(i));
      p.roiEndExpr[axes[i]] = runtimeElement(in, 1, static_cast<std::int64_t>(i + axes.size()));
    }
  } else if (p.coordinates == "tf_crop_and_resize") {
    const std::vector<double> roi = constantReals(n, 1, "roi");
    if (roi.size() != 2 * axes.size())
      invalidNode(n, "roi has " + std::to_string(roi.size()) + " entries for " +
                         std::to_string(axes.size()) + " axes");
    p.roiStart.assign(rank, 0.0);
    p.roiEnd.assign(rank, 1.0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
      p.roiStart[axes[i]] = roi[i];
      p.roiEnd[axes[i]] = roi[i + axes.size()];
    }
  }
  return p;
}

// The input coordinate (f64) of output index `x` along an axis.
Expr inputCoordinate(const Node& n, const ResizeParams& p, std::size_t axis, const Expr& x,
                     std::int64_t inLen, std::int64_t outLen) {
  const Expr xo = loop::cast(loop::f64(), x);
  const double s = p.scales[axis], resized = p.resizedLengths[axis];
  const auto in = static_cast<double>(inLen);
  const std::string& mode = p.coordinates;
  if (!p.scaleKnown[axis] || !p.roiStartExpr.empty()) {
    // Runtime scales or roi: the same formulas over expressions.
    const Expr S = p.scaleKnown[axis] ? f64(s) : p.scaleExpr[axis];
    const Expr R = p.scaleKnown[axis] ? f64(resized) : p.resizedExpr[axis];
    auto ifResizedOne = [&](Expr one, Expr other) {
      if (p.scaleKnown[axis])
        return resized == 1 ? one : other;
      return loop::select(loop::eq(R, f64(1)), one, other);
    };
    if (mode == "half_pixel")
      return (xo + f64(0.5)) / S - f64(0.5);
    if (mode == "half_pixel_symmetric") {
      const Expr adjustment = f64(static_cast<double>(outLen)) / (S * f64(in));
      const Expr offset = f64(in / 2) * (f64(1) - adjustment);
      return offset + (xo + f64(0.5)) / S - f64(0.5);
    }
    if (mode == "pytorch_half_pixel")
      return ifResizedOne(f64(-0.5), (xo + f64(0.5)) / S - f64(0.5));
    if (mode == "align_corners")
      return ifResizedOne(f64(0), xo * f64(in - 1) / (R - f64(1)));
    if (mode == "asymmetric")
      return xo / S;
    if (mode == "tf_half_pixel_for_nn")
      return (xo + f64(0.5)) / S;
    if (mode == "tf_crop_and_resize") {
      Expr start, span, offset;
      if (!p.roiStartExpr.empty()) {
        // The roi difference and start offset are products in the roi's type, as in the
        // reference.
        start = p.roiStartExpr[axis];
        span = loop::cast(loop::f64(), p.roiEndExpr[axis] - start);
        offset =
            loop::cast(loop::f64(), start * constantOf(p.roiType, static_cast<double>(inLen - 1)));
      } else {
        const auto st = static_cast<float>(p.roiStart[axis]);
        span = f64(static_cast<float>(p.roiEnd[axis]) - st);
        offset = f64(st * static_cast<float>(inLen - 1));
      }
      return ifResizedOne(span * f64(in - 1) / f64(2) + offset,
                          xo * span * f64(in - 1) / (R - f64(1)) + offset);
    }
    unsupportedNode(n, "coordinate_transformation_mode '" + mode + "'");
  }
  if (mode == "half_pixel")
    return (xo + f64(0.5)) / f64(s) - f64(0.5);
  if (mode == "half_pixel_symmetric") { // opset 19
    const double adjustment = static_cast<double>(outLen) / (s * in);
    const double offset = in / 2 * (1 - adjustment);
    return f64(offset) + (xo + f64(0.5)) / f64(s) - f64(0.5);
  }
  if (mode == "pytorch_half_pixel")
    return resized == 1 ? f64(-0.5) : (xo + f64(0.5)) / f64(s) - f64(0.5);
  if (mode == "align_corners")
    return resized == 1 ? f64(0) : xo * f64(in - 1) / f64(resized - 1);
  if (mode == "asymmetric")
    return xo / f64(s);
  if (mode == "tf_half_pixel_for_nn") // opset 11 only
    return (xo + f64(0.5)) / f64(s);
  if (mode == "tf_crop_and_resize") {
    // The roi arrives as f32; its difference and start offset are f32 products, as in the
    // reference.
    const auto start = static_cast<float>(p.roiStart[axis]);
    const double span = static_cast<float>(p.roiEnd[axis]) - start;
    const double offset = start * static_cast<float>(inLen - 1);
    if (resized == 1)
      return f64(span * (in - 1) / 2 + offset);
    return xo * f64(span) * f64(in - 1) / f64(resized - 1) + f64(offset);
  }
  unsupportedNode(n, "coordinate_transformation_mode '" + mode + "'");
}

Expr clampIndex(const Expr& i, std::int64_t len) {
  return loop::max(loop::min(i, len - 1), std::int64_t{0});
}

// One neighbour on an axis: its (clamped) input index and weight (undefined for nearest).
struct Tap {
  Expr index, weight;
};

// Subexpressions used by several taps are bound once with Let, so that the loop IR stays
// small (the coordinate appears in every weight and index). Names derive from the output
// value's name, unique in the graph, so two Resizes in one kernel cannot collide.
// `shrinks`: the output extent is below the input's (a runtime scale is below 1).
std::vector<Tap> axisTaps(const Node& n, const ResizeParams& p, std::size_t axis, const Expr& x,
                          std::int64_t inLen, bool shrinks, const loop::Type& computeType,
                          LetBindings& lets) {
  if (p.mode == "nearest") {
    Expr r;
    const std::string& m = p.nearestMode;
    if (m == "round_prefer_floor") // ties go down: ceil(x - 0.5)
      r = ceilOf(x - f64(0.5));
    else if (m == "round_prefer_ceil")
      r = floorOf(x + f64(0.5));
    else if (m == "floor")
      r = floorOf(x);
    else if (m == "ceil")
      r = ceilOf(x);
    else if (m == "simple") // ONNX Runtime's rule for Upsample: ceil when downsampling
      r = (p.scaleKnown[axis] ? p.scales[axis] < 1 : shrinks) ? ceilOf(x) : floorOf(x);
    else
      unsupportedNode(n, "nearest_mode '" + m + "'");
    return {{clampIndex(loop::cast(loop::indexType(), r), inLen), Expr()}};
  }
  const Expr x0 = lets.bind("floor" + std::to_string(axis), floorOf(x));
  const Expr base = loop::cast(loop::indexType(), x0);
  const Expr r = lets.bind("ratio" + std::to_string(axis), x - x0); // in [0, 1)
  std::vector<std::int64_t> offsets;
  std::vector<Expr> weights;
  if (p.mode == "linear") {
    offsets = {0, 1};
    weights = {f64(1) - r, r};
  } else { // cubic, with the Keys coefficients of the reference
    const double a = p.cubicA;
    const Expr r1 = r + f64(1), s = f64(1) - r, s1 = s + f64(1);
    auto outer = [&](const Expr& t) {
      return ((f64(a) * t - f64(5 * a)) * t + f64(8 * a)) * t - f64(4 * a);
    };
    auto inner = [&](const Expr& t) { return (f64(a + 2) * t - f64(a + 3)) * t * t + f64(1); };
    offsets = {-1, 0, 1, 2};
    weights = {outer(r1), inner(r), inner(s), outer(s1)};
  }
  if (p.excludeOutside) {
    // Neighbours outside the input get weight 0; the rest are renormalized.
    Expr sum;
    for (std::size_t t = 0; t < offsets.size(); ++t) {
      Expr i = base + offsets[t];
      weights[t] = lets.bind("w" + std::to_string(t) + "_" + std::to_string(axis),
                             loop::select(i >= std::int64_t{0} && i < inLen, weights[t], f64(0)));
      sum = sum.defined() ? sum + weights[t] : weights[t];
    }
    sum = lets.bind("sum" + std::to_string(axis), sum);
    for (Expr& w : weights)
      w = w / sum;
  }
  std::vector<Tap> taps;
  for (std::size_t t = 0; t < offsets.size(); ++t)
    taps.push_back({clampIndex(base + offsets[t], inLen), loop::cast(computeType, weights[t])});
  return taps;
}

Expr lowerResize(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape inShape = staticShape(*n.input(0), n), outShape = staticShape(*n.output(0), n);
  if (inShape.size() != idx.size())
    invalidNode(n, "output rank differs from the input rank");
  ResizeParams p = resizeParams(n, inShape, outShape, in);
  const graph::DType dtype = n.output(0)->type.dtype;
  const loop::Type dataType = loopType(dtype);
  if (p.mode != "nearest" && dataType.isBool())
    unsupportedNode(n, p.mode + " interpolation of booleans");
  const loop::Type computeType =
      dataType.isFloat() && dataType.bits() == 64 ? loop::f64() : loop::f32();
  const bool crop = p.coordinates == "tf_crop_and_resize";
  LetBindings lets(n, "resize");
  for (std::size_t a = 0; a < idx.size(); ++a)
    if (!p.scaleKnown[a]) { // load each runtime scale once
      p.scaleExpr[a] = lets.bind("scale" + std::to_string(a), p.scaleExpr[a]);
      p.resizedExpr[a] = lets.bind("resized" + std::to_string(a),
                                   p.scaleExpr[a] * f64(static_cast<double>(inShape[a])));
    }
  for (std::size_t a = 0; a < p.roiStartExpr.size(); ++a) {
    p.roiStartExpr[a] = lets.bind("roi_start" + std::to_string(a), p.roiStartExpr[a]);
    p.roiEndExpr[a] = lets.bind("roi_end" + std::to_string(a), p.roiEndExpr[a]);
  }

  std::vector<Expr> src = idx;
  std::vector<std::size_t> weighted; // axes whose taps carry weights
  std::vector<std::vector<Tap>> weightedTaps;
  Expr outside; // tf_crop_and_resize: a coordinate outside the input extrapolates
  for (std::size_t a = 0; a < idx.size(); ++a) {
    // An axis that keeps its extent at scale 1 maps every index to itself in every mode but
    // tf_crop_and_resize; it needs no coordinate math.
    if (!crop && p.scaleKnown[a] && inShape[a] == outShape[a] && p.scales[a] == 1.0)
      continue;
    const Expr x = lets.bind("x" + std::to_string(a),
                             inputCoordinate(n, p, a, idx[a], inShape[a], outShape[a]));
    if (crop) {
      Expr out = x < f64(0) || x > f64(static_cast<double>(inShape[a] - 1));
      outside = outside.defined() ? outside || out : out;
    }
    std::vector<Tap> taps =
        axisTaps(n, p, a, x, inShape[a], outShape[a] < inShape[a], computeType, lets);
    if (taps.size() == 1) {
      src[a] = taps[0].index;
      continue;
    }
    weighted.push_back(a);
    weightedTaps.push_back(std::move(taps));
  }

  Expr value;
  if (weighted.empty()) {
    value = in.read(0, src);
  } else {
    // Separable: the sum over the first weighted axis of weight * (the sum over the rest).
    auto sum = [&](auto&& self, std::size_t k) -> Expr {
      if (k == weighted.size()) {
        Expr v = in.read(0, src);
        return v.type() == computeType ? v : loop::cast(computeType, v);
      }
      Expr total;
      for (const Tap& tap : weightedTaps[k]) {
        src[weighted[k]] = tap.index;
        Expr term = tap.weight * self(self, k + 1);
        total = total.defined() ? total + term : term;
      }
      return total;
    };
    value = sum(sum, 0);
    // Integer images keep the integer part (the cast truncates toward zero), as ONNX
    // Runtime and the ONNX reference implementation do; the spec does not say.
    if (value.type() != dataType)
      value = loop::cast(dataType, value);
  }
  if (outside.defined())
    value = loop::select(outside, constantOf(dtype, p.extrapolation), value);
  return lets.wrap(value);
}

} // namespace

void registerDataMovementResizeRules(RuleTable& t) {
  t.pointwise["Resize"] = lowerResize;
  t.pointwise["Upsample"] = lowerResize;
}

} // namespace lathe::lowering
