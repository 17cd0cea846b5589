#include "engine/graph_passes/inline_constant_if.h"

#include "engine/graph_passes/fold_constants.h"
#include "engine/graph_passes/infer_shapes.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace lathe::passes {
namespace {

using graph::Graph;
using graph::Node;
using graph::Value;

// The branch's values in `g`: captures are the If's extra inputs (by the order of its
// "captures" attribute), constants are copied. Null when the branch cannot be inlined.
bool mapOuterValues(const Node& ifNode, const Graph& branch, Graph& g,
                    std::unordered_map<const Value*, Value*>& map) {
  if (!branch.inputs.empty())
    return false;
  std::vector<std::string> captures;
  if (const graph::Attribute* a = ifNode.findAttribute(graph::kCapturesAttribute))
    captures = a->as<std::vector<std::string>>();
  for (const auto& v : branch.values()) {
    if (v->kind() == graph::ValueKind::Capture) {
      auto it = std::find(captures.begin(), captures.end(), v->name());
      const std::size_t k = static_cast<std::size_t>(it - captures.begin());
      if (it == captures.end() || !ifNode.input(1 + k))
        return false;
      map[v.get()] = ifNode.input(1 + k);
    }
  }
  for (const auto& n : branch.nodes())
    if (!n->domain().empty())
      return false;
  for (const auto& v : branch.values())
    if (v->isConstant())
      map[v.get()] = g.addConstant(g.uniqueName(v->name()), v->constant());
  return true;
}

bool inlineBranch(Graph& g, Node& ifNode, const Graph& branch) {
  std::unordered_map<const Value*, Value*> map;
  std::unordered_set<const Node*> copies;
  if (branch.outputs.size() != ifNode.outputs().size() || !mapOuterValues(ifNode, branch, g, map))
    return false;
  for (const auto& bn : branch.nodes()) {
    std::vector<Value*> inputs;
    for (const Value* in : bn->inputs)
      inputs.push_back(in ? map.at(in) : nullptr);
    std::vector<std::string> outputs;
    for (const Value* out : bn->outputs())
      outputs.push_back(out ? g.uniqueName(out->name()) : std::string());
    Node* copy = g.insertNodeBefore(&ifNode, bn->opType(), std::move(inputs), outputs);
    copies.insert(copy);
    copy->name = bn->name;
    copy->attributes = bn->attributes;
    for (std::size_t j = 0; j < bn->outputs().size(); ++j)
      if (const Value* out = bn->outputs()[j]) {
        copy->output(j)->type = out->type;
        map[out] = copy->output(j);
      }
  }
  // Each If output keeps its name and uses: the copied node producing the branch's output
  // takes the value over; a branch output that is a capture or a constant (or one output
  // twice) is copied by an Identity instead.
  std::unordered_set<const Value*> taken;
  for (std::size_t j = 0; j < branch.outputs.size(); ++j) {
    Value* result = ifNode.outputs()[j];
    if (!result)
      continue;
    Value* src = map.at(branch.outputs[j]);
    if (src->producer() && copies.count(src->producer()) && taken.insert(src).second) {
      g.swapOutputs(src->producer(), static_cast<std::size_t>(src->producerIndex()), &ifNode, j);
      g.replaceAllUsesWith(src, result);
      continue;
    }
    Node* id =
        g.insertNodeBefore(&ifNode, "Identity", {src}, {g.uniqueName(result->name() + "_inlined")});
    id->name = ifNode.name + "/inlined";
    g.swapOutputs(id, 0, &ifNode, j);
  }
  g.removeNodes({&ifNode});
  return true;
}

// One round: every If whose condition is constant now, in `g` and its subgraphs.
bool inlineRound(Graph& g) {
  bool changed = false;
  for (const auto& n : g.nodes())
    for (auto& [key, attr] : n->attributes) {
      if (attr.is<graph::GraphPtr>())
        changed = inlineRound(*attr.as<graph::GraphPtr>()) || changed;
      if (attr.is<std::vector<graph::GraphPtr>>())
        for (const graph::GraphPtr& sub : attr.as<std::vector<graph::GraphPtr>>())
          changed = inlineRound(*sub) || changed;
    }
  for (bool again = true; again;) {
    again = false;
    for (const auto& n : g.nodes()) {
      if (n->opType() != "If" || !n->domain().empty())
        continue;
      const Value* cond = n->input(0);
      if (!cond || !cond->isConstant() || cond->constant().isElided() ||
          cond->constant().numElements() != 1)
        continue;
      const char* key = cond->constant().elementAsInt(0) != 0 ? "then_branch" : "else_branch";
      const graph::Attribute* a = n->findAttribute(key);
      if (!a || !a->is<graph::GraphPtr>())
        continue;
      const graph::GraphPtr branch = a->as<graph::GraphPtr>(); // kept alive past the If
      if (inlineBranch(g, *n, *branch)) {
        changed = again = true;
        break; // the node list changed
      }
    }
  }
  return changed;
}

} // namespace

bool inlineConstantIfs(Graph& g) {
  // An inlined branch can make the conditions of the Ifs after it constant (its outputs'
  // shapes become known, Shape -> Gather -> Equal folds): infer and fold between rounds.
  bool changed = false;
  while (inlineRound(g)) {
    changed = true;
    inferShapes(g);
    foldConstants(g);
  }
  return changed;
}

} // namespace lathe::passes
