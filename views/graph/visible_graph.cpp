#include "views/graph/visible_graph.h"

#include <map>
#include <unordered_map>
#include <utility>

namespace lathe::views {
namespace {

const std::string kTimes = "\u00d7";

std::string valueShape(const api::GraphSnapshot& snapshot, const std::string& value) {
  const auto it = snapshot.values.find(value);
  return it == snapshot.values.end() ? std::string("?") : shapeText(it->second);
}

// The category a collapsed group is coloured with: its first non-elementwise op (the anchor,
// e.g. the Conv of Conv+Add+Relu), else its first op.
std::string groupCategory(const api::GraphSnapshot& snapshot, const api::GroupSummary& group) {
  for (const int node : group.nodes) {
    if (snapshot.nodes[node].category != "elementwise")
      return snapshot.nodes[node].category;
  }
  return group.nodes.empty() ? std::string() : snapshot.nodes[group.nodes.front()].category;
}

// "▸ 2 subgraphs" (collapsed) or "▾ 2 subgraphs" (expanded); empty for a node without any.
std::string subgraphHint(const api::NodeSummary& op, bool expanded) {
  const std::size_t count = op.subgraphs.size();
  if (count == 0)
    return {};
  return std::string(expanded ? "\u25be " : "\u25b8 ") + std::to_string(count) +
         (count == 1 ? " subgraph" : " subgraphs");
}

VisibleNode tensorNode(VisibleNode::Kind kind, int index, const api::TensorSummary& tensor) {
  VisibleNode node;
  node.kind = kind;
  node.index = index;
  node.title = tensor.name;
  node.subtitle = kind == VisibleNode::Kind::Input ? "input" : "output";
  node.shape = shapeText(tensor);
  return node;
}

std::set<std::string> constantNames(const api::GraphSnapshot& snapshot) {
  std::set<std::string> names;
  for (const api::ConstantSummary& constant : snapshot.constants)
    names.insert(constant.tensor.name);
  return names;
}

// Builds one VisibleGraph; the parts shared by the top level and the subgraphs it expands.
class Builder {
public:
  explicit Builder(VisibleGraph& graph) : graph_(graph) {}

  int addNode(VisibleNode node) {
    if (node.cluster >= 0)
      graph_.clusters[node.cluster].nodes.push_back(static_cast<int>(graph_.nodes.size()));
    graph_.nodes.push_back(std::move(node));
    return static_cast<int>(graph_.nodes.size()) - 1;
  }

  // Parallel edges between the same two nodes are drawn once.
  void addEdge(int tail, int head, std::string label,
               VisibleEdge::Kind kind = VisibleEdge::Kind::Data) {
    if (tail < 0 || head < 0 || tail == head || !drawn_.insert({tail, head}).second)
      return;
    graph_.edges.push_back({tail, head, std::move(label), kind});
  }

  // Draws subgraph `s` of top-level node `n` (drawn as `ownerNode`) as a cluster. `outer`
  // gives the visible producer of the enclosing graph's values, for captures. The subgraph's
  // outputs that stand for the node's outputs are recorded in `feeds`.
  void addSubgraph(const api::GraphSnapshot& snapshot, int n, int s, int ownerNode,
                   const std::unordered_map<std::string, int>& outer,
                   std::unordered_map<std::string, std::vector<int>>& feeds) {
    const api::NodeSummary& op = snapshot.nodes[n];
    const api::GraphSnapshot& sub = *op.subgraphs[s].second;
    const int cluster = static_cast<int>(graph_.clusters.size());
    graph_.clusters.push_back({-1, subgraphLabel(op, s), {}, n, s});
    const auto inner = [&](VisibleNode node) {
      node.cluster = cluster;
      node.owner = n;
      node.subgraph = s;
      return addNode(std::move(node));
    };

    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < static_cast<int>(sub.inputs.size()); ++i) {
      const api::TensorSummary& input = sub.inputs[i];
      const int v = inner(tensorNode(VisibleNode::Kind::Input, i, input));
      producer[input.name] = v;
      addEdge(ownerNode, v, {}, VisibleEdge::Kind::Scope);
    }
    const std::set<std::string> constants = constantNames(sub);
    for (int k = 0; k < static_cast<int>(sub.nodes.size()); ++k) {
      const api::NodeSummary& innerOp = sub.nodes[k];
      VisibleNode node;
      node.index = k;
      node.title = innerOp.opType;
      node.subtitle = innerOp.name;
      node.category = innerOp.category;
      node.hint = subgraphHint(innerOp, false);
      for (const std::string& output : innerOp.outputs) {
        if (!output.empty()) {
          node.shape = valueShape(sub, output);
          break;
        }
      }
      const int v = inner(std::move(node));
      bool fedInside = false;
      for (const std::string& input : innerOp.inputs) {
        if (input.empty())
          continue;
        if (const auto it = producer.find(input); it != producer.end()) {
          addEdge(it->second, v, valueShape(sub, input));
          fedInside = true;
        } else if (const auto out = outer.find(input);
                   out != outer.end() && !constants.count(input)) {
          addEdge(out->second, v, valueShape(snapshot, input), VisibleEdge::Kind::Capture);
        }
      }
      if (!fedInside) // keeps the subgraph below its owner
        addEdge(ownerNode, v, {}, VisibleEdge::Kind::Scope);
      for (const std::string& output : innerOp.outputs) {
        if (!output.empty())
          producer[output] = v;
      }
    }
    // Loop's body has one output more than the node (the condition) in front; If's branches
    // and Scan's body match the node's outputs one to one.
    const int offset = static_cast<int>(sub.outputs.size()) - static_cast<int>(op.outputs.size());
    for (int j = 0; j < static_cast<int>(sub.outputs.size()); ++j) {
      const api::TensorSummary& output = sub.outputs[j];
      const int v = inner(tensorNode(VisibleNode::Kind::Output, j, output));
      if (const auto it = producer.find(output.name); it != producer.end())
        addEdge(it->second, v, valueShape(sub, output.name));
      else
        addEdge(ownerNode, v, {}, VisibleEdge::Kind::Scope);
      const int slot = j - offset;
      if (slot >= 0 && slot < static_cast<int>(op.outputs.size()) && !op.outputs[slot].empty())
        feeds[op.outputs[slot]].push_back(v);
    }
  }

private:
  VisibleGraph& graph_;
  std::set<std::pair<int, int>> drawn_;
};

} // namespace

std::string subgraphLabel(const api::NodeSummary& owner, int subgraph) {
  return owner.opType + " \u00b7 " + owner.subgraphs[subgraph].first;
}

std::string shapeText(const api::TensorSummary& tensor) {
  if (!tensor.rankKnown)
    return "?";
  if (tensor.dims.empty())
    return "scalar";
  std::string text;
  for (const std::string& dim : tensor.dims)
    text += (text.empty() ? "" : kTimes) + dim;
  return text;
}

VisibleGraph buildVisibleGraph(const api::GraphSnapshot& snapshot, const std::set<int>& collapsed,
                               const std::set<int>& expanded) {
  VisibleGraph graph;
  Builder builder(graph);
  // Values computed by an expanded node: the subgraph outputs that stand for them.
  std::unordered_map<std::string, std::vector<int>> feeds;
  const int groupCount = static_cast<int>(snapshot.groups.size());
  const auto isValidGroup = [&](int group) { return group >= 0 && group < groupCount; };

  std::vector<int> clusterOfGroup(snapshot.groups.size(), -1);
  std::vector<int> nodeOfGroup(snapshot.groups.size(), -1);
  for (int g = 0; g < groupCount; ++g) {
    const api::GroupSummary& group = snapshot.groups[g];
    if (collapsed.count(g)) {
      VisibleNode node;
      node.kind = VisibleNode::Kind::Group;
      node.index = g;
      node.title = group.pattern;
      node.subtitle = std::to_string(group.nodes.size()) + " ops \u00b7 " + group.name;
      node.category = groupCategory(snapshot, group);
      nodeOfGroup[g] = static_cast<int>(graph.nodes.size());
      graph.nodes.push_back(std::move(node));
    } else if (group.nodes.size() > 1) { // a one-op "group" is just the op: no frame
      clusterOfGroup[g] = static_cast<int>(graph.clusters.size());
      graph.clusters.push_back({g, group.pattern, {}});
    }
  }

  // Which visible node produces each value.
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < static_cast<int>(snapshot.inputs.size()); ++i) {
    const api::TensorSummary& input = snapshot.inputs[i];
    producer[input.name] = static_cast<int>(graph.nodes.size());
    graph.nodes.push_back(tensorNode(VisibleNode::Kind::Input, i, input));
  }
  graph.nodeOfOp.assign(snapshot.nodes.size(), -1);
  for (int n = 0; n < static_cast<int>(snapshot.nodes.size()); ++n) {
    const api::NodeSummary& op = snapshot.nodes[n];
    int visible = isValidGroup(op.group) ? nodeOfGroup[op.group] : -1;
    if (visible < 0) {
      VisibleNode node;
      node.index = n;
      node.title = op.opType;
      node.subtitle = op.name;
      node.category = op.category;
      node.hint = subgraphHint(op, expanded.count(n) != 0);
      for (const std::string& output : op.outputs) {
        if (!output.empty()) {
          node.shape = valueShape(snapshot, output);
          break;
        }
      }
      if (isValidGroup(op.group) && clusterOfGroup[op.group] >= 0) {
        node.cluster = clusterOfGroup[op.group];
        graph.clusters[node.cluster].nodes.push_back(static_cast<int>(graph.nodes.size()));
      }
      visible = static_cast<int>(graph.nodes.size());
      graph.nodes.push_back(std::move(node));
      if (expanded.count(n)) {
        for (int s = 0; s < static_cast<int>(op.subgraphs.size()); ++s) {
          if (op.subgraphs[s].second)
            builder.addSubgraph(snapshot, n, s, visible, producer, feeds);
        }
      }
    }
    graph.nodeOfOp[n] = visible;
    for (const std::string& output : op.outputs) {
      if (!output.empty())
        producer[output] = visible;
    }
  }
  // A collapsed group shows the shape of its last op's output.
  for (int g = 0; g < groupCount; ++g) {
    if (nodeOfGroup[g] < 0 || snapshot.groups[g].nodes.empty())
      continue;
    const api::NodeSummary& last = snapshot.nodes[snapshot.groups[g].nodes.back()];
    if (!last.outputs.empty())
      graph.nodes[nodeOfGroup[g]].shape = valueShape(snapshot, last.outputs.front());
  }

  // A value computed by an expanded node comes out of its subgraphs' output pills.
  const auto addEdge = [&](int head, const std::string& value) {
    if (const auto fed = feeds.find(value); fed != feeds.end()) {
      for (const int tail : fed->second)
        builder.addEdge(tail, head, valueShape(snapshot, value));
      return;
    }
    const auto it = producer.find(value);
    if (it != producer.end()) // constants have no producer and are not drawn
      builder.addEdge(it->second, head, valueShape(snapshot, value));
  };
  for (int n = 0; n < static_cast<int>(snapshot.nodes.size()); ++n) {
    for (const std::string& input : snapshot.nodes[n].inputs) {
      if (!input.empty())
        addEdge(graph.nodeOfOp[n], input);
    }
  }
  for (int i = 0; i < static_cast<int>(snapshot.outputs.size()); ++i) {
    const api::TensorSummary& output = snapshot.outputs[i];
    const int node = static_cast<int>(graph.nodes.size());
    graph.nodes.push_back(tensorNode(VisibleNode::Kind::Output, i, output));
    addEdge(node, output.name);
  }
  return graph;
}

} // namespace lathe::views
