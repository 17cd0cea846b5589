#include "engine/graph_passes/eliminate_dead_code.h"

#include <unordered_set>

namespace lathe::passes {

bool eliminateDeadCode(graph::Graph& graph) {
  // Walk backwards from the outputs; a node is live if any of its outputs is needed.
  std::unordered_set<const graph::Value*> needed(graph.outputs.begin(), graph.outputs.end());
  std::vector<graph::Node*> dead;
  const auto& nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    graph::Node* n = it->get();
    bool live = false;
    for (const graph::Value* out : n->outputs())
      live = live || (out && needed.count(out));
    if (!live) {
      dead.push_back(n);
      continue;
    }
    for (const graph::Value* in : n->inputs)
      if (in)
        needed.insert(in);
  }
  const std::size_t valuesBefore = graph.values().size();
  graph.removeNodes(dead);
  graph.pruneUnusedValues(); // also drops constants nothing reads
  return !dead.empty() || graph.values().size() != valuesBefore;
}

} // namespace lathe::passes
