// ONNX quantization ops (opset <= 17 semantics): QuantizeLinear and DequantizeLinear as
// pointwise rules (they may join an elementwise chain), DynamicQuantizeLinear, MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv as kernel rules.
//
// Quantization rounds half to even (llvm.roundeven, as ONNX's np.rint) and saturates to the
// output type. Integer products accumulate in int32 after subtracting the zero points; the
// requantizing ops then scale the sum by in_scale * w_scale / y_scale in float, which is how
// ONNX Runtime and the ONNX test data compute them. Schedules are plain: one output element
// per iteration of a (parallel when large) loop nest, a serial reduction inside.
#include "engine/lowering/op_rules.h"
#include "engine/lowering/window_helpers.h"

#include <optional>
#include <utility>

namespace lathe::lowering {
namespace {

using graph::DType;
using graph::Node;
using loop::Intrinsic;

// The values a quantized output type holds.
std::pair<double, double> saturationRange(const Node& node, DType t) {
  switch (t) {
  case DType::U8:
    return {0.0, 255.0};
  case DType::I8:
    return {-128.0, 127.0};
  case DType::U16:
    return {0.0, 65535.0};
  case DType::I16:
    return {-32768.0, 32767.0};
  default:
    unsupportedNode(node, "quantized output must be uint8, int8, uint16 or int16");
  }
}

// round(v) + zeroPoint, clamped to the output type's range and converted to it. v and
// zeroPoint are floats; the clamp comes before the conversion because a float->int cast of
// an out-of-range value is undefined.
Expr requantize(const Node& node, const Expr& v, const Expr& zeroPoint, DType out) {
  const auto [lo, hi] = saturationRange(node, out);
  const Expr r = loop::Call::make(Intrinsic::Round, {v}) + zeroPoint;
  return loop::cast(loopType(out), loop::min(loop::max(r, lo), hi));
}

Expr toType(DType t, const Expr& e) {
  const loop::Type want = loopType(t);
  return e.type() == want ? e : loop::cast(want, e);
}

// --- QuantizeLinear / DequantizeLinear (pointwise) --------------------------------------------

// Scale or zero point `input` at output index `idx`: one element for all (per-tensor), or a
// 1-D tensor indexed along `axis` (per-axis).
Expr readQuantParam(const Node& node, std::size_t input, const std::vector<Expr>& idx,
                    OperandReader& in) {
  const std::vector<std::int64_t> shape = staticShape(*node.input(input), node);
  if (product(shape) == 1)
    return in.readFlat(input, loop::makeIndex(0));
  if (shape.size() != 1)
    unsupportedNode(node, "scale and zero point must be scalars or 1-D");
  // The axis only matters per-axis: the default 1 is out of range for a 1-D x.
  const std::int64_t axis =
      normalizeAxis(node, node.attrInt("axis", 1), static_cast<std::int64_t>(idx.size()));
  const std::vector<std::int64_t> xShape = staticShape(*node.input(0), node);
  if (shape[0] != xShape[axis])
    unsupportedNode(node, "per-axis scale or zero point does not match the axis");
  return in.read(input, {idx[axis]});
}

Expr lowerQuantizeLinear(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const DType out = n.output(0)->type.dtype;
  const Expr x = in.read(0, idx);
  if (!x.type().isFloat())
    unsupportedNode(n, "x must be a float tensor");
  const Expr scale = toType(n.input(0)->type.dtype, readQuantParam(n, 1, idx, in));
  const Expr zp = n.input(2) ? toType(n.input(0)->type.dtype, readQuantParam(n, 2, idx, in))
                             : loop::makeZero(x.type());
  return requantize(n, x / scale, zp, out);
}

Expr lowerDequantizeLinear(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const DType out = n.output(0)->type.dtype;
  // ONNX converts x and the zero point to float before subtracting (int32 x included).
  const Expr x = toType(out, in.read(0, idx));
  const Expr scale = toType(out, readQuantParam(n, 1, idx, in));
  if (!n.input(2))
    return x * scale;
  return (x - toType(out, readQuantParam(n, 2, idx, in))) * scale;
}

// --- kernel helpers ---------------------------------------------------------------------------

// A scale or zero point operand of a kernel: absent, one element, or one per row/column/
// output channel.
struct QuantParam {
  std::optional<TensorRef> t;
  DType fallback = DType::I32; // type of the implicit zero when absent

  // The element for position i along the param's axis.
  Expr at(const Expr& i) const {
    if (!t)
      return loop::makeZero(loopType(fallback));
    return t->numElements() == 1 ? t->loadFlat(loop::makeIndex(0)) : t->loadFlat(i);
  }
};

QuantParam quantParam(const Node& node, KernelBuilder& kb, std::size_t input, std::int64_t extent,
                      const char* what) {
  QuantParam p;
  if (!node.input(input))
    return p;
  p.t = kb.input(*node.input(input), node);
  const std::int64_t count = p.t->numElements();
  if (count != 1 && (count != extent || p.t->rank() > 2))
    unsupportedNode(node,
                    std::string(what) + " must have 1 or " + std::to_string(extent) + " elements");
  return p;
}

Expr asI32(const Expr& e) {
  return toType(DType::I32, e);
}

// sum(...) in an int32 scratch element, then store(finish(sum)). `accumulate` gives the
// statement that adds to the accumulator.
Stmt withAccumulator(KernelBuilder& kb, const std::function<Stmt(const TensorRef& acc)>& body) {
  const TensorRef acc = kb.scratch("acc", DType::I32, {1});
  return kb.allocate(acc, body(acc));
}

// --- MatMulInteger / QLinearMatMul ------------------------------------------------------------

// Y[..., i, j] = finish(sum_k (A[..., i, k] - aZp[i]) * (B[..., k, j] - bZp[j]), i, j) in int32,
// with numpy batch broadcasting and 1-D operands as in MatMul.
Stmt integerMatMul(
    const Node& node, KernelBuilder& kb, const TensorRef& a, const TensorRef& b,
    const QuantParam& aZp, const QuantParam& bZp, const TensorRef& y,
    const std::function<Expr(const Expr& sum, const Expr& i, const Expr& j)>& finish) {
  if (a.rank() < 1 || b.rank() < 1)
    unsupportedNode(node, "needs operands of rank >= 1");
  const bool vectorA = a.rank() == 1, vectorB = b.rank() == 1;
  const std::size_t matrixDims = (vectorA ? 0 : 1) + (vectorB ? 0 : 1);
  if (y.rank() < matrixDims)
    unsupportedNode(node, "output rank does not match the operands");
  const std::size_t batchRank = y.rank() - matrixDims;
  const std::vector<std::int64_t> aBatch(a.shape.begin(), a.shape.end() - (vectorA ? 1 : 2));
  const std::vector<std::int64_t> bBatch(b.shape.begin(), b.shape.end() - (vectorB ? 1 : 2));
  const std::int64_t K = a.shape.back();
  if ((vectorB ? b.shape[0] : b.shape[b.rank() - 2]) != K)
    unsupportedNode(node, "inner dimensions of A and B differ");
  return kb.loopNest(
      y.shape,
      [&](const std::vector<Expr>& idx) {
        const std::vector<Expr> batch(idx.begin(), idx.begin() + batchRank);
        const Expr i = vectorA ? loop::makeIndex(0) : idx[batchRank];
        const Expr j = vectorB ? loop::makeIndex(0) : idx.back();
        const Expr k = kb.freshVar("k");
        std::vector<Expr> ai = broadcastIndex(aBatch, batch), bi = broadcastIndex(bBatch, batch);
        if (!vectorA)
          ai.push_back(i);
        ai.push_back(k);
        bi.push_back(k);
        if (!vectorB)
          bi.push_back(j);
        return withAccumulator(kb, [&](const TensorRef& acc) {
          const Expr zero = loop::makeIndex(0);
          const Expr term =
              (asI32(a.load(ai)) - asI32(aZp.at(i))) * (asI32(b.load(bi)) - asI32(bZp.at(j)));
          return loop::Block::make({acc.storeFlat(zero, loop::makeZero(loopType(DType::I32))),
                                    forCount(k, K, acc.storeFlat(zero, acc.loadFlat(zero) + term)),
                                    y.store(idx, finish(acc.loadFlat(zero), i, j))});
        });
      },
      "i", std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(K, 1)));
}

// Rows of A and columns of B, for per-row/per-column zero points and scales.
std::pair<std::int64_t, std::int64_t> matrixRowsCols(const TensorRef& a, const TensorRef& b) {
  return {a.rank() == 1 ? 1 : a.shape[a.rank() - 2], b.rank() == 1 ? 1 : b.shape.back()};
}

// The integer products are opaque ops (ops.def): never fused, so the epilogue is unused.
Stmt lowerMatMulInteger(const Node& node, KernelBuilder& kb, const Epilogue&) {
  const TensorRef a = kb.input(*node.input(0), node);
  const TensorRef b = kb.input(*node.input(1), node);
  const auto [rows, cols] = matrixRowsCols(a, b);
  const QuantParam aZp = quantParam(node, kb, 2, rows, "a_zero_point");
  const QuantParam bZp = quantParam(node, kb, 3, cols, "b_zero_point");
  const TensorRef y = kb.output(*node.output(0), node);
  return integerMatMul(node, kb, a, b, aZp, bZp, y,
                       [](const Expr& sum, const Expr&, const Expr&) { return sum; });
}

Expr asF32(const Expr& e) {
  return toType(DType::F32, e);
}

Stmt lowerQLinearMatMul(const Node& node, KernelBuilder& kb, const Epilogue&) {
  const TensorRef a = kb.input(*node.input(0), node);
  const TensorRef b = kb.input(*node.input(3), node);
  const auto [rows, cols] = matrixRowsCols(a, b);
  const QuantParam aScale = quantParam(node, kb, 1, rows, "a_scale");
  const QuantParam aZp = quantParam(node, kb, 2, rows, "a_zero_point");
  const QuantParam bScale = quantParam(node, kb, 4, cols, "b_scale");
  const QuantParam bZp = quantParam(node, kb, 5, cols, "b_zero_point");
  const QuantParam yScale = quantParam(node, kb, 6, 1, "y_scale");
  const QuantParam yZp = quantParam(node, kb, 7, 1, "y_zero_point");
  const TensorRef y = kb.output(*node.output(0), node);
  const Expr zero = loop::makeIndex(0);
  return integerMatMul(
      node, kb, a, b, aZp, bZp, y, [&](const Expr& sum, const Expr& i, const Expr& j) {
        const Expr multiplier = asF32(aScale.at(i)) * asF32(bScale.at(j)) / asF32(yScale.at(zero));
        return requantize(node, asF32(sum) * multiplier, asF32(yZp.at(zero)), y.dtype);
      });
}

// --- ConvInteger / QLinearConv ----------------------------------------------------------------

// Y[n, m, o...] = finish(sum_{c, k...} (X[n, g*C/group + c, o*s + k*d - p...] - xZp) *
//                        (W[m, c, k...] - wZp[m]), m) in int32. Padding reads the zero point,
// which contributes nothing, so out-of-range taps are skipped.
Stmt integerConv(const Node& node, KernelBuilder& kb, const TensorRef& x, const TensorRef& w,
                 const QuantParam& xZp, const QuantParam& wZp, const TensorRef& y,
                 const std::function<Expr(const Expr& sum, const Expr& m)>& finish) {
  if (x.rank() < 3 || w.rank() != x.rank() || y.rank() != x.rank())
    unsupportedNode(node, "needs input, weight and output of the same rank >= 3");
  const std::size_t spatial = x.rank() - 2;
  const std::int64_t group = node.attrInt("group", 1);
  const std::int64_t M = w.shape[0], Cg = w.shape[1];
  if (group < 1 || x.shape[1] != Cg * group || M % group != 0 || y.shape[1] != M)
    unsupportedNode(node, "channel counts do not match the group");
  const std::vector<WindowAxis> win =
      slidingWindow(node, dropFront(x.shape, 2), dropFront(y.shape, 2), dropFront(w.shape, 2));
  std::int64_t taps = Cg;
  for (std::int64_t k : dropFront(w.shape, 2))
    taps *= k;
  const Expr zero = loop::makeIndex(0);
  return kb.loopNest(
      y.shape,
      [&](const std::vector<Expr>& idx) {
        const Expr& m = idx[1];
        const Expr channel0 = (m / (M / group)) * Cg;
        std::vector<IndexRange> ranges;
        for (std::size_t s = 0; s < spatial; ++s)
          ranges.push_back(validRange(win[s].kernel, win[s].dilation,
                                      idx[2 + s] * win[s].stride - win[s].padBegin, win[s].in));
        const Expr c = kb.freshVar("c");
        return withAccumulator(kb, [&](const TensorRef& acc) {
          const Stmt taps = nestedLoops(
              kb, ranges,
              [&](const std::vector<Expr>& k) {
                std::vector<Expr> xi{idx[0], channel0 + c}, wi{m, c};
                for (std::size_t s = 0; s < spatial; ++s) {
                  xi.push_back(idx[2 + s] * win[s].stride + k[s] * win[s].dilation -
                               win[s].padBegin);
                  wi.push_back(k[s]);
                }
                const Expr term = (asI32(x.load(xi)) - asI32(xZp.at(zero))) *
                                  (asI32(w.load(wi)) - asI32(wZp.at(m)));
                return acc.storeFlat(zero, acc.loadFlat(zero) + term);
              },
              "k");
          return loop::Block::make({acc.storeFlat(zero, loop::makeZero(loopType(DType::I32))),
                                    forCount(c, Cg, taps),
                                    y.store(idx, finish(acc.loadFlat(zero), m))});
        });
      },
      "i", std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(taps, 1)));
}

Stmt lowerConvInteger(const Node& node, KernelBuilder& kb, const Epilogue&) {
  const TensorRef x = kb.input(*node.input(0), node);
  const TensorRef w = kb.input(*node.input(1), node);
  const QuantParam xZp = quantParam(node, kb, 2, 1, "x_zero_point");
  const QuantParam wZp = quantParam(node, kb, 3, w.shape.empty() ? 1 : w.shape[0], "w_zero_point");
  const TensorRef y = kb.output(*node.output(0), node);
  return integerConv(node, kb, x, w, xZp, wZp, y, [](const Expr& sum, const Expr&) { return sum; });
}

Stmt lowerQLinearConv(const Node& node, KernelBuilder& kb, const Epilogue&) {
  const TensorRef x = kb.input(*node.input(0), node);
  const TensorRef w = kb.input(*node.input(3), node);
  const std::int64_t M = w.shape.empty() ? 1 : w.shape[0];
  const QuantParam xScale = quantParam(node, kb, 1, 1, "x_scale");
  const QuantParam xZp = quantParam(node, kb, 2, 1, "x_zero_point");
  const QuantParam wScale = quantParam(node, kb, 4, M, "w_scale");
  const QuantParam wZp = quantParam(node, kb, 5, M, "w_zero_point");
  const QuantParam yScale = quantParam(node, kb, 6, 1, "y_scale");
  const QuantParam yZp = quantParam(node, kb, 7, 1, "y_zero_point");
  const QuantParam bias = quantParam(node, kb, 8, M, "B");
  const TensorRef y = kb.output(*node.output(0), node);
  const Expr zero = loop::makeIndex(0);
  return integerConv(node, kb, x, w, xZp, wZp, y, [&](const Expr& sum, const Expr& m) {
    const Expr multiplier = asF32(xScale.at(zero)) * asF32(wScale.at(m)) / asF32(yScale.at(zero));
    return requantize(node, asF32(sum + asI32(bias.at(m))) * multiplier, asF32(yZp.at(zero)),
                      y.dtype);
  });
}

// --- DynamicQuantizeLinear --------------------------------------------------------------------

// uint8 only (the ONNX definition): the range [min(0, min x), max(0, max x)] maps onto
// [0, 255]; scale = range / 255, zero point = round(clamp(-min / scale, 0, 255)).
Stmt lowerDynamicQuantizeLinear(const Node& node, KernelBuilder& kb, const Epilogue&) {
  const TensorRef x = kb.input(*node.input(0), node);
  if (x.dtype != DType::F32)
    unsupportedNode(node, "x must be float32");
  const TensorRef y = kb.output(*node.output(0), node);
  // Absent scale or zero point outputs still hold the values in a scratch element.
  std::vector<TensorRef> scratches;
  auto scalarOut = [&](std::size_t i, DType t, const char* name) {
    if (node.outputs().size() > i && node.output(i))
      return kb.output(*node.output(i), node);
    scratches.push_back(kb.scratch(name, t, {1}));
    return scratches.back();
  };
  const TensorRef yScale = scalarOut(1, DType::F32, "scale");
  const TensorRef yZp = scalarOut(2, DType::U8, "zero_point");
  const TensorRef range = kb.scratch("range", DType::F32, {2});
  const loop::Type f32 = loopType(DType::F32);
  const Expr lo = loop::makeIndex(0), hi = loop::makeIndex(1), zero = loop::makeIndex(0);
  const std::int64_t count = x.numElements();

  const Expr r = kb.freshVar("r");
  const Expr xv = x.loadFlat(r);
  const Stmt findRange =
      forCount(r, count,
               loop::Block::make({range.storeFlat(lo, loop::min(range.loadFlat(lo), xv)),
                                  range.storeFlat(hi, loop::max(range.loadFlat(hi), xv))}));
  const Expr scale = (range.loadFlat(hi) - range.loadFlat(lo)) / 255.0;
  const Expr zp = loop::Call::make(
      Intrinsic::Round,
      {loop::min(loop::max(0.0 - range.loadFlat(lo) / yScale.loadFlat(zero), 0.0), 255.0)});
  const Stmt quantize = kb.loopNest({count}, [&](const std::vector<Expr>& idx) {
    return y.storeFlat(idx[0], requantize(node, x.loadFlat(idx[0]) / yScale.loadFlat(zero),
                                          asF32(yZp.loadFlat(zero)), DType::U8));
  });
  // The range starts at [0, 0]: ONNX widens it to include zero.
  Stmt body = loop::Block::make(
      {range.storeFlat(lo, loop::makeZero(f32)), range.storeFlat(hi, loop::makeZero(f32)),
       findRange, yScale.storeFlat(zero, scale),
       yZp.storeFlat(zero, loop::cast(loopType(DType::U8), zp)), quantize});
  body = kb.allocate(range, body);
  for (const TensorRef& s : scratches)
    body = kb.allocate(s, body);
  return body;
}

} // namespace

void registerQuantizeRules(RuleTable& table) {
  auto& p = table.pointwise;
  p["QuantizeLinear"] = lowerQuantizeLinear;
  p["DequantizeLinear"] = lowerDequantizeLinear;
  auto& k = table.kernels;
  k["DynamicQuantizeLinear"] = lowerDynamicQuantizeLinear;
  k["MatMulInteger"] = lowerMatMulInteger;
  k["QLinearMatMul"] = lowerQLinearMatMul;
  k["ConvInteger"] = lowerConvInteger;
  k["QLinearConv"] = lowerQLinearConv;
}

} // namespace lathe::lowering
