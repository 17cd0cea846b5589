// Lathe's own float math (llvm_math.h) against the double-precision std:: functions, through
// the real pipeline: IR built with IRBuilder -> O3 for the host -> JIT. Each function runs
// as a <8 x float> loop and as a scalar loop (which O3 vectorises itself), on ~1e6 points
// plus special values; the two must agree bit for bit. On x86-64 hosts every accuracy test
// also runs for baseline x86-64 (no FMA), where llvm.fmuladd is not fused.
#include "engine/codegen/llvm/codegen.h"
#include "engine/codegen/llvm/llvm_backend.h"
#include "engine/codegen/llvm/llvm_math.h"
#include "engine/support/diagnostics.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <gtest/gtest.h>
#include <limits>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace lathe::codegen {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kMaxF = std::numeric_limits<float>::max();
constexpr float kMinNormal = std::numeric_limits<float>::min();
constexpr float kMinSub = std::numeric_limits<float>::denorm_min();

// void name(const T* x, const T* y, T* out, i64 n): out[i] = fn(x[i]) or fn(x[i], y[i]).
// width > 1: a <width x T> loop over whole vectors, then a scalar loop over the rest.
void buildKernel(llvm::Module& module, const std::string& name, const std::string& fn,
                 unsigned width, llvm::Type* elem) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  auto* ptr = b.getPtrTy();
  auto* i64 = b.getInt64Ty();
  auto* fnType = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, i64}, false);
  auto* f = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage, name, module);
  for (unsigned i = 0; i < 3; ++i)
    f->addParamAttr(i, llvm::Attribute::NoAlias);
  llvm::Value* n = f->getArg(3);
  const bool binary = fn == "pow";
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto* vecLoop = llvm::BasicBlock::Create(ctx, "vec", f);
  auto* tailCheck = llvm::BasicBlock::Create(ctx, "tail.check", f);
  auto* tail = llvm::BasicBlock::Create(ctx, "tail", f);
  auto* done = llvm::BasicBlock::Create(ctx, "done", f);
  const llvm::Align align(elem->getPrimitiveSizeInBits() / 8); // std::vector's alignment

  // One step of either loop: type is elem or <width x elem>.
  auto step = [&](llvm::Value* i, llvm::Type* type) {
    std::vector<llvm::Value*> args{
        b.CreateAlignedLoad(type, b.CreateGEP(elem, f->getArg(0), i), align)};
    if (binary)
      args.push_back(b.CreateAlignedLoad(type, b.CreateGEP(elem, f->getArg(1), i), align));
    b.CreateAlignedStore(math::emitIntrinsic(b, fn, args), b.CreateGEP(elem, f->getArg(2), i),
                         align);
  };

  b.SetInsertPoint(entry);
  llvm::Value* nVec = width > 1 ? b.CreateAnd(n, b.getInt64(~std::uint64_t(width - 1)))
                                : static_cast<llvm::Value*>(b.getInt64(0));
  b.CreateCondBr(b.CreateICmpSGT(nVec, b.getInt64(0)), vecLoop, tailCheck);

  b.SetInsertPoint(vecLoop);
  auto* i = b.CreatePHI(i64, 2, "i");
  i->addIncoming(b.getInt64(0), entry);
  step(i, llvm::FixedVectorType::get(elem, width));
  auto* iNext = b.CreateAdd(i, b.getInt64(width));
  i->addIncoming(iNext, vecLoop);
  b.CreateCondBr(b.CreateICmpSLT(iNext, nVec), vecLoop, tailCheck);

  b.SetInsertPoint(tailCheck);
  b.CreateCondBr(b.CreateICmpSLT(nVec, n), tail, done);

  b.SetInsertPoint(tail);
  auto* j = b.CreatePHI(i64, 2, "j");
  j->addIncoming(nVec, tailCheck);
  step(j, elem);
  auto* jNext = b.CreateAdd(j, b.getInt64(1));
  j->addIncoming(jNext, tail);
  b.CreateCondBr(b.CreateICmpSLT(jNext, n), tail, done);

  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

template <typename T>
using Kernel = void (*)(const T*, const T*, T*, std::int64_t);

// A JIT holding fn's vector kernel ("vec", <8 x T>) and scalar kernel ("scalar").
template <typename T>
struct Compiled {
  std::unique_ptr<LlvmJit> jit;
  Kernel<T> vec = nullptr;
  Kernel<T> scalar = nullptr;
  std::string vecIr, scalarIr; // after O3
};

std::string functionText(const llvm::Function& f) {
  std::string text;
  llvm::raw_string_ostream out(text);
  f.print(out);
  return text;
}

template <typename T>
Compiled<T> compile(const std::string& fn, const std::string& targetText, unsigned width = 8) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("math_" + fn, *ctx);
  llvm::Type* elem =
      std::is_same_v<T, float> ? llvm::Type::getFloatTy(*ctx) : llvm::Type::getDoubleTy(*ctx);
  buildKernel(*module, "vec", fn, width, elem);
  buildKernel(*module, "scalar", fn, 1, elem);
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  const target::Target target = target::parseTarget(targetText);
  auto machine = createTargetMachine(target);
  optimizeModule(*module, *machine, 3);
  Compiled<T> c;
  c.vecIr = functionText(*module->getFunction("vec"));
  c.scalarIr = functionText(*module->getFunction("scalar"));
  c.jit = std::make_unique<LlvmJit>(target);
  c.jit->addModule(std::move(module), std::move(ctx));
  c.vec = reinterpret_cast<Kernel<T>>(c.jit->lookup("vec"));
  c.scalar = reinterpret_cast<Kernel<T>>(c.jit->lookup("scalar"));
  return c;
}

bool sameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

// Runs both kernels; they must agree bit for bit (the same IR per lane).
std::vector<float> run(const Compiled<float>& c, const std::vector<float>& x,
                       const std::vector<float>& y = {}) {
  const std::vector<float>& yy = y.empty() ? x : y;
  std::vector<float> v(x.size()), s(x.size());
  c.vec(x.data(), yy.data(), v.data(), static_cast<std::int64_t>(x.size()));
  c.scalar(x.data(), yy.data(), s.data(), static_cast<std::int64_t>(x.size()));
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!sameFloat(v[i], s[i]) && mismatches++ < 5)
      ADD_FAILURE() << "vector and scalar kernels differ at x=" << x[i] << ": " << v[i] << " vs "
                    << s[i];
  return v;
}

// Input sets.
std::vector<float> linspace(double lo, double hi, std::size_t count) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(lo + (hi - lo) * static_cast<double>(i) / double(count - 1));
  return v;
}

// `count` floats evenly spaced in bit pattern over [lo, hi] (0 < lo < hi): every binade
// gets its share. With `bothSigns`, their negatives too.
std::vector<float> bitSweep(float lo, float hi, std::size_t count, bool bothSigns) {
  const auto a = std::bit_cast<std::uint32_t>(lo), z = std::bit_cast<std::uint32_t>(hi);
  std::vector<float> v;
  for (std::size_t i = 0; i < count; ++i) {
    const auto bits = static_cast<std::uint32_t>(a + (std::uint64_t(z - a) * i) / (count - 1));
    v.push_back(std::bit_cast<float>(bits));
    if (bothSigns)
      v.push_back(-std::bit_cast<float>(bits));
  }
  return v;
}

std::vector<float> concat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> v;
  for (const auto& p : parts)
    v.insert(v.end(), p.begin(), p.end());
  return v;
}

const std::vector<float> kSpecials = {0.0f,        -0.0f,    kInf,   -kInf,   kNan,
                                      kMinSub,     -kMinSub, 1e-40f, -1e-40f, kMinNormal,
                                      -kMinNormal, kMaxF,    -kMaxF, 1.0f,    -1.0f};

// The largest error seen, where, and how many points failed the bound.
struct Worst {
  const char* what;
  double bound;
  double err = 0;
  float x = 0, y = 0, got = 0;
  double want = 0;
  std::size_t failures = 0;

  void add(double e, float xi, float got_, double want_, float yi = 0) {
    if (!(e <= bound))
      ++failures;
    if (!(e <= err)) {
      err = e;
      x = xi;
      y = yi;
      got = got_;
      want = want_;
    }
  }
  void report(const std::string& label) const {
    std::printf("[ measured ] %-28s %-11s max %.3g (bound %.3g) at x=%.9g%s got %.9g want %.9g\n",
                label.c_str(), what, err, bound, double(x),
                y != 0 ? (" y=" + std::to_string(y)).c_str() : "", double(got), want);
    EXPECT_EQ(failures, 0u) << label << ": " << what << " error above " << bound;
  }
};

// Relative error of a float result against the double reference, or a failure (error 1)
// when its class is wrong. Results that overflow or underflow float are handled apart:
// above FLT_MAX the float must be inf (or within the bound of the reference); below the
// normal range the absolute error must be at most one subnormal ulp plus the bound times
// the result (a relative error before the final rounding; no FTZ in tests).
double relError(float got, double want, double bound) {
  if (std::isnan(want))
    return std::isnan(got) ? 0 : 1;
  if (std::isnan(got))
    return 1;
  if (std::isinf(want) || want == 0)
    return got == want ? 0 : 1;
  if (std::fabs(want) > kMaxF) {
    if (std::isinf(got))
      return std::signbit(got) == std::signbit(want) ? 0 : 1;
    return std::fabs(got - want) / std::fabs(want);
  }
  if (std::isinf(got)) // overflowed although the reference is finite: fine within bound
    return std::fabs(want) >= double(kMaxF) * (1 - bound) ? 0 : 1;
  if (std::fabs(want) < kMinNormal) // one subnormal ulp plus the relative bound
    return std::fabs(got - want) <= kMinSub + bound * std::fabs(want) ? 0 : 1;
  return std::fabs(got - want) / std::fabs(want);
}

double absError(float got, double want) {
  if (std::isnan(want) || std::isnan(got))
    return std::isnan(want) == std::isnan(got) ? 0 : 1;
  if (std::isinf(want))
    return got == want ? 0 : 1;
  return std::fabs(double(got) - want);
}

class MathAccuracy : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override {
    if (std::string(GetParam()) != "llvm" && hostTriple().rfind("x86_64", 0) != 0)
      GTEST_SKIP() << "the no-FMA variant is for x86-64 hosts";
  }
  std::string label(const char* fn) const {
    return std::string(fn) + (std::string(GetParam()) == "llvm" ? " (host)" : " (no FMA)");
  }
  Compiled<float> compileFn(const char* fn) const { return compile<float>(fn, GetParam()); }
};

// Checks f against ref in relative error over xs; returns the outputs.
std::vector<float> checkRelative(const Compiled<float>& c, const std::string& label,
                                 const std::vector<float>& xs, double (*ref)(double),
                                 double bound) {
  const std::vector<float> out = run(c, xs);
  Worst w{"relative", bound};
  for (std::size_t i = 0; i < xs.size(); ++i)
    w.add(relError(out[i], ref(xs[i]), bound), xs[i], out[i], ref(xs[i]));
  w.report(label);
  return out;
}

std::vector<float> checkAbsolute(const Compiled<float>& c, const std::string& label,
                                 const std::vector<float>& xs, double (*ref)(double),
                                 double bound) {
  const std::vector<float> out = run(c, xs);
  Worst w{"absolute", bound};
  for (std::size_t i = 0; i < xs.size(); ++i)
    w.add(absError(out[i], ref(xs[i])), xs[i], out[i], ref(xs[i]));
  w.report(label);
  return out;
}

float apply(const Compiled<float>& c, float x, float y = 0) {
  return run(c, {x}, {y})[0];
}

// f(-x) == -f(x) bit for bit, and |f(x)| == 1 beyond `saturation`.
void expectOdd(const Compiled<float>& c, const std::vector<float>& xs,
               const std::vector<float>& out, float saturation) {
  std::vector<float> negatedX(xs);
  for (float& x : negatedX)
    x = -x;
  const std::vector<float> negated = run(c, negatedX);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    ASSERT_TRUE(sameFloat(negated[i], -out[i])) << "not odd at " << xs[i];
    if (std::fabs(xs[i]) > saturation) {
      ASSERT_EQ(std::fabs(out[i]), 1.0f) << xs[i];
    }
  }
}

double expRef(double x) {
  return std::exp(x);
}
double exp2Ref(double x) {
  return std::exp2(x);
}
double logRef(double x) {
  return std::log(x);
}
double log2Ref(double x) {
  return std::log2(x);
}
double tanhRef(double x) {
  return std::tanh(x);
}
double erfRef(double x) {
  return std::erf(x);
}
double sigmoidRef(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double sinRef(double x) {
  return std::sin(x);
}
double cosRef(double x) {
  return std::cos(x);
}

TEST_P(MathAccuracy, Exp) {
  auto c = compileFn("exp");
  checkRelative(c, label("exp [-87, 88]"),
                concat({linspace(-87, 88, 600'000), bitSweep(1e-30f, 87, 100'000, true),
                        bitSweep(87, 88, 100'000, false)}),
                expRef, 2e-7);
  // Overflow, gradual underflow and flush to zero, special values.
  checkRelative(c, label("exp edges"),
                concat({linspace(-110, -86, 100'000), linspace(88, 90, 50'000), kSpecials}), expRef,
                2e-7);
  EXPECT_EQ(apply(c, 88.7228394f), std::exp(88.7228394f)); // the last finite result
  EXPECT_EQ(apply(c, 88.7228470f), kInf);
  EXPECT_EQ(apply(c, 1e30f), kInf);
  EXPECT_EQ(apply(c, -103.98f), 0.0f);
  EXPECT_EQ(apply(c, -1e30f), 0.0f);
  EXPECT_EQ(apply(c, 0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(apply(c, kNan)));
}

TEST_P(MathAccuracy, Exp2) {
  auto c = compileFn("exp2");
  checkRelative(c, label("exp2 [-126, 127]"),
                concat({linspace(-126, 127, 700'000), bitSweep(1e-30f, 126, 300'000, true)}),
                exp2Ref, 2e-7);
  checkRelative(c, label("exp2 edges"),
                concat({linspace(-160, -125, 100'000), linspace(127, 130, 20'000), kSpecials}),
                exp2Ref, 2e-7);
  EXPECT_EQ(apply(c, 127.0f), 0x1p127f);
  EXPECT_EQ(apply(c, 128.0f), kInf);
  EXPECT_EQ(apply(c, -149.0f), kMinSub);
  EXPECT_EQ(apply(c, -151.0f), 0.0f);
  EXPECT_EQ(apply(c, 10.0f), 1024.0f);
}

TEST_P(MathAccuracy, Log) {
  auto c = compileFn("log");
  checkRelative(c, label("log [1e-30, 1e30]"),
                concat({bitSweep(1e-30f, 1e30f, 700'000, false), linspace(0.5, 2, 300'000),
                        bitSweep(kMinSub, kMinNormal, 10'000, false)}),
                logRef, 2e-7);
  EXPECT_EQ(apply(c, 0.0f), -kInf);
  EXPECT_EQ(apply(c, -0.0f), -kInf);
  EXPECT_EQ(apply(c, kInf), kInf);
  EXPECT_EQ(apply(c, 1.0f), 0.0f);
  EXPECT_TRUE(std::isnan(apply(c, -1.0f)));
  EXPECT_TRUE(std::isnan(apply(c, -kInf)));
  EXPECT_TRUE(std::isnan(apply(c, -kMinSub)));
  EXPECT_TRUE(std::isnan(apply(c, kNan)));
  EXPECT_NEAR(apply(c, kMaxF), std::log(double(kMaxF)), 1e-5);
}

TEST_P(MathAccuracy, Log2) {
  auto c = compileFn("log2");
  checkRelative(c, label("log2 [1e-30, 1e30]"),
                concat({bitSweep(1e-30f, 1e30f, 700'000, false), linspace(0.5, 2, 300'000),
                        bitSweep(kMinSub, kMinNormal, 10'000, false)}),
                log2Ref, 2e-7);
  for (int k = -149; k <= 127; ++k)
    ASSERT_EQ(apply(c, std::ldexp(1.0f, k)), float(k)) << "log2(2^" << k << ")";
  EXPECT_EQ(apply(c, 0.0f), -kInf);
  EXPECT_EQ(apply(c, kInf), kInf);
  EXPECT_TRUE(std::isnan(apply(c, -2.0f)));
  EXPECT_TRUE(std::isnan(apply(c, kNan)));
}

TEST_P(MathAccuracy, Tanh) {
  auto c = compileFn("tanh");
  const std::vector<float> xs =
      concat({linspace(-12, 12, 700'000), bitSweep(1e-30f, 30, 150'000, true), kSpecials});
  const std::vector<float> out = checkAbsolute(c, label("tanh"), xs, tanhRef, 2e-7);
  checkRelative(c, label("tanh |x| < 1e-3"), bitSweep(1e-30f, 1e-3f, 100'000, true), tanhRef, 1e-6);
  expectOdd(c, xs, out, 9.0f);
  EXPECT_TRUE(std::signbit(apply(c, -0.0f)));
  EXPECT_EQ(apply(c, -kInf), -1.0f);
  EXPECT_TRUE(std::isnan(apply(c, kNan)));
}

TEST_P(MathAccuracy, Erf) {
  auto c = compileFn("erf");
  const std::vector<float> xs =
      concat({linspace(-6, 6, 700'000), bitSweep(1e-30f, 10, 150'000, true), kSpecials});
  const std::vector<float> out = checkAbsolute(c, label("erf"), xs, erfRef, 5e-7);
  checkRelative(c, label("erf |x| < 0.5"), bitSweep(1e-30f, 0.5f, 100'000, true), erfRef, 2e-7);
  expectOdd(c, xs, out, 4.0f);
  EXPECT_EQ(apply(c, kInf), 1.0f);
  EXPECT_EQ(apply(c, -kInf), -1.0f);
  EXPECT_TRUE(std::signbit(apply(c, -0.0f)));
  EXPECT_TRUE(std::isnan(apply(c, kNan)));
}

TEST_P(MathAccuracy, Sigmoid) {
  auto c = compileFn("sigmoid");
  const std::vector<float> xs =
      concat({linspace(-120, 120, 800'000), bitSweep(1e-30f, 1e30f, 100'000, true), kSpecials});
  const std::vector<float> out = checkAbsolute(c, label("sigmoid"), xs, sigmoidRef, 2e-7);
  // Not a requirement, but the tails keep relative accuracy too.
  checkRelative(c, label("sigmoid [-87, 87]"), linspace(-87, 87, 200'000), sigmoidRef, 4e-7);
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (!std::isnan(xs[i])) {
      ASSERT_TRUE(out[i] >= 0.0f && out[i] <= 1.0f) << xs[i];
    }
  EXPECT_EQ(apply(c, kInf), 1.0f);
  EXPECT_EQ(apply(c, -kInf), 0.0f);
  EXPECT_EQ(apply(c, -1e30f), 0.0f);
  EXPECT_EQ(apply(c, 0.0f), 0.5f);
}

TEST_P(MathAccuracy, Pow) {
  auto c = compileFn("pow");
  // x over (0, 1e6] by bit pattern (every binade down to the subnormals), y in [-10, 10];
  // results that overflow or underflow float are checked as for exp.
  const std::vector<float> xs =
      concat({bitSweep(kMinSub, 1e6f, 700, false), linspace(0.5, 2, 200), linspace(1, 1e6, 100)});
  const std::vector<float> ys = concat({linspace(-10, 10, 980), linspace(-10, 10, 21)});
  std::vector<float> px, py;
  for (float x : xs)
    for (float y : ys) {
      px.push_back(x);
      py.push_back(y);
    }
  const std::vector<float> out = run(c, px, py);
  Worst w{"relative", 1e-6};
  for (std::size_t i = 0; i < px.size(); ++i) {
    const double want = std::pow(double(px[i]), double(py[i]));
    w.add(relError(out[i], want, 1e-6), px[i], out[i], want, py[i]);
  }
  w.report(label("pow x>0"));

  // Negative x with integer y: the signed result.
  std::vector<float> nx, ny;
  for (float x : linspace(-100, -0.01, 20'000))
    for (int y = -10; y <= 10; ++y) {
      nx.push_back(x);
      ny.push_back(float(y));
    }
  const std::vector<float> nout = run(c, nx, ny);
  Worst wn{"relative", 1e-6};
  for (std::size_t i = 0; i < nx.size(); ++i) {
    const double want = std::pow(double(nx[i]), double(ny[i]));
    wn.add(relError(nout[i], want, 1e-6), nx[i], nout[i], want, ny[i]);
  }
  wn.report(label("pow x<0, integer y"));

  struct Case {
    float x, y, want;
  };
  const Case cases[] = {
      {-2, 3, -8},
      {-2, 2, 4},
      {-2, -1, -0.5f},
      {-2, 0.5f, kNan},
      {-8, 1 / 3.f, kNan},
      {0, 2, 0},
      {0, -1, kInf},
      {-0.0f, 3, -0.0f},
      {-0.0f, -3, -kInf},
      {-0.0f, 0.5f, 0},
      {-0.0f, -2, kInf},
      {kNan, 0, 1},
      {5, 0, 1},
      {5, -0.0f, 1},
      {1, kNan, 1},
      {1, kInf, 1},
      {kNan, 1, kNan},
      {2, kNan, kNan},
      {2, kInf, kInf},
      {2, -kInf, 0},
      {0.5f, kInf, 0},
      {0.5f, -kInf, kInf},
      {-1, kInf, 1},
      {-1, -kInf, 1},
      {kInf, -1, 0},
      {kInf, 0.5f, kInf},
      {-kInf, 3, -kInf},
      {-kInf, 2, kInf},
      {-kInf, -3, -0.0f},
      {-kInf, 0.5f, kInf},
      {2, 128, kInf},
      {2, -150, 0},
      {2, -149, kMinSub},
      {10, 38, 1e38f},
      {1e6f, 10, kInf},
      {1e-6f, 10, 0},
      {-1, 1e30f, 1},
      {-1, 3, -1},
      {4, 0.5f, 2},
      {kMaxF, 1, kMaxF},
      // Parity around 2^22..2^24, where every float is an integer from 2^23 and even from 2^24.
      {-1, 4194305.0f, -1},
      {-1, 4194304.5f, kNan},
      {-1, 8388609.0f, -1},
      {-1, 16777216.0f, 1},
      {-1, 1e30f, 1},
      {-2, -0.5f, kNan}};
  for (const Case& k : cases) {
    const float got = apply(c, k.x, k.y);
    EXPECT_TRUE(sameFloat(got, k.want) ||
                (std::isfinite(k.want) && std::fabs(got - k.want) <= 1e-6 * std::fabs(k.want) &&
                 std::signbit(got) == std::signbit(k.want)))
        << "pow(" << k.x << ", " << k.y << ") = " << got << ", want " << k.want;
  }
}

TEST_P(MathAccuracy, SinCos) {
  const std::vector<float> xs =
      concat({linspace(-1e4, 1e4, 700'000), bitSweep(1e-30f, 1e4f, 150'000, true),
              linspace(-4, 4, 100'000)});
  for (const char* fn : {"sin", "cos"}) {
    auto c = compileFn(fn);
    const auto ref = std::string(fn) == "sin" ? sinRef : cosRef;
    checkAbsolute(c, label((std::string(fn) + " |x| <= 1e4").c_str()), xs, ref, 2e-7);
    // The reduction stays exact to 1e5 (documented); beyond it, for information only.
    checkAbsolute(c, label((std::string(fn) + " 1e4 < |x| <= 1e5").c_str()),
                  bitSweep(1e4f, 1e5f, 200'000, true), ref, 2e-7);
    const std::vector<float> far = bitSweep(1e5f, 4e6f, 100'000, false);
    const std::vector<float> out = run(c, far);
    Worst w{"absolute", 2};
    for (std::size_t i = 0; i < far.size(); ++i)
      w.add(absError(out[i], ref(far[i])), far[i], out[i], ref(far[i]));
    w.report(label((std::string(fn) + " 1e5..4e6 (info)").c_str()));
    for (float special : {kInf, -kInf, kNan, 1e30f})
      EXPECT_TRUE(std::isnan(apply(c, special))) << fn << "(" << special << ")";
  }
  auto s = compileFn("sin");
  EXPECT_TRUE(std::signbit(apply(s, -0.0f)));
  EXPECT_EQ(apply(s, 0.0f), 0.0f);
  auto c = compileFn("cos");
  EXPECT_EQ(apply(c, 0.0f), 1.0f);
}

INSTANTIATE_TEST_SUITE_P(Targets, MathAccuracy, ::testing::Values("llvm", "llvm -mcpu=x86-64"),
                         [](const auto& info) {
                           return std::string(info.param) == "llvm" ? "Host" : "NoFma";
                         });

const char* const kAllFunctions[] = {"exp", "exp2",    "log", "log2", "tanh",
                                     "erf", "sigmoid", "pow", "sin",  "cos"};

// Calls in optimised IR other than to LLVM intrinsics (a libm call would be one).
std::vector<std::string> nonIntrinsicCalls(const std::string& ir) {
  std::vector<std::string> calls;
  std::size_t start = 0;
  while (start < ir.size()) {
    std::size_t end = ir.find('\n', start);
    if (end == std::string::npos)
      end = ir.size();
    const std::string line = ir.substr(start, end - start);
    if (line.find(" call ") != std::string::npos && line.find("@llvm.") == std::string::npos)
      calls.push_back(line);
    start = end + 1;
  }
  return calls;
}

// One code path for any vector width: <4 x float> and <16 x float> loops give the scalar
// loop's results bit for bit (run() checks).
TEST(MathCodegen, AnyVectorWidth) {
  const std::vector<float> xs = concat({linspace(-30, 30, 10'001), kSpecials});
  const std::vector<float> ys = concat({linspace(3, -3, 10'001), kSpecials});
  for (unsigned width : {4u, 16u})
    for (const char* fn : kAllFunctions) {
      SCOPED_TRACE(std::string(fn) + " width " + std::to_string(width));
      run(compile<float>(fn, "llvm", width), xs, ys);
    }
}

TEST(MathCodegen, HostLoopsStayVectorised) {
  for (const char* fn : kAllFunctions) {
    auto c = compile<float>(fn, "llvm");
    EXPECT_NE(c.vecIr.find("<8 x float>"), std::string::npos) << fn;
    EXPECT_EQ(c.vecIr.find("expf"), std::string::npos) << fn;
    EXPECT_TRUE(nonIntrinsicCalls(c.vecIr).empty()) << fn << ": " << nonIntrinsicCalls(c.vecIr)[0];
    // The scalar loop is widened by the loop vectoriser: nothing in the math stops it.
    EXPECT_NE(c.scalarIr.find(" x float>"), std::string::npos) << fn << " scalar loop";
    EXPECT_TRUE(nonIntrinsicCalls(c.scalarIr).empty()) << fn;
  }
}

// No calls at all (libm or otherwise) in the optimised code of any function, on targets
// with and without SIMD and FMA, and the vector loops stay vector code.
TEST(MathCodegen, NoLibmCallsOnCrossTargets) {
  struct Cross {
    const char* target;
    std::vector<const char*> forbidden; // call instructions
    const char* arithmetic;             // an instruction the loop must contain
  };
  const Cross targets[] = {
      {"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1", {"\tbl\t", "\tblr\t"}, "fmla\tv"},
      {"llvm -mtriple=wasm32-unknown-unknown -mattr=+simd128", {"call"}, "f32x4.mul"},
      // SSE2 only: no FMA, no roundps (llvm.floor would call floorf here).
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64", {"call", "jmp\t*"}, "mulps"},
      // Bare metal, scalar single-precision FPU.
      {"llvm -mtriple=thumbv8m.main-none-eabi -mcpu=cortex-m33",
       {"\tbl\t", "\tblx\t"},
       "vmul.f32"}};
  for (const Cross& t : targets) {
    const target::Target target = target::parseTarget(t.target);
    ASSERT_TRUE(targetAvailable(target)) << t.target;
    auto machine = createTargetMachine(target);
    for (const char* fn : kAllFunctions) {
      llvm::LLVMContext ctx;
      llvm::Module module(std::string("kernel_") + fn, ctx);
      buildKernel(module, "vec", fn, 8, llvm::Type::getFloatTy(ctx));
      optimizeModule(module, *machine, 3);
      const std::string assembly = emitAssembly(module, *machine);
      for (const char* bad : t.forbidden)
        EXPECT_EQ(assembly.find(bad), std::string::npos)
            << fn << " on " << t.target << " calls something:\n"
            << assembly;
      for (const char* libm : {"expf", "fmaf", "logf", "powf", "sinf", "cosf", "floorf"})
        EXPECT_EQ(assembly.find(libm), std::string::npos) << fn << " on " << t.target;
      EXPECT_NE(assembly.find(t.arithmetic), std::string::npos) << fn << " on " << t.target;
    }
  }
}

TEST(MathCodegen, EmitIntrinsicDoubleAndErrors) {
  EXPECT_TRUE(math::isKnownIntrinsic("erf"));
  EXPECT_FALSE(math::isKnownIntrinsic("gelu"));
  // f64 goes to LLVM's intrinsics (libm in the JIT's process) and erf to libm directly.
  struct Case {
    const char* fn;
    double (*ref)(double);
  };
  const Case cases[] = {{"exp", expRef},   {"exp2", exp2Ref}, {"log", logRef},
                        {"log2", log2Ref}, {"tanh", tanhRef}, {"erf", erfRef},
                        {"sin", sinRef},   {"cos", cosRef},   {"sigmoid", sigmoidRef}};
  std::vector<double> xs;
  for (int i = 0; i < 1003; ++i)
    xs.push_back(0.01 + i * 0.0197);
  for (const Case& k : cases) {
    auto c = compile<double>(k.fn, "llvm");
    std::vector<double> v(xs.size()), s(xs.size());
    c.vec(xs.data(), xs.data(), v.data(), static_cast<std::int64_t>(xs.size()));
    c.scalar(xs.data(), xs.data(), s.data(), static_cast<std::int64_t>(xs.size()));
    for (std::size_t i = 0; i < xs.size(); ++i) {
      ASSERT_NEAR(v[i], k.ref(xs[i]), 1e-14 * std::fabs(k.ref(xs[i])) + 1e-300)
          << k.fn << "(" << xs[i] << ")";
      ASSERT_NEAR(s[i], k.ref(xs[i]), 1e-14 * std::fabs(k.ref(xs[i])) + 1e-300) << k.fn;
    }
  }
  auto p = compile<double>("pow", "llvm");
  std::vector<double> out(xs.size());
  p.vec(xs.data(), xs.data(), out.data(), static_cast<std::int64_t>(xs.size()));
  for (std::size_t i = 0; i < xs.size(); ++i)
    ASSERT_NEAR(out[i], std::pow(xs[i], xs[i]), 1e-14 * std::pow(xs[i], xs[i]));

  // half is computed in float; unknown names, arities and types are rejected.
  llvm::LLVMContext ctx;
  llvm::Module module("m", ctx);
  llvm::IRBuilder<> b(ctx);
  auto* half4 = llvm::FixedVectorType::get(b.getHalfTy(), 4);
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(half4, {half4}, false),
                                    llvm::Function::ExternalLinkage, "h", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* h = math::emitIntrinsic(b, "tanh", {fn->getArg(0)});
  EXPECT_EQ(h->getType(), half4);
  b.CreateRet(h);
  EXPECT_FALSE(llvm::verifyFunction(*fn, &llvm::errs()));
  EXPECT_THROW(math::emitIntrinsic(b, "gelu", {fn->getArg(0)}), Error);
  EXPECT_THROW(math::emitIntrinsic(b, "exp", {b.getInt32(1)}), Error);
  EXPECT_THROW(math::emitIntrinsic(b, "pow", {fn->getArg(0)}), Error);
}

TEST(MathCodegen, FastMathFlagsOnTheBuilderAreIgnored) {
  // With reassociation allowed, (v + 1.5*2^23) - 1.5*2^23 would fold to v and exp would
  // lose its rounding: the functions must clear the builder's flags.
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("fmf", *ctx);
  llvm::IRBuilder<> b(*ctx);
  auto* f32 = b.getFloatTy();
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(f32, {f32}, false),
                                    llvm::Function::ExternalLinkage, "e", *module);
  b.SetInsertPoint(llvm::BasicBlock::Create(*ctx, "entry", fn));
  llvm::FastMathFlags fast;
  fast.setFast();
  b.setFastMathFlags(fast);
  b.CreateRet(math::exp(b, fn->getArg(0)));
  EXPECT_TRUE(b.getFastMathFlags().isFast()) << "the caller's flags are restored";
  auto machine = createTargetMachine(target::parseTarget("llvm"));
  optimizeModule(*module, *machine, 3);
  LlvmJit jit(target::parseTarget("llvm"));
  jit.addModule(std::move(module), std::move(ctx));
  auto* e = reinterpret_cast<float (*)(float)>(jit.lookup("e"));
  for (float x : {-80.5f, -3.3f, 0.7f, 1.0f, 42.25f})
    EXPECT_NEAR(e(x), std::exp(double(x)), 2e-7 * std::exp(double(x))) << x;
}

} // namespace
} // namespace lathe::codegen
