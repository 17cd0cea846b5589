// Loop IR kernels through the LLVM emitter and the JIT, run on real buffers.
#include "engine/codegen/llvm/codegen.h"
#include "engine/codegen/llvm/compiler.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/runtime/thread_pool.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <vector>

namespace lathe::codegen {
namespace {

using loop::Buffer;
using loop::Expr;
using loop::Stmt;

Expr var(const char* name) {
  return loop::Var::make(loop::indexType(), name);
}

Stmt loopOver(const Expr& v, std::int64_t extent, Stmt body,
              loop::ForKind kind = loop::ForKind::Serial) {
  return loop::For::make(v, loop::makeIndex(0), loop::makeIndex(extent), kind, std::move(body));
}

KernelFunction compileOne(const loop::Kernel& k, std::unique_ptr<JitKernels>& holder) {
  CodegenOptions options;
  options.target = target::parseTarget("llvm");
  options.keepText = true;
  holder = jitKernels({k}, options);
  return holder->function(k.name);
}

TEST(KernelEmitter, VectorRampLoadsAndStores) {
  // out[i*8 .. i*8+7] = a[...] * 2 + b[...] as explicit 8-lane vectors.
  Buffer a = Buffer::make("a", loop::f32(), {loop::makeIndex(64)});
  Buffer b = Buffer::make("b", loop::f32(), {loop::makeIndex(64)});
  Buffer out = Buffer::make("out", loop::f32(), {loop::makeIndex(64)});
  Expr i = var("i");
  Expr ramp = loop::Ramp::make(i * 8, loop::makeIndex(1), 8);
  Expr two = loop::Broadcast::make(loop::makeFloatConst(loop::f32(), 2.0), 8);
  Stmt body =
      loop::Store::make(out, ramp, loop::Load::make(a, ramp) * two + loop::Load::make(b, ramp));
  loop::Kernel k{"vec_axpy", {a, b}, {out}, loopOver(i, 8, body), {"n0"}};
  std::unique_ptr<JitKernels> jit;
  KernelFunction f = compileOne(k, jit);
  std::vector<float> va(64), vb(64), vo(64, -1);
  for (int j = 0; j < 64; ++j) {
    va[j] = static_cast<float>(j);
    vb[j] = 0.5f;
  }
  void* args[] = {va.data(), vb.data(), vo.data()};
  f(args);
  for (int j = 0; j < 64; ++j)
    ASSERT_EQ(vo[j], 2.0f * static_cast<float>(j) + 0.5f) << j;
  EXPECT_NE(jit->code()[0].llvmIrOptimized.find("<8 x float>"), std::string::npos);
  EXPECT_NE(jit->code()[0].assembly.find("vec_axpy:"), std::string::npos);
}

TEST(KernelEmitter, StridedLoadsAreWideLoadsNotGathers) {
  // out[i*8 .. i*8+7] = a[s*(i*8) + s*l] for strides 2 and 3: the last vector ends on the
  // last element of a, which the masked wide load must not read past.
  for (std::int64_t stride : {2, 3}) {
    const std::int64_t n = 32, size = (n - 1) * stride + 1;
    Buffer a = Buffer::make("a", loop::f32(), {loop::makeIndex(size)});
    Buffer out = Buffer::make("out", loop::f32(), {loop::makeIndex(n)});
    Expr i = var("i");
    Stmt body = loop::Store::make(
        out, loop::Ramp::make(i * 8, loop::makeIndex(1), 8),
        loop::Load::make(a, loop::Ramp::make(i * (8 * stride), loop::makeIndex(stride), 8)));
    loop::Kernel k{"strided", {a}, {out}, loopOver(i, n / 8, body), {"n0"}};
    std::unique_ptr<JitKernels> jit;
    KernelFunction f = compileOne(k, jit);
    std::vector<float> va(static_cast<std::size_t>(size)), vo(n, -1);
    for (std::int64_t j = 0; j < size; ++j)
      va[static_cast<std::size_t>(j)] = static_cast<float>(j);
    void* args[] = {va.data(), vo.data()};
    f(args);
    for (std::int64_t j = 0; j < n; ++j)
      ASSERT_EQ(vo[static_cast<std::size_t>(j)], static_cast<float>(j * stride)) << stride;
    EXPECT_EQ(jit->code()[0].llvmIrOptimized.find("gather"), std::string::npos);
  }
}

TEST(KernelEmitter, ParallelLoopCapturesBuffersAndVariables) {
  // for r in [0,R) parallel: for c: out[r*C + c] = r * 100 + c + offset  (offset = outer let)
  const std::int64_t R = 37, C = 19;
  Buffer out = Buffer::make("out", loop::i64(), {loop::makeIndex(R * C)});
  Expr r = var("r"), c = var("c"), offset = var("offset");
  Stmt inner = loopOver(c, C, loop::Store::make(out, r * C + c, r * 100 + c + offset));
  Stmt body = loop::LetStmt::make(offset, loop::makeIndex(7),
                                  loopOver(r, R, inner, loop::ForKind::Parallel));
  loop::Kernel k{"par_fill", {}, {out}, body, {}};
  std::unique_ptr<JitKernels> jit;
  KernelFunction f = compileOne(k, jit);
  runtime::ThreadPool pool(4);
  runtime::ThreadPool* previous = runtime::setCurrentThreadPool(&pool);
  std::vector<std::int64_t> v(static_cast<std::size_t>(R * C), -1);
  void* args[] = {v.data()};
  f(args);
  runtime::setCurrentThreadPool(previous);
  for (std::int64_t rr = 0; rr < R; ++rr)
    for (std::int64_t cc = 0; cc < C; ++cc)
      ASSERT_EQ(v[static_cast<std::size_t>(rr * C + cc)], rr * 100 + cc + 7);
}

TEST(KernelEmitter, ScratchBoolsSelectCastAndBranches) {
  // flags[i] = x[i] > 0 (bool buffer); tmp (stack) = flags ? x : -x; out = f64(tmp) + (i odd ? 1 :
  // 0)
  const std::int64_t N = 10;
  Buffer x = Buffer::make("x", loop::f32(), {loop::makeIndex(N)});
  Buffer flags = Buffer::make("flags", loop::boolean(), {loop::makeIndex(N)});
  Buffer out = Buffer::make("out", loop::f64(), {loop::makeIndex(N)});
  Buffer tmp = Buffer::make("tmp", loop::f32(), {loop::makeIndex(N)});
  Expr i = var("i"), j = var("j");
  Expr zero = loop::makeFloatConst(loop::f32(), 0.0);
  Stmt first =
      loopOver(i, N,
               loop::Block::make(loop::Store::make(flags, i, loop::Load::make(x, i) > zero),
                                 loop::Store::make(tmp, i,
                                                   loop::select(loop::Load::make(flags, i),
                                                                loop::Load::make(x, i),
                                                                -loop::Load::make(x, i)))));
  Stmt second =
      loopOver(j, N,
               loop::IfThenElse::make(
                   loop::eq(loop::floorMod(j, 2), loop::makeIndex(1)),
                   loop::Store::make(out, j,
                                     loop::cast(loop::f64(), loop::Load::make(tmp, j)) +
                                         loop::makeFloatConst(loop::f64(), 1.0)),
                   loop::Store::make(out, j, loop::cast(loop::f64(), loop::Load::make(tmp, j)))));
  Stmt body = loop::Allocate::make(tmp, loop::MemoryScope::Stack, loop::Block::make(first, second));
  loop::Kernel k{"scratch_bools", {x}, {flags, out}, body, {}};
  std::unique_ptr<JitKernels> jit;
  KernelFunction f = compileOne(k, jit);
  std::vector<float> vx{-2, -1, 0, 1, 2, 3, -4, 5, -6, 7};
  std::vector<std::uint8_t> vf(N, 9);
  std::vector<double> vo(N, 0);
  void* args[] = {vx.data(), vf.data(), vo.data()};
  f(args);
  for (std::int64_t k2 = 0; k2 < N; ++k2) {
    EXPECT_EQ(vf[k2], vx[k2] > 0 ? 1 : 0) << "bools are stored as 0/1 bytes";
    EXPECT_EQ(vo[k2], std::abs(vx[k2]) + (k2 % 2 == 1 ? 1.0 : 0.0)) << k2;
  }
}

TEST(KernelEmitter, FloorAndTruncatingDivision) {
  Buffer in = Buffer::make("in", loop::i64(), {loop::makeIndex(6)});
  Buffer out = Buffer::make("out", loop::i64(), {loop::makeIndex(24)});
  Expr i = var("i");
  Expr v = loop::Load::make(in, i);
  Expr three = loop::makeIndex(3);
  Stmt body =
      loopOver(i, 6,
               loop::Block::make({loop::Store::make(out, i * 4, loop::floorDiv(v, three)),
                                  loop::Store::make(out, i * 4 + 1, loop::floorMod(v, three)),
                                  loop::Store::make(out, i * 4 + 2, v / three),
                                  loop::Store::make(out, i * 4 + 3, v % three)}));
  loop::Kernel k{"divmod", {in}, {out}, body, {}};
  std::unique_ptr<JitKernels> jit;
  KernelFunction f = compileOne(k, jit);
  std::vector<std::int64_t> vin{-7, -6, -1, 0, 5, 7}, vout(24);
  void* args[] = {vin.data(), vout.data()};
  f(args);
  for (int j = 0; j < 6; ++j) {
    const std::int64_t a = vin[j];
    const std::int64_t fd = (a >= 0) ? a / 3 : -((-a + 2) / 3);
    EXPECT_EQ(vout[j * 4], fd) << a;
    EXPECT_EQ(vout[j * 4 + 1], a - fd * 3) << a;
    EXPECT_EQ(vout[j * 4 + 2], a / 3) << a;
    EXPECT_EQ(vout[j * 4 + 3], a % 3) << a;
  }
}

TEST(KernelEmitter, HeapScratchAndMathIntrinsics) {
  const std::int64_t N = 1000;
  Buffer x = Buffer::make("x", loop::f32(), {loop::makeIndex(N)});
  Buffer out = Buffer::make("out", loop::f32(), {loop::makeIndex(N)});
  Buffer big = Buffer::make("big", loop::f32(), {loop::makeIndex(N)});
  Expr i = var("i"), j = var("j");
  Stmt fill = loopOver(
      i, N,
      loop::Store::make(big, i, loop::Call::make(loop::Intrinsic::Exp, {loop::Load::make(x, i)})));
  Stmt use =
      loopOver(j, N,
               loop::Store::make(
                   out, j, loop::Call::make(loop::Intrinsic::Tanh, {loop::Load::make(big, j)})));
  loop::Kernel k{"heap_math",
                 {x},
                 {out},
                 loop::Allocate::make(big, loop::MemoryScope::Heap, loop::Block::make(fill, use)),
                 {}};
  std::unique_ptr<JitKernels> jit;
  KernelFunction f = compileOne(k, jit);
  std::vector<float> vx(N), vo(N);
  for (std::int64_t k2 = 0; k2 < N; ++k2)
    vx[k2] = -5.0f + 0.01f * static_cast<float>(k2);
  void* args[] = {vx.data(), vo.data()};
  f(args);
  for (std::int64_t k2 = 0; k2 < N; ++k2)
    ASSERT_NEAR(vo[k2], std::tanh(std::exp(vx[k2])), 1e-6) << vx[k2];
}

TEST(KernelEmitter, UnknownVariableIsAClearError) {
  Buffer out = Buffer::make("out", loop::i64(), {loop::makeIndex(1)});
  loop::Kernel k{"bad", {}, {out}, loop::Store::make(out, loop::makeIndex(0), var("nowhere")), {}};
  std::unique_ptr<JitKernels> jit;
  EXPECT_THROW(compileOne(k, jit), Error);
}

TEST(KernelEmitter, CrossTargetObjects) {
  Buffer a = Buffer::make("a", loop::f32(), {loop::makeIndex(16)});
  Buffer out = Buffer::make("out", loop::f32(), {loop::makeIndex(16)});
  Expr i = var("i");
  loop::Kernel k{"relu16",
                 {a},
                 {out},
                 loopOver(i, 16,
                          loop::Store::make(out, i,
                                            loop::max(loop::Load::make(a, i),
                                                      loop::makeFloatConst(loop::f32(), 0.0)))),
                 {}};
  for (const char* t :
       {"llvm -mtriple=aarch64-linux-gnu", "llvm -mtriple=wasm32-unknown-unknown -mattr=+simd128",
        "llvm -mtriple=thumbv8m.main-none-eabi -mcpu=cortex-m33"}) {
    CodegenOptions options;
    options.target = target::parseTarget(t);
    options.keepText = true;
    const ObjectCode obj = compileToObject({k}, options);
    EXPECT_GT(obj.object.size(), 100u) << t;
    EXPECT_NE(obj.code[0].assembly.find("relu16"), std::string::npos) << t;
    // Its machine code's size, from the object's symbols: more than a return, less than
    // the whole object.
    // Each assembly line knows the loop IR line it came from (debug locations): the store's.
    const std::string& asmText = obj.code[0].assembly;
    ASSERT_EQ(obj.code[0].assemblyLoopLines.size(),
              static_cast<std::size_t>(std::count(asmText.begin(), asmText.end(), '\n')))
        << t;
    EXPECT_EQ(asmText.find("\t.loc\t"), std::string::npos) << t; // not wasm's .local
    loop::StmtLines lines;
    const std::string loopText = loop::toString(k, &lines);
    const int storeLine = lines.at(k.body.as<loop::For>()->body.get());
    EXPECT_NE(loopText.substr(0, 200).find("out["), std::string::npos);
    EXPECT_NE(std::find(obj.code[0].assemblyLoopLines.begin(), obj.code[0].assemblyLoopLines.end(),
                        storeLine),
              obj.code[0].assemblyLoopLines.end())
        << t << ": no assembly from the store on line " << storeLine;
    EXPECT_GT(obj.code[0].codeBytes, 8u) << t;
    EXPECT_LT(obj.code[0].codeBytes, obj.object.size()) << t;
  }
  // In memory for this machine: the JIT's object gives the same size.
  std::unique_ptr<JitKernels> jit;
  compileOne(k, jit);
  ASSERT_EQ(jit->code().size(), 1u);
  CodegenOptions host;
  host.target = target::parseTarget("llvm");
  EXPECT_GT(jit->code()[0].codeBytes, 8u);
  EXPECT_EQ(jit->code()[0].codeBytes, compileToObject({k}, host).code[0].codeBytes);
}

} // namespace
} // namespace lathe::codegen

namespace lathe::codegen {
namespace {

// Which target strings run in this process: the host at any x86-64 level its CPU has (the
// CPU models' tuning flags do not count), never another triple or an unknown CPU.
TEST(RunsOnHost, LevelsThisCpuHasRunHere) {
  EXPECT_TRUE(runsOnHost(target::parseTarget("llvm")));
  EXPECT_FALSE(runsOnHost(target::parseTarget("llvm -mtriple=aarch64-linux-gnu")));
  EXPECT_FALSE(runsOnHost(target::parseTarget("llvm -mcpu=no-such-cpu")));
#if defined(__x86_64__)
  const std::string features = "," + hostCpuFeatures() + ","; // "+avx2,-xop,..."
  const auto has = [&](const char* f) {
    return features.find(",+" + std::string(f) + ",") != std::string::npos;
  };
  EXPECT_TRUE(runsOnHost(target::parseTarget("llvm -mcpu=x86-64")));
  EXPECT_EQ(runsOnHost(target::parseTarget("llvm -mcpu=x86-64-v3")), has("avx2") && has("fma"));
  EXPECT_EQ(runsOnHost(target::parseTarget("llvm -mcpu=x86-64-v4")),
            has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl"));
  EXPECT_EQ(runsOnHost(target::parseTarget("llvm -mattr=+avx512f")), has("avx512f"));
#endif
}

} // namespace
} // namespace lathe::codegen
