// The default pipeline on real (generated) models, through engine/api as the GUI and CLI
// use it, and the pass manager's instruments.
#include "engine/api/session.h"
#include "engine/graph/parser.h"
#include "engine/pipeline/instruments.h"

#include <gtest/gtest.h>
#include <sstream>

namespace lathe {
namespace {

std::string model(const std::string& name) {
  return std::string(LATHE_MODEL_DIR) + "/" + name;
}

int countOps(const api::GraphSnapshot& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes)
    n += node.opType == op;
  return n;
}

TEST(Pipeline, SampleModelIsSimplifiedFoldedAndFused) {
  api::Session session;
  const api::OpenResult r = session.openModel(model("sample_cnn.onnx"));
  ASSERT_TRUE(r.ok()) << r.failure->message;
  const api::ModelReport& rep = *r.report;
  EXPECT_GT(countOps(rep.imported, "BatchNormalization"), 0);
  EXPECT_EQ(countOps(rep.final, "BatchNormalization"), 0);
  EXPECT_EQ(countOps(rep.final, "Identity"), 0);
  EXPECT_EQ(countOps(rep.final, "Dropout"), 0);
  EXPECT_LT(countOps(rep.final, "Relu"), countOps(rep.imported, "Relu")); // CSE merged a twin
  ASSERT_FALSE(rep.final.groups.empty());
  bool convRelu = false;
  for (const auto& g : rep.final.groups)
    convRelu = convRelu || g.pattern == "Conv+Relu" || g.pattern == "Conv+Add+Relu" ||
               g.pattern == "ConvNCHWc+Relu" || g.pattern == "ConvNCHWc+Add+Relu";
  EXPECT_TRUE(convRelu);
  // One trace entry per pipeline step, each with a graph snapshot and IR text.
  ASSERT_EQ(rep.passes.size(), api::defaultPipeline().size());
  for (const auto& p : rep.passes) {
    ASSERT_TRUE(p.graphAfter);
    EXPECT_FALSE(p.irAfter.empty());
    EXPECT_EQ(p.changed, p.irBefore != p.irAfter) << p.name;
  }
  // The final IR parses back.
  EXPECT_NO_THROW(graph::parseGraph(rep.final.irText));
}

TEST(Pipeline, ResidualConvAddReluBecomesOneGroup) {
  api::Session session;
  const api::OpenResult r = session.openModel(model("residual_add.onnx"));
  ASSERT_TRUE(r.ok()) << r.failure->message;
  std::vector<std::string> patterns;
  for (const auto& g : r.report->final.groups)
    patterns.push_back(g.pattern);
  EXPECT_NE(std::find(patterns.begin(), patterns.end(), "Conv+Add+Relu"), patterns.end());
  EXPECT_NE(std::find(patterns.begin(), patterns.end(), "Conv+Relu"), patterns.end());
}

TEST(Pipeline, GemmBatchNormIsFolded) {
  api::Session session;
  const api::OpenResult r = session.openModel(model("gemm_bn.onnx"));
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_EQ(countOps(r.report->final, "BatchNormalization"), 0);
  EXPECT_EQ(countOps(r.report->final, "Gemm"), 1);
}

TEST(Pipeline, FailuresComeBackAsValues) {
  api::Session session;
  const api::OpenResult r = session.openModel(model("bad/truncated.onnx"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure->kind, "invalid");
  EXPECT_NE(r.failure->message.find("truncated.onnx"), std::string::npos);
}

TEST(Pipeline, ProgressIsReportedInOrder) {
  api::Session session;
  api::OpenOptions options;
  std::vector<int> percents;
  options.onProgress = [&](const api::Progress& p) { percents.push_back(p.percent); };
  ASSERT_TRUE(session.openModel(model("conv_bn_relu.onnx"), options).ok());
  ASSERT_FALSE(percents.empty());
  EXPECT_TRUE(std::is_sorted(percents.begin(), percents.end()));
  EXPECT_EQ(percents.back(), 100);
}

TEST(Instruments, PrintAfterEachPassAndTimer) {
  auto g = graph::parseGraph(R"(graph @g opset 17 {
  input %x: f32[2]
  %a: f32[2] = Identity(%x) @id
  %b: f32[2] = Relu(%a) @relu
  %dead: f32[2] = Neg(%x) @unused
  output %b
})");
  pipeline::PassManager pm;
  pm.addPass(*pipeline::findPass("simplify-inference"));
  pm.addPass(*pipeline::findPass("eliminate-dead-code"));
  pm.addPass(*pipeline::findPass("eliminate-dead-code"));
  std::ostringstream out;
  pipeline::PrintIrAfterPass printer(out);
  pipeline::PassTimer timer;
  pm.addInstrument(&printer);
  pm.addInstrument(&timer);
  pm.run(*g);
  const std::string text = out.str();
  EXPECT_NE(text.find("// ----- IR after simplify-inference -----"), std::string::npos);
  EXPECT_NE(text.find("// ----- IR after eliminate-dead-code (unchanged) -----"),
            std::string::npos);
  ASSERT_EQ(timer.timings().size(), 3u);
  EXPECT_TRUE(timer.timings()[0].changed);
  EXPECT_TRUE(timer.timings()[1].changed);
  EXPECT_FALSE(timer.timings()[2].changed);
  EXPECT_EQ(timer.timings()[2].nodesAfter, 1u);
}

} // namespace
} // namespace lathe
