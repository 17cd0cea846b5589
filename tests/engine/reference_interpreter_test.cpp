// Lathe's reference interpreter (engine/reference): small graphs whose results can be worked
// out by hand, the ONNX corner cases the kernels must get right (padding, ceil mode, groups,
// broadcasting), and the way it stops at a node it cannot evaluate.
#include "engine/graph/parser.h"
#include "engine/reference/onnxruntime_reference.h"
#include "engine/reference/reference_interpreter.h"
#include "engine/support/diagnostics.h"

#include <atomic>
#include <cmath>
#include <gtest/gtest.h>

namespace lathe {
namespace {

using graph::TensorData;

TensorData f32(std::vector<std::int64_t> dims, std::vector<float> values) {
  return TensorData::fromValues(graph::DType::F32, std::move(dims), values);
}

std::vector<double> valuesOf(const reference::Interpretation& run, const std::string& name) {
  const auto it = run.values.find(name);
  if (it == run.values.end()) {
    ADD_FAILURE() << "no value " << name;
    return {};
  }
  std::vector<double> out;
  for (std::int64_t i = 0; i < it->second.numElements(); ++i)
    out.push_back(it->second.elementAsDouble(i));
  return out;
}

reference::Interpretation interpret(const std::string& ir, const std::string& input,
                                    TensorData data) {
  const auto g = graph::parseGraph(ir);
  return reference::interpretGraph(*g, {{input, std::move(data)}});
}

// 1..9 in a 3x3 plane.
TensorData plane3x3() {
  return f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST(ReferenceInterpreter, ConvWithPaddingAndStride) {
  // The weight adds a pixel and its lower-right neighbour.
  const auto run = interpret(R"(graph @g opset 17 {
  input %x: f32[1,1,3,3]
  const %w: f32[1,1,2,2] = [1, 0, 0, 1]
  %plain: f32[1,1,2,2] = Conv(%x, %w) @plain
  %strided: f32[1,1,2,2] = Conv(%x, %w) {pads = [1, 1, 1, 1], strides = [2, 2]} @strided
  %same: f32[1,1,3,3] = Conv(%x, %w) {auto_pad = "SAME_UPPER"} @same
  output %plain
  output %strided
  output %same
})",
                             "x", plane3x3());
  ASSERT_TRUE(run.complete) << run.stopReason;
  EXPECT_EQ(valuesOf(run, "plain"), (std::vector<double>{6, 8, 12, 14}));
  // Windows start at -1 and 1: only one tap of the first row and column is inside.
  EXPECT_EQ(valuesOf(run, "strided"), (std::vector<double>{1, 3, 7, 14}));
  // SAME_UPPER pads the odd pixel at the end.
  EXPECT_EQ(valuesOf(run, "same"), (std::vector<double>{6, 8, 3, 12, 14, 6, 7, 8, 9}));
}

TEST(ReferenceInterpreter, GroupedConvWithBias) {
  const auto run = interpret(R"(graph @g opset 17 {
  input %x: f32[1,2,1,2]
  const %w: f32[2,1,1,1] = [2, 3]
  const %b: f32[2] = [10, 20]
  %y: f32[1,2,1,2] = Conv(%x, %w, %b) {group = 2} @conv
  output %y
})",
                             "x", f32({1, 2, 1, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(valuesOf(run, "y"), (std::vector<double>{12, 14, 29, 32}));
}

TEST(ReferenceInterpreter, PoolingCeilModeAndPadCounting) {
  const auto run = interpret(R"(graph @g opset 17 {
  input %x: f32[1,1,1,5]
  %max: f32[1,1,1,3] = MaxPool(%x) {ceil_mode = 1, kernel_shape = [1, 2], strides = [1, 2]} @max
  %avg: f32[1,1,1,3] = AveragePool(%x) {kernel_shape = [1, 2], pads = [0, 1, 0, 0], strides = [1, 2]} @avg
  %avgPad: f32[1,1,1,3] = AveragePool(%x) {count_include_pad = 1, kernel_shape = [1, 2], pads = [0, 1, 0, 0], strides = [1, 2]} @avg_pad
  %mean: f32[1,1,1,1] = GlobalAveragePool(%x) @mean
  output %max
  output %avg
  output %avgPad
  output %mean
})",
                             "x", f32({1, 1, 1, 5}, {1, 5, 2, 4, 3}));
  ASSERT_TRUE(run.complete) << run.stopReason;
  // The last window holds only the fifth element.
  EXPECT_EQ(valuesOf(run, "max"), (std::vector<double>{5, 4, 3}));
  // The first window is [pad, 1]: divided by 1, or by 2 when the pad counts.
  EXPECT_EQ(valuesOf(run, "avg"), (std::vector<double>{1, 3.5, 3.5}));
  EXPECT_EQ(valuesOf(run, "avgPad"), (std::vector<double>{0.5, 3.5, 3.5}));
  EXPECT_EQ(valuesOf(run, "mean"), (std::vector<double>{3}));
}

TEST(ReferenceInterpreter, MatMulBroadcastsAndGemmTransposes) {
  const auto run = interpret(R"(graph @g opset 17 {
  input %a: f32[2,1,1,2]
  const %b: f32[3,2,1] = [1, 1, 2, 0, 0, 3]
  %p: f32[2,3,1,1] = MatMul(%a, %b) @matmul
  const %m: f32[2,2] = [1, 2, 3, 4]
  const %c: f32[2] = [100, 200]
  %g: f32[2,2] = Gemm(%m, %m, %c) {alpha = 2.0, transB = 1} @gemm
  output %p
  output %g
})",
                             "a", f32({2, 1, 1, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(run.complete) << run.stopReason;
  // Batch [2] against [3]: every row of a times every column of b.
  EXPECT_EQ(valuesOf(run, "p"), (std::vector<double>{3, 2, 6, 7, 6, 12}));
  // 2 * m m^T + c: m m^T = [[5, 11], [11, 25]].
  EXPECT_EQ(valuesOf(run, "g"), (std::vector<double>{110, 222, 122, 250}));
}

TEST(ReferenceInterpreter, SoftmaxAndLayerNormalization) {
  const auto run = interpret(R"(graph @g opset 17 {
  input %x: f32[1,4]
  %s: f32[1,4] = Softmax(%x) @softmax
  const %scale: f32[4] = [1, 1, 2, 2]
  %n: f32[1,4] = LayerNormalization(%x, %scale) {epsilon = 0.0} @ln
  output %s
  output %n
})",
                             "x", f32({1, 4}, {1, 2, 3, 4}));
  ASSERT_TRUE(run.complete) << run.stopReason;
  const std::vector<double> s = valuesOf(run, "s"), n = valuesOf(run, "n");
  const double sum = std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0);
  const double sd = std::sqrt(1.25); // population deviation of 1, 2, 3, 4 around 2.5
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(s[i], std::exp(i + 1.0) / sum, 1e-7);
    EXPECT_NEAR(n[i], (i + 1 - 2.5) / sd * (i < 2 ? 1 : 2), 1e-6);
  }
}

TEST(ReferenceInterpreter, StopsAtTheFirstNodeItCannotEvaluate) {
  const auto run = interpret(R"(graph @g opset 17 {
  input %x: f32[4]
  const %ratio: f32[] = [0.5]
  const %train: bool[] = [true]
  %a: f32[4] = Relu(%x) @before
  %b: f32[4] = Dropout(%a, %ratio, %train) @dropout
  %c: f32[4] = Neg(%b) @after
  output %c
})",
                             "x", f32({4}, {-1, 0, 1, 2}));
  EXPECT_FALSE(run.complete);
  EXPECT_EQ(run.stoppedNode, "dropout");
  EXPECT_EQ(run.stoppedOp, "Dropout");
  EXPECT_NE(run.stopReason.find("training"), std::string::npos) << run.stopReason;
  EXPECT_EQ(valuesOf(run, "a"), (std::vector<double>{0, 0, 1, 2}));
  EXPECT_EQ(run.values.count("b"), 0u);
  EXPECT_EQ(run.values.count("c"), 0u);
}

// Loop: acc += x * i for i = 0, 1, 2 with the sums of each iteration stacked; the body
// reads x from the enclosing graph (a capture).
TEST(ReferenceInterpreter, LoopRunsItsBodyPerIteration) {
  const auto run = interpret(R"(graph @g opset 17 {
  input %x: f32[2]
  const %trips: i64[] = [3]
  const %go: bool[] = [true]
  const %zero: f32[2] = [0, 0]
  %acc: f32[2], %history: f32[3,2] = Loop(%trips, %go, %zero, %x) {body = graph @body {
    input %i: i64[]
    input %c: bool[]
    input %a: f32[2]
    capture %x: f32[2]
    %c2: bool[] = Identity(%c) @keep
    %fi: f32[] = Cast(%i) {to = 1} @cast
    %step: f32[2] = Mul(%x, %fi) @mul
    %a2: f32[2] = Add(%a, %step) @add
    %s: f32[2] = Identity(%a2) @scan
    output %c2
    output %a2
    output %s
  }, captures = ["x"]} @loop
  output %acc
  output %history
})",
                             "x", f32({2}, {1, 10}));
  ASSERT_TRUE(run.complete) << run.stopReason;
  EXPECT_EQ(valuesOf(run, "acc"), (std::vector<double>{3, 30}));
  EXPECT_EQ(valuesOf(run, "history"), (std::vector<double>{0, 0, 1, 10, 3, 30}));
}

// If: the branch the condition picks, reading a constant of the enclosing graph.
TEST(ReferenceInterpreter, IfRunsTheBranchItsConditionPicks) {
  const std::string ir = R"(graph @g opset 17 {
  input %c: bool[]
  const %k: f32[2] = [2, 3]
  %y: f32[2] = If(%c, %k) {then_branch = graph @then {
    capture %k: f32[2]
    %t: f32[2] = Neg(%k) @neg
    output %t
  }, else_branch = graph @else {
    capture %k: f32[2]
    %e: f32[2] = Mul(%k, %k) @square
    output %e
  }, captures = ["k"]} @if
  output %y
})";
  const auto yes = interpret(
      ir, "c", TensorData::fromValues(graph::DType::Bool, {}, std::vector<std::uint8_t>{1}));
  ASSERT_TRUE(yes.complete) << yes.stopReason;
  EXPECT_EQ(valuesOf(yes, "y"), (std::vector<double>{-2, -3}));
  const auto no = interpret(
      ir, "c", TensorData::fromValues(graph::DType::Bool, {}, std::vector<std::uint8_t>{0}));
  ASSERT_TRUE(no.complete) << no.stopReason;
  EXPECT_EQ(valuesOf(no, "y"), (std::vector<double>{4, 9}));
}

TEST(ReferenceInterpreter, PadModes) {
  const auto padded = [](const std::string& mode) {
    return interpret(R"(graph @g opset 17 {
  input %x: f32[1,3]
  const %pads: i64[4] = [0, 2, 0, 1]
  const %value: f32[] = [9]
  %y: f32[1,6] = Pad(%x, %pads, %value) {mode = ")" +
                         mode + R"("} @pad
  output %y
})",
                     "x", f32({1, 3}, {1, 2, 3}));
  };
  EXPECT_EQ(valuesOf(padded("constant"), "y"), (std::vector<double>{9, 9, 1, 2, 3, 9}));
  EXPECT_EQ(valuesOf(padded("edge"), "y"), (std::vector<double>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(valuesOf(padded("reflect"), "y"), (std::vector<double>{3, 2, 1, 2, 3, 2}));
}

// One step of a one-unit LSTM with zero weights: the gates are the sigmoids and tanh of
// the biases alone, so the result has a closed form.
TEST(ReferenceInterpreter, LstmStepFromBiases) {
  const auto run = interpret(R"(graph @g opset 17 {
  input %x: f32[1,1,1]
  const %w: f32[1,4,1] = [0, 0, 0, 0]
  const %r: f32[1,4,1] = [0, 0, 0, 0]
  const %b: f32[1,8] = [0.5, -1, 2, 0.25, 0, 0, 0, 0]
  %y: f32[1,1,1,1], %h: f32[1,1,1], %c: f32[1,1,1] = LSTM(%x, %w, %r, %b) {hidden_size = 1} @lstm
  output %y
  output %h
  output %c
})",
                             "x", f32({1, 1, 1}, {7}));
  ASSERT_TRUE(run.complete) << run.stopReason;
  const auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  // Gates in ONNX order i, o, f, c; the cell starts at 0, so f does not matter.
  const double c = sigmoid(0.5) * std::tanh(0.25);
  const double h = sigmoid(-1) * std::tanh(c);
  EXPECT_NEAR(valuesOf(run, "c")[0], c, 1e-6);
  EXPECT_NEAR(valuesOf(run, "h")[0], h, 1e-6);
  EXPECT_NEAR(valuesOf(run, "y")[0], h, 1e-6);
}

TEST(ReferenceInterpreter, ResizeLinearAndNearest) {
  const auto resized = [](const std::string& attributes) {
    return interpret(R"(graph @g opset 17 {
  input %x: f32[1,1,1,2]
  const %sizes: i64[4] = [1, 1, 1, 4]
  %y: f32[1,1,1,4] = Resize(%x, _, _, %sizes) {)" +
                         attributes + R"(} @resize
  output %y
})",
                     "x", f32({1, 1, 1, 2}, {0, 3}));
  };
  // align_corners: x = o * (2 - 1) / (4 - 1).
  EXPECT_EQ(
      valuesOf(resized(R"(mode = "linear", coordinate_transformation_mode = "align_corners")"),
               "y"),
      (std::vector<double>{0, 1, 2, 3}));
  // half_pixel: x = (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, clamped at the edges.
  EXPECT_EQ(valuesOf(resized(R"(mode = "linear")"), "y"), (std::vector<double>{0, 0.75, 2.25, 3}));
  // nearest, asymmetric, floor: x = o / 2.
  EXPECT_EQ(
      valuesOf(resized(R"(coordinate_transformation_mode = "asymmetric", nearest_mode = "floor")"),
               "y"),
      (std::vector<double>{0, 0, 3, 3}));
}

TEST(ReferenceInterpreter, TopKPrefersTheLowerIndexOnTies) {
  const auto run = interpret(R"(graph @g opset 17 {
  input %x: f32[5]
  const %k: i64[1] = [3]
  %v: f32[3], %i: i64[3] = TopK(%x, %k) @topk
  output %v
  output %i
})",
                             "x", f32({5}, {1, 4, 2, 4, 3}));
  ASSERT_TRUE(run.complete) << run.stopReason;
  EXPECT_EQ(valuesOf(run, "v"), (std::vector<double>{4, 4, 3}));
  EXPECT_EQ(valuesOf(run, "i"), (std::vector<double>{1, 3, 4}));
}

TEST(ReferenceInterpreter, StopsWhenCancelled) {
  const auto g = graph::parseGraph(R"(graph @g opset 17 {
  input %x: f32[4]
  %y: f32[4] = Relu(%x) @relu
  output %y
})");
  const std::atomic<bool> cancel{true};
  try {
    reference::interpretGraph(*g, {{"x", f32({4}, {1, 2, 3, 4})}}, &cancel);
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Cancelled);
  }
}

// Cancel kills the node process that runs ONNX Runtime: the call ends as cancelled, not
// with ONNX Runtime's result (node takes far longer to start than the first check).
TEST(OnnxRuntimeReference, CancelKillsTheProcess) {
  if (!reference::hasOnnxRuntimeNode(LATHE_NODE_MODULES))
    GTEST_SKIP() << "onnxruntime-node is not installed";
  const std::atomic<bool> cancel{true};
  runtime::Tensor x = runtime::Tensor::allocate(runtime::ElementType::F32, {1, 3, 8, 8});
  const runtime::NamedTensor inputs[] = {{"x", x.view()}};
  try {
    reference::runOnnxRuntime(std::string(LATHE_MODEL_DIR) + "/conv_bn_relu.onnx", {}, inputs,
                              {LATHE_NODE_MODULES, 1, &cancel});
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Cancelled) << e.what();
  }
}

TEST(ReferenceInterpreter, AMissingInputIsAnError) {
  const auto g = graph::parseGraph(R"(graph @g opset 17 {
  input %x: f32[4]
  %y: f32[4] = Relu(%x) @relu
  output %y
})");
  EXPECT_THROW(reference::interpretGraph(*g, {}), Error);
}

} // namespace
} // namespace lathe
