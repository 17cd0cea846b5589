#pragma once
// What the graph view's "as authored" needs from an importer that translates: each operator of
// the source file (a TFLite operator, an aten call) and the graph IR nodes it became. ONNX
// needs none: its nodes are the file's.

#include "engine/graph/graph.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace lathe::frontend {

struct AuthoredOp {
  std::string opType;   // as the file names it: "CONV_2D", "aten::conv2d"
  std::string name;     // the tensor it writes, as the file names it
  std::string location; // where the file says it comes from ("model.py:42"), if it says
  // Its options as the file has them ("stride_w" -> "2"), in the file's order.
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<std::size_t> nodes; // indices into the imported graph's nodes
};

// Collects AuthoredOps while an importer appends nodes: the nodes appended since the last
// take() belong to the operator taken. Nodes an operator creates and removes again are
// never seen.
class AuthoredRecorder {
public:
  explicit AuthoredRecorder(const graph::Graph& graph) : graph_(graph) {}

  // The nodes appended since the last call become `op`'s; an op that added none (an alias,
  // a constant folded at import) is dropped.
  void take(AuthoredOp op) {
    std::vector<const graph::Node*> mine;
    const auto& nodes = graph_.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend() && !seen_.count(it->get()); ++it)
      mine.push_back(it->get());
    if (mine.empty())
      return;
    for (const graph::Node* n : mine)
      seen_.insert(n);
    op.nodes.clear();
    pending_.emplace_back(std::move(op),
                          std::vector<const graph::Node*>(mine.rbegin(), mine.rend()));
  }

  // Call once the importer is done adding and removing nodes: node pointers become indices.
  std::vector<AuthoredOp> finish() {
    std::unordered_map<const graph::Node*, std::size_t> index;
    for (std::size_t i = 0; i < graph_.nodes().size(); ++i)
      index[graph_.nodes()[i].get()] = i;
    std::vector<AuthoredOp> ops;
    for (auto& [op, members] : pending_) {
      for (const graph::Node* n : members)
        if (auto it = index.find(n); it != index.end())
          op.nodes.push_back(it->second);
      if (!op.nodes.empty())
        ops.push_back(std::move(op));
    }
    pending_.clear();
    return ops;
  }

private:
  const graph::Graph& graph_;
  std::unordered_set<const graph::Node*> seen_;
  std::vector<std::pair<AuthoredOp, std::vector<const graph::Node*>>> pending_;
};

} // namespace lathe::frontend
