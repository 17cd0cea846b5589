// The layout-nchwc pass: which Convs it moves to the blocked layout, and how it packs their
// weights. (Numbers: tests/oracle runs nchwc_zoo against ONNX Runtime.)
#include "engine/api/session.h"
#include "engine/graph/parser.h"
#include "engine/graph_passes/layout_nchwc.h"
#include "engine/profiler/kernel_flops.h"

#include <gtest/gtest.h>
#include <map>
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

// A constant of the given dims whose elements are their flat indices, in the IR's text form.
std::string constant(const std::string& name, const std::vector<std::int64_t>& dims) {
  std::int64_t count = 1;
  std::string shape;
  for (std::int64_t d : dims) {
    shape += (shape.empty() ? "" : ",") + std::to_string(d);
    count *= d;
  }
  std::string s = "  const %" + name + ": f32[" + shape + "] = [";
  for (std::int64_t i = 0; i < count; ++i)
    s += (i ? ", " : "") + std::to_string(i);
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

TEST(LayoutNchwc, GroupedAndSparselyFilledChannelsStay) {
  // 20 channels would take two blocks, 12 of their 32 lanes padding: more than half again.
  // Two groups of 8 channels are not a depthwise Conv.
  const std::string text = "graph @odd opset 17 {\n  input %x: f32[1,16,4,4]\n" +
                           weight("w1", 20, 16) + weight("w2", 20, 20) + weight("w3", 16, 20) +
                           constant("w4", {16, 8, 1, 1}) +
                           "  %a: f32[1,20,4,4] = Conv(%x, %w1)\n"
                           "  %b: f32[1,20,4,4] = Conv(%a, %w2)\n"
                           "  %c: f32[1,16,4,4] = Conv(%b, %w3)\n"
                           "  %d: f32[1,16,4,4] = Conv(%c, %w4) {group = 2}\n"
                           "  %e: f32[1,16,4,4] = Conv(%d, %w4) {group = 2}\n"
                           "  output %e\n}\n";
  auto g = graph::parseGraph(text);
  EXPECT_FALSE(passes::layoutNchwc(*g));
  EXPECT_EQ(count(*g, "Conv"), 5);
}

TEST(LayoutNchwc, DepthwiseSeparableChainIsBlockedWithPaddingChannels) {
  // An image stem read in NCHW, a depthwise Conv, a 24-channel value in two blocks and a
  // global pool: the only conversion is the pooled output's.
  const std::string text = "graph @sep opset 17 {\n  input %x: f32[1,3,8,8]\n" +
                           constant("ws", {16, 3, 3, 3}) + constant("wd", {16, 1, 3, 3}) +
                           weight("wp", 24, 16) + constant("bp", {24}) + weight("wq", 16, 24) +
                           "  %a: f32[1,16,8,8] = Conv(%x, %ws) {pads = [1, 1, 1, 1]}\n"
                           "  %b: f32[1,16,8,8] = Conv(%a, %wd) {group = 16, pads = [1, 1, 1, "
                           "1]}\n"
                           "  %c: f32[1,24,8,8] = Conv(%b, %wp, %bp)\n"
                           "  %d: f32[1,24,8,8] = Relu(%c)\n"
                           "  %e: f32[1,16,8,8] = Conv(%d, %wq)\n"
                           "  %f: f32[1,16,1,1] = GlobalAveragePool(%e)\n"
                           "  output %f\n}\n";
  auto g = graph::parseGraph(text);
  ASSERT_TRUE(passes::layoutNchwc(*g));
  EXPECT_EQ(count(*g, "Conv"), 0);
  EXPECT_EQ(count(*g, "ConvNCHWc"), 3);
  EXPECT_EQ(count(*g, "DepthwiseConvNCHWc"), 1);
  EXPECT_EQ(count(*g, "GlobalAveragePoolNCHWc"), 1);
  // Out of the blocked layout only, after the pool: 16 values instead of 16 planes.
  ASSERT_EQ(count(*g, "Transpose"), 1);
  for (const auto& n : g->nodes())
    if (n->opType() == "Transpose") {
      EXPECT_EQ(graph::toString(n->input(0)->type), "f32[1,1,1,1,16]");
    }
  for (const auto& n : g->nodes()) {
    if (n->name == "a") { // the stem reads the image as it is
      EXPECT_EQ(n->input(0)->name(), "x");
      EXPECT_EQ(graph::toString(n->output(0)->type), "f32[1,1,8,8,16]");
    }
    if (n->opType() == "Relu") { // 24 channels: two blocks
      EXPECT_EQ(graph::toString(n->output(0)->type), "f32[1,2,8,8,16]");
    }
  }
  // The stem's weights [16, 3, 3, 3] as one block of all three input channels.
  const graph::Value* stem = findConstant(*g, "ws");
  ASSERT_NE(stem, nullptr);
  EXPECT_EQ(stem->constant().dims(), (std::vector<std::int64_t>{1, 1, 3, 3, 3, 16}));
  // Element (m, c, kh, kw) of the constants below is its flat index.
  EXPECT_EQ(stem->constant().values<float>()[((1 * 3 + 2) * 3 + 1) * 16 + 5],
            float(((5 * 3 + 1) * 3 + 1) * 3 + 2)); // kh 1, kw 2, c 1, m 5
  // wp [24, 16] as [2 blocks of outputs, 1 of inputs]: outputs 24..31 are zeros.
  const graph::Value* wp = findConstant(*g, "wp");
  ASSERT_NE(wp, nullptr);
  EXPECT_EQ(wp->constant().dims(), (std::vector<std::int64_t>{2, 1, 1, 1, 16, 16}));
  const auto p = wp->constant().values<float>();
  EXPECT_EQ(p[(16 + 3) * 16 + 7], float(23 * 100 + 3)); // m 23, c 3
  EXPECT_EQ(p[(16 + 3) * 16 + 8], 0.0f);                // m 24: padding
  // wq [16, 24] as [1 block of outputs, 2 of inputs]: inputs 24..31 are zeros.
  const graph::Value* wq = findConstant(*g, "wq");
  ASSERT_NE(wq, nullptr);
  EXPECT_EQ(wq->constant().dims(), (std::vector<std::int64_t>{1, 2, 1, 1, 16, 16}));
  EXPECT_EQ(wq->constant().values<float>()[(16 + 7) * 16 + 2], float(2 * 100 + 23));
  EXPECT_EQ(wq->constant().values<float>()[(16 + 8) * 16 + 2], 0.0f);
  // The depthwise weights [16, 1, 3, 3] as [1, 3, 3, 16]; the bias padded to 32.
  for (const graph::Value* v : g->constants()) {
    if (v->name().rfind("wd", 0) == 0 && v->constant().dims().size() == 4 &&
        v->constant().dims()[0] == 1) {
      EXPECT_EQ(v->constant().dims(), (std::vector<std::int64_t>{1, 3, 3, 16}));
      EXPECT_EQ(v->constant().values<float>()[(2 * 3 + 1) * 16 + 9], float(9 * 9 + 2 * 3 + 1));
    }
    if (v->name().rfind("bp", 0) == 0 && v->constant().dims() == std::vector<std::int64_t>{32}) {
      EXPECT_EQ(v->constant().values<float>()[23], 23.0f);
      EXPECT_EQ(v->constant().values<float>()[24], 0.0f);
    }
  }
}

TEST(LayoutNchwc, AStemAndItsMaxPoolStartTheChain) {
  // ResNet's head: the image's 3 channels read in NCHW by the stem, its MaxPool blocked, so
  // the chain needs no conversion in.
  const std::string text = "graph @stem opset 17 {\n  input %x: f32[1,3,32,32]\n" +
                           constant("ws", {16, 3, 7, 7}) + weight("w", 16, 16) +
                           "  %a: f32[1,16,16,16] = Conv(%x, %ws) {pads = [3, 3, 3, 3], strides "
                           "= [2, 2]}\n"
                           "  %b: f32[1,16,16,16] = Relu(%a)\n"
                           "  %c: f32[1,16,8,8] = MaxPool(%b) {kernel_shape = [3, 3], pads = [1, "
                           "1, 1, 1], strides = [2, 2]}\n"
                           "  %d: f32[1,16,8,8] = Conv(%c, %w)\n"
                           "  %e: f32[1,16,8,8] = Conv(%d, %w)\n"
                           "  output %e\n}\n";
  auto g = graph::parseGraph(text);
  ASSERT_TRUE(passes::layoutNchwc(*g));
  EXPECT_EQ(count(*g, "MaxPool"), 0);
  EXPECT_EQ(count(*g, "MaxPoolNCHWc"), 1);
  EXPECT_EQ(count(*g, "ConvNCHWc"), 3);
  EXPECT_EQ(count(*g, "Transpose"), 1); // out only
}

TEST(LayoutNchwc, AverageAndLpPoolsKeepTheChainBlocked) {
  // An Inception block's pooled branch: AveragePool (with its count_include_pad) and LpPool
  // (with its p) between Convs slide over one channel at a time, so the chain goes through
  // them with their attributes; without them blocked the chain would split in two, each half
  // with too few Convs for its conversions.
  const std::string text = "graph @pools opset 17 {\n  input %x: f32[1,32,8,8]\n" +
                           weight("w", 32, 32) +
                           "  %a: f32[1,32,8,8] = Conv(%x, %w)\n"
                           "  %b: f32[1,32,8,8] = Conv(%a, %w)\n"
                           "  %c: f32[1,32,8,8] = AveragePool(%b) {kernel_shape = [3, 3], pads = "
                           "[1, 1, 1, 1], count_include_pad = 1}\n"
                           "  %d: f32[1,32,4,4] = LpPool(%c) {kernel_shape = [2, 2], strides = "
                           "[2, 2], p = 3}\n"
                           "  %e: f32[1,32,4,4] = Conv(%d, %w)\n"
                           "  %f: f32[1,32,4,4] = Conv(%e, %w)\n"
                           "  output %f\n}\n";
  auto g = graph::parseGraph(text);
  ASSERT_TRUE(passes::layoutNchwc(*g));
  EXPECT_EQ(count(*g, "AveragePool") + count(*g, "LpPool"), 0);
  EXPECT_EQ(count(*g, "ConvNCHWc"), 4);
  EXPECT_EQ(count(*g, "Transpose"), 2); // in and out, nothing between
  for (const auto& node : g->nodes()) {
    if (node->opType() == "AveragePoolNCHWc") {
      EXPECT_EQ(node->attrInt("count_include_pad", 0), 1);
    }
    if (node->opType() == "LpPoolNCHWc") {
      EXPECT_EQ(node->attrInt("p", 2), 3);
    }
  }
  EXPECT_EQ(count(*g, "AveragePoolNCHWc"), 1);
  EXPECT_EQ(count(*g, "LpPoolNCHWc"), 1);
}

TEST(LayoutNchwc, AnLpPoolOfPaddingChannelsStaysInNchw) {
  // 24 channels in two blocks between Convs of 16: the padding channels are only kept
  // finite, and |x|^p of a finite value need not be, so LpPool does not join the chain (and
  // the chain, cut in two, is too short for its conversions); AveragePool, a mean of finite
  // values, does, and the four Convs run blocked.
  const auto chain = [](const std::string& pool) {
    return "graph @pad opset 17 {\n  input %x: f32[1,16,8,8]\n" + weight("w1", 24, 16) +
           weight("w2", 16, 24) + weight("w3", 16, 16) +
           "  %a: f32[1,24,8,8] = Conv(%x, %w1)\n"
           "  %b: f32[1,24,8,8] = " +
           pool +
           "(%a) {kernel_shape = [2, 2], pads = [0, 0, 1, 1]}\n"
           "  %c: f32[1,16,8,8] = Conv(%b, %w2)\n"
           "  %d: f32[1,16,8,8] = Conv(%c, %w3)\n"
           "  %e: f32[1,16,8,8] = Conv(%d, %w3)\n"
           "  output %e\n}\n";
  };
  auto lp = graph::parseGraph(chain("LpPool"));
  passes::layoutNchwc(*lp);
  EXPECT_EQ(count(*lp, "LpPoolNCHWc"), 0);
  EXPECT_EQ(count(*lp, "LpPool"), 1);
  EXPECT_EQ(count(*lp, "ConvNCHWc"), 0);
  auto avg = graph::parseGraph(chain("AveragePool"));
  ASSERT_TRUE(passes::layoutNchwc(*avg));
  EXPECT_EQ(count(*avg, "AveragePoolNCHWc"), 1);
  EXPECT_EQ(count(*avg, "ConvNCHWc"), 4);
}

TEST(LayoutNchwc, PaddedConvsCountTheOperationsOfTheChannelsTheModelHas) {
  // 24 -> 40 channels computed as 32 -> 48: the profile counts 24 x 40 multiply-adds a
  // position, not the padded 32 x 48.
  const std::string text = "graph @count opset 17 {\n  input %x: f32[1,16,4,4]\n" +
                           weight("w1", 24, 16) + weight("w2", 40, 24) + weight("w3", 16, 40) +
                           constant("wd", {40, 1, 3, 3}) +
                           "  %a: f32[1,24,4,4] = Conv(%x, %w1) @a\n"
                           "  %b: f32[1,40,4,4] = Conv(%a, %w2) @b\n"
                           "  %c: f32[1,40,4,4] = Conv(%b, %wd) {group = 40, pads = [1, 1, 1, "
                           "1]} @c\n"
                           "  %d: f32[1,16,4,4] = Conv(%c, %w3) @d\n"
                           "  output %d\n}\n";
  auto g = graph::parseGraph(text);
  std::map<std::string, double> before;
  for (const auto& n : g->nodes())
    before[n->name] = profiler::estimateNodeFlops(*n);
  ASSERT_TRUE(passes::layoutNchwc(*g));
  int compared = 0;
  for (const auto& n : g->nodes())
    if (before.count(n->name) && n->opType() != "Transpose" && n->opType() != "Reshape") {
      EXPECT_DOUBLE_EQ(profiler::estimateNodeFlops(*n), before[n->name]) << n->name;
      ++compared;
    }
  EXPECT_EQ(compared, 4);
  EXPECT_DOUBLE_EQ(before["b"], 2.0 * 16 * 40 * 24);
}

TEST(LayoutNchwc, PaddingChannelsStayInsideAndMeetOnlyOpsThatKeepThemFinite) {
  // Six Convs around a 24-channel value: blocked when Relu follows it, not when Reciprocal
  // does (1 / 0 in a padding channel, times the next Conv's zero weight, is NaN), nor when
  // the value is an output of the graph (the conversions handle whole blocks only).
  const auto chain = [](const std::string& op, bool output) {
    return "graph @pad opset 17 {\n  input %x: f32[1,16,4,4]\n" + weight("w1", 24, 16) +
           weight("w2", 16, 24) + weight("w3", 16, 16) +
           "  %a: f32[1,24,4,4] = Conv(%x, %w1)\n"
           "  %b: f32[1,24,4,4] = " +
           op +
           "(%a)\n"
           "  %c: f32[1,16,4,4] = Conv(%b, %w2)\n"
           "  %d: f32[1,16,4,4] = Conv(%c, %w3)\n"
           "  %e: f32[1,16,4,4] = Conv(%d, %w3)\n"
           "  %f: f32[1,16,4,4] = Conv(%e, %w3)\n"
           "  %g: f32[1,16,4,4] = Conv(%f, %w3)\n"
           "  output %g\n" +
           (output ? "  output %b\n" : "") + "}\n";
  };
  auto relu = graph::parseGraph(chain("Relu", false));
  EXPECT_TRUE(passes::layoutNchwc(*relu));
  EXPECT_EQ(count(*relu, "ConvNCHWc"), 6);
  auto reciprocal = graph::parseGraph(chain("Reciprocal", false));
  EXPECT_FALSE(passes::layoutNchwc(*reciprocal));
  auto leaving = graph::parseGraph(chain("Relu", true));
  EXPECT_FALSE(passes::layoutNchwc(*leaving));
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
