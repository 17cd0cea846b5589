// Elementwise float math as LLVM IR (see llvm_math.h for the contract and measured errors).
//
// Every polynomial here was fitted for this file with a weighted Remez exchange in
// 40-digit arithmetic (mpmath), then rounded to float; the error quoted beside each is the
// weighted maximum error with the float coefficients, before evaluation rounding. The
// measured end-to-end errors are in llvm_math.h and tests/codegen/llvm_math_test.cpp.
//
// Conventions: "exact" means the operation rounds nothing, whether or not the backend fuses
// llvm.fmuladd; the algorithms only rely on exactness where the operands make it so (few
// significant bits, or Sterbenz's lemma), never on a fused multiply-add.
#include "engine/codegen/llvm/llvm_math.h"

#include "engine/support/diagnostics.h"

#include <cstdint>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <optional>
#include <string>
#include <utility>

namespace lathe::codegen::math {
namespace {

using llvm::Value;

// Adding 1.5 * 2^23 to |v| < 2^22 pushes every fraction bit out of the significand, so
// the FPU rounds v to an integer (to nearest, ties to even) and the low significand bits
// of the sum hold that integer in two's complement. Cheaper than llvm.rint + fptosi, and
// never poison: fptosi of NaN or of an out-of-range value is.
constexpr float kMagic = 0x1.8p23f;
constexpr float kLog2e = 0x1.715476p0f;
constexpr float kLn2 = 0x1.62e430p-1f;
// ln2 = kLn2Hi + kLn2Lo (+ 1e-12): kLn2Hi has 13 significant bits, so n * kLn2Hi is exact
// for |n| < 2^11.
constexpr float kLn2Hi = 0x1.62ep-1f;
constexpr float kLn2Lo = 0x1.0bfbe8p-15f;
// log2(e) = kLog2eHi + kLog2eLo: kLog2eHi has 12 significant bits, so its product with a
// value truncated to 12 bits is exact.
constexpr float kLog2eHi = 0x1.716p0f;
constexpr float kLog2eLo = -0x1.7135a8p-13f;
// pi/2 = kPio2A + kPio2B + kPio2C (- 5.1e-14): A and B have 8 significant bits, so n * A
// and n * B are exact for |n| < 2^16, i.e. |x| up to 1e5. B is rounded down so that C > 0:
// then x - n A - n B - n C keeps the sign of x = -0.
constexpr float k2OverPi = 0x1.45f306p-1f;
constexpr float kPio2A = 0x1.92p0f;
constexpr float kPio2B = 0x1.fap-12f;
constexpr float kPio2C = 0x1.54442ep-20f;
constexpr std::uint32_t kHigh12Bits = 0xfffff000u; // sign, exponent, top 11 fraction bits

// IR for one float type (float or a vector of float) and its same-shaped i32 type, with
// the builder's fast-math flags cleared: reassociation would undo the exact-rounding tricks.
class Emitter {
public:
  Emitter(llvm::IRBuilder<>& builder, llvm::Type* type)
      : b(builder), guard_(builder), type_(type), int_(type->getWithNewType(builder.getInt32Ty())) {
    b.setFastMathFlags(llvm::FastMathFlags());
  }

  llvm::IRBuilder<>& b;

  Value* k(double v) const { return llvm::ConstantFP::get(type_, v); }
  Value* ki(std::uint32_t v) const { return llvm::ConstantInt::get(int_, v); }
  Value* inf() const { return llvm::ConstantFP::getInfinity(type_); }
  Value* nan() const { return llvm::ConstantFP::getQNaN(type_); }

  Value* add(Value* x, Value* y) { return b.CreateFAdd(x, y); }
  Value* sub(Value* x, Value* y) { return b.CreateFSub(x, y); }
  Value* mul(Value* x, Value* y) { return b.CreateFMul(x, y); }
  Value* div(Value* x, Value* y) { return b.CreateFDiv(x, y); }
  Value* neg(Value* x) { return b.CreateFNeg(x); }
  // x * y + z, fused where the target has it.
  Value* fma(Value* x, Value* y, Value* z) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type_}, {x, y, z});
  }
  Value* abs(Value* x) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  Value* copysign(Value* mag, Value* sign) {
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign);
  }
  // c[0] + x * (c[1] + x * (c[2] + ...)), Horner's scheme.
  Value* poly(Value* x, llvm::ArrayRef<float> c) {
    Value* acc = k(c.back());
    for (std::size_t i = c.size() - 1; i-- > 0;)
      acc = fma(acc, x, k(c[i]));
    return acc;
  }

  // Ordered comparisons are false for NaN, so `sel(gt(x, hi), k(hi), x)` keeps NaN.
  Value* lt(Value* x, Value* y) { return b.CreateFCmpOLT(x, y); }
  Value* gt(Value* x, Value* y) { return b.CreateFCmpOGT(x, y); }
  Value* eq(Value* x, Value* y) { return b.CreateFCmpOEQ(x, y); }
  Value* isNan(Value* x) { return b.CreateFCmpUNO(x, x); }
  Value* sel(Value* c, Value* x, Value* y) { return b.CreateSelect(c, x, y); }
  Value* minF(Value* x, float hi) { return sel(gt(x, k(hi)), k(hi), x); }
  Value* maxF(Value* x, float lo) { return sel(lt(x, k(lo)), k(lo), x); }

  Value* bits(Value* x) { return b.CreateBitCast(x, int_); }
  Value* fromBits(Value* i) { return b.CreateBitCast(i, type_); }
  Value* mask(Value* x, std::uint32_t m) { return fromBits(b.CreateAnd(bits(x), ki(m))); }
  Value* toFloat(Value* i) { return b.CreateSIToFP(i, type_); }

private:
  llvm::IRBuilderBase::FastMathFlagGuard guard_;
  llvm::Type* type_;
  llvm::Type* int_;
};

bool isFloatValue(const Value* v) {
  return v && v->getType()->getScalarType()->isFloatTy();
}

void checkFloat(const Value* v, const char* fn) {
  LATHE_CHECK(isFloatValue(v), std::string("math::") + fn + " takes float or <N x float>");
}

// v rounded to an integer with kMagic: `j` is v + kMagic, computed by the caller (often
// fused with the multiply that produced v). Gives the integer as float and as i32 lanes.
struct Rounded {
  Value* n;
  Value* ni;
};
Rounded fromMagic(Emitter& e, Value* j) {
  return {e.sub(j, e.k(kMagic)), e.b.CreateSub(e.bits(j), e.bits(e.k(kMagic)))};
}

// 2^n for integer lanes n in [-126, 127], by building the exponent field.
Value* pow2(Emitter& e, Value* n) {
  return e.fromBits(e.b.CreateShl(e.b.CreateAdd(n, e.ki(127)), 23));
}

// p * 2^n for n in [-252, 254] and p in [0.5, 2]. Two factors keep each power of two
// normal, so the product overflows to inf and underflows gradually (subnormals, or zero
// where the FPU flushes them) with a single rounding.
Value* scale(Emitter& e, Value* p, Value* n) {
  Value* half = e.b.CreateAShr(n, 1);
  return e.mul(e.mul(p, pow2(e, half)), pow2(e, e.b.CreateSub(n, half)));
}

// exp(r) for |r| <= 0.3473 (ln2/2 with a margin for the rounding of n):
// 1 + r + r^2 P(r), P of degree 4; relative error 4.2e-9. The final addition to 1 is the
// only rounding at the magnitude of the result.
Value* expPoly(Emitter& e, Value* r) {
  Value* p = e.poly(r, {0.49999994f, 0.166665196f, 0.0416684002f, 0.00836885069f, 0.00138143206f});
  return e.add(e.k(1.0), e.fma(e.mul(r, r), p, r));
}

// exp(x) = 2^n exp(r): n = round(x log2 e), r = x - n ln2 by Cody-Waite reduction
// (x - n * kLn2Hi is exact, only the small n * kLn2Lo term rounds). Returns exp(r) and n.
std::pair<Value*, Value*> expReduce(Emitter& e, Value* x) {
  auto [n, ni] = fromMagic(e, e.fma(x, e.k(kLog2e), e.k(kMagic)));
  Value* r = e.sub(x, e.mul(n, e.k(kLn2Hi)));
  r = e.fma(n, e.k(-kLn2Lo), r);
  return {expPoly(e, r), ni};
}

// exp(x) for x in [-87, 88] (no overflow or underflow handling): one multiply to scale.
Value* expInRange(Emitter& e, Value* x) {
  auto [p, n] = expReduce(e, x);
  return e.mul(p, pow2(e, n));
}

// log(x) = e ln2 + f + t for finite x > 0, with x = 2^e (1 + f), 1 + f in [sqrt(1/2),
// sqrt(2)) and t = log1p(f) - f. f is exact (Sterbenz); t is small, so its rounding error
// hardly matters. Subnormal x is scaled by 2^23 first.
struct LogParts {
  Value* e;
  Value* f;
  Value* t;
};
LogParts logParts(Emitter& e, Value* x) {
  Value* sub = e.lt(x, e.k(0x1p-126));
  Value* xs = e.sel(sub, e.mul(x, e.k(0x1p23)), x);
  Value* ix = e.bits(xs);
  // Offsetting by the bits of sqrt(1/2) moves the exponent boundary there: k is the
  // exponent of x / sqrt(1/2) and removing it leaves a mantissa in [sqrt(1/2), sqrt(2)).
  Value* tmp = e.b.CreateSub(ix, e.ki(0x3f3504f3));
  Value* k = e.b.CreateAShr(tmp, 23);
  Value* m = e.fromBits(e.b.CreateSub(ix, e.b.CreateAnd(tmp, e.ki(0xff800000u))));
  Value* f = e.sub(m, e.k(1.0));
  Value* ex = e.sub(e.toFloat(k), e.sel(sub, e.k(23.0), e.k(0.0)));
  // log1p(f) = f - f^2/2 + f^3 P(f) on [-0.2930, 0.4143], P of degree 7; relative error
  // 6.7e-9.
  Value* q = e.poly(f, {-0.5f, 0.333333313f, -0.250008225f, 0.200012326f, -0.166232988f,
                        0.142015532f, -0.131605819f, 0.127633244f, -0.0763565227f});
  return {ex, f, e.mul(e.mul(f, f), q)};
}

// log2(1 + f) = hi + lo with hi exact: f's top 12 bits times kLog2eHi (12 bits) is exact,
// and lo gathers the rest, which is small, so log2 rounds about once at its magnitude
// (plain f * log2(e) would round twice and add the error of log2(e) in float).
std::pair<Value*, Value*> log2Mantissa(Emitter& e, Value* f, Value* t) {
  Value* fh = e.mask(f, kHigh12Bits);
  Value* fl = e.sub(f, fh);
  Value* lo = e.fma(fl, e.k(kLog2e), e.fma(fh, e.k(kLog2eLo), e.mul(t, e.k(kLog2e))));
  return {e.mul(fh, e.k(kLog2eHi)), lo};
}

// Special values of log and log2: -inf at +-0, +inf at +inf, NaN below zero and for NaN.
Value* logSpecials(Emitter& e, Value* x, Value* r) {
  r = e.sel(e.eq(x, e.k(0.0)), e.neg(e.inf()), r);
  r = e.sel(e.eq(x, e.inf()), e.inf(), r);
  return e.sel(e.b.CreateFCmpULT(x, e.k(0.0)), e.nan(), r);
}

// sin(x) for quadrantOffset 0, cos(x) for 1: sin(x + k pi/2) is +-sin or +-cos of x.
Value* sinCos(Emitter& e, Value* x, std::uint32_t quadrantOffset) {
  auto [n, q] = fromMagic(e, e.fma(x, e.k(k2OverPi), e.k(kMagic)));
  // Three-part Cody-Waite reduction: the first two products are exact and the first two
  // subtractions nearly so; |r| <= pi/4 (+ rounding of n).
  Value* r = e.sub(x, e.mul(n, e.k(kPio2A)));
  r = e.sub(r, e.mul(n, e.k(kPio2B)));
  r = e.fma(n, e.k(-kPio2C), r);
  Value* r2 = e.mul(r, r);
  // sin r = r + r^3 S(r^2), S of degree 2, relative error 1.4e-8 on [0, pi/4];
  // cos r = 1 - r^2/2 + r^4 C(r^2), C of degree 2, absolute error 6.6e-10.
  Value* s = e.fma(e.mul(r, r2), e.poly(r2, {-0.166666642f, 0.00833264459f, -0.000195663742f}), r);
  // sin r has the sign of r, and copying it keeps sin(-0) = -0 (r^3 S is +0 there).
  s = e.copysign(s, r);
  Value* c =
      e.fma(r2, e.poly(r2, {-0.5f, 0.0416666642f, -0.00138881989f, 2.45263782e-05f}), e.k(1.0));
  q = e.b.CreateAdd(q, e.ki(quadrantOffset));
  Value* odd = e.b.CreateICmpNE(e.b.CreateAnd(q, e.ki(1)), e.ki(0));
  Value* res = e.sel(odd, c, s);
  // Quadrants 2 and 3 negate: flip the sign bit with bit 1 of q.
  Value* sign = e.b.CreateShl(e.b.CreateAnd(q, e.ki(2)), 30);
  res = e.fromBits(e.b.CreateXor(e.bits(res), sign));
  // Beyond 2^22 the rounding of n breaks down and every float is a multiple of pi/2 to
  // within its own spacing: NaN rather than a meaningless number (inf and NaN give NaN).
  return e.sel(e.b.CreateFCmpUGT(e.abs(x), e.k(0x1p22)), e.nan(), res);
}

enum class Fn { Exp, Exp2, Log, Log2, Tanh, Erf, Sigmoid, Pow, Sin, Cos };

std::optional<Fn> lookup(std::string_view name) {
  static constexpr std::pair<std::string_view, Fn> names[] = {
      {"exp", Fn::Exp},   {"exp2", Fn::Exp2}, {"log", Fn::Log},         {"log2", Fn::Log2},
      {"tanh", Fn::Tanh}, {"erf", Fn::Erf},   {"sigmoid", Fn::Sigmoid}, {"pow", Fn::Pow},
      {"sin", Fn::Sin},   {"cos", Fn::Cos}};
  for (const auto& [n, fn] : names)
    if (n == name)
      return fn;
  return std::nullopt;
}

Value* emitFloat(llvm::IRBuilder<>& b, Fn fn, llvm::ArrayRef<Value*> a) {
  switch (fn) {
  case Fn::Exp:
    return exp(b, a[0]);
  case Fn::Exp2:
    return exp2(b, a[0]);
  case Fn::Log:
    return log(b, a[0]);
  case Fn::Log2:
    return log2(b, a[0]);
  case Fn::Tanh:
    return tanh(b, a[0]);
  case Fn::Erf:
    return erf(b, a[0]);
  case Fn::Sigmoid:
    return sigmoid(b, a[0]);
  case Fn::Pow:
    return pow(b, a[0], a[1]);
  case Fn::Sin:
    return sin(b, a[0]);
  case Fn::Cos:
    return cos(b, a[0]);
  }
  LATHE_CHECK(false, "unhandled math function");
  return nullptr;
}

// libm's erf one lane at a time: LLVM has no erf intrinsic.
Value* callErfF64(llvm::IRBuilder<>& b, Value* x) {
  llvm::Module* module = b.GetInsertBlock()->getModule();
  llvm::Type* f64 = b.getDoubleTy();
  llvm::FunctionCallee libmErf =
      module->getOrInsertFunction("erf", llvm::FunctionType::get(f64, {f64}, false));
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vt)
    return b.CreateCall(libmErf, {x});
  Value* out = llvm::PoisonValue::get(vt);
  for (unsigned i = 0; i < vt->getNumElements(); ++i)
    out = b.CreateInsertElement(out, b.CreateCall(libmErf, {b.CreateExtractElement(x, i)}), i);
  return out;
}

Value* emitDouble(llvm::IRBuilder<>& b, Fn fn, llvm::ArrayRef<Value*> a) {
  auto unary = [&](llvm::Intrinsic::ID id) { return b.CreateUnaryIntrinsic(id, a[0]); };
  switch (fn) {
  case Fn::Exp:
    return unary(llvm::Intrinsic::exp);
  case Fn::Exp2:
    return unary(llvm::Intrinsic::exp2);
  case Fn::Log:
    return unary(llvm::Intrinsic::log);
  case Fn::Log2:
    return unary(llvm::Intrinsic::log2);
  case Fn::Tanh:
    return unary(llvm::Intrinsic::tanh);
  case Fn::Erf:
    return callErfF64(b, a[0]);
  case Fn::Sigmoid: {
    Value* one = llvm::ConstantFP::get(a[0]->getType(), 1.0);
    Value* e = b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b.CreateFNeg(a[0]));
    return b.CreateFDiv(one, b.CreateFAdd(one, e));
  }
  case Fn::Pow:
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a[0], a[1]);
  case Fn::Sin:
    return unary(llvm::Intrinsic::sin);
  case Fn::Cos:
    return unary(llvm::Intrinsic::cos);
  }
  LATHE_CHECK(false, "unhandled math function");
  return nullptr;
}

} // namespace

// Clamped so that n stays in range: above 88.75 the result is inf. Below -104 it is 0
// (exp(-104) < 2^-150), chosen after computing exp(0) in those lanes: scaling down to 0
// would take a slow microcode path on x86 in every such lane (softmax over masked
// attention scores, x - max near -10000, ran 1.7x slower). NaN passes the clamps and the
// arithmetic, giving NaN.
Value* exp(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "exp");
  Emitter e(b, x->getType());
  Value* zero = e.lt(x, e.k(-104.0));
  auto [p, n] = expReduce(e, e.sel(zero, e.k(0.0), e.minF(x, 88.75f)));
  return e.sel(zero, e.k(0.0), scale(e, p, n));
}

// 2^x = 2^n 2^f with n = round(x) and f = x - n exact; 2^f = exp(f ln2) reuses exp's
// polynomial (the rounding of f * ln2 costs at most 2e-8 relative).
Value* exp2(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "exp2");
  Emitter e(b, x->getType());
  Value* xc = e.maxF(e.minF(x, 129.0f), -151.0f);
  auto [n, ni] = fromMagic(e, e.add(xc, e.k(kMagic)));
  return scale(e, expPoly(e, e.mul(e.sub(xc, n), e.k(kLn2))), ni);
}

// log(x) = e * kLn2Hi + (f + (t + e * kLn2Lo)): e * kLn2Hi is exact and the bracket has at
// most half the magnitude of the result when e != 0, so its rounding costs little.
Value* log(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "log");
  Emitter e(b, x->getType());
  auto [ex, f, t] = logParts(e, x);
  Value* r = e.fma(ex, e.k(kLn2Hi), e.add(f, e.fma(ex, e.k(kLn2Lo), t)));
  return logSpecials(e, x, r);
}

// log2(x) = e + hi + lo: e + hi is summed exactly (Fast2Sum: |e| >= 1 > |hi|, or e = 0).
Value* log2(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "log2");
  Emitter e(b, x->getType());
  auto [ex, f, t] = logParts(e, x);
  auto [hi, lo] = log2Mantissa(e, f, t);
  Value* s = e.add(ex, hi);
  Value* err = e.add(e.sub(ex, s), hi);
  return logSpecials(e, x, e.add(s, e.add(err, lo)));
}

// |x| < 0.55: x + x^3 P(x^2), P of degree 4 (relative error 8.6e-9), which keeps full
// relative accuracy near 0. Else 1 - 2 / (exp(2|x|) + 1), whose error is absolute
// (about one rounding of 1). The sign is copied from x, so tanh is exactly odd.
Value* tanh(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "tanh");
  Emitter e(b, x->getType());
  Value* ax = e.abs(x);
  Value* x2 = e.mul(ax, ax);
  Value* small = e.fma(
      e.mul(ax, x2),
      e.poly(x2, {-0.333333343f, 0.133332267f, -0.0539257973f, 0.0213826597f, -0.00671168137f}),
      ax);
  Value* ac = e.minF(ax, 9.0f);
  Value* big = e.sub(e.k(1.0), e.div(e.k(2.0), e.add(expInRange(e, e.add(ac, ac)), e.k(1.0))));
  Value* r = e.sel(e.lt(ax, e.k(0.55)), small, big);
  // Above 9, tanh is within 3.1e-8 of 1.
  r = e.sel(e.gt(ax, e.k(9.0)), e.k(1.0), r);
  return e.copysign(r, x);
}

// |x| < 0.9: x + x Q(x^2), Q of degree 6 (relative error 4.6e-9); adding the exact x last
// keeps the rounding of 2/sqrt(pi) ~ 1 + Q(0) out of the result. Else 1 - exp(-x^2) G(|x|)
// with G(x) ~ erfc(x) exp(x^2), a degree-9 polynomial in x on [0.9, 4] fitted for
// absolute error in erf (4.4e-8). The rounding of x^2 costs under 1e-8 because erfc(x)
// x^2 is small. Above 3.92 erf rounds to 1. Exactly odd.
Value* erf(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "erf");
  Emitter e(b, x->getType());
  Value* ax = e.abs(x);
  Value* small =
      e.fma(ax,
            e.poly(e.mul(ax, ax), {0.128379166f, -0.376126379f, 0.112837724f, -0.0268637203f,
                                   0.00521169323f, -0.000826185744f, 8.86430353e-05f}),
            ax);
  Value* ac = e.minF(ax, 4.0f);
  Value* g = e.poly(ac, {0.9924137f, -1.08093631f, 0.866480768f, -0.526356041f, 0.239700437f,
                         -0.0797305778f, 0.0186440162f, -0.00288601941f, 0.00026439401f,
                         -1.08201803e-05f});
  Value* big = e.fma(e.neg(expInRange(e, e.neg(e.mul(ac, ac)))), g, e.k(1.0));
  Value* r = e.sel(e.lt(ax, e.k(0.9)), small, big);
  r = e.sel(e.gt(ax, e.k(4.0)), e.k(1.0), r);
  return e.copysign(r, x);
}

// 1 / (1 + exp(-x)): exp overflows to inf for x < -88.7, giving 0, and tends to 0 for
// large x, giving 1. Relative accuracy holds in both tails.
Value* sigmoid(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "sigmoid");
  Emitter e(b, x->getType()); // before the negation too: nnan/ninf on it would be poison
  Value* ex = exp(b, e.neg(x));
  return e.div(e.k(1.0), e.add(e.k(1.0), ex));
}

// pow(x, y) = 2^(y log2|x|), with y log2|x| = y (e + l) carried as a float pair: y and l
// are split into 12-bit halves so that every partial product is exact, and the two big
// products are added with TwoSum. (A single float product would lose up to 2^-24 * 200 of
// the exponent, 1e-5 relative in the result.) l = log2 of the mantissa is accurate to
// about 2^-26, which times |y| <= 10 is 1.5e-7 in the result.
// Special cases follow C99: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN; pow(+-0, y) is
// +0 for y > 0 and +inf for y < 0; pow(+-inf, y) is +inf for y > 0 and +0 for y < 0;
// pow(x, +-inf) depends on |x| against 1; the sign is negative for x with the sign bit set
// and odd integer y; finite x < 0 with non-integer y gives NaN, as does a NaN argument.
Value* pow(llvm::IRBuilder<>& b, Value* x, Value* y) {
  checkFloat(x, "pow");
  checkFloat(y, "pow");
  LATHE_CHECK(x->getType() == y->getType(), "math::pow takes two values of one type");
  Emitter e(b, x->getType());
  Value* ax = e.abs(x);
  auto [ex, f, t] = logParts(e, ax);
  auto [hi, lo] = log2Mantissa(e, f, t);
  Value* l = e.add(hi, lo);
  Value* yh = e.mask(y, kHigh12Bits);
  Value* yl = e.sub(y, yh);
  Value* lh = e.mask(l, kHigh12Bits);
  Value* ll = e.sub(l, lh);
  Value* p1 = e.mul(ex, yh); // exact: 8 x 12 bits
  Value* p2 = e.mul(yh, lh); // exact: 12 x 12 bits
  Value* rest = e.add(e.add(e.mul(ex, yl), e.mul(yh, ll)), e.add(e.mul(yl, lh), e.mul(yl, ll)));
  Value* s = e.add(p1, p2);
  Value* bv = e.sub(s, p1);
  Value* err = e.add(e.sub(p1, e.sub(s, bv)), e.sub(p2, bv));
  auto [n, ni] = fromMagic(e, e.add(s, e.k(kMagic)));
  // s - n is exact (Sterbenz); |r| <= 0.5 plus a little.
  Value* r = e.add(e.sub(s, n), e.add(err, rest));
  Value* res = scale(e, expPoly(e, e.mul(r, e.k(kLn2))), ni);
  // |y log2|x|| > 200 overflows or underflows whatever r is; outside +-2^22 n is wrong.
  res = e.sel(e.gt(e.abs(s), e.k(200.0)), e.sel(e.gt(s, e.k(0.0)), e.inf(), e.k(0.0)), res);

  Value* ay = e.abs(y);
  Value* yPos = e.gt(y, e.k(0.0));
  Value* inf = e.inf();
  Value* zero = e.k(0.0);
  res = e.sel(e.eq(ax, zero), e.sel(yPos, zero, inf), res);
  res = e.sel(e.eq(ax, inf), e.sel(yPos, inf, zero), res);
  Value* growsToInf = e.b.CreateXor(e.gt(ax, e.k(1.0)), e.lt(y, zero));
  Value* yInfCase = e.sel(e.eq(ax, e.k(1.0)), e.k(1.0), e.sel(growsToInf, inf, zero));
  res = e.sel(e.eq(ay, inf), yInfCase, res);
  // Integer and odd y without llvm.floor, which SSE2 lacks (it would call floorf): below
  // 2^23, |y| + 2^23 rounds |y| to an integer whose parity is the lowest significand bit;
  // from 2^23 every float is an integer, with parity in that bit below 2^24, even above.
  Value* small = e.lt(ay, e.k(0x1p23));
  Value* rounded = e.sel(small, e.add(ay, e.k(0x1p23)), ay);
  Value* yInt = e.b.CreateOr(e.b.CreateNot(small), e.eq(e.sub(rounded, e.k(0x1p23)), ay));
  Value* lowBit = e.b.CreateICmpNE(e.b.CreateAnd(e.bits(rounded), e.ki(1)), e.ki(0));
  Value* yOdd = e.b.CreateAnd(e.b.CreateAnd(yInt, lowBit), e.lt(ay, e.k(0x1p24)));
  Value* xSign = e.b.CreateICmpSLT(e.bits(x), e.ki(0));
  res = e.sel(e.b.CreateAnd(xSign, yOdd), e.neg(res), res);
  Value* negFinite = e.b.CreateAnd(e.lt(x, zero), e.b.CreateFCmpONE(ax, inf));
  Value* isNan = e.b.CreateOr(e.b.CreateAnd(negFinite, e.b.CreateNot(yInt)),
                              e.b.CreateOr(e.isNan(x), e.isNan(y)));
  res = e.sel(isNan, e.nan(), res);
  return e.sel(e.b.CreateOr(e.eq(y, zero), e.eq(x, e.k(1.0))), e.k(1.0), res);
}

Value* sin(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "sin");
  Emitter e(b, x->getType());
  return sinCos(e, x, 0);
}

Value* cos(llvm::IRBuilder<>& b, Value* x) {
  checkFloat(x, "cos");
  Emitter e(b, x->getType());
  return sinCos(e, x, 1);
}

bool isKnownIntrinsic(std::string_view name) {
  return lookup(name).has_value();
}

Value* emitIntrinsic(llvm::IRBuilder<>& b, std::string_view name, llvm::ArrayRef<Value*> args) {
  const std::optional<Fn> fn = lookup(name);
  if (!fn)
    throw Error(ErrorKind::Unsupported, "no math function named \"" + std::string(name) + "\"");
  const std::size_t arity = *fn == Fn::Pow ? 2 : 1;
  LATHE_CHECK(args.size() == arity, "math function " + std::string(name) + " takes " +
                                        std::to_string(arity) + " argument(s)");
  llvm::Type* type = args[0]->getType();
  for (Value* a : args)
    LATHE_CHECK(a->getType() == type, "math function arguments must have one type");
  llvm::Type* scalar = type->getScalarType();
  if (scalar->isFloatTy())
    return emitFloat(b, *fn, args);
  if (scalar->isDoubleTy())
    return emitDouble(b, *fn, args);
  if (scalar->isHalfTy() || scalar->isBFloatTy()) {
    // Float has far more range and precision than either, so one extra rounding is all.
    llvm::Type* wide = type->getWithNewType(b.getFloatTy());
    llvm::SmallVector<Value*, 2> ext;
    for (Value* a : args)
      ext.push_back(b.CreateFPExt(a, wide));
    return b.CreateFPTrunc(emitFloat(b, *fn, ext), type);
  }
  std::string typeName;
  llvm::raw_string_ostream out(typeName);
  type->print(out);
  throw Error(ErrorKind::Unsupported,
              "math function " + std::string(name) + " does not support type " + typeName);
}

} // namespace lathe::codegen::math
