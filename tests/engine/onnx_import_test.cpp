// ONNX import on the project's generated models: good models import and round-trip through
// the printer; bad ones fail with a message naming the file, node and reason.
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/graph/parser.h"
#include "engine/graph/printer.h"
#include "engine/graph/verifier.h"
#include "engine/support/diagnostics.h"

#include <filesystem>
#include <gtest/gtest.h>

namespace lathe {
namespace {

std::string model(const std::string& name) {
  return std::string(LATHE_MODEL_DIR) + "/" + name;
}

frontend::ImportResult importModel(const std::string& name) {
  return frontend::importOnnxFile(model(name));
}

// Imports `name` expecting failure; returns the error.
Error importError(const std::string& name) {
  try {
    frontend::importOnnxFile(model(name));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << name << " imported although it is bad";
  return Error(ErrorKind::Internal, "no error");
}

void expectContains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

class GoodModel : public ::testing::TestWithParam<const char*> {};

TEST_P(GoodModel, ImportsVerifiesAndRoundTrips) {
  auto r = importModel(GetParam());
  ASSERT_TRUE(r.graph);
  EXPECT_TRUE(graph::verifyGraph(*r.graph).empty());
  const std::string text = graph::printGraph(*r.graph, {-1});
  auto parsed = graph::parseGraph(text, GetParam());
  EXPECT_EQ(graph::printGraph(*parsed, {-1}), text);
}

INSTANTIATE_TEST_SUITE_P(Models, GoodModel,
                         ::testing::Values("sample_cnn.onnx", "conv_bn_relu.onnx", "gemm_bn.onnx",
                                           "shape_chain.onnx", "residual_add.onnx",
                                           "old_opset7.onnx", "symbolic_batch.onnx",
                                           "if_subgraph.onnx", "loop_subgraph.onnx",
                                           "external_data/model.onnx"));

TEST(OnnxImport, TopologyOfTheSample) {
  auto r = importModel("sample_cnn.onnx");
  const graph::Graph& g = *r.graph;
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(graph::toString(g.inputs[0]->type), "f32[1,3,64,64]");
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.outputs[0]->name(), "logits");
  EXPECT_EQ(graph::toString(g.outputs[0]->type), "f32[1,10]");
  EXPECT_EQ(r.sourceOpset, 13);
  EXPECT_EQ(g.opsetVersion, 17);
}

TEST(OnnxImport, OldOpsetIsConverted) {
  auto r = importModel("old_opset7.onnx");
  EXPECT_EQ(r.sourceOpset, 7);
  EXPECT_EQ(r.graph->opsetVersion, 17);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
}

TEST(OnnxImport, SymbolicDimsSurvive) {
  auto r = importModel("symbolic_batch.onnx");
  EXPECT_EQ(graph::toString(r.graph->inputs[0]->type), "f32[N,3,8,8]");
}

TEST(OnnxImport, SubgraphsCaptureOuterValues) {
  auto r = importModel("if_subgraph.onnx");
  const graph::Node* ifNode = nullptr;
  for (const auto& n : r.graph->nodes())
    if (n->opType() == "If")
      ifNode = n.get();
  ASSERT_TRUE(ifNode);
  const auto& thenBranch = ifNode->findAttribute("then_branch")->as<graph::GraphPtr>();
  bool captures = false;
  for (const auto& v : thenBranch->values())
    captures = captures || v->kind() == graph::ValueKind::Capture;
  const auto& elseBranch = ifNode->findAttribute("else_branch")->as<graph::GraphPtr>();
  for (const auto& v : elseBranch->values())
    captures = captures || v->kind() == graph::ValueKind::Capture;
  EXPECT_TRUE(captures);
}

TEST(OnnxImport, ExternalDataIsRead) {
  auto r = importModel("external_data/model.onnx");
  bool sawWeights = false;
  for (const graph::Value* c : r.graph->constants())
    sawWeights = sawWeights || (c->constant().numElements() > 16 && !c->constant().isElided());
  EXPECT_TRUE(sawWeights);
}

TEST(OnnxImport, ExternalDataMayNotEscapeTheFolder) {
  const Error abs = importError("bad/escape_abs.onnx");
  expectContains(abs.what(), "bad/escape_abs.onnx");
  expectContains(abs.what(), "absolute path");
  const Error dots = importError("bad/escape_dotdot.onnx");
  expectContains(dots.what(), "escapes the model's folder");
}

TEST(OnnxImport, TruncatedGarbageAndEmptyFiles) {
  for (const char* name : {"bad/truncated.onnx", "bad/garbage.onnx"}) {
    const Error e = importError(name);
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    expectContains(e.what(), name);
    expectContains(e.what(), "truncated or corrupt");
  }
  expectContains(importError("bad/empty.onnx").what(), "empty");
  const Error missing = importError("no_such_model.onnx");
  EXPECT_EQ(missing.kind(), ErrorKind::Io);
  expectContains(missing.what(), "no such file");
}

TEST(OnnxImport, UnknownOpIsUnsupportedAndNamed) {
  const Error e = importError("bad/unknown_op.onnx");
  EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  EXPECT_EQ(e.where().op, "FancyNewOp");
  expectContains(e.what(), "op 'FancyNewOp' is not supported");
}

TEST(OnnxImport, AbsurdShapeIsRefused) {
  const Error e = importError("bad/absurd_shape.onnx");
  expectContains(e.what(), "absurd");
}

TEST(OnnxImport, MissingInputIsNamed) {
  const Error e = importError("bad/missing_input.onnx");
  EXPECT_EQ(e.kind(), ErrorKind::Invalid);
  expectContains(e.what(), "bad/missing_input.onnx");
}

TEST(OnnxImport, RawDataSizeMismatchIsRefused) {
  const Error e = importError("bad/bad_raw_size.onnx");
  expectContains(e.what(), "raw_data holds 16 bytes");
}

TEST(OnnxImport, CancelStopsTheImport) {
  std::atomic<bool> cancel{true};
  frontend::ImportOptions options;
  options.cancel = &cancel;
  try {
    frontend::importOnnxFile(model("sample_cnn.onnx"), options);
    FAIL() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Cancelled);
  }
}

} // namespace
} // namespace lathe
