// TFLite import on the models of tests/models/gen_tflite.py: the graph keeps the file's
// names, NHWC edges and declared shapes; quantized layers keep their integer ops; malformed
// files are refused with the file, the operator and the reason. (Numbers are checked against
// ONNX Runtime by tests/oracle/tflite_twins.py.)
#include "engine/frontend/model_format.h"
#include "engine/frontend/tflite/tflite_importer.h"
#include "engine/graph/parser.h"
#include "engine/graph/printer.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <gtest/gtest.h>

namespace lathe {
namespace {

std::string model(const std::string& name) {
  return std::string(LATHE_MODEL_DIR) + "/tflite/" + name;
}

std::size_t countOps(const graph::Graph& g, const std::string& op) {
  return static_cast<std::size_t>(std::count_if(g.nodes().begin(), g.nodes().end(),
                                                [&](const auto& n) { return n->opType() == op; }));
}

Error importError(const std::string& name) {
  try {
    frontend::importModelFile(model(name));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << name << " imported although it is malformed";
  return Error(ErrorKind::Internal, "no error");
}

TEST(TfliteImport, FloatCnnKeepsNamesLayoutAndShapes) {
  frontend::ImportResult r = frontend::importModelFile(model("tfl_cnn.tflite"));
  EXPECT_EQ(r.format, frontend::ModelFormat::Tflite);
  const graph::Graph& g = *r.graph;
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0]->name(), "image");
  EXPECT_EQ(graph::toString(g.inputs[0]->type), "f32[1,16,16,3]");
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.outputs[0]->name(), "logits");
  EXPECT_EQ(g.outputs[1]->name(), "probs");
  EXPECT_EQ(graph::toString(g.outputs[1]->type), "f32[1,10]");
  EXPECT_EQ(countOps(g, "Conv"), 4u); // three convolutions and the depthwise one
  EXPECT_EQ(countOps(g, "MatMul"), 1u);
  EXPECT_EQ(countOps(g, "QLinearConv"), 0u);
  // The depthwise layer: group = input channels, weights [C*m, 1, kh, kw].
  const graph::Value* dw = g.findValue("dw1");
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(graph::toString(dw->type), "f32[1,8,8,16]");
  // Every tensor the file names keeps its name and declared shape.
  EXPECT_EQ(graph::toString(g.findValue("padded")->type), "f32[1,6,6,32]");
  // The graph prints and parses back.
  const std::string text = graph::printGraph(g);
  EXPECT_EQ(graph::printGraph(*graph::parseGraph(text)), text);
}

TEST(TfliteImport, Int8CnnKeepsIntegerLayers) {
  frontend::ImportResult r = frontend::importTfliteFile(model("tfl_cnn_int8.tflite"));
  const graph::Graph& g = *r.graph;
  EXPECT_EQ(countOps(g, "QLinearConv"), 4u);
  EXPECT_EQ(countOps(g, "MatMulInteger"), 1u);
  EXPECT_EQ(countOps(g, "Conv"), 0u);
  EXPECT_EQ(graph::toString(g.findValue("conv1")->type), "i8[1,16,16,8]");
  EXPECT_EQ(graph::toString(g.outputs[0]->type), "f32[1,10]");
  // The padding of a quantized PAD is the zero point's code, on the integers.
  const graph::Value* padded = g.findValue("padded");
  ASSERT_NE(padded, nullptr);
  EXPECT_EQ(padded->producer()->opType(), "Pad");
  EXPECT_EQ(graph::toString(padded->type), "i8[1,6,6,32]");
}

TEST(TfliteImport, MiscOperators) {
  frontend::ImportResult r = frontend::importTfliteFile(model("tfl_misc.tflite"));
  const graph::Graph& g = *r.graph;
  ASSERT_EQ(g.outputs.size(), 13u);
  EXPECT_EQ(graph::toString(g.findValue("sliced")->type), "f32[2,3,3]");
  EXPECT_EQ(graph::toString(g.findValue("resized_half")->type), "f32[2,9,7,2]");
  EXPECT_EQ(graph::toString(g.findValue("pair")->type), "f32[2,3,2]");
  EXPECT_EQ(countOps(g, "Resize"), 5u);
  EXPECT_EQ(graph::toString(g.findValue("nearest_half")->type), "f32[2,8,8,2]");
  EXPECT_EQ(countOps(g, "Erf"), 1u); // GELU, exact
}

// Each operator of the file is recorded with the nodes it became, for the graph as authored.
TEST(TfliteImport, OperatorsAreRecordedAsAuthored) {
  frontend::ImportResult r = frontend::importModelFile(model("tfl_cnn.tflite"));
  const std::vector<std::string> expected{
      "CONV_2D",     "DEPTHWISE_CONV_2D", "CONV_2D",       "ADD", "HARD_SWISH",
      "MAX_POOL_2D", "AVERAGE_POOL_2D",   "CONCATENATION", "PAD", "CONV_2D",
      "MEAN",        "FULLY_CONNECTED",   "SOFTMAX"};
  ASSERT_EQ(r.authored.size(), expected.size());
  std::vector<int> owners(r.graph->nodes().size(), 0);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const frontend::AuthoredOp& op = r.authored[i];
    EXPECT_EQ(op.opType, expected[i]);
    EXPECT_EQ(op.location, "operator " + std::to_string(i));
    EXPECT_FALSE(op.nodes.empty()) << op.opType;
    for (std::size_t n : op.nodes)
      ++owners.at(n);
  }
  // Every node of the graph came from exactly one operator.
  for (std::size_t n = 0; n < owners.size(); ++n)
    EXPECT_EQ(owners[n], 1) << r.graph->nodes()[n]->describe();
  auto option = [&](std::size_t op, const std::string& key) {
    for (const auto& [k, v] : r.authored[op].attributes)
      if (k == key)
        return v;
    return std::string("(absent)");
  };
  EXPECT_EQ(r.authored[0].name, "conv1");
  EXPECT_EQ(option(0, "padding"), "SAME"); // the default: the file leaves it out
  EXPECT_EQ(option(0, "fused_activation_function"), "RELU6");
  EXPECT_EQ(option(0, "dilation_w_factor"), "1");
  EXPECT_EQ(option(1, "stride_w"), "2");
  EXPECT_EQ(option(2, "padding"), "VALID");
  EXPECT_EQ(option(12, "beta"), "1");
  // The first convolution became NHWC -> NCHW, Conv, clamp, back.
  std::string chain;
  for (std::size_t n : r.authored[0].nodes)
    chain += r.graph->nodes()[n]->opType() + " ";
  EXPECT_NE(chain.find("Transpose Conv"), std::string::npos) << chain;
}

// Transposed convolutions (builtin and MediaPipe's custom one), splits, mirrored padding and
// casts: every shape the file declares is reproduced (the values: tests/oracle).
TEST(TfliteImport, MoreOperators) {
  frontend::ImportResult r = frontend::importModelFile(model("tfl_more.tflite"));
  const graph::Graph& g = *r.graph;
  EXPECT_EQ(countOps(g, "ConvTranspose"), 4u);
  EXPECT_EQ(graph::toString(g.findValue("tconv_valid")->type), "f32[1,14,10,2]");
  EXPECT_EQ(graph::toString(g.findValue("tconv_bias")->type), "f32[1,12,10,1]");
  EXPECT_EQ(graph::toString(g.findValue("splitv_1")->type), "f32[1,3,5,3]");
  EXPECT_EQ(graph::toString(g.findValue("mirror_symmetric")->type), "f32[1,10,10,3]");
  EXPECT_EQ(graph::toString(g.findValue("best_f")->type), "f32[1,6,5]");
  EXPECT_EQ(r.authored.back().opType, "Convolution2DTransposeBias");
}

// Subgraph 0 is the model; a second one that nothing calls does not stop the import.
TEST(TfliteImport, UncalledSubgraphsAreLeftAlone) {
  frontend::ImportResult r = frontend::importModelFile(model("tfl_two_subgraphs.tflite"));
  EXPECT_EQ(countOps(*r.graph, "Relu"), 1u);
}

TEST(TfliteImport, FormatIsReadFromContents) {
  EXPECT_EQ(frontend::detectModelFormat(model("tfl_cnn.tflite")), frontend::ModelFormat::Tflite);
  EXPECT_EQ(frontend::detectModelFormat(model("tfl_cnn.onnx")), frontend::ModelFormat::Onnx);
  EXPECT_EQ(frontend::detectModelFormat(model("tfl_bad_identifier.tflite")),
            frontend::ModelFormat::Onnx);
}

TEST(TfliteImport, MalformedFilesAreRefusedWithFileOperatorAndReason) {
  struct Case {
    const char* file;
    ErrorKind kind;
    const char* reason;
    const char* op;
  };
  for (const Case& c :
       {Case{"tfl_bad_truncated.tflite", ErrorKind::Invalid, "corrupt", ""},
        Case{"tfl_bad_offsets.tflite", ErrorKind::Invalid, "corrupt", ""},
        Case{"tfl_bad_unsupported_op.tflite", ErrorKind::Unsupported,
             "LSH_PROJECTION is not supported", "LSH_PROJECTION"},
        Case{"tfl_bad_custom_op.tflite", ErrorKind::Unsupported, "custom operator 'MyFancyOp'",
             "CUSTOM"},
        Case{"tfl_bad_tensor_index.tflite", ErrorKind::Invalid, "refers to tensor 99", ""},
        Case{"tfl_bad_while.tflite", ErrorKind::Unsupported,
             "WHILE runs another subgraph (control flow)", "WHILE"},
        Case{"tfl_bad_custom_options.tflite", ErrorKind::Invalid,
             "4 bytes of custom options; it needs padding and two strides",
             "Convolution2DTransposeBias"}}) {
    const Error e = importError(c.file);
    EXPECT_EQ(e.kind(), c.kind) << c.file;
    EXPECT_NE(e.reason().find(c.reason), std::string::npos) << c.file << ": " << e.reason();
    EXPECT_NE(e.where().file.find(c.file), std::string::npos) << c.file;
    EXPECT_EQ(e.where().op, c.op) << c.file;
  }
}

TEST(TfliteImport, SupportedOperatorsAreListed) {
  const std::vector<std::string> ops = frontend::supportedTfliteOperators();
  for (const char* op : {"CONV_2D",
                         "DEPTHWISE_CONV_2D",
                         "FULLY_CONNECTED",
                         "ADD",
                         "MUL",
                         "SUB",
                         "AVERAGE_POOL_2D",
                         "MAX_POOL_2D",
                         "RESHAPE",
                         "SOFTMAX",
                         "CONCATENATION",
                         "MEAN",
                         "PAD",
                         "RELU",
                         "RELU6",
                         "LOGISTIC",
                         "TANH",
                         "HARD_SWISH",
                         "QUANTIZE",
                         "DEQUANTIZE",
                         "TRANSPOSE",
                         "RESIZE_BILINEAR",
                         "STRIDED_SLICE",
                         "BATCH_MATMUL",
                         "RESIZE_NEAREST_NEIGHBOR",
                         "GELU",
                         "TRANSPOSE_CONV",
                         "SPLIT",
                         "SPLIT_V",
                         "MIRROR_PAD",
                         "CAST",
                         "Convolution2DTransposeBias (custom)"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

} // namespace
} // namespace lathe
