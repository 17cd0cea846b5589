// The layout-nchwc pass: which Convs it moves to the blocked layout, and how it packs their
// weights. (Numbers: tests/oracle runs nchwc_zoo against ONNX Runtime.)
#include "engine/api/session.h"
#include "engine/graph/parser.h"
#include "engine/graph_passes/layout_nchwc.h"

#include <gtest/gtest.h>
#include <string>

namespace lathe {
namespace {

// A constant [M, C, 1, 1] whose element (m, c) is m * 100 + c, in the IR's text form.
std::string weight(const std::string& name, int M, int C) {
  std::string s =
      "  const %" + name + ": f32[" + std::to_string(M) + "," + std::to_string(C) + ",1,1] = [";
  for (int m = 0; m < M; ++m)
    for (int c = 0; c < C; ++c)
      s += (m || c ? ", " : "") + std::to_string(m * 100 + c);
  return s + "]\n";
}

const graph::Value* findConstant(const graph::Graph& g, const std::string& prefix) {
  for (const graph::Value* v : g.constants())
    if (v->name().rfind(prefix, 0) == 0 && v->constant().dims().size() == 6)
      return v;
  return nullptr;
}

int count(const graph::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes())
    n += node->opType() == op;
  return n;
}

TEST(LayoutNchwc, ChainIsBlockedAndWeightsArePacked) {
  // Four Convs for two conversions: the chain is converted.
  const std::string text = "graph @chain opset 17 {\n  input %x: f32[1,16,4,4]\n" +
                           weight("w1", 32, 16) + weight("w2", 16, 32) + weight("w3", 16, 16) +
                           "  %a: f32[1,32,4,4] = Conv(%x, %w1)\n"
                           "  %b: f32[1,32,4,4] = Relu(%a)\n"
                           "  %c: f32[1,16,4,4] = Conv(%b, %w2)\n"
                           "  %d: f32[1,16,4,4] = Conv(%c, %w3)\n"
                           "  %e: f32[1,16,4,4] = Conv(%d, %w3)\n"
                           "  output %e\n}\n";
  auto g = graph::parseGraph(text);
  ASSERT_TRUE(passes::layoutNchwc(*g));
  EXPECT_EQ(count(*g, "Conv"), 0);
  EXPECT_EQ(count(*g, "ConvNCHWc"), 4);
  EXPECT_EQ(count(*g, "Transpose"), 2); // into the blocked layout and out of it
  // The output keeps its name and NCHW shape.
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(g->outputs[0]->name(), "e");
  EXPECT_EQ(graph::toString(g->outputs[0]->type), "f32[1,16,4,4]");
  // w1 [32, 16, 1, 1] as [M/16, C/16, 1, 1, 16 inputs, 16 outputs].
  const graph::Value* packed = findConstant(*g, "w1");
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(packed->constant().dims(), (std::vector<std::int64_t>{2, 1, 1, 1, 16, 16}));
  const auto values = packed->constant().values<float>();
  for (int mb = 0; mb < 2; ++mb)
    for (int ci = 0; ci < 16; ++ci)
      for (int mo = 0; mo < 16; ++mo)
        ASSERT_EQ(values[(mb * 16 + ci) * 16 + mo], float((mb * 16 + mo) * 100 + ci))
            << mb << " " << ci << " " << mo;
}

TEST(LayoutNchwc, LoneConvStaysInNchw) {
  // One Conv would need a conversion in and one out: not worth it.
  const std::string text = "graph @lone opset 17 {\n  input %x: f32[1,16,4,4]\n" +
                           weight("w", 16, 16) +
                           "  %a: f32[1,16,4,4] = Conv(%x, %w)\n"
                           "  %b: f32[1,16,4,4] = Relu(%a)\n"
                           "  output %b\n}\n";
  auto g = graph::parseGraph(text);
  EXPECT_FALSE(passes::layoutNchwc(*g));
  EXPECT_EQ(count(*g, "Conv"), 1);
}

TEST(LayoutNchwc, GroupedAndOddChannelConvsStay) {
  const std::string text = "graph @odd opset 17 {\n  input %x: f32[1,16,4,4]\n" +
                           weight("w1", 24, 16) + weight("w2", 24, 24) + weight("w3", 16, 24) +
                           "  %a: f32[1,24,4,4] = Conv(%x, %w1)\n"
                           "  %b: f32[1,24,4,4] = Conv(%a, %w2)\n"
                           "  %c: f32[1,16,4,4] = Conv(%b, %w3)\n"
                           "  output %c\n}\n";
  auto g = graph::parseGraph(text);
  EXPECT_FALSE(passes::layoutNchwc(*g)); // 24 channels are not whole blocks
}

TEST(LayoutNchwc, KernelShapeThatDisagreesWithTheWeightsStays) {
  // Left to the NCHW lowering, which refuses it with a clear message.
  std::string text = "graph @ks opset 17 {\n  input %x: f32[1,16,4,4]\n" + weight("w", 16, 16);
  std::string in = "x";
  for (const char* out : {"a", "b", "c", "d"}) {
    text += std::string("  %") + out + ": f32[1,16,4,4] = Conv(%" + in + ", %w) " +
            "{kernel_shape = [3, 3]}\n";
    in = out;
  }
  text += "  output %d\n}\n";
  auto g = graph::parseGraph(text);
  EXPECT_FALSE(passes::layoutNchwc(*g));
}

TEST(LayoutNchwc, ZooModelRunsBlockedThroughThePipeline) {
  api::Session session;
  const api::OpenResult r = session.openModel(std::string(LATHE_MODEL_DIR) + "/nchwc_zoo.onnx");
  ASSERT_TRUE(r.ok()) << r.failure->message;
  int blocked = 0, winograd = 0, plain = 0;
  for (const auto& n : r.report->final.nodes) {
    blocked += n.opType == "ConvNCHWc";
    winograd += n.opType == "ConvWinogradNCHWc";
    plain += n.opType == "Conv";
    if (n.opType == "ConvNCHWc" || n.opType == "ConvWinogradNCHWc") {
      EXPECT_EQ(n.category, "convolution");
    }
  }
  // c1 (3x3 on two 13x17 planes: 40 tiles of 4x4) goes on to winograd-nchwc.
  EXPECT_EQ(blocked, 6);
  EXPECT_EQ(winograd, 1);
  EXPECT_EQ(plain, 0);
}

} // namespace
} // namespace lathe
