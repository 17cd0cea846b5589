#pragma once
// What the graph view draws for a snapshot: ops, graph inputs and outputs, fused groups (as
// clusters, or as one node when collapsed), the subgraphs of expanded If/Loop/Scan nodes (as
// clusters) and the tensors between them. Plain data, no Qt widgets, so it can be built and
// tested without a window.

#include "engine/api/session.h"

#include <set>
#include <string>
#include <vector>

namespace lathe::views {

struct VisibleNode {
  enum class Kind { Op, Input, Output, Group };
  Kind kind = Kind::Op;
  int index = -1;       // into snapshot nodes, inputs, outputs or groups, by kind
  std::string title;    // op type, pattern, or tensor name for inputs/outputs
  std::string subtitle; // node name, kernel name, or empty
  std::string shape;    // "1×64×56×56" of the (first) output
  std::string category; // for the colour; "" for inputs and outputs
  int cluster = -1;     // index into VisibleGraph::clusters, -1 when not in one
  std::string hint;     // "▸ 2 subgraphs" on an If/Loop/Scan node, else empty
  // Inside an expanded subgraph: the snapshot node owning it and which of its subgraphs;
  // `index` then counts in that subgraph's snapshot. -1 at the top level.
  int owner = -1;
  int subgraph = -1;
};

struct VisibleEdge {
  // Data: a tensor. Scope: from an If/Loop/Scan node into its subgraph. Capture: a value of
  // the enclosing graph read inside a subgraph.
  enum class Kind { Data, Scope, Capture };
  int tail = -1, head = -1; // indices into VisibleGraph::nodes
  std::string label;        // the tensor's shape
  Kind kind = Kind::Data;
};

struct VisibleCluster {
  int group = -1; // index into snapshot groups; -1 for a subgraph
  std::string label;
  std::vector<int> nodes; // indices into VisibleGraph::nodes
  int owner = -1;         // a subgraph's: the snapshot node owning it, and its index there
  int subgraph = -1;
};

struct VisibleGraph {
  std::vector<VisibleNode> nodes;
  std::vector<VisibleEdge> edges;
  std::vector<VisibleCluster> clusters;
  // Snapshot node index -> visible node drawing it (its group's node when collapsed).
  std::vector<int> nodeOfOp;
};

// "1×64×56×56"; "scalar" for rank 0 and "?" when the rank is unknown.
std::string shapeText(const api::TensorSummary& tensor);

// "If · then_branch": the label of a subgraph's cluster.
std::string subgraphLabel(const api::NodeSummary& owner, int subgraph);

// Groups in `collapsed` (indices into snapshot.groups) become one node each; the others become
// clusters. Edges inside a collapsed group disappear and parallel edges between the same two
// nodes are drawn once. Constants (weights) are not drawn: they would double the node count.
// Each top-level node in `expanded` that has subgraphs gets them drawn as clusters below it,
// their outputs feeding the node's consumers; nested subgraphs stay collapsed.
VisibleGraph buildVisibleGraph(const api::GraphSnapshot& snapshot, const std::set<int>& collapsed,
                               const std::set<int>& expanded = {});

} // namespace lathe::views
