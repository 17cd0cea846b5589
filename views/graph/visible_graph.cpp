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

} // namespace

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

VisibleGraph buildVisibleGraph(const api::GraphSnapshot& snapshot, const std::set<int>& collapsed) {
  VisibleGraph graph;
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
    graph.nodes.push_back(
        {VisibleNode::Kind::Input, i, input.name, "input", shapeText(input), "", -1});
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

  std::set<std::pair<int, int>> drawn;
  const auto addEdge = [&](int tail, int head, const std::string& value) {
    if (tail == head || !drawn.insert({tail, head}).second)
      return;
    graph.edges.push_back({tail, head, valueShape(snapshot, value)});
  };
  for (int n = 0; n < static_cast<int>(snapshot.nodes.size()); ++n) {
    for (const std::string& input : snapshot.nodes[n].inputs) {
      const auto it = input.empty() ? producer.end() : producer.find(input);
      if (it != producer.end()) // constants have no producer and are not drawn
        addEdge(it->second, graph.nodeOfOp[n], input);
    }
  }
  for (int i = 0; i < static_cast<int>(snapshot.outputs.size()); ++i) {
    const api::TensorSummary& output = snapshot.outputs[i];
    const int node = static_cast<int>(graph.nodes.size());
    graph.nodes.push_back(
        {VisibleNode::Kind::Output, i, output.name, "output", shapeText(output), "", -1});
    const auto it = producer.find(output.name);
    if (it != producer.end())
      addEdge(it->second, node, output.name);
  }
  return graph;
}

} // namespace lathe::views
