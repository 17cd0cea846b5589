#include "views/diff/changed_nodes.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace lathe::views {
namespace {

// The key that identifies a node across passes: its output names (absent ones kept as
// empty slots so "a,,b" and "a,b" stay distinct). Nodes without outputs fall back to
// their IR line.
std::string nodeKey(const api::NodeSummary& node) {
  std::string key;
  for (const std::string& out : node.outputs) {
    key += out;
    key += '\x1f';
  }
  return key.empty() ? "\x1e" + node.irLine : key;
}

// The fused kernel a node belongs to, by name ("" when not fused).
const std::string& groupName(const api::GraphSnapshot& g, const api::NodeSummary& node) {
  static const std::string none;
  return node.group >= 0 && node.group < static_cast<int>(g.groups.size())
             ? g.groups[static_cast<std::size_t>(node.group)].name
             : none;
}

} // namespace

NodeChanges changedNodes(const api::GraphSnapshot& before, const api::GraphSnapshot& after) {
  std::unordered_map<std::string, const api::NodeSummary*> old;
  old.reserve(before.nodes.size());
  for (const api::NodeSummary& node : before.nodes)
    old.emplace(nodeKey(node), &node);

  NodeChanges changes;
  std::unordered_set<std::string> kept;
  for (std::size_t i = 0; i < after.nodes.size(); ++i) {
    const api::NodeSummary& node = after.nodes[i];
    std::string key = nodeKey(node);
    const auto it = old.find(key);
    if (it == old.end() || it->second->irLine != node.irLine ||
        groupName(before, *it->second) != groupName(after, node))
      changes.changed.push_back(static_cast<int>(i));
    if (it != old.end())
      kept.insert(std::move(key));
  }
  for (const auto& [key, node] : old)
    changes.removed += kept.count(key) ? 0 : 1;
  return changes;
}

} // namespace lathe::views
