// Elementwise ops as pointwise rules: arithmetic with numpy broadcasting, activations,
// comparisons and logic, Cast, Clip, Where, and inference BatchNormalization.
#include <cmath>

#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/support/diagnostics.h"

namespace lathe::lowering {
namespace {

using graph::Node;
using loop::Call;
using loop::Intrinsic;

Expr fconst(const Expr& like, double v) { return loop::makeFloatConst(like.type(), v); }
Expr typed(const Expr& like, double v) {
  return like.type().isFloat() ? loop::makeFloatConst(like.type(), v)
                               : loop::makeIntConst(like.type(), static_cast<std::int64_t>(v));
}
Expr intrinsic(Intrinsic op, Expr x) { return Call::make(op, {std::move(x)}); }

Expr arg(const Node& n, const std::vector<Expr>& idx, OperandReader& in, std::size_t i) {
  return readBroadcast(in, n, i, idx);
}

void requireFloat(const Node& n, const Expr& x) {
  if (!x.type().isFloat())
    unsupportedNode(n, "needs a floating-point input, not " + x.type().toString());
}

// --- unary ---
#define LATHE_UNARY(NAME, BODY)                                                                    \
  Expr NAME(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {                      \
    Expr x = arg(n, idx, in, 0);                                                                   \
    return BODY;                                                                                   \
  }

LATHE_UNARY(lowerIdentity, x)
LATHE_UNARY(lowerNeg, -x)
LATHE_UNARY(lowerAbs, intrinsic(Intrinsic::Abs, x))
LATHE_UNARY(lowerRelu, loop::select(x > typed(x, 0), x, typed(x, 0)))
LATHE_UNARY(lowerFloor, intrinsic(Intrinsic::Floor, x))
LATHE_UNARY(lowerCeil, intrinsic(Intrinsic::Ceil, x))
LATHE_UNARY(lowerRound, intrinsic(Intrinsic::Round, x))
LATHE_UNARY(lowerSqrt, intrinsic(Intrinsic::Sqrt, x))
LATHE_UNARY(lowerReciprocal, fconst(x, 1.0) / x)
LATHE_UNARY(lowerExp, intrinsic(Intrinsic::Exp, x))
LATHE_UNARY(lowerLog, intrinsic(Intrinsic::Log, x))
LATHE_UNARY(lowerTanh, intrinsic(Intrinsic::Tanh, x))
LATHE_UNARY(lowerErf, intrinsic(Intrinsic::Erf, x))
LATHE_UNARY(lowerSin, intrinsic(Intrinsic::Sin, x))
LATHE_UNARY(lowerCos, intrinsic(Intrinsic::Cos, x))
LATHE_UNARY(lowerSigmoid, intrinsic(Intrinsic::Sigmoid, x))
LATHE_UNARY(lowerSoftsign, x / (fconst(x, 1.0) + intrinsic(Intrinsic::Abs, x)))
LATHE_UNARY(lowerNot, !x)
LATHE_UNARY(lowerIsNaN, loop::ne(x, x))
LATHE_UNARY(lowerSign, loop::select(x > typed(x, 0), typed(x, 1),
                                    loop::select(x < typed(x, 0), typed(x, -1), typed(x, 0))))
#undef LATHE_UNARY

Expr lowerDropout(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const graph::Value* mode = n.input(2);
  if (mode && !(mode->isConstant() && mode->constant().numElements() == 1 &&
                mode->constant().elementAsInt(0) == 0))
    unsupportedNode(n, "Dropout in training mode (random)");
  if (n.outputs().size() > 1 && n.output(1))
    unsupportedNode(n, "Dropout's mask output");
  return arg(n, idx, in, 0);
}

Expr lowerTan(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  return intrinsic(Intrinsic::Sin, x) / intrinsic(Intrinsic::Cos, x);
}

Expr lowerSoftplus(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  // log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)).
  Expr zero = fconst(x, 0.0);
  return loop::max(x, zero) +
         intrinsic(Intrinsic::Log, fconst(x, 1.0) + intrinsic(Intrinsic::Exp, -intrinsic(Intrinsic::Abs, x)));
}

Expr lowerSinh(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  return (intrinsic(Intrinsic::Exp, x) - intrinsic(Intrinsic::Exp, -x)) * fconst(x, 0.5);
}
Expr lowerCosh(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  return (intrinsic(Intrinsic::Exp, x) + intrinsic(Intrinsic::Exp, -x)) * fconst(x, 0.5);
}

Expr lowerIsInf(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const bool pos = n.attrInt("detect_positive", 1) != 0;
  const bool neg = n.attrInt("detect_negative", 1) != 0;
  Expr inf = fconst(x, INFINITY);
  Expr isPos = loop::eq(x, inf), isNeg = loop::eq(x, -inf);
  if (pos && neg)
    return isPos || isNeg;
  if (pos)
    return isPos;
  if (neg)
    return isNeg;
  return loop::makeBool(false, x.type().lanes());
}

// --- activations with attributes ---
Expr lowerLeakyRelu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  return loop::select(x >= fconst(x, 0), x, x * fconst(x, n.attrFloat("alpha", 0.01f)));
}
Expr lowerElu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const double alpha = n.attrFloat("alpha", 1.0f);
  return loop::select(x >= fconst(x, 0), x, fconst(x, alpha) * (intrinsic(Intrinsic::Exp, x) - fconst(x, 1)));
}
Expr lowerSelu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const double alpha = n.attrFloat("alpha", 1.67326319217681884765625f);
  const double gamma = n.attrFloat("gamma", 1.05070102214813232421875f);
  return fconst(x, gamma) *
         loop::select(x > fconst(x, 0), x, fconst(x, alpha) * (intrinsic(Intrinsic::Exp, x) - fconst(x, 1)));
}
Expr lowerCelu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const double alpha = n.attrFloat("alpha", 1.0f);
  return loop::max(x, fconst(x, 0)) +
         loop::min(fconst(x, 0), fconst(x, alpha) * (intrinsic(Intrinsic::Exp, x / fconst(x, alpha)) - fconst(x, 1)));
}
Expr lowerThresholdedRelu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  return loop::select(x > fconst(x, n.attrFloat("alpha", 1.0f)), x, fconst(x, 0));
}
Expr lowerHardSigmoid(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  Expr y = fconst(x, n.attrFloat("alpha", 0.2f)) * x + fconst(x, n.attrFloat("beta", 0.5f));
  return loop::min(loop::max(y, fconst(x, 0)), fconst(x, 1));
}
Expr lowerHardSwish(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  Expr y = x * fconst(x, 1.0 / 6.0) + fconst(x, 0.5);
  return x * loop::min(loop::max(y, fconst(x, 0)), fconst(x, 1));
}
Expr lowerPRelu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  Expr slope = arg(n, idx, in, 1);
  return loop::select(x < typed(x, 0), x * slope, x);
}
Expr lowerClip(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  // Bounds are optional scalar inputs; read them at index [] (scalars) or broadcast.
  if (n.input(1))
    x = loop::max(x, arg(n, idx, in, 1));
  if (n.input(2))
    x = loop::min(x, arg(n, idx, in, 2));
  return x;
}

// --- binary and variadic ---
#define LATHE_BINARY(NAME, BODY)                                                                   \
  Expr NAME(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {                      \
    Expr a = arg(n, idx, in, 0);                                                                   \
    Expr b = arg(n, idx, in, 1);                                                                   \
    return BODY;                                                                                   \
  }
LATHE_BINARY(lowerAdd, a + b)
LATHE_BINARY(lowerSub, a - b)
LATHE_BINARY(lowerMul, a * b)
LATHE_BINARY(lowerEqual, loop::eq(a, b))
LATHE_BINARY(lowerLess, a < b)
LATHE_BINARY(lowerLessOrEqual, a <= b)
LATHE_BINARY(lowerGreater, a > b)
LATHE_BINARY(lowerGreaterOrEqual, a >= b)
LATHE_BINARY(lowerAnd, a && b)
LATHE_BINARY(lowerOr, a || b)
LATHE_BINARY(lowerXor, loop::ne(a, b))
#undef LATHE_BINARY

Expr lowerDiv(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  // Integer division truncates (C semantics), as ONNX Runtime does.
  return arg(n, idx, in, 0) / arg(n, idx, in, 1);
}

Expr lowerMod(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr a = arg(n, idx, in, 0), b = arg(n, idx, in, 1);
  if (n.attrInt("fmod", 0) != 0 || a.type().isFloat()) {
    if (a.type().isFloat() && n.attrInt("fmod", 0) == 0)
      unsupportedNode(n, "floating-point Mod needs fmod=1");
    return a % b; // C fmod semantics: sign of the dividend
  }
  return loop::floorMod(a, b); // Python semantics: sign of the divisor
}

Expr lowerPow(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr a = arg(n, idx, in, 0), b = arg(n, idx, in, 1);
  if (!a.type().isFloat())
    unsupportedNode(n, "integer Pow");
  if (b.type() != a.type())
    b = loop::cast(a.type(), b);
  return Call::make(Intrinsic::Pow, {a, b});
}

Expr variadic(const Node& n, const std::vector<Expr>& idx, OperandReader& in,
              Expr (*combine)(Expr, Expr)) {
  Expr acc = arg(n, idx, in, 0);
  for (std::size_t i = 1; i < n.inputs.size(); ++i)
    acc = combine(acc, arg(n, idx, in, i));
  return acc;
}
Expr lowerSum(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  return variadic(n, idx, in, [](Expr a, Expr b) { return a + b; });
}
Expr lowerMax(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  return variadic(n, idx, in, [](Expr a, Expr b) { return loop::max(a, b); });
}
Expr lowerMin(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  return variadic(n, idx, in, [](Expr a, Expr b) { return loop::min(a, b); });
}
Expr lowerMean(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr sum = lowerSum(n, idx, in);
  return sum / fconst(sum, static_cast<double>(n.inputs.size()));
}

Expr lowerWhere(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  return loop::select(arg(n, idx, in, 0), arg(n, idx, in, 1), arg(n, idx, in, 2));
}

Expr lowerCast(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  return loop::cast(loopType(n.output(0)->type.dtype), arg(n, idx, in, 0));
}

// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c], channel = axis 1.
Expr lowerBatchNorm(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  if (n.attrInt("training_mode", 0) != 0)
    unsupportedNode(n, "BatchNormalization in training mode");
  Expr x = arg(n, idx, in, 0);
  requireFloat(n, x);
  const std::vector<Expr> channel{idx.size() > 1 ? idx[1] : loop::makeIndex(0)};
  Expr scale = in.read(1, channel), bias = in.read(2, channel);
  Expr mean = in.read(3, channel), var = in.read(4, channel);
  Expr eps = fconst(x, n.attrFloat("epsilon", 1e-5f));
  return (x - mean) * (scale / intrinsic(Intrinsic::Sqrt, var + eps)) + bias;
}

} // namespace

void registerElementwiseRules(RuleTable& t) {
  auto& p = t.pointwise;
  p["Identity"] = lowerIdentity;
  p["Dropout"] = lowerDropout;
  p["Neg"] = lowerNeg;
  p["Abs"] = lowerAbs;
  p["Relu"] = lowerRelu;
  p["Floor"] = lowerFloor;
  p["Ceil"] = lowerCeil;
  p["Round"] = lowerRound;
  p["Sqrt"] = lowerSqrt;
  p["Reciprocal"] = lowerReciprocal;
  p["Exp"] = lowerExp;
  p["Log"] = lowerLog;
  p["Tanh"] = lowerTanh;
  p["Erf"] = lowerErf;
  p["Sin"] = lowerSin;
  p["Cos"] = lowerCos;
  p["Tan"] = lowerTan;
  p["Sinh"] = lowerSinh;
  p["Cosh"] = lowerCosh;
  p["Sigmoid"] = lowerSigmoid;
  p["Softsign"] = lowerSoftsign;
  p["Softplus"] = lowerSoftplus;
  p["Not"] = lowerNot;
  p["IsNaN"] = lowerIsNaN;
  p["IsInf"] = lowerIsInf;
  p["Sign"] = lowerSign;
  p["LeakyRelu"] = lowerLeakyRelu;
  p["Elu"] = lowerElu;
  p["Selu"] = lowerSelu;
  p["Celu"] = lowerCelu;
  p["ThresholdedRelu"] = lowerThresholdedRelu;
  p["HardSigmoid"] = lowerHardSigmoid;
  p["HardSwish"] = lowerHardSwish;
  p["PRelu"] = lowerPRelu;
  p["Clip"] = lowerClip;
  p["Add"] = lowerAdd;
  p["Sub"] = lowerSub;
  p["Mul"] = lowerMul;
  p["Div"] = lowerDiv;
  p["Mod"] = lowerMod;
  p["Pow"] = lowerPow;
  p["Equal"] = lowerEqual;
  p["Less"] = lowerLess;
  p["LessOrEqual"] = lowerLessOrEqual;
  p["Greater"] = lowerGreater;
  p["GreaterOrEqual"] = lowerGreaterOrEqual;
  p["And"] = lowerAnd;
  p["Or"] = lowerOr;
  p["Xor"] = lowerXor;
  p["Sum"] = lowerSum;
  p["Max"] = lowerMax;
  p["Min"] = lowerMin;
  p["Mean"] = lowerMean;
  p["Where"] = lowerWhere;
  p["Cast"] = lowerCast;
  p["BatchNormalization"] = lowerBatchNorm;
}

} // namespace lathe::lowering
