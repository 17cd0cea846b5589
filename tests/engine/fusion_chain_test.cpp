// Long chains of fused elementwise ops. Most of these ops read their operand more than once
// (Relu is select(x > 0, x, 0)); the kernel must bind such a value once instead of copying it
// into every use, or the expression doubles with every node (22 Relus took 23 s and 3.7 GB to
// compile). The size of the kernel must grow linearly with the chain, and a 1,000-node chain must
// compile and compute what the ops compute.
#include "engine/driver/compile_model.h"
#include "engine/graph/parser.h"
#include "engine/graph_passes/fuse_elementwise.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/target/target.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace lathe {
namespace {

constexpr int kRows = 4, kCols = 64;

// One step of the chain: the node's text (the operand is %IN) and what it computes. The cycle
// keeps the inputs apart, so that no fixed point of the chain hides a wrong result: the
// LeakyRelus and the Neg flip each value's sign and scale it by 1/2 or 2 (two cycles give the
// value back), the shift by 16 gives the Relu positive values, and the Clip bounds lie
// outside the values.
struct ChainStep {
  const char* node;
  float (*compute)(float);
};

const ChainStep kCycle[] = {
    {"Add(%IN, %shift)", [](float x) { return x + 16.0f; }},
    {"Relu(%IN)", [](float x) { return x > 0 ? x : 0.0f; }},
    {"Sub(%IN, %shift)", [](float x) { return x - 16.0f; }},
    {"LeakyRelu(%IN) {alpha = 0.5}", [](float x) { return x >= 0 ? x : x * 0.5f; }},
    {"Neg(%IN)", [](float x) { return -x; }},
    {"LeakyRelu(%IN) {alpha = 2.0}", [](float x) { return x >= 0 ? x : x * 2.0f; }},
    {"Clip(%IN, %lo, %hi)", [](float x) { return x < -8.0f  ? -8.0f
                                                 : x > 8.0f ? 8.0f
                                                            : x; }},
};
constexpr int kCycleLength = sizeof(kCycle) / sizeof(kCycle[0]);

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

// `length` steps of the cycle, then a Sigmoid, as graph IR text.
std::string chainModel(int length) {
  const std::string type = "f32[" + std::to_string(kRows) + "," + std::to_string(kCols) + "]";
  std::string text = "graph @chain opset 17 {\n  input %x: " + type +
                     "\n  const %lo: f32[] = [-8.0]\n  const %hi: f32[] = [8.0]\n"
                     "  const %shift: f32[] = [16.0]\n";
  std::string in = "x";
  for (int i = 0; i <= length; ++i) {
    std::string node = i < length ? kCycle[i % kCycleLength].node : "Sigmoid(%IN)";
    node.replace(node.find("IN"), 2, in);
    const std::string out = i < length ? "v" + std::to_string(i) : "y";
    text += "  %" + out + ": " + type + " = " + node + "\n";
    in = out;
  }
  return text + "  output %y\n}\n";
}

// Every expression and statement node of the kernel body, counted as a tree.
class TreeSize : public loop::IRVisitor {
public:
  long nodes = 0;

protected:
#define LATHE_COUNT(Kind, Node)                                                                    \
  void visit##Kind(const loop::Node* op) override {                                                \
    ++nodes;                                                                                       \
    IRVisitor::visit##Kind(op);                                                                    \
  }
  LATHE_COUNT(IntImm, IntImm)
  LATHE_COUNT(FloatImm, FloatImm)
  LATHE_COUNT(Var, Var)
  LATHE_COUNT(Binary, BinaryExprNode)
  LATHE_COUNT(Not, Not)
  LATHE_COUNT(Select, Select)
  LATHE_COUNT(Cast, Cast)
  LATHE_COUNT(Load, Load)
  LATHE_COUNT(Ramp, Ramp)
  LATHE_COUNT(Broadcast, Broadcast)
  LATHE_COUNT(Call, Call)
  LATHE_COUNT(Let, Let)
  LATHE_COUNT(For, For)
  LATHE_COUNT(Store, Store)
  LATHE_COUNT(Allocate, Allocate)
  LATHE_COUNT(Block, Block)
  LATHE_COUNT(IfThenElse, IfThenElse)
  LATHE_COUNT(LetStmt, LetStmt)
  LATHE_COUNT(Evaluate, Evaluate)
#undef LATHE_COUNT
};

std::unique_ptr<graph::Graph> fusedChain(int length) {
  auto g = graph::parseGraph(chainModel(length), "chain.lir");
  EXPECT_TRUE(passes::fuseElementwise(*g));
  EXPECT_EQ(g->groups().size(), 1u);
  return g;
}

// The tree size of the one kernel of a fused chain of `length` steps.
long kernelSize(int length) {
  const lowering::LoweredModel lowered = lowering::lowerGraph(*fusedChain(length));
  EXPECT_EQ(lowered.kernels.size(), 1u);
  TreeSize size;
  size.visit(lowered.kernels.front().body);
  return size.nodes;
}

TEST(FusionChain, KernelSizeGrowsLinearly) {
  // Each cycle adds the same nodes; copying operands into their uses would multiply the size
  // by 72 per cycle instead.
  const long one = kernelSize(kCycleLength), two = kernelSize(2 * kCycleLength),
             three = kernelSize(3 * kCycleLength);
  EXPECT_EQ(three - two, two - one) << one << ", " << two << ", " << three;
  EXPECT_LT(two - one, 30 * kCycleLength) << one << ", " << two;
}

TEST(FusionChain, KernelNameStaysShort) {
  // The kernel name becomes file names (lathe compile --dump writes NAME.loop, NAME.opt.ll):
  // a long chain names its first ops and counts the rest.
  EXPECT_EQ(fusedChain(4)->groups()[0].name, "fused_add_relu_sub_leakyrelu_sigmoid_0");
  EXPECT_EQ(fusedChain(999)->groups()[0].name,
            "fused_add_relu_sub_leakyrelu_neg_leakyrelu_plus994_0");
}

TEST(FusionChain, ThousandNodesCompileAndCompute) {
  // Checked on short chains first, so that a blow-up fails here instead of running out of time.
  ASSERT_LT(kernelSize(3 * kCycleLength), 30 * 3 * kCycleLength);
  const int length = 999; // and the Sigmoid: 1,000 nodes
  const auto g = fusedChain(length);
  ASSERT_EQ(g->groups().size(), 1u);
  driver::CompileSettings settings;
  settings.threads = 1;
  settings.foldConstants = false;
  const auto compiled = driver::compileModel(*g, settings).compiled;
  ASSERT_EQ(compiled->lowered->kernels.size(), 1u);
  TreeSize size;
  size.visit(compiled->lowered->kernels.front().body);
  EXPECT_LT(size.nodes, 30L * (length + 1));

  runtime::Tensor x = runtime::Tensor::allocate(runtime::ElementType::F32, {kRows, kCols});
  std::vector<float> expected;
  for (int i = 0; i < kRows * kCols; ++i) {
    float v = -3.0f + 6.0f * static_cast<float>(i) / (kRows * kCols - 1);
    x.data<float>()[i] = v;
    for (int k = 0; k < length; ++k)
      v = kCycle[k % kCycleLength].compute(v);
    expected.push_back(sigmoid(v));
  }
  std::vector<runtime::Tensor> inputs;
  inputs.push_back(std::move(x));
  const std::vector<runtime::Tensor> outputs = compiled->executor->run(inputs);
  ASSERT_EQ(outputs.size(), 1u);
  const auto y = outputs[0].values<float>();
  ASSERT_EQ(y.size(), expected.size());
  for (std::size_t i = 0; i < y.size(); ++i)
    EXPECT_NEAR(y[i], expected[i], 1e-5f) << "element " << i;
  // The chain keeps the inputs apart: the outputs are not one fixed point.
  EXPECT_GT(*std::max_element(y.begin(), y.end()) - *std::min_element(y.begin(), y.end()), 0.5f);
}

} // namespace
} // namespace lathe
