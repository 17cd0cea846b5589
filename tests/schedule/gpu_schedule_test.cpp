// bind and the default GPU trace on small nests: what is bound, and what is refused.
#include "engine/loop_ir/ir_printer.h"
#include "engine/schedule/schedule.h"
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

TEST(GpuSchedule, DefaultTraceSpreadsIndependentLoopsOverBlocks) {
  // 30x20 = 600 output elements: 3 blocks of 256 threads, the reduction inside each thread.
  const loop::Kernel mm = matmulKernel();
  const std::string trace = gpuDefaultTrace(mm);
  EXPECT_EQ(trace, "fuse(i, j)\nsplit(i.j.fused, 256)\nbind(i.j.fused.o, blockIdx.x)\n"
                   "bind(i.j.fused.i, threadIdx.x)\nfuse(p, q)\nsplit(p.q.fused, 256)\n"
                   "bind(p.q.fused.o, blockIdx.x)\nbind(p.q.fused.i, threadIdx.x)\n");
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
