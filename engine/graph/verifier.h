#pragma once
#include "engine/graph/graph.h"

#include <string>
#include <vector>

namespace lathe::graph {

struct VerifyIssue {
  std::string node; // node name or description, empty for graph-level issues
  std::string op;
  std::string value; // the value concerned, if any
  std::string message;
  std::string text() const; // "node 'n' (Op): value %v: message"
};

// Structural checks: SSA (each value defined once, before use), known ops with valid
// arity, constant sizes, fused groups consecutive. Subgraphs are checked too.
std::vector<VerifyIssue> verifyGraph(const Graph& graph);

// Throws lathe::Error (Invalid) with the first issue, naming `file`.
void verifyGraphOrThrow(const Graph& graph, const std::string& file = {});

} // namespace lathe::graph
