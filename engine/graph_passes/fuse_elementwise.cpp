#include "engine/graph_passes/fuse_elementwise.h"

#include "engine/graph/op_table.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

namespace lathe::passes {
namespace {

using graph::FusionRole;
using graph::Node;
using graph::Value;

FusionRole roleOf(const Node& n) {
  const graph::OpInfo* op = graph::findOp(n.domain(), n.opType());
  return op ? op->fusion : FusionRole::Opaque;
}

std::size_t presentOutputs(const Node& n) {
  return std::count_if(n.outputs().begin(), n.outputs().end(), [](const Value* v) { return v; });
}

class Fuser {
public:
  explicit Fuser(graph::Graph& g) : g_(g), uses_(g.computeUses()) {
    for (std::size_t i = 0; i < g.nodes().size(); ++i)
      position_[g.nodes()[i].get()] = i;
  }

  bool run() {
    // Anchors first, so that an epilogue joins its Conv/MatMul rather than starting a
    // pure elementwise chain of its own.
    for (FusionRole startRole : {FusionRole::Anchor, FusionRole::Elementwise})
      for (const auto& n : g_.nodes())
        if (n->group < 0 && roleOf(*n) == startRole)
          grow(*n);
    if (!formed_)
      return false;
    LATHE_CHECK(g_.sortTopologically(), "fusion created a cycle");
    return true;
  }

private:
  // The single consumer of `v` that may join the chain, or nullptr.
  Node* fusibleConsumer(const Value* v, const std::unordered_set<const Node*>& chain) {
    if (!v || g_.isGraphOutput(v))
      return nullptr;
    auto it = uses_.find(v);
    if (it == uses_.end() || it->second.size() != 1)
      return nullptr;
    Node* c = it->second.front().node;
    if (c->group >= 0 || roleOf(*c) != FusionRole::Elementwise || presentOutputs(*c) != 1 ||
        !c->output(0))
      return nullptr;
    // The epilogue works element by element on the anchor's output: it may not broadcast
    // that output to a bigger shape.
    const auto& in = v->type;
    const auto& out = c->output(0)->type;
    if (in.hasRank() && out.hasRank() && in.shape != out.shape)
      return nullptr;
    // ...nor change its element type (the anchor accumulates in the group's result).
    if (in.dtype != out.dtype)
      return nullptr;
    for (const Value* other : c->inputs)
      if (other && other != v && dependsOnChain(other, chain))
        return nullptr;
    return c;
  }

  // Whether `v` is computed from any node of the chain (then joining would make a cycle).
  bool dependsOnChain(const Value* v, const std::unordered_set<const Node*>& chain) {
    std::vector<const Node*> stack;
    std::unordered_set<const Node*> visited;
    std::size_t earliest = g_.nodes().size();
    for (const Node* n : chain)
      earliest = std::min(earliest, position_.at(n));
    if (v->producer())
      stack.push_back(v->producer());
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (chain.count(n))
        return true;
      // Nodes before the chain's first node cannot depend on it.
      if (position_.at(n) < earliest || !visited.insert(n).second)
        continue;
      for (const Value* in : n->inputs)
        if (in && in->producer())
          stack.push_back(in->producer());
    }
    return false;
  }

  void grow(Node& start) {
    if (presentOutputs(start) != 1 || !start.output(0))
      return;
    std::vector<Node*> members{&start};
    std::unordered_set<const Node*> chain{&start};
    while (Node* next = fusibleConsumer(members.back()->output(0), chain)) {
      members.push_back(next);
      chain.insert(next);
    }
    if (members.size() < 2)
      return;
    // The kernel is named after its first few ops and counts the rest, so that a long chain
    // still gives a name that fits in a file name (lathe compile --dump writes NAME.loop).
    constexpr std::size_t kNamedOps = 6;
    std::string pattern, name = "fused";
    for (std::size_t i = 0; i < members.size(); ++i) {
      const Node* m = members[i];
      pattern += (pattern.empty() ? "" : "+") + m->opType();
      std::string lower = m->opType();
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (i < kNamedOps)
        name += "_" + lower;
    }
    if (members.size() > kNamedOps)
      name += "_plus" + std::to_string(members.size() - kNamedOps);
    const int id = g_.addGroup({name + "_" + std::to_string(g_.groups().size()), pattern});
    for (Node* m : members)
      m->group = id;
    formed_ = true;
  }

  graph::Graph& g_;
  std::unordered_map<const Value*, std::vector<graph::Use>> uses_;
  std::unordered_map<const Node*, std::size_t> position_;
  bool formed_ = false;
};

} // namespace

bool fuseElementwise(graph::Graph& graph) {
  return Fuser(graph).run();
}

} // namespace lathe::passes
