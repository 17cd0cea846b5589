// engine/driver: one execution plan for code compiled in memory and for a bundle, and the
// checks buildExecutionPlan makes on any description it is given.
#include "engine/driver/compile_model.h"
#include "engine/driver/execution_plan.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/pipeline/pass_manager.h"
#include "engine/support/diagnostics.h"

#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <random>
#include <unistd.h>

namespace {

using namespace lathe;

std::unique_ptr<graph::Graph> sampleGraph() {
  auto imported = frontend::importOnnxFile(std::string(LATHE_MODEL_DIR) + "/sample_cnn.onnx");
  pipeline::PassManager pm;
  pm.addPasses(pipeline::defaultPipeline());
  pm.run(*imported.graph);
  return std::move(imported.graph);
}

std::vector<runtime::Tensor> runOnce(runtime::Executor& exec) {
  std::vector<runtime::Tensor> inputs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (int s : exec.plan().inputs) {
    const runtime::PlanSlot& slot = exec.plan().slots[s];
    runtime::Tensor t = runtime::Tensor::allocate(slot.type, slot.shape);
    for (std::int64_t i = 0; i < t.numElements(); ++i)
      t.data<float>()[i] = uniform(rng);
    inputs.push_back(std::move(t));
  }
  return exec.run(inputs);
}

TEST(DriverPlan, InMemoryAndBundleRunTheSamePlan) {
  const auto g = sampleGraph();
  driver::CompileSettings settings;
  settings.threads = 1;
  const driver::CompileOutcome jit = driver::compileModel(*g, settings);
  const auto dir =
      std::filesystem::temp_directory_path() / ("lathe_driver_plan_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  settings.bundlePath = (dir / "sample.tar").string();
  const driver::CompileOutcome bundle = driver::compileModel(*g, settings);
  ASSERT_TRUE(jit.compiled && bundle.compiled);
  ASSERT_TRUE(bundle.compiled->bundle) << "a host bundle is loaded back from its file";
  // The executor holds the only copy of the weights (a second one doubled ResNet-50's memory).
  EXPECT_TRUE(bundle.compiled->bundle->weights.empty());

  const runtime::ExecutionPlan& a = jit.compiled->executor->plan();
  const runtime::ExecutionPlan& b = bundle.compiled->executor->plan();
  ASSERT_EQ(a.slots.size(), b.slots.size());
  for (std::size_t s = 0; s < a.slots.size(); ++s) {
    EXPECT_EQ(a.slots[s].name, b.slots[s].name);
    EXPECT_EQ(a.slots[s].role, b.slots[s].role) << a.slots[s].name;
    EXPECT_EQ(a.slots[s].type, b.slots[s].type) << a.slots[s].name;
    EXPECT_EQ(a.slots[s].shape, b.slots[s].shape) << a.slots[s].name;
    if (a.slots[s].role == runtime::SlotRole::Constant) {
      EXPECT_EQ(
          std::memcmp(a.slots[s].constantData, b.slots[s].constantData, a.slots[s].byteSize()), 0)
          << a.slots[s].name;
    }
  }
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (std::size_t c = 0; c < a.calls.size(); ++c) {
    EXPECT_EQ(a.calls[c].kernel, b.calls[c].kernel);
    EXPECT_EQ(a.calls[c].args, b.calls[c].args);
    EXPECT_EQ(jit.compiled->layout.calls[c].nodes, bundle.compiled->layout.calls[c].nodes);
    EXPECT_EQ(jit.compiled->layout.calls[c].flops, bundle.compiled->layout.calls[c].flops);
  }
  EXPECT_GT(jit.compiled->layout.calls.front().flops, 0) << "the first Conv's FLOPs are known";
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(jit.arenaBytes, bundle.arenaBytes);
  EXPECT_EQ(jit.naiveArenaBytes, bundle.naiveArenaBytes);
  EXPECT_EQ(jit.constantBytes, bundle.constantBytes);
  EXPECT_GT(bundle.bundleBytes, 0u);

  // The same code from the same IR: the outputs agree bit for bit.
  const auto x = runOnce(*jit.compiled->executor);
  const auto y = runOnce(*bundle.compiled->executor);
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t o = 0; o < x.size(); ++o) {
    ASSERT_EQ(x[o].byteSize(), y[o].byteSize());
    EXPECT_EQ(std::memcmp(x[o].rawData(), y[o].rawData(), x[o].byteSize()), 0);
  }
  std::filesystem::remove_all(dir);
}

TEST(DriverPlan, CrossTargetGetsTheMemoryPlanWithoutCode) {
  const auto g = sampleGraph();
  driver::CompileSettings settings;
  settings.target = target::parseTarget("llvm -mtriple=aarch64-linux-gnu");
  const driver::CompileOutcome out = driver::compileModel(*g, settings);
  EXPECT_FALSE(out.compiled) << "nothing runs here";
  EXPECT_GT(out.arenaBytes, 0u);
  EXPECT_LE(out.arenaBytes, out.naiveArenaBytes);
  EXPECT_GT(out.constantBytes, 0u);
}

TEST(DriverPlan, RefusesASizeThatDisagreesWithTheShape) {
  exporter::BundleManifest layout;
  layout.slots.push_back({"x", "input", "f32", {2, 3}, 0, 24});
  layout.slots.push_back({"y", "output", "f32", {2, 3}, 0, 20}); // 24 bytes
  layout.inputs = {0};
  layout.outputs = {1};
  const auto none = [](std::size_t, const exporter::BundleSlot&) { return nullptr; };
  try {
    driver::buildExecutionPlan(layout, none, nullptr, {}, "m.tar");
    FAIL() << "accepted a slot of the wrong size";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'y' has an inconsistent size"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("m.tar"), std::string::npos) << e.what();
  }
  layout.slots[1].bytes = 24;
  layout.slots[1].role = "weights";
  EXPECT_THROW(driver::buildExecutionPlan(layout, none, nullptr), Error);
}

} // namespace
