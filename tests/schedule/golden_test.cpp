// Golden tests in the form "kernel before -> steps -> the loop IR expected": the whole
// kernel is compared, so a change in any loop, index or statement a primitive makes shows
// up here as a diff of the printed loop IR.
#include "engine/loop_ir/ir_printer.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_io.h"
#include "tests/schedule/schedule_kernels.h"

#include <gtest/gtest.h>

namespace lathe::schedule {
namespace {

struct Golden {
  const char* name;
  const char* steps;
  const char* expected;
};

const Golden kGolden[] = {
    {"register_tile_one_row_of_vectors", "split(j, 4)\nregister_tile(j.i, k)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j.o, 0, 5) {\n"
     "      allocate out.tile: f32[4] on stack {\n"
     "        out.tile[ramp(0, 1, 4)] = broadcast(0.0f, 4)\n"
     "        for (k, 0, 17) {\n"
     "          out.tile[ramp(0, 1, 4)] = out.tile[ramp(0, 1, 4)] + broadcast(a[i*17 + k], "
     "4)*b[ramp(k*20 + j.o*4, 1, 4)]\n"
     "        }\n"
     "        out[ramp(i*20 + j.o*4, 1, 4)] = out.tile[ramp(0, 1, 4)]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q, 0, 20) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"register_tile_two_rows_two_vectors_parallel",
     "split(i, 2)\nsplit(j, 10)\nsplit(j.i, 5)\nreorder(j.o, i.o, i.i, j.i.o, j.i.i)\n"
     "register_tile(i.i, k)\nfuse(j.o, i.o)\nparallel(j.o.i.o.fused)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  parallel for (j.o.i.o.fused, 0, 30) {\n"
     "    allocate out.tile: f32[20] on stack {\n"
     "      unrolled for (i.i.init, 0, 2) {\n"
     "        unrolled for (j.i.o.init, 0, 2) {\n"
     "          out.tile[ramp((i.i.init*2 + j.i.o.init)*5, 1, 5)] = broadcast(0.0f, 5)\n"
     "        }\n"
     "      }\n"
     "      for (k, 0, 17) {\n"
     "        unrolled for (i.i, 0, 2) {\n"
     "          unrolled for (j.i.o, 0, 2) {\n"
     "            out.tile[ramp((i.i*2 + j.i.o)*5, 1, 5)] = out.tile[ramp((i.i*2 + j.i.o)*5, 1, "
     "5)] + broadcast(a[(j.o.i.o.fused%15*2 + i.i)*17 + k], 5)*b[ramp(k*20 + (j.o.i.o.fused/15*10 "
     "+ j.i.o*5), 1, 5)]\n"
     "          }\n"
     "        }\n"
     "      }\n"
     "      unrolled for (i.i.out, 0, 2) {\n"
     "        unrolled for (j.i.o.out, 0, 2) {\n"
     "          out[ramp((j.o.i.o.fused%15*2 + i.i.out)*20 + (j.o.i.o.fused/15*10 + j.i.o.out*5), "
     "1, 5)] = out.tile[ramp((i.i.out*2 + j.i.o.out)*5, 1, 5)]\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q, 0, 20) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
};

class GoldenSchedule : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenSchedule, PrintsTheExpectedLoopIr) {
  const Golden& g = GetParam();
  const ScheduleSet set = parseText(std::string("kernel matmul_relu:\n") + g.steps);
  EXPECT_EQ(loop::toString(apply(testing::matmulKernel(), set.schedules.at(0))), g.expected);
}

INSTANTIATE_TEST_SUITE_P(Schedules, GoldenSchedule, ::testing::ValuesIn(kGolden),
                         [](const auto& info) { return std::string(info.param.name); });

} // namespace
} // namespace lathe::schedule
