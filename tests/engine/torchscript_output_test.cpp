// What Lathe reads back from the TorchScript helper process: the text IR with its weights
// elided, the binary file of their bytes and the list of aten calls. Anything damaged ends in
// an Internal error naming the archive, never in a graph with a constant missing its bytes.
#include "engine/frontend/torchscript/ts_authored_io.h"
#include "engine/frontend/torchscript/ts_helper_output.h"
#include "engine/graph/printer.h"

#include <cstring>
#include <gtest/gtest.h>
#include <sstream>

namespace lathe {
namespace {

using namespace frontend::torchscript;

// A graph with one constant of 20 floats (elided in the text) and one of 2 (printed).
std::unique_ptr<graph::Graph> sampleGraph() {
  auto g = std::make_unique<graph::Graph>();
  g->name = "m";
  graph::Value* x = g->addInput("x", graph::TensorType::of(graph::DType::F32, {20}));
  std::vector<float> big(20), small{1.5f, -2.0f};
  for (int i = 0; i < 20; ++i)
    big[static_cast<std::size_t>(i)] = 0.25f * static_cast<float>(i);
  graph::Value* w =
      g->addConstant("w", graph::TensorData::fromValues(graph::DType::F32, {20}, big));
  graph::Node* n = g->addNode("Mul", {x, w}, {"y"});
  n->name = "y";
  g->outputs.push_back(n->output());
  g->addConstant("s", graph::TensorData::fromValues(graph::DType::F32, {2}, small));
  return g;
}

struct Written {
  std::string text, constants;
};

Written write(const graph::Graph& g) {
  graph::PrintOptions print;
  print.inlineElements = kInlineElements;
  std::ostringstream constants;
  writeConstants(constants, g);
  return {graph::printGraph(g, print), constants.str()};
}

std::string internalError(const std::string& text, const std::string& constants) {
  try {
    readHelperGraph(text, constants, "model.pt");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_EQ(e.where().file, "model.pt");
    return e.reason();
  }
  ADD_FAILURE() << "read although damaged";
  return {};
}

TEST(TorchScriptHelperOutput, WeightsTravelAsBytesAndComeBackWhole) {
  const auto g = sampleGraph();
  const Written w = write(*g);
  EXPECT_NE(w.text.find("elided"), std::string::npos); // the 20 floats are not in the text
  const auto back = readHelperGraph(w.text, w.constants, "model.pt");
  graph::PrintOptions all;
  all.inlineElements = -1;
  EXPECT_EQ(graph::printGraph(*back, all), graph::printGraph(*g, all));
}

TEST(TorchScriptHelperOutput, DamagedConstantsAreRefused) {
  const auto g = sampleGraph();
  const Written w = write(*g);
  EXPECT_NE(internalError(w.text, "not the magic").find("does not start"), std::string::npos);
  EXPECT_NE(internalError(w.text, w.constants.substr(0, w.constants.size() - 3)).find("cut short"),
            std::string::npos);
  // The bytes of 19 floats for a constant of 20.
  std::string shorter = w.constants;
  const std::uint64_t count = 19 * 4;
  std::memcpy(shorter.data() + kConstantsMagic.size() + 4 + 1, &count, 8);
  shorter.resize(shorter.size() - 4);
  EXPECT_NE(internalError(w.text, shorter).find("76 bytes for its type"), std::string::npos);
  // No bytes at all for it.
  EXPECT_NE(internalError(w.text, std::string(kConstantsMagic)).find("'w' without its bytes"),
            std::string::npos);
}

TEST(TorchScriptHelperOutput, AuthoredOpsRoundTripAndBadIndicesAreRefused) {
  frontend::AuthoredOp op{"aten::mul", "y\tz", "model.py:3", {{"alpha", "1\n2"}}, {0}};
  const auto back = parseAuthoredOps(printAuthoredOps({op}), 1, "model.pt");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "y\tz");
  EXPECT_EQ(back[0].attributes.at(0).second, "1\n2");
  EXPECT_EQ(back[0].nodes, std::vector<std::size_t>{0});
  EXPECT_THROW(parseAuthoredOps(printAuthoredOps({op}), 0, "model.pt"), Error);
  EXPECT_THROW(parseAuthoredOps("op\tonly\n", 1, "model.pt"), Error);
}

} // namespace
} // namespace lathe
