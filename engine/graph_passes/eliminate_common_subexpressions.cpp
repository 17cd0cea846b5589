#include "engine/graph_passes/eliminate_common_subexpressions.h"

#include <unordered_map>

namespace lathe::passes {
namespace {

using graph::Node;
using graph::Value;

bool sameNode(const Node& a, const Node& b) {
  if (a.opType() != b.opType() || a.domain() != b.domain() || a.inputs != b.inputs ||
      a.outputs().size() != b.outputs().size() || a.attributes.size() != b.attributes.size())
    return false;
  for (const auto& [key, attr] : a.attributes) {
    const graph::Attribute* other = b.findAttribute(key);
    if (!other || !(attr == *other))
      return false;
  }
  return true;
}

// Ops whose results must not be merged even with equal inputs.
bool hasSideEffectsOrRandomness(const Node& n) {
  const std::string& op = n.opType();
  return op.rfind("Random", 0) == 0 || op == "Multinomial" || op == "Loop" || op == "If" ||
         op == "Scan";
}

std::size_t nodeKey(const Node& n) {
  std::size_t h = std::hash<std::string>()(n.opType());
  for (const Value* in : n.inputs)
    h = h * 31 + std::hash<const Value*>()(in);
  return h;
}

} // namespace

bool eliminateCommonSubexpressions(graph::Graph& graph) {
  bool changed = false;
  // Identical small constants first: nodes reading them then compare equal.
  std::unordered_map<std::uint64_t, std::vector<Value*>> constantsByHash;
  for (Value* c : graph.constants()) {
    const graph::TensorData& t = c->constant();
    if (t.isElided() || t.numElements() > 4096)
      continue;
    auto& bucket = constantsByHash[t.contentHash()];
    Value* same = nullptr;
    for (Value* prior : bucket)
      if (prior->constant().sameContents(t))
        same = prior;
    if (same && !graph.isGraphOutput(c)) {
      graph.replaceAllUsesWith(c, same);
      changed = true;
    } else {
      bucket.push_back(c);
    }
  }

  std::unordered_map<std::size_t, std::vector<Node*>> seen;
  std::vector<Node*> dead;
  for (const auto& nptr : graph.nodes()) {
    Node* n = nptr.get();
    if (hasSideEffectsOrRandomness(*n))
      continue;
    auto& bucket = seen[nodeKey(*n)];
    Node* twin = nullptr;
    for (Node* prior : bucket)
      if (sameNode(*prior, *n))
        twin = prior;
    if (!twin) {
      bucket.push_back(n);
      continue;
    }
    // Keep nodes whose outputs are graph outputs (their names matter) or that have an
    // output the twin lacks.
    bool replaceable = true;
    for (std::size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* out = n->outputs()[i];
      replaceable = replaceable && !(out && (graph.isGraphOutput(out) || !twin->outputs()[i]));
    }
    if (!replaceable)
      continue;
    for (std::size_t i = 0; i < n->outputs().size(); ++i)
      if (n->outputs()[i] && twin->outputs()[i])
        graph.replaceAllUsesWith(n->outputs()[i], twin->outputs()[i]);
    dead.push_back(n);
  }
  graph.removeNodes(dead);
  if (changed)
    graph.pruneUnusedValues();
  return changed || !dead.empty();
}

} // namespace lathe::passes
