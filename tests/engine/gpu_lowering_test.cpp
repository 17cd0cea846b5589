// Golden tests of the GPU lowering, one per kernel kind: the graph lowered for a CUDA
// target (plain nests, LoweringOptions::gpu) and scheduled by the default GPU trace, the
// whole kernel compared as printed loop IR. Numbers are checked elsewhere
// (conformance/gpu_schedules_on_host runs these nests on the CPU).
#include "engine/driver/compile_model.h"
#include "engine/graph/parser.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/target/target.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

namespace lathe {
namespace {

struct GpuGolden {
  const char* name;
  const char* graph; // the statements between the inputs and the output
  const char* inputs;
  const char* trace;    // the default GPU trace
  const char* expected; // the kernel after it
};

std::string graphText(const GpuGolden& g) {
  return std::string("graph @g opset 17 {\n") + g.inputs + g.graph + "  output %y\n}\n";
}

#include "tests/engine/gpu_lowering_goldens.inc"

class GpuLowering : public ::testing::TestWithParam<GpuGolden> {};

TEST_P(GpuLowering, PlainNestScheduledForBlocksAndThreads) {
  const GpuGolden& g = GetParam();
  auto graph = graph::parseGraph(graphText(g), "model.lir");
  const lowering::LoweredModel lowered =
      driver::lowerModel(*graph, target::parseTarget("cuda -arch=sm_90"), nullptr);
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const std::string text = loop::toString(lowered.kernels[0]);
  // LATHE_GOLDEN_OUT=DIR writes what came out, to review a deliberate change.
  if (const char* dir = std::getenv("LATHE_GOLDEN_OUT"))
    std::ofstream(std::string(dir) + "/" + g.name + ".txt") << lowered.scheduleTraces[0] << "----\n"
                                                            << text;
  EXPECT_EQ(lowered.scheduleTraces[0], g.trace);
  EXPECT_EQ(text, g.expected);
}

INSTANTIATE_TEST_SUITE_P(Kinds, GpuLowering, ::testing::ValuesIn(kGpuGoldens),
                         [](const auto& info) { return std::string(info.param.name); });

} // namespace
} // namespace lathe
