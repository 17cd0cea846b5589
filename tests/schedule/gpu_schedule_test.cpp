// bind and the default GPU trace on small nests: what is bound, and what is refused.
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"
#include "tests/schedule/schedule_kernels.h"

#include <gtest/gtest.h>

namespace lathe::schedule {
namespace {

using testing::matmulKernel;
using testing::scratchKernel;

Step step(Primitive p, std::vector<std::string> loops, std::vector<std::int64_t> factors = {}) {
  return Step{p, std::move(loops), std::move(factors), 0};
}

std::string refusal(const loop::Kernel& kernel, std::vector<Step> steps) {
  try {
    apply(kernel, Schedule{kernel.name, std::move(steps)});
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    return e.reason();
  }
  ADD_FAILURE() << "the schedule was accepted";
  return {};
}

TEST(GpuSchedule, BindMakesLoopsBlocksAndThreads) {
  const std::string text = loop::toString(
      apply(matmulKernel(), Schedule{"matmul_relu",
                                     {step(Primitive::Bind, {"i", "blockIdx.x"}),
                                      step(Primitive::Bind, {"j", "threadIdx.x"}),
                                      step(Primitive::Bind, {"p", "blockIdx.x"}),
                                      step(Primitive::Bind, {"q", "threadIdx.x"})}}));
  EXPECT_NE(text.find("blockIdx.x for (i, 0, 30)"), std::string::npos) << text;
  EXPECT_NE(text.find("threadIdx.x for (j, 0, 20)"), std::string::npos) << text;
  // The reduction stays a serial loop inside each thread.
  EXPECT_NE(text.find("  for (k, 0, 17)"), std::string::npos) << text;
}

TEST(GpuSchedule, BindRefusesWhatWouldRaceOrNotLaunch) {
  const loop::Kernel mm = matmulKernel();
  // A reduction bound to threads: every thread would add into the same element.
  EXPECT_NE(refusal(mm, {step(Primitive::Bind, {"i", "blockIdx.x"}),
                         step(Primitive::Bind, {"j", "threadIdx.x"}),
                         step(Primitive::Bind, {"k", "threadIdx.y"})})
                .find("a reduction along 'k'"),
            std::string::npos);
  EXPECT_NE(
      refusal(mm, {step(Primitive::Bind, {"j", "threadIdx.x"})}).find("inside the serial loop 'i'"),
      std::string::npos);
  EXPECT_NE(refusal(mm, {step(Primitive::Bind, {"i", "threadIdx.x"}),
                         step(Primitive::Bind, {"j", "blockIdx.x"})})
                .find("blocks go outside threads"),
            std::string::npos);
  EXPECT_NE(refusal(mm, {step(Primitive::Bind, {"i", "threadIdx.x"}),
                         step(Primitive::Bind, {"j", "threadIdx.x"})})
                .find("threadIdx.x is already bound to 'i'"),
            std::string::npos);
  EXPECT_NE(refusal(mm, {step(Primitive::Bind, {"i", "warp.x"})}).find("is not a GPU axis"),
            std::string::npos);
  EXPECT_NE(refusal(mm, {step(Primitive::Fuse, {"i", "j"}),
                         step(Primitive::Bind, {"i.j.fused", "threadIdx.z"})})
                .find("runs 600 iterations; threadIdx.z takes 1 to 64 (split it first)"),
            std::string::npos);
  // Parallel and bound loops do not mix.
  EXPECT_NE(
      refusal(mm, {step(Primitive::Parallel, {"i"}), step(Primitive::Bind, {"i", "blockIdx.x"})})
          .find("already parallel"),
      std::string::npos);
}

// A pooling-like nest: y[c, p] = max over k of x[c, p + k] with p clipped by k
// (for p in [k, 4)): the rows one iteration of c writes are bounded over k's range.
TEST(GpuSchedule, LoopsWithBoundsThatVaryAreBounded) {
  using namespace loop;
  Buffer x = Buffer::make("x", f32(), makeShape({6, 5}));
  Buffer y = Buffer::make("y", f32(), makeShape({6, 4}));
  Expr c = testing::indexVar("c"), k = testing::indexVar("k"), p = testing::indexVar("p");
  Expr at = c * 4 + p;
  Stmt update = Store::make(y, at, max(Load::make(y, at), Load::make(x, c * 5 + p + k)));
  Stmt window = For::make(p, k, makeIndex(4) - k, ForKind::Serial, update);
  Stmt body = testing::serialFor(c, 6, testing::serialFor(k, 2, window));
  const loop::Kernel pool{"pool", {x}, {y}, body, {"pool"}};
  const std::string text =
      loop::toString(apply(pool, Schedule{"pool", {step(Primitive::Bind, {"c", "threadIdx.x"})}}));
  EXPECT_NE(text.find("threadIdx.x for (c, 0, 6)"), std::string::npos) << text;
  // Rows 4 apart but a window of 5 (p + 1 reaches the next row): refused.
  Stmt wide = For::make(p, k, makeIndex(5) - k, ForKind::Serial, update);
  const loop::Kernel overlapping{
      "pool", {x}, {y}, testing::serialFor(c, 6, testing::serialFor(k, 2, wide)), {"pool"}};
  EXPECT_NE(refusal(overlapping, {step(Primitive::Bind, {"c", "threadIdx.x"})}).find("overlapping"),
            std::string::npos);
}

// A softmax-like row: y[t, r] written by one loop over r, read back by another. The read
// is at another index than the store, but within the row iteration t alone writes.
TEST(GpuSchedule, RowsReadBackWithinTheirOwnSpanAreIndependent) {
  using namespace loop;
  Buffer x = Buffer::make("x", f32(), makeShape({8, 16}));
  Buffer y = Buffer::make("y", f32(), makeShape({8, 16}));
  Buffer s = Buffer::make("s", f32(), makeShape({8}));
  Expr t = testing::indexVar("t"), r = testing::indexVar("r"), q = testing::indexVar("q");
  auto rowOf = [&](const Expr& shift) {
    Stmt write = testing::serialFor(r, 16, Store::make(y, t * 16 + r, Load::make(x, t * 16 + r)));
    Stmt sum = testing::serialFor(
        q, 16, Store::make(s, t, Load::make(s, t) + Load::make(y, t * 16 + q + shift)));
    return loop::Kernel{
        "rows",
        {x},
        {y, s},
        testing::serialFor(t, 8,
                           Block::make({Store::make(s, t, makeFloatConst(f32(), 0)), write, sum})),
        {"rows"}};
  };
  const std::string text = loop::toString(
      apply(rowOf(makeIndex(0)), Schedule{"rows", {step(Primitive::Bind, {"t", "threadIdx.x"})}}));
  EXPECT_NE(text.find("threadIdx.x for (t, 0, 8)"), std::string::npos) << text;
  // Reading the next row, which iteration t + 1 writes: refused.
  EXPECT_NE(refusal(rowOf(makeIndex(16)), {step(Primitive::Bind, {"t", "threadIdx.x"})})
                .find("that other iterations may write"),
            std::string::npos);
  // One element past the row: refused too.
  EXPECT_NE(refusal(rowOf(makeIndex(1)), {step(Primitive::Bind, {"t", "threadIdx.x"})})
                .find("that other iterations may write"),
            std::string::npos);
}

TEST(GpuSchedule, DefaultTraceSpreadsIndependentLoopsOverBlocks) {
  // 30x20 = 600 output elements: 3 blocks of 256 threads, the reduction inside each thread.
  const loop::Kernel mm = matmulKernel();
  const std::string trace = gpuDefaultTrace(mm);
  EXPECT_EQ(trace, "fuse(i, j)\nsplit(i.j.fused, 256)\nbind(i.j.fused.o, blockIdx.x)\n"
                   "bind(i.j.fused.i, threadIdx.x)\nfuse(p, q)\nsplit(p.q.fused, 256)\n"
                   "bind(p.q.fused.o, blockIdx.x)\nbind(p.q.fused.i, threadIdx.x)\n");
  // The kernel it hands back is the trace replayed on the nest.
  loop::Kernel scheduled;
  gpuDefaultTrace(mm, &scheduled);
  EXPECT_EQ(loop::toString(scheduled), loop::toString(apply(mm, parseTrace(mm.name, trace))));
  // A nest of at most 256 iterations is one block.
  const std::string small = gpuDefaultTrace(scratchKernel());
  EXPECT_EQ(small, "fuse(i, j)\nbind(i.j.fused, threadIdx.x)\nfuse(p, q)\n"
                   "bind(p.q.fused, threadIdx.x)\n");
  // Where the outer loops overlap, nothing is bound: the nest runs on one thread.
  const std::string overlapping = gpuDefaultTrace(scratchKernel("overlap"));
  EXPECT_EQ(overlapping.find("fuse(i, j)"), std::string::npos) << overlapping;
}

} // namespace
} // namespace lathe::schedule
