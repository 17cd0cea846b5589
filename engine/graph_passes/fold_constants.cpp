#include "engine/graph_passes/fold_constants.h"

#include "engine/graph_passes/constant_evaluator.h"
#include "engine/graph_passes/shape_rules.h"

#include <string>
#include <utility>

namespace lathe::passes {
namespace {

// Larger results stay computed at run time: folding them would duplicate weight-sized data.
constexpr std::int64_t kMaxFoldedElements = 65536;

// The constant data of a node's outputs, or nullopt when the node does not fold.
std::optional<std::vector<graph::TensorData>> foldedOutputs(const graph::Node& node) {
  if (node.opType() == "Constant" && node.domain().empty()) {
    // Already a constant, whatever its size; it only moves from an attribute to a value.
    auto value = constantNodeValue(node);
    return value ? std::optional(std::vector<graph::TensorData>{std::move(*value)}) : std::nullopt;
  }
  return evaluateConstantNode(node, kMaxFoldedElements);
}

} // namespace

bool foldConstants(graph::Graph& graph) {
  std::vector<graph::Node*> order;
  for (const auto& node : graph.nodes())
    order.push_back(node.get());

  // A folded value first gets a temporary constant, because the value it replaces keeps the
  // name until its node is removed; afterwards the constant takes the original name.
  struct Folded {
    std::string temporaryName, originalName;
  };
  std::vector<Folded> folded;
  std::vector<graph::Node*> dead;
  bool typesChanged = false;
  for (graph::Node* node : order) {
    auto outputs = foldedOutputs(*node);
    if (!outputs || outputs->size() < node->outputs().size()) {
      // A node that stays may still get a more specific type from inputs folded just before
      // it (a Reshape whose target became constant), so a Shape further on can fold too.
      typesChanged = refineOutputTypes(*node) || typesChanged;
      continue;
    }
    for (std::size_t i = 0; i < node->outputs().size(); ++i) {
      graph::Value* out = node->output(i);
      if (!out)
        continue;
      graph::Value* constant =
          graph.addConstant(graph.uniqueName(out->name()), std::move((*outputs)[i]));
      // Later nodes in this walk now see a constant input, so whole chains fold in one pass.
      graph.replaceAllUsesWith(out, constant);
      folded.push_back({constant->name(), out->name()});
    }
    dead.push_back(node);
  }
  if (dead.empty())
    return typesChanged;

  // Removing the nodes also drops intermediate constants that only fed other folded nodes.
  graph.removeNodes(dead);
  for (const Folded& f : folded) {
    graph::Value* temporary = graph.findValue(f.temporaryName);
    if (!temporary || graph.findValue(f.originalName))
      continue;
    graph::Value* named = graph.addConstant(f.originalName, temporary->constant());
    graph.replaceAllUsesWith(temporary, named);
  }
  graph.pruneUnusedValues();
  return true;
}

} // namespace lathe::passes
