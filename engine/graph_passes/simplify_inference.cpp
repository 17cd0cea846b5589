#include "engine/graph_passes/simplify_inference.h"

namespace lathe::passes {
namespace {

bool trainingModeOff(const graph::Node& dropout) {
  const graph::Value* mode = dropout.input(2);
  if (!mode)
    return true;
  return mode->isConstant() && !mode->constant().isElided() &&
         mode->constant().numElements() == 1 && mode->constant().elementAsInt(0) == 0;
}

} // namespace

bool simplifyForInference(graph::Graph& graph) {
  std::vector<graph::Node*> dead;
  const auto uses = graph.computeUses();
  auto used = [&](const graph::Value* v) { return v && (uses.count(v) || graph.isGraphOutput(v)); };
  for (const auto& n : graph.nodes()) {
    const std::string& op = n->opType();
    if (!n->domain().empty() || (op != "Identity" && op != "Dropout"))
      continue;
    graph::Value* in = n->input(0);
    graph::Value* out = n->output(0);
    if (!in || !out)
      continue;
    // Dropout's mask is all-true at inference, but a used mask keeps the node, and so does
    // training mode (an input that is not a constant false).
    if (op == "Dropout" && n->outputs().size() > 1 && used(n->output(1)))
      continue;
    if (op == "Dropout" && !trainingModeOff(*n))
      continue;
    // A graph output that is also an input would lose its own name; keep such Identity.
    if (graph.isGraphOutput(out) &&
        (graph.isGraphOutput(in) || in->kind() == graph::ValueKind::Input))
      continue;
    if (graph.isGraphOutput(out)) {
      // The model's output keeps its name: the node producing `in` takes over `out`.
      graph::Node* producer = in->producer();
      if (!producer)
        continue; // a constant: the Identity stays
      graph.swapOutputs(producer, static_cast<std::size_t>(in->producerIndex()), n.get(), 0);
      graph.replaceAllUsesWith(in, out);
    } else {
      graph.replaceAllUsesWith(out, in);
    }
    dead.push_back(n.get());
  }
  graph.removeNodes(dead);
  return !dead.empty();
}

} // namespace lathe::passes
