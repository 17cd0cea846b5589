// Scheduled kernels compute what the unscheduled ones compute: each schedule below is
// replayed on the same kernel, both are compiled with the JIT and run on the same inputs.
#include "engine/codegen/llvm/compiler.h"
#include "engine/runtime/thread_pool.h"
#include "engine/schedule/schedule_io.h"
#include "tests/schedule/schedule_kernels.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace lathe::schedule {
namespace {

using namespace testing;

struct Outputs {
  std::vector<float> out, y;
};

Outputs run(const loop::Kernel& kernel) {
  codegen::CodegenOptions options;
  options.target = target::parseTarget("llvm");
  auto jit = codegen::jitKernels({kernel}, options);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(kM * kK), b(kK * kN), bias(kN);
  for (auto* v : {&a, &b, &bias})
    for (float& x : *v)
      x = dist(rng);
  Outputs o{std::vector<float>(kM * kN, NAN), std::vector<float>(kM * kN, NAN)};
  void* args[] = {a.data(), b.data(), bias.data(), o.out.data(), o.y.data()};
  runtime::ThreadPool pool(3);
  runtime::ScopedCurrentThreadPool current(&pool);
  jit->function(kernel.name)(args);
  return o;
}

class ScheduledRun : public ::testing::TestWithParam<const char*> {};

TEST_P(ScheduledRun, MatchesTheDefault) {
  const ScheduleSet set = parseText(std::string("kernel matmul_relu:\n") + GetParam());
  const loop::Kernel kernel = matmulKernel();
  const Outputs expected = run(kernel);
  const Outputs got = run(apply(kernel, set.schedules[0]));
  for (std::size_t e = 0; e < expected.out.size(); ++e) {
    ASSERT_NEAR(got.out[e], expected.out[e], 1e-5f) << "out " << e;
    ASSERT_NEAR(got.y[e], expected.y[e], 1e-5f) << "y " << e;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, ScheduledRun,
    ::testing::Values("split(j, 8)\n cache_write(k)\n parallel(i)\n",
                      "tile(i, j, 7, 6)\n unroll(k)\n parallel(i.o)\n",
                      "split(q, 4)\n fuse(p, q.o)\n parallel(p.q.o.fused)\n vectorize(q.i)\n",
                      "reorder(q, p)\n split(p, 7)\n parallel(q)\n",
                      "split(q, 5)\n reorder(q.i, p)\n vectorize(p)\n",
                      "fuse(i, j)\n split(i.j.fused, 9)\n cache_write(k)\n parallel(i.j.fused.o)\n",
                      "split(k, 4)\n unroll(k.i)\n split(q, 10)\n vectorize(q.i)\n",
                      "split(j, 4)\n reorder(j.o, i)\n pack(b, j.o)\n pack(a, i)\n "
                      "cache_write(k)\n parallel(j.o)\n pack(bias, p)\n",
                      "split(i, 3)\n split(j, 4)\n reorder(i.o, j.o, i.i, j.i)\n "
                      "register_tile(i.i, k)\n parallel(i.o)\n",
                      "split(i, 2)\n split(j, 10)\n split(j.i, 5)\n "
                      "reorder(j.o, i.o, i.i, j.i.o, j.i.i)\n register_tile(i.i, k)\n "
                      "fuse(j.o, i.o)\n parallel(j.o.i.o.fused)\n",
                      "split(j, 5)\n register_tile(j.i, k)\n",
                      // Remainders of 2 rows and 4 columns as copies of their own.
                      "split(i, 4)\n split(j, 8)\n reorder(i.o, j.o, i.i, j.i)\n "
                      "partition(i.i)\n register_tile(i.i, k)\n register_tile(i.i.r1, k.r1)\n "
                      "register_tile(i.i.r2, k.r2)\n register_tile(i.i.r3, k.r3)\n "
                      "parallel(i.o)\n fuse(i.o, j.o)\n",
                      // The reduction's nested loops move outside the tile with it.
                      "split(k, 17)\n register_tile(j, k.o)\n parallel(i)\n",
                      // Partial sums: 2 vectors of 8 and a remainder of one product; then 4
                      // partial sums of whole rows with a register tile outside them.
                      "rfactor(k, 8)\n vectorize(k.i)\n vectorize(k.init)\n parallel(i)\n",
                      "rfactor(k, 4)\n unroll(k.i)\n split(q, 4)\n vectorize(q.i)\n"));

TEST(ScheduledRun, ComputeAtMatchesTheDefault) {
  codegen::CodegenOptions options;
  options.target = target::parseTarget("llvm");
  auto runStencil = [&](const loop::Kernel& k) {
    auto jit = codegen::jitKernels({k}, options);
    std::vector<float> a(40), y(30, NAN);
    for (int e = 0; e < 40; ++e)
      a[e] = static_cast<float>(e) * 0.5f - 7.0f;
    void* args[] = {a.data(), y.data()};
    jit->function(k.name)(args);
    return y;
  };
  const loop::Kernel kernel = stencilKernel();
  const auto expected = runStencil(kernel);
  for (const char* steps : {"compute_at(t, p)\n", "compute_at(t, q)\n",
                            "split(p, 4)\n compute_at(t, p.i)\n vectorize(q)\n"}) {
    const auto got =
        runStencil(apply(kernel, parseText(std::string("kernel stencil:\n") + steps).schedules[0]));
    EXPECT_EQ(got, expected) << steps;
  }
}

// register_tile on a nest that accumulates into what an earlier nest wrote (no init of its
// own around k): the tile starts from the elements' values, as the plain nest does.
TEST(ScheduledRun, RegisterTileStartsFromTheElementsValues) {
  using namespace loop;
  Buffer a = Buffer::make("a", f32(), makeShape({6, 5}));
  Buffer c = Buffer::make("c", f32(), makeShape({6, 8}));
  Buffer b = Buffer::make("b", f32(), makeShape({5, 8}));
  Buffer y = Buffer::make("y", f32(), makeShape({6, 8}));
  Expr i = indexVar("i"), j = indexVar("j"), k = indexVar("k"), p = indexVar("p"),
       q = indexVar("q");
  Stmt copy = serialFor(p, 6, serialFor(q, 8, Store::make(y, p * 8 + q, Load::make(c, p * 8 + q))));
  Stmt sum = serialFor(
      i, 6,
      serialFor(j, 8,
                serialFor(k, 5,
                          Store::make(y, i * 8 + j,
                                      Load::make(y, i * 8 + j) +
                                          Load::make(a, i * 5 + k) * Load::make(b, k * 8 + j)))));
  const Kernel kernel{"gemm_c", {a, c, b}, {y}, Block::make(copy, sum), {"g"}};
  codegen::CodegenOptions options;
  options.target = target::parseTarget("llvm");
  auto runIt = [&](const Kernel& kn) {
    auto jit = codegen::jitKernels({kn}, options);
    std::vector<float> av(30), cv(48), bv(40), yv(48, NAN);
    for (int e = 0; e < 48; ++e) {
      cv[e] = static_cast<float>(e) - 20.0f;
      if (e < 30)
        av[e] = static_cast<float>(e % 7) * 0.5f;
      if (e < 40)
        bv[e] = static_cast<float>(e % 5) - 2.0f;
    }
    void* args[] = {av.data(), cv.data(), bv.data(), yv.data()};
    jit->function(kn.name)(args);
    return yv;
  };
  const auto expected = runIt(kernel);
  const auto got = runIt(apply(
      kernel, parseText("kernel gemm_c:\n split(i, 2)\n register_tile(i.i, k)\n").schedules[0]));
  EXPECT_EQ(got, expected);
}

TEST(ScheduledRun, ComputeInlineMatchesTheDefault) {
  codegen::CodegenOptions options;
  options.target = target::parseTarget("llvm");
  auto runScratch = [&](const loop::Kernel& k) {
    auto jit = codegen::jitKernels({k}, options);
    std::vector<float> a(30), y(30, NAN);
    for (int e = 0; e < 30; ++e)
      a[e] = static_cast<float>(e) * 0.25f - 3.0f;
    void* args[] = {a.data(), y.data()};
    jit->function(k.name)(args);
    return y;
  };
  const loop::Kernel kernel = scratchKernel("ji");
  const auto expected = runScratch(kernel);
  const auto got = runScratch(apply(
      kernel, parseText("kernel scratch:\n  compute_inline(t)\n  parallel(p)\n").schedules[0]));
  EXPECT_EQ(got, expected);
}

} // namespace
} // namespace lathe::schedule
