// Ops without a family of their own: GridSample, the window generators (Hann, Hamming,
// Blackman), MelWeightMatrix (pointwise rules), MaxUnpool and Det (kernel rules).
// GridSample follows PyTorch's grid_sampler_2d, from which the ONNX test data comes: bilinear
// and nearest apply the padding mode to the sampling coordinate, bicubic to each tap.
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/support/diagnostics.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>

namespace lathe::lowering {
namespace {

using graph::Node;
using loop::Call;
using loop::Intrinsic;
using Shape = std::vector<std::int64_t>;

constexpr std::int64_t kSerialOnly = std::numeric_limits<std::int64_t>::max();

[[noreturn]] void invalidNode(const Node& n, const std::string& reason) {
  throw Error(ErrorKind::Invalid, reason, {{}, n.name, n.opType()});
}

Expr f64(double v) {
  return loop::makeFloatConst(loop::f64(), v);
}
Expr floorOf(const Expr& x) {
  return Call::make(Intrinsic::Floor, {x});
}
Expr castTo(const loop::Type& t, const Expr& e) {
  return e.type() == t ? e : loop::cast(t, e);
}
// f64 for f64 data, else f32: the precision the reference computes in.
loop::Type computeTypeOf(graph::DType dtype) {
  return dtype == graph::DType::F64 ? loop::f64() : loop::f32();
}

// Let-bound subexpressions, so that values read by several taps are computed once. Names
// derive from the output value's name, unique in the graph, so two such ops fused into one
// kernel cannot collide.
// --- GridSample ----------------------------------------------------------------------------

struct GridSampleParams {
  std::string mode, padding;
  bool alignCorners = false;
  loop::Type ct; // compute type
};

// PyTorch's reflect_coordinates: reflect x into [low/2, high/2] (bounds given doubled).
Expr reflect(const GridSampleParams& p, const Expr& x, std::int64_t twiceLow,
             std::int64_t twiceHigh) {
  if (twiceLow == twiceHigh)
    return loop::makeZero(p.ct);
  const double lo = static_cast<double>(twiceLow) / 2;
  const double span = static_cast<double>(twiceHigh - twiceLow) / 2;
  const Expr d = Call::make(Intrinsic::Abs, {x - lo});
  const Expr extra = d % span; // fmod
  const Expr flips = loop::cast(loop::i64(), floorOf(d / span));
  return loop::select(eq(flips % std::int64_t{2}, std::int64_t{0}), extra + lo,
                      loop::makeConst(p.ct, span) - extra + lo);
}

// Applies the padding mode to a coordinate on an axis of `len` (border and reflection keep
// it inside the image; zeros leaves it for the bounds check).
Expr padCoordinate(const GridSampleParams& p, const Expr& x, std::int64_t len) {
  if (p.padding == "zeros")
    return x;
  auto clip = [&](const Expr& v) {
    return loop::min(loop::max(v, 0.0), static_cast<double>(len - 1));
  };
  if (p.padding == "border")
    return clip(x);
  return clip(p.alignCorners ? reflect(p, x, 0, 2 * (len - 1)) : reflect(p, x, -1, 2 * len - 1));
}

// One image pixel at integer coordinates (i64), 0 outside the image.
Expr pixel(OperandReader& in, const std::vector<Expr>& idx, const Expr& y, const Expr& x,
           std::int64_t h, std::int64_t w, const loop::Type& ct) {
  const Expr inside = y >= std::int64_t{0} && y < h && x >= std::int64_t{0} && x < w;
  auto clampIdx = [](const Expr& v, std::int64_t len) {
    return loop::max(loop::min(v, len - 1), std::int64_t{0});
  };
  const Expr v = castTo(ct, in.read(0, {idx[0], idx[1], clampIdx(y, h), clampIdx(x, w)}));
  return loop::select(inside, v, loop::makeZero(ct));
}

std::vector<Expr> cubicCoefficients(const Expr& t) {
  const double a = -0.75;
  auto conv1 = [&](const Expr& x) { return ((x * (a + 2) - (a + 3)) * x) * x + 1.0; };
  auto conv2 = [&](const Expr& x) { return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a; };
  return {conv2(t + 1.0), conv1(t), conv1(1.0 - t), conv2(2.0 - t)};
}

Expr lowerGridSample(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape xs = staticShape(*n.input(0), n), gs = staticShape(*n.input(1), n);
  if (xs.size() != 4 || gs.size() != 4 || gs[3] != 2)
    unsupportedNode(n, "only 4-D input with an [N, H, W, 2] grid");
  GridSampleParams p;
  p.mode = n.attrString("mode", "bilinear");
  p.padding = n.attrString("padding_mode", "zeros");
  p.alignCorners = n.attrInt("align_corners", 0) != 0;
  const graph::DType dtype = n.output(0)->type.dtype;
  const loop::Type dataType = loopType(dtype);
  if (!dataType.isFloat())
    unsupportedNode(n, "non-float data");
  p.ct = computeTypeOf(dtype);
  if (p.mode != "bilinear" && p.mode != "nearest" && p.mode != "bicubic")
    unsupportedNode(n, "mode '" + p.mode + "'");
  if (p.padding != "zeros" && p.padding != "border" && p.padding != "reflection")
    unsupportedNode(n, "padding_mode '" + p.padding + "'");
  const std::int64_t h = xs[2], w = xs[3];
  LetBindings lets(n, "gridsample");

  auto unnormalize = [&](std::size_t comp, std::int64_t len) {
    const Expr g = castTo(p.ct, in.read(1, {idx[0], idx[2], idx[3],
                                            loop::makeIndex(static_cast<std::int64_t>(comp))}));
    const auto l = static_cast<double>(len);
    return p.alignCorners ? (g + 1.0) / 2.0 * (l - 1) : ((g + 1.0) * l - 1.0) / 2.0;
  };
  Expr x = lets.bind("x", unnormalize(0, w));
  Expr y = lets.bind("y", unnormalize(1, h));
  const loop::Type i64 = loop::i64();
  Expr value;
  if (p.mode == "nearest") {
    x = padCoordinate(p, x, w);
    y = padCoordinate(p, y, h);
    const Expr xi = loop::cast(i64, Call::make(Intrinsic::Round, {x})); // half to even
    const Expr yi = loop::cast(i64, Call::make(Intrinsic::Round, {y}));
    value = pixel(in, idx, yi, xi, h, w, p.ct);
  } else if (p.mode == "bilinear") {
    x = lets.bind("px", padCoordinate(p, x, w));
    y = lets.bind("py", padCoordinate(p, y, h));
    const Expr x0 = lets.bind("x0", floorOf(x)), y0 = lets.bind("y0", floorOf(y));
    const Expr tx = lets.bind("tx", x - x0), ty = lets.bind("ty", y - y0);
    const Expr xi = lets.bind("xi", loop::cast(i64, x0));
    const Expr yi = lets.bind("yi", loop::cast(i64, y0));
    auto at = [&](std::int64_t dy, std::int64_t dx) {
      return pixel(in, idx, yi + dy, xi + dx, h, w, p.ct);
    };
    value = at(0, 0) * (1.0 - tx) * (1.0 - ty) + at(0, 1) * tx * (1.0 - ty) +
            at(1, 0) * (1.0 - tx) * ty + at(1, 1) * tx * ty;
  } else { // bicubic: the padding applies to each tap
    const Expr x0 = lets.bind("x0", floorOf(x)), y0 = lets.bind("y0", floorOf(y));
    const std::vector<Expr> cx = cubicCoefficients(lets.bind("tx", x - x0));
    const std::vector<Expr> cy = cubicCoefficients(lets.bind("ty", y - y0));
    for (std::int64_t i = 0; i < 4; ++i) {
      const Expr ty =
          lets.bind("ty" + std::to_string(i),
                    loop::cast(i64, padCoordinate(p, y0 + static_cast<double>(i - 1), h)));
      Expr row;
      for (std::int64_t j = 0; j < 4; ++j) {
        const Expr tx =
            lets.bind("tx" + std::to_string(i) + std::to_string(j),
                      loop::cast(i64, padCoordinate(p, x0 + static_cast<double>(j - 1), w)));
        const Expr term = pixel(in, idx, ty, tx, h, w, p.ct) * cx[static_cast<std::size_t>(j)];
        row = row.defined() ? row + term : term;
      }
      const Expr term = row * cy[static_cast<std::size_t>(i)];
      value = value.defined() ? value + term : term;
    }
  }
  return lets.wrap(castTo(dataType, value));
}

// --- Window functions ----------------------------------------------------------------------

// sum_k a_k cos(2 pi k i / N), N = size (periodic) or size - 1 (symmetric); computed in f64.
Expr cosineWindow(const Node& n, const std::vector<Expr>& idx, const std::vector<double>& a) {
  const Shape out = staticShape(*n.output(0), n);
  if (out.size() != 1 || idx.size() != 1)
    invalidNode(n, "the output must be 1-D");
  const bool periodic = n.attrInt("periodic", 1) != 0;
  const double denom = static_cast<double>(periodic ? out[0] : out[0] - 1);
  const Expr phase = loop::cast(loop::f64(), idx[0]) * (2 * std::numbers::pi / denom);
  Expr v = f64(a[0]);
  for (std::size_t k = 1; k < a.size(); ++k)
    v = v + Call::make(Intrinsic::Cos, {phase * static_cast<double>(k)}) * a[k];
  return castTo(loopType(n.output(0)->type.dtype), v);
}

Expr lowerHannWindow(const Node& n, const std::vector<Expr>& idx, OperandReader&) {
  return cosineWindow(n, idx, {0.5, -0.5});
}
Expr lowerHammingWindow(const Node& n, const std::vector<Expr>& idx, OperandReader&) {
  return cosineWindow(n, idx, {25.0 / 46.0, -21.0 / 46.0});
}
Expr lowerBlackmanWindow(const Node& n, const std::vector<Expr>& idx, OperandReader&) {
  return cosineWindow(n, idx, {0.42, -0.5, 0.08});
}

// --- MelWeightMatrix -----------------------------------------------------------------------

// Output [dft_length/2 + 1, num_mel_bins]: triangular filters between mel-spaced bins. The
// scalar inputs are read at run time, so they need not be constants; the output shape must be
// static. As in the reference, the mel edges are f32 and the bin positions f64.
Expr lowerMelWeightMatrix(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape out = staticShape(*n.output(0), n);
  if (out.size() != 2)
    invalidNode(n, "the output must be 2-D");
  const Expr j = idx[0], bin = idx[1];
  const loop::Type f32 = loop::f32();
  LetBindings lets(n, "mel");
  auto scalar = [&](std::size_t i, const loop::Type& t) { return castTo(t, in.read(i, {})); };
  auto toMel = [&](const Expr& hz) {
    const Expr l = Call::make(Intrinsic::Log, {hz / 700.0 + 1.0}) *
                   static_cast<double>(1 / std::numbers::ln10);
    return l * 2595.0;
  };
  const Expr lowMel = lets.bind("low", toMel(scalar(3, f32)));
  const Expr highMel = lets.bind("high", toMel(scalar(4, f32)));
  const Expr step =
      lets.bind("step", castTo(loop::f64(), (highMel - lowMel) / static_cast<double>(out[1] + 2)));
  const Expr low64 = castTo(loop::f64(), lowMel);
  const Expr dft = lets.bind("dft", castTo(loop::f64(), scalar(1, loop::i64()) + std::int64_t{1}));
  const Expr rate = lets.bind("rate", castTo(loop::f64(), scalar(2, loop::i64())));
  // frequency_bins[k] = floor((dft_length + 1) * hz(k) / sample_rate), as an integer.
  auto binOf = [&](std::int64_t offset, const char* name) {
    const Expr k = loop::cast(loop::f64(), bin + offset);
    const Expr mel = k * step + low64;
    const Expr hz = (Call::make(Intrinsic::Exp, {mel / 2595.0 * std::numbers::ln10}) - 1.0) * 700.0;
    return lets.bind(name, loop::cast(loop::i64(), floorOf(dft * hz / rate)));
  };
  const Expr l = binOf(0, "l"), c = binOf(1, "c"), h = binOf(2, "h");
  const loop::Type f64t = loop::f64();
  const Expr rising = select(eq(c, l), loop::makeOne(f64t),
                             castTo(f64t, j - l) / castTo(f64t, loop::max(c - l, std::int64_t{1})));
  const Expr falling = castTo(f64t, h - j) / castTo(f64t, loop::max(h - c, std::int64_t{1}));
  const Expr v =
      select(j >= l && j <= c, rising, select(j > c && j < h, falling, loop::makeZero(f64t)));
  return lets.wrap(castTo(loopType(n.output(0)->type.dtype), v));
}

// --- MaxUnpool -----------------------------------------------------------------------------

// out = 0, then out.flat[indices[i]] = x[i]: the indices are flat indices into the whole
// output (MaxPool's convention). The output shape is the static type of the output, which
// shape inference derives from output_shape or the pooling attributes.
Stmt lowerMaxUnpool(const Node& n, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef x = kb.input(*n.input(0), n);
  const TensorRef indices = kb.input(*n.input(1), n);
  const TensorRef out = kb.output(*n.output(0), n);
  if (x.shape != indices.shape)
    invalidNode(n, "X and I must have one shape");
  // The indices are flat in the default output shape, (in - 1) * stride + kernel - pads;
  // an explicit output_shape that differs places each element at the same coordinates of
  // the larger output (ONNX Runtime's behaviour, which the ONNX test data follows).
  const Shape kernel = n.attrInts("kernel_shape");
  const std::size_t spatial = x.rank() - 2;
  if (x.rank() < 3 || kernel.size() != spatial)
    invalidNode(n, "kernel_shape must have one entry per spatial axis");
  Shape strides = n.attrInts("strides"), pads = n.attrInts("pads");
  strides.resize(spatial, 1);
  pads.resize(2 * spatial, 0);
  Shape natural = {x.shape[0], x.shape[1]};
  for (std::size_t d = 0; d < spatial; ++d)
    natural.push_back((x.shape[d + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + spatial]);
  if (natural.size() != out.rank())
    invalidNode(n, "output rank differs from the input rank");
  std::int64_t naturalTotal = 1;
  for (std::int64_t d : natural)
    naturalTotal *= d;
  Stmt zero = kb.loopNest(out.shape, [&](const std::vector<Expr>& idx) {
    return out.store(idx, constantOf(out.dtype, 0));
  });
  Stmt scatter = kb.loopNest(
      x.shape,
      [&](const std::vector<Expr>& idx) {
        const Expr at = castTo(loop::indexType(), indices.load(idx));
        // An index outside the output is ignored rather than written out of bounds.
        Expr valid = at >= std::int64_t{0} && at < naturalTotal;
        if (natural == out.shape)
          return loop::IfThenElse::make(valid, out.storeFlat(at, x.load(idx)));
        std::vector<Expr> coords(out.rank());
        Expr rest = at;
        for (std::size_t d = out.rank(); d-- > 0;) {
          coords[d] = floorMod(rest, natural[d]);
          rest = floorDiv(rest, natural[d]);
          valid = valid && coords[d] < out.shape[d];
        }
        return loop::IfThenElse::make(valid, out.store(coords, x.load(idx)));
      },
      "j", kSerialOnly);
  Stmt fused = loop::noOp();
  {
    const Expr probe = loop::Var::make(out.buffer.elementType(), "epilogue_probe");
    const std::vector<Expr> zeros(out.rank(), loop::makeIndex(0));
    if (!epilogue(probe, zeros).sameAs(probe))
      fused = kb.loopNest(out.shape, [&](const std::vector<Expr>& idx) {
        return out.store(idx, epilogue(out.load(idx), idx));
      });
  }
  return loop::Block::make({zero, scatter, fused});
}

// --- Det -----------------------------------------------------------------------------------

// LU decomposition with partial pivoting of each [M, M] matrix (in f64 scratch): the
// determinant is the product of the pivots, negated per row swap.
Stmt lowerDet(const Node& n, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef x = kb.input(*n.input(0), n);
  const TensorRef out = kb.output(*n.output(0), n);
  if (x.rank() < 2 || x.shape[x.rank() - 1] != x.shape[x.rank() - 2])
    invalidNode(n, "input must be [..., M, M]");
  if (!loopType(x.dtype).isFloat())
    unsupportedNode(n, "non-float input");
  const std::int64_t m = x.shape.back();
  const Shape batch(x.shape.begin(), x.shape.end() - 2);
  if (out.shape != batch)
    invalidNode(n, "output shape must be the batch shape of the input");
  const loop::Type f64t = loop::f64();

  return kb.loopNest(
      batch,
      [&](const std::vector<Expr>& b) {
        const TensorRef a = kb.scratch("det_a", graph::DType::F64, {m, m});
        const TensorRef det = kb.scratch("det_value", graph::DType::F64, {1});
        const TensorRef piv = kb.scratch("det_pivot", graph::DType::I64, {1});
        const Expr zero = loop::makeIndex(0);
        auto at = [&](const Expr& r, const Expr& c) { return r * m + c; };
        // Each loop has a name of its own: schedule steps name loops.
        const Expr i = kb.freshVar("det_i"), j = kb.freshVar("det_j"), k = kb.freshVar("det_k");
        const Expr si = kb.freshVar("det_i"), sj = kb.freshVar("det_j");
        const Expr ei = kb.freshVar("det_i"), ej = kb.freshVar("det_j");
        auto loopFrom = [](const Expr& var, const Expr& lo, const Expr& hi, Stmt body) {
          return loop::For::make(var, lo, hi - lo, loop::ForKind::Serial, std::move(body));
        };
        // Copy the matrix.
        std::vector<Expr> src = b;
        src.push_back(i);
        src.push_back(j);
        Stmt copy = kb.serialLoop(
            i, m, kb.serialLoop(j, m, a.storeFlat(at(i, j), castTo(f64t, x.load(src)))));
        const Expr mEnd = loop::makeIndex(m);
        auto absA = [&](const Expr& r, const Expr& c) {
          return Call::make(Intrinsic::Abs, {a.loadFlat(at(r, c))});
        };
        const Expr p = piv.loadFlat(zero);
        // Pivot search: the row at or below k with the largest magnitude in column k.
        Stmt search = loop::Block::make(
            {piv.storeFlat(zero, k),
             loopFrom(si, k + std::int64_t{1}, mEnd,
                      loop::IfThenElse::make(absA(si, k) > absA(p, k), piv.storeFlat(zero, si)))});
        const Expr tmp = loop::Var::make(f64t, "det_tmp");
        Stmt swapRows =
            loop::LetStmt::make(tmp, a.loadFlat(at(k, sj)),
                                loop::Block::make(a.storeFlat(at(k, sj), a.loadFlat(at(p, sj))),
                                                  a.storeFlat(at(p, sj), tmp)));
        Stmt swap = loop::IfThenElse::make(
            ne(p, k), loop::Block::make({kb.serialLoop(sj, m, swapRows),
                                         det.storeFlat(zero, -det.loadFlat(zero))}));
        const Expr pivot = a.loadFlat(at(k, k));
        Stmt eliminate = loop::IfThenElse::make(
            ne(pivot, 0.0),
            loopFrom(ei, k + std::int64_t{1}, mEnd,
                     loopFrom(ej, k + std::int64_t{1}, mEnd,
                              a.storeFlat(at(ei, ej),
                                          a.loadFlat(at(ei, ej)) - a.loadFlat(at(ei, k)) / pivot *
                                                                       a.loadFlat(at(k, ej))))));
        Stmt step = loop::Block::make(
            {search, swap, det.storeFlat(zero, det.loadFlat(zero) * pivot), eliminate});
        Stmt body = loop::Block::make(
            {copy, det.storeFlat(zero, loop::makeOne(f64t)), kb.serialLoop(k, m, step),
             out.store(b, epilogue(castTo(loopType(out.dtype), det.loadFlat(zero)), b))});
        // Large matrices would overflow the stack.
        return kb.allocate(a, kb.allocate(det, kb.allocate(piv, body)), m * m > 4096);
      },
      "b", kSerialOnly);
}

} // namespace

void registerMiscRules(RuleTable& t) {
  t.pointwise["GridSample"] = lowerGridSample;
  t.pointwise["HannWindow"] = lowerHannWindow;
  t.pointwise["HammingWindow"] = lowerHammingWindow;
  t.pointwise["BlackmanWindow"] = lowerBlackmanWindow;
  t.pointwise["MelWeightMatrix"] = lowerMelWeightMatrix;
  t.kernels["MaxUnpool"] = lowerMaxUnpool;
  t.kernels["Det"] = lowerDet;
}

} // namespace lathe::lowering
