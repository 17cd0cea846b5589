// Elementwise ops as pointwise rules: arithmetic with numpy broadcasting, activations,
// inverse trigonometric and hyperbolic functions, comparisons and logic, Cast, Clip, Where,
// and inference BatchNormalization; Dropout also has a kernel rule for its mask output.
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/support/diagnostics.h"

#include <cctype>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <numbers>

namespace lathe::lowering {
namespace {

using graph::Node;
using loop::Call;
using loop::Intrinsic;

Expr fconst(const Expr& like, double v) {
  return loop::makeFloatConst(like.type(), v);
}
Expr typed(const Expr& like, double v) {
  return like.type().isFloat() ? loop::makeFloatConst(like.type(), v)
                               : loop::makeIntConst(like.type(), static_cast<std::int64_t>(v));
}
Expr intrinsic(Intrinsic op, Expr x) {
  return Call::make(op, {std::move(x)});
}

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
#undef LATHE_UNARY

// 1, -1 or 0 by sign. An unsigned x is never negative, and -1 is no unsigned constant.
Expr lowerSign(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Expr x = arg(n, idx, in, 0);
  const Expr nonNegative = loop::select(x > typed(x, 0), typed(x, 1), typed(x, 0));
  if (x.type().isUInt())
    return nonNegative;
  return loop::select(x < typed(x, 0), typed(x, -1), nonNegative);
}

void requireInferenceDropout(const Node& n) {
  const graph::Value* mode = n.input(2);
  if (mode && !(mode->isConstant() && mode->constant().numElements() == 1 &&
                mode->constant().elementAsInt(0) == 0))
    unsupportedNode(n, "Dropout in training mode (random)");
}

Expr lowerDropout(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  requireInferenceDropout(n);
  if (n.outputs().size() > 1 && n.output(1))
    unsupportedNode(n, "Dropout's mask output");
  return arg(n, idx, in, 0);
}

// Dropout heading a kernel, with or without its mask (fusion never puts a node with two
// outputs after the head, so the pointwise rule covers the rest). At inference the data
// passes through and the mask is all true.
Stmt lowerDropoutKernel(const Node& n, KernelBuilder& kb, const Epilogue& epilogue) {
  requireInferenceDropout(n);
  const TensorRef x = kb.input(*n.input(0), n);
  const TensorRef out = kb.output(*n.output(0), n);
  const bool hasMask = n.outputs().size() > 1 && n.output(1);
  const TensorRef mask = hasMask ? kb.output(*n.output(1), n) : TensorRef{};
  if (out.shape != x.shape || (hasMask && mask.shape != x.shape))
    unsupportedNode(n, "outputs must have the input's shape");
  return kb.loopNest(x.shape, [&](const std::vector<Expr>& idx) {
    Stmt copy = out.store(idx, epilogue(x.load(idx), idx));
    return hasMask ? loop::Block::make(copy, mask.store(idx, constantOf(mask.dtype, 1))) : copy;
  });
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
         intrinsic(Intrinsic::Log,
                   fconst(x, 1.0) + intrinsic(Intrinsic::Exp, -intrinsic(Intrinsic::Abs, x)));
}

Expr lowerSinh(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  return (intrinsic(Intrinsic::Exp, x) - intrinsic(Intrinsic::Exp, -x)) * fconst(x, 0.5);
}
Expr lowerCosh(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  return (intrinsic(Intrinsic::Exp, x) + intrinsic(Intrinsic::Exp, -x)) * fconst(x, 0.5);
}

// --- inverse trigonometric and hyperbolic functions ---
// Built from arithmetic, sqrt and log (there are no intrinsics for them), evaluated in f32
// for f16 inputs. Values used several times are bound with Let so that the loop IR stays
// small however the functions nest.

// `body` of a variable bound to `value`. The name derives from the node's output, unique in
// the graph, so that two of these ops fused into one kernel cannot collide.
Expr letIn(const Node& n, const std::string& what, Expr value,
           const std::function<Expr(const Expr&)>& body) {
  std::string name = "ew_";
  for (char c : n.output(0)->name())
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  Expr var = loop::Var::make(value.type(), name + "_" + what);
  return loop::Let::make(var, std::move(value), body(var));
}

// c0 x^k + c1 x^(k-1) + ... + ck.
Expr horner(const Expr& x, std::initializer_list<double> coefficients) {
  Expr r;
  for (double c : coefficients)
    r = r.defined() ? r * x + fconst(x, c) : fconst(x, c);
  return r;
}

// f(|x|) with the sign of x, for an odd function f (a product, so that r appears once).
Expr withSignOf(const Expr& x, const Expr& r) {
  return r * loop::select(x < fconst(x, 0.0), fconst(x, -1.0), fconst(x, 1.0));
}

// atan(a) for a >= 0 (or NaN), after Cephes' atanf and atan: reduced to |z| <= tan(pi/8)
// (f32) or 0.66 (f64) through atan(a) = pi/2 + atan(-1/a) above tan(3pi/8) and
// pi/4 + atan((a-1)/(a+1)) in between, then an odd polynomial in z (f32, within about one
// ulp) or z + z^3 P(z^2)/Q(z^2) (f64). a = inf gives pi/2. `a` must be a variable.
Expr atanNonNegative(const Node& n, const std::string& tag, const Expr& a) {
  using std::numbers::pi;
  const bool f64 = a.type().bits() == 64;
  const Expr big = a > fconst(a, 2.414213562373095048802);
  const Expr mid = a > fconst(a, f64 ? 0.66 : 0.4142135623730950488);
  const Expr one = fconst(a, 1.0);
  const Expr z = loop::select(big, -one / a, loop::select(mid, (a - one) / (a + one), a));
  const Expr base =
      loop::select(big, fconst(a, pi / 2), loop::select(mid, fconst(a, pi / 4), fconst(a, 0.0)));
  return letIn(n, tag + "z", z, [&](const Expr& z) {
    return letIn(n, tag + "zz", z * z, [&](const Expr& zz) {
      if (!f64) {
        const Expr p =
            horner(zz, {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1});
        return base + (p * zz * z + z);
      }
      const Expr p = horner(zz, {-8.750608600031904122785e-1, -1.615753718733365076637e1,
                                 -7.500855792314704667340e1, -1.228866684490136173410e2,
                                 -6.485021904942025371773e1});
      const Expr q = horner(zz, {1.0, 2.485846490142306297962e1, 1.650270098316988542046e2,
                                 4.328810604912902668951e2, 4.853903996359136964868e2,
                                 1.945506571482613964425e2});
      // The bits of pi/2 (and pi/4) that the double constant misses.
      const double moreBits = 6.123233995736765886130e-17;
      const Expr tail = loop::select(big, fconst(a, moreBits),
                                     loop::select(mid, fconst(a, moreBits / 2), fconst(a, 0.0)));
      return base + ((z * (zz * p / q) + z) + tail);
    });
  });
}

// log(1 + u) without losing the low bits of u to the rounding of w = 1 + u:
// log(w) * u / (w - 1) (Goldberg), u itself where w rounds to 1, and inf for u = inf.
// `u` must be a variable.
Expr log1pOf(const Node& n, const std::string& tag, const Expr& u) {
  return letIn(n, tag + "w", fconst(u, 1.0) + u, [&](const Expr& w) {
    const Expr r = intrinsic(Intrinsic::Log, w) * (u / (w - fconst(w, 1.0)));
    return loop::select(loop::eq(w, fconst(w, 1.0)), u,
                        loop::select(loop::eq(w, fconst(w, INFINITY)), w, r));
  });
}

// Above this x^2 + 1 rounds to x^2 (and x^2 soon overflows): asinh and acosh are log(2x).
Expr largeArgument(const Expr& x) {
  return fconst(x, x.type().bits() == 64 ? 1e8 : 1e4);
}
Expr logOfTwice(const Expr& x) {
  return intrinsic(Intrinsic::Log, x) + fconst(x, std::numbers::ln2);
}

Expr atanOf(const Node& n, const Expr& x) {
  return letIn(n, "atan_a", intrinsic(Intrinsic::Abs, x),
               [&](const Expr& a) { return withSignOf(x, atanNonNegative(n, "atan_", a)); });
}

// asin(x) = atan(x / sqrt(1 - x^2)); (1 - a)(1 + a) keeps 1 - x^2 accurate near |x| = 1,
// where the quotient becomes inf and atan gives pi/2. |x| > 1 gives NaN from the sqrt.
Expr asinOf(const Node& n, const Expr& x) {
  return letIn(n, "asin_a", intrinsic(Intrinsic::Abs, x), [&](const Expr& a) {
    const Expr one = fconst(a, 1.0);
    const Expr t = a / intrinsic(Intrinsic::Sqrt, (one - a) * (one + a));
    return letIn(n, "asin_t", t,
                 [&](const Expr& t) { return withSignOf(x, atanNonNegative(n, "asin_", t)); });
  });
}

// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): unlike pi/2 - asin(x) it keeps its relative
// accuracy near x = 1, where acos is small; x = -1 gives 2 atan(inf) = pi.
Expr acosOf(const Node& n, const Expr& x) {
  const Expr one = fconst(x, 1.0);
  const Expr t = intrinsic(Intrinsic::Sqrt, (one - x) / (one + x));
  return letIn(n, "acos_t", t,
               [&](const Expr& t) { return fconst(x, 2.0) * atanNonNegative(n, "acos_", t); });
}

// asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2))): log(a + sqrt(a^2 + 1)) rearranged so
// that it stays accurate for small a.
Expr asinhOf(const Node& n, const Expr& x) {
  return letIn(n, "asinh_a", intrinsic(Intrinsic::Abs, x), [&](const Expr& a) {
    const Expr one = fconst(a, 1.0);
    const Expr u = a + a * a / (one + intrinsic(Intrinsic::Sqrt, one + a * a));
    return letIn(n, "asinh_u", u, [&](const Expr& u) {
      return withSignOf(x,
                        loop::select(a > largeArgument(a), logOfTwice(a), log1pOf(n, "asinh_", u)));
    });
  });
}

// acosh(x) = log1p(t + sqrt(t (t + 2))) with t = x - 1, exact near x = 1 where acosh is
// small and log(x + sqrt(x^2 - 1)) would lose it to rounding; NaN below 1.
Expr acoshOf(const Node& n, const Expr& x) {
  return letIn(n, "acosh_t", x - fconst(x, 1.0), [&](const Expr& t) {
    const Expr u = t + intrinsic(Intrinsic::Sqrt, t * (t + fconst(t, 2.0)));
    return letIn(n, "acosh_u", u, [&](const Expr& u) {
      const Expr r = loop::select(x > largeArgument(x), logOfTwice(x), log1pOf(n, "acosh_", u));
      return loop::select(x < fconst(x, 1.0), fconst(x, NAN), r);
    });
  });
}

// atanh(a) = log1p(2a / (1 - a)) / 2, accurate near 0 where log((1 + a) / (1 - a)) is not;
// a = 1 gives inf, a > 1 NaN (the log of a negative number).
Expr atanhOf(const Node& n, const Expr& x) {
  return letIn(n, "atanh_a", intrinsic(Intrinsic::Abs, x), [&](const Expr& a) {
    const Expr u = fconst(a, 2.0) * a / (fconst(a, 1.0) - a);
    return letIn(n, "atanh_u", u, [&](const Expr& u) {
      return withSignOf(x, fconst(x, 0.5) * log1pOf(n, "atanh_", u));
    });
  });
}

template <Expr (*f)(const Node&, const Expr&)>
Expr lowerMath(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  requireFloat(n, x);
  // f16 has too few bits for the polynomial constants and the cancellation tricks.
  const loop::Type type = x.type();
  if (type.bits() == 16)
    x = loop::cast(loop::f32(type.lanes()), x);
  Expr r = letIn(n, "x", x, [&](const Expr& v) { return f(n, v); });
  return type.bits() == 16 ? loop::cast(type, r) : r;
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

Expr lowerShrink(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const double lambd = n.attrFloat("lambd", 0.5f), bias = n.attrFloat("bias", 0.0f);
  return loop::select(x < typed(x, -lambd), x + typed(x, bias),
                      loop::select(x > typed(x, lambd), x - typed(x, bias), typed(x, 0)));
}

// --- activations with attributes ---
Expr lowerLeakyRelu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  return loop::select(x >= fconst(x, 0), x, x * fconst(x, n.attrFloat("alpha", 0.01f)));
}
Expr lowerElu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const double alpha = n.attrFloat("alpha", 1.0f);
  return loop::select(x >= fconst(x, 0), x,
                      fconst(x, alpha) * (intrinsic(Intrinsic::Exp, x) - fconst(x, 1)));
}
Expr lowerSelu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const double alpha = n.attrFloat("alpha", 1.67326319217681884765625f);
  const double gamma = n.attrFloat("gamma", 1.05070102214813232421875f);
  return fconst(x, gamma) *
         loop::select(x > fconst(x, 0), x,
                      fconst(x, alpha) * (intrinsic(Intrinsic::Exp, x) - fconst(x, 1)));
}
Expr lowerCelu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const double alpha = n.attrFloat("alpha", 1.0f);
  return loop::max(x, fconst(x, 0)) +
         loop::min(fconst(x, 0),
                   fconst(x, alpha) *
                       (intrinsic(Intrinsic::Exp, x / fconst(x, alpha)) - fconst(x, 1)));
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
  // As ONNX Runtime clips (std::max, then std::min): x unless it is past a bound, so a NaN
  // x stays NaN. One compare and blend per bound, where a min/max that propagates a NaN of
  // either operand takes several instructions.
  if (n.input(1)) {
    const Expr lo = arg(n, idx, in, 1);
    x = loop::select(x < lo, lo, x);
  }
  if (n.input(2)) {
    const Expr hi = arg(n, idx, in, 2);
    x = loop::select(x > hi, hi, x);
  }
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
LATHE_BINARY(lowerMul, a* b)
LATHE_BINARY(lowerEqual, loop::eq(a, b))
LATHE_BINARY(lowerLess, a < b)
LATHE_BINARY(lowerLessOrEqual, a <= b)
LATHE_BINARY(lowerGreater, a > b)
LATHE_BINARY(lowerGreaterOrEqual, a >= b)
LATHE_BINARY(lowerAnd, a&& b)
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
  if (a.type().isIntOrUInt()) {
    // In f64 (libm's pow: exact for integer results below 2^53), then truncated to the
    // base's type as the reference's cast of numpy's float result does.
    const loop::Type f64 = loop::f64(a.type().lanes());
    return loop::cast(a.type(),
                      Call::make(Intrinsic::Pow, {loop::cast(f64, a), loop::cast(f64, b)}));
  }
  if (!a.type().isFloat())
    unsupportedNode(n, "Pow of " + a.type().toString());
  // x^2 as x*x: the same correctly rounded square (also for zeros, infinities and NaN),
  // without a call per element (LayerNorm's variance squares every activation).
  if (const graph::Value* e = n.input(1); e && e->isConstant() && !e->constant().isElided()) {
    bool square = e->constant().numElements() > 0;
    for (std::int64_t i = 0; square && i < e->constant().numElements(); ++i)
      square = e->constant().elementAsDouble(i) == 2.0;
    if (square)
      return a * a;
  }
  if (b.type() != a.type())
    b = loop::cast(a.type(), b);
  return Call::make(Intrinsic::Pow, {a, b});
}

// x << y and x >> y as x * 2^y and x / 2^y (the loop IR has no shifts), with 2^y the product
// over the bits of y of 2^(2^k) or 1. Shifts by the bit width or more give 0, like numpy's.
Expr lowerBitShift(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0), y = arg(n, idx, in, 1);
  if (!x.type().isUInt() || y.type() != x.type())
    unsupportedNode(n, "needs unsigned operands of one type");
  const std::string direction = n.attrString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    unsupportedNode(n, "direction '" + direction + "' (expected LEFT or RIGHT)");
  const int bits = x.type().bits();
  Expr power = typed(x, 1);
  for (int k = 0; (1 << k) < bits; ++k) {
    const Expr bitSet = loop::eq((y / (std::int64_t{1} << k)) % 2, typed(y, 1));
    power = power * loop::select(bitSet, loop::makeIntConst(x.type(), std::int64_t{1} << (1 << k)),
                                 typed(x, 1));
  }
  return loop::select(y >= typed(y, bits), typed(x, 0),
                      direction == "LEFT" ? x * power : x / power);
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

// bfloat16 is the upper half of an f32's bits: widening shifts them back into place, and
// narrowing truncates (as ONNX's reference implementation does).
Expr lowerCast(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  Expr x = arg(n, idx, in, 0);
  const graph::DType from = n.input(0)->type.dtype, to = n.output(0)->type.dtype;
  const int lanes = x.type().lanes();
  const loop::Type f32 = loop::f32().withLanes(lanes), u32 = loop::u32().withLanes(lanes);
  if (from == graph::DType::BF16 && to != graph::DType::BF16) {
    x = loop::bitcast(f32, loop::cast(u32, x) * loop::makeConst(u32, 65536));
    return to == graph::DType::F32 ? x : loop::cast(loopType(to).withLanes(lanes), x);
  }
  if (to == graph::DType::BF16 && from != graph::DType::BF16) {
    Expr bits = loop::bitcast(u32, from == graph::DType::F32 ? x : loop::cast(f32, x));
    return loop::cast(loop::u16().withLanes(lanes), bits / loop::makeConst(u32, 65536));
  }
  return loop::cast(loopType(to).withLanes(lanes), x);
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
  p["CastLike"] = lowerCast; // the output's type is that of input 1
  p["Shrink"] = lowerShrink;
  p["BitShift"] = lowerBitShift;
  p["Asin"] = lowerMath<asinOf>;
  p["Acos"] = lowerMath<acosOf>;
  p["Atan"] = lowerMath<atanOf>;
  p["Asinh"] = lowerMath<asinhOf>;
  p["Acosh"] = lowerMath<acoshOf>;
  p["Atanh"] = lowerMath<atanhOf>;
  p["BatchNormalization"] = lowerBatchNorm;
  t.kernels["Dropout"] = lowerDropoutKernel;
}

} // namespace lathe::lowering
