// Graph IR: printer/parser round trip, verifier messages, topological sort with groups.
#include "engine/graph/axis.h"
#include "engine/graph/parser.h"
#include "engine/graph/printer.h"
#include "engine/graph/verifier.h"
#include "engine/support/diagnostics.h"

#include <cmath>
#include <gtest/gtest.h>

namespace lathe::graph {
namespace {

const char* kSample = R"(graph @sample opset 17 {
  input %x: f32[N,3,8,8]
  input %"odd name": i64[2,?]
  const %w: f32[4,3,1,1] = [1.0, -2.5, 3e-08, inf, -inf, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
  const %flag: bool[2] = [true, false]
  const %h: f16[1] = [0x3c00]
  %y: f32[N,4,8,8] = Conv(%x, %w, _) {kernel_shape = [1, 1], pads = ints[], strides = [1, 1]} @conv0
  group @fused_relu_add_0 "Relu+Add" {
    %r: f32[N,4,8,8] = Relu(%y) @"relu/0"
    %z: f32[N,4,8,8] = Add(%r, %y) @add0
  }
  %s: i64[4] = Shape(%z) {start = 0}
  %t: ? = Cast(%s) {f = 0.5, fs = [1.0, 2.5], note = "a \"quoted\"\nstring", to = 1}
  output %z
  output %t
}
)";

TEST(GraphIr, PrintParsePrintIsExact) {
  auto g = parseGraph(kSample);
  const std::string printed = printGraph(*g, {-1});
  EXPECT_EQ(printed, kSample);
  auto again = parseGraph(printed);
  EXPECT_EQ(printGraph(*again, {-1}), printed);
  EXPECT_TRUE(verifyGraph(*g).empty());
}

TEST(GraphIr, ParsedStructure) {
  auto g = parseGraph(kSample);
  ASSERT_EQ(g->inputs.size(), 2u);
  EXPECT_EQ(g->inputs[1]->name(), "odd name");
  EXPECT_TRUE(g->inputs[0]->type.shape->at(0).isSymbolic());
  EXPECT_FALSE(g->inputs[1]->type.shape->at(1).isKnown());
  ASSERT_EQ(g->nodes().size(), 5u);
  const Node& conv = *g->nodes()[0];
  EXPECT_EQ(conv.opType(), "Conv");
  EXPECT_EQ(conv.inputs[2], nullptr);
  EXPECT_EQ(conv.attrInts("kernel_shape"), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(g->groups().size(), 1u);
  EXPECT_EQ(g->groupMembers(0).size(), 2u);
  const Value* w = g->findValue("w");
  ASSERT_TRUE(w && w->isConstant());
  EXPECT_FLOAT_EQ(w->constant().values<float>()[1], -2.5f);
  EXPECT_TRUE(std::isinf(w->constant().values<float>()[3]));
  EXPECT_FLOAT_EQ(g->findValue("h")->constant().elementAsDouble(0), 1.0);
  EXPECT_EQ(g->nodes()[4]->attrString("note", ""), "a \"quoted\"\nstring");
}

TEST(GraphIr, ElidedConstantsKeepTheirType) {
  auto g = parseGraph(kSample);
  const std::string brief = printGraph(*g, {4});
  EXPECT_NE(brief.find("const %w: f32[4,3,1,1] = elided  # 48 bytes"), std::string::npos);
  auto back = parseGraph(brief);
  EXPECT_TRUE(back->findValue("w")->constant().isElided());
  EXPECT_EQ(printGraph(*back, {4}), brief);
}

TEST(GraphIr, ParseErrorsNameLineAndColumn) {
  try {
    parseGraph("graph @g opset 17 {\n  %y: f32[1] = Relu(%nope)\n}\n", "bad.lir");
    FAIL() << "expected a parse error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("bad.lir"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("%nope"), std::string::npos);
  }
  EXPECT_THROW(parseGraph("graph @g opset 17 {\n  input %x: f99[1]\n}\n"), Error);
  EXPECT_THROW(parseGraph("graph @g opset 17 {\n  const %c: f32[3] = [1.0, 2.0]\n}\n"), Error);
  EXPECT_THROW(parseGraph("graph @g opset 17 {"), Error);
  EXPECT_THROW(parseGraph("graph @g opset 17 { input %x: f32[1]\n input %x: f32[1] }"), Error);
}

TEST(GraphIr, VerifierNamesNodeAndValue) {
  auto g = std::make_unique<Graph>();
  Value* x = g->addInput("x", TensorType::of(DType::F32, {2}));
  Node* relu = g->addNode("Relu", {x}, {"y"});
  relu->name = "relu1";
  Node* bad = g->addNode("Relu", {x, x}, {"z"}); // Relu takes one input
  bad->name = "relu2";
  Node* unknown = g->addNode("Frobnicate", {x}, {"q"});
  unknown->name = "frob";
  g->outputs = {relu->output(), bad->output(), unknown->output()};
  const auto issues = verifyGraph(*g);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].text(), "node 'relu2' (Relu): has 2 inputs; Relu takes 1");
  EXPECT_EQ(issues[1].text(), "node 'frob' (Frobnicate): unknown op 'Frobnicate'");
}

TEST(GraphIr, VerifierCatchesUseBeforeDefinition) {
  auto g = parseGraph(R"(graph @g opset 17 {
  input %x: f32[2]
  %a: f32[2] = Relu(%x) @first
  %b: f32[2] = Neg(%a) @second
  output %b
})");
  ASSERT_TRUE(verifyGraph(*g).empty());
  // Swap the nodes by sorting a broken order: build it by hand instead.
  auto h = std::make_unique<Graph>();
  Value* x = h->addInput("x", TensorType::of(DType::F32, {2}));
  Node* first = h->addNode("Relu", {x}, {"a"});
  Node* second = h->insertNodeBefore(first, "Neg", {first->output()}, {"b"});
  second->name = "second";
  h->outputs = {second->output()};
  const auto issues = verifyGraph(*h);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].text(),
            "node 'second' (Neg): value %a: used before it is defined (or never defined)");
  ASSERT_TRUE(h->sortTopologically());
  EXPECT_TRUE(verifyGraph(*h).empty());
}

TEST(GraphIr, CloneSharesWeightsOrElidesThem) {
  auto g = parseGraph(kSample);
  auto c = g->clone();
  EXPECT_EQ(printGraph(*c, {-1}), printGraph(*g, {-1}));
  EXPECT_EQ(c->findValue("w")->constant().data(), g->findValue("w")->constant().data());
  auto light = g->clone(4);
  EXPECT_TRUE(light->findValue("w")->constant().isElided());
  EXPECT_FALSE(light->findValue("flag")->constant().isElided());
}

TEST(GraphIr, RemovingNodesPrunesValues) {
  auto g = parseGraph(kSample);
  const std::size_t before = g->values().size();
  Node* cast = g->nodes().back().get();
  g->outputs.pop_back();
  g->removeNodes({cast});
  EXPECT_EQ(g->findValue("t"), nullptr);
  // %t goes, and so do the constants nothing reads (%flag, %h).
  EXPECT_EQ(g->values().size(), before - 3);
  EXPECT_EQ(g->findValue("flag"), nullptr);
  EXPECT_TRUE(verifyGraph(*g).empty());
}

} // namespace
} // namespace lathe::graph

TEST(GraphIr, AxesCountFromTheEndAndAScalarHasNone) {
  auto g = std::make_unique<lathe::graph::Graph>();
  lathe::graph::Value* x =
      g->addInput("x", lathe::graph::TensorType::of(lathe::graph::DType::F32, {2, 3}));
  lathe::graph::Node* softmax = g->addNode("Softmax", {x}, {"y"});
  softmax->name = "sm";
  EXPECT_EQ(lathe::graph::normalizeAxis(*softmax, -1, 2), 1);
  EXPECT_EQ(lathe::graph::normalizeAxis(*softmax, 0, 2), 0);
  EXPECT_EQ(lathe::graph::normalizeAxis(*softmax, -2, 2), 0);
  for (const auto& [axis, rank] : {std::pair{2, 2}, {-3, 2}, {0, 0}, {-1, 0}}) {
    try {
      lathe::graph::normalizeAxis(*softmax, axis, rank);
      ADD_FAILURE() << "axis " << axis << " accepted for rank " << rank;
    } catch (const lathe::Error& e) {
      EXPECT_EQ(e.where().node, "sm");
      EXPECT_NE(std::string(e.what()).find("out of range for rank " + std::to_string(rank)),
                std::string::npos)
          << e.what();
    }
  }
}
