// Loop IR -> PTX through NVPTX, assembled by ptxas when the CUDA Toolkit is there: launches
// per top-level nest, device buffers between them, ptxas's figures, and the refusals.
#include "engine/codegen/nvptx/gpu_launches.h"
#include "engine/codegen/nvptx/ptx_compiler.h"
#include "engine/codegen/nvptx/ptxas.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"
#include "tests/schedule/schedule_kernels.h"

#include <gtest/gtest.h>

namespace lathe::codegen::nvptx {
namespace {

loop::Kernel onGpu(const loop::Kernel& kernel) {
  const std::string trace = schedule::gpuDefaultTrace(kernel);
  return schedule::apply(kernel, schedule::parseTrace(kernel.name, trace));
}

CodegenOptions cuda(const std::string& arch = "sm_80") {
  CodegenOptions options;
  options.target = target::parseTarget("cuda -arch=" + arch);
  options.keepText = true;
  return options;
}

TEST(PtxCompiler, EachTopLevelNestIsALaunch) {
  const GpuKernelPlan plan = planLaunches(onGpu(schedule::testing::scratchKernel()));
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0].kernel.name, "scratch_l0");
  EXPECT_EQ(plan.launches[1].kernel.name, "scratch_l1");
  // 30 elements each: one block of 30 threads.
  for (const GpuLaunch& l : plan.launches) {
    EXPECT_EQ(l.grid[0], 1);
    EXPECT_EQ(l.block[0], 30);
  }
  // The buffer between them is device memory, passed after the kernel's own parameters.
  ASSERT_EQ(plan.scratch.size(), 1u);
  EXPECT_EQ(plan.scratch[0].name, "t");
  EXPECT_EQ(plan.scratch[0].bytes, 30 * 4);
  const std::vector<loop::Buffer> params = plan.launches[1].kernel.parameters();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params.back().name(), "t");
}

TEST(PtxCompiler, WritesPtxWithThreadAndBlockIndices) {
  const PtxModule m = compileToPtx({onGpu(schedule::testing::matmulKernel())}, cuda());
  ASSERT_EQ(m.code.size(), 1u);
  const KernelCode& code = m.code[0];
  EXPECT_NE(m.ptx.find(".target sm_80"), std::string::npos) << m.ptx.substr(0, 400);
  EXPECT_NE(code.assembly.find(".entry matmul_relu_l0("), std::string::npos) << code.assembly;
  EXPECT_NE(code.assembly.find(".entry matmul_relu_l1("), std::string::npos);
  EXPECT_NE(code.assembly.find("%tid.x"), std::string::npos);
  EXPECT_NE(code.assembly.find("%ctaid.x"), std::string::npos);
  EXPECT_NE(code.llvmIr.find("llvm.nvvm.read.ptx.sreg.tid.x"), std::string::npos);
  ASSERT_EQ(code.gpuFunctions.size(), 2u);
  EXPECT_EQ(code.gpuFunctions[0].grid[0], 3); // 600 outputs in blocks of 256
  EXPECT_EQ(code.gpuFunctions[0].block[0], 256);
}

TEST(PtxCompiler, PtxasReportsEveryEntry) {
  if (findPtxas().empty())
    GTEST_SKIP() << "no ptxas (CUDA Toolkit) on this machine";
  for (const char* arch : {"sm_80", "sm_90"}) {
    const PtxModule m = compileToPtx({onGpu(schedule::testing::matmulKernel())}, cuda(arch));
    EXPECT_FALSE(m.cubin.empty()) << arch;
    for (const GpuFunctionCode& f : m.code[0].gpuFunctions) {
      EXPECT_GT(f.registers, 0) << f.name << " " << arch << "\n" << m.ptxasLog;
      EXPECT_EQ(f.spillStores, 0) << f.name;
      EXPECT_EQ(f.stackBytes, 0) << f.name;
    }
    const std::string table = describeGpuFunctions(m.code[0]);
    EXPECT_NE(table.find("matmul_relu_l1"), std::string::npos) << table;
    EXPECT_NE(table.find("registers"), std::string::npos) << table;
  }
}

TEST(PtxCompiler, ParsesPtxasVerboseOutput) {
  const std::string log = "ptxas info    : 0 bytes gmem\n"
                          "ptxas info    : Compiling entry function 'k_l0' for 'sm_90'\n"
                          "ptxas info    : Function properties for k_l0\n"
                          "    64 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
                          "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, "
                          "392 bytes cmem[0]\n"
                          "ptxas info    : Compiling entry function 'k_l1' for 'sm_90'\n"
                          "ptxas info    : Function properties for k_l1\n"
                          "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                          "ptxas info    : Used 6 registers, 368 bytes cmem[0]\n";
  const auto r = parsePtxasReport(log);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.at("k_l0").registers, 40);
  EXPECT_EQ(r.at("k_l0").sharedBytes, 2048);
  EXPECT_EQ(r.at("k_l0").stackBytes, 64);
  EXPECT_EQ(r.at("k_l0").spillStores, 8);
  EXPECT_EQ(r.at("k_l0").spillLoads, 12);
  EXPECT_EQ(r.at("k_l1").registers, 6);
  EXPECT_EQ(r.at("k_l1").sharedBytes, 0);
}

std::string refusal(const loop::Kernel& kernel, const CodegenOptions& options = cuda()) {
  try {
    compileToPtx({kernel}, options);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "compiled";
  return {};
}

TEST(PtxCompiler, RefusesWhatHasNoGpuCode) {
  using namespace loop;
  // A CPU thread-pool loop.
  const loop::Kernel mm = schedule::testing::matmulKernel();
  const loop::Kernel parallel = schedule::apply(
      mm,
      schedule::Schedule{mm.name, {schedule::Step{schedule::Primitive::Parallel, {"i"}, {}, 0}}});
  EXPECT_NE(refusal(parallel).find("bind the loop to blockIdx/threadIdx"), std::string::npos);
  // f64 exp: Lathe's math library is f32; NVPTX has no instruction for it.
  Buffer x = Buffer::make("x", f64(), makeShape({8}));
  Buffer y = Buffer::make("y", f64(), makeShape({8}));
  Expr i = schedule::testing::indexVar("i");
  Kernel expKernel{"exp64",
                   {x},
                   {y},
                   schedule::testing::serialFor(
                       i, 8, Store::make(y, i, Call::make(Intrinsic::Exp, {Load::make(x, i)}))),
                   {"e"}};
  EXPECT_NE(refusal(onGpu(expKernel)).find("kernel exp64: 'llvm.exp.f64'"), std::string::npos);
  // ptxas 13 assembles sm_75 and newer.
  EXPECT_NE(refusal(onGpu(mm), cuda("sm_70")).find("sm_75 and newer"), std::string::npos);
}

} // namespace
} // namespace lathe::codegen::nvptx
