#pragma once
// Runs a whole graph on Lathe's reference kernels (reference_ops.h), node by node in graph
// order, keeping every value: the slow, simple path that `lathe compare` checks compiled
// models against. Meant for the graph as imported: no fusion, no layout changes. If runs
// the branch its condition picks and Loop runs its body per iteration, both on the values
// of the enclosing graphs; only the top graph's values are kept.

#include "engine/graph/graph.h"

#include <atomic>
#include <cstddef>
#include <string>
#include <unordered_map>

namespace lathe::reference {

struct Interpretation {
  // The graph inputs and every node output computed, by value name.
  std::unordered_map<std::string, graph::TensorData> values;
  // The first node the reference could not evaluate: it and every node after it are left
  // out, so that a comparison never runs past an unknown point silently.
  bool complete = true;
  std::size_t stoppedAt = 0; // index of that node in graph order
  std::string stoppedNode, stoppedOp, stopReason;
};

// `inputs` holds every graph input's data by name; a missing one is lathe::Error (Invalid).
// `cancel` is polled before each node; once it is true the call throws lathe::Error
// (Cancelled).
Interpretation interpretGraph(const graph::Graph& graph,
                              const std::unordered_map<std::string, graph::TensorData>& inputs,
                              const std::atomic<bool>* cancel = nullptr);

} // namespace lathe::reference
