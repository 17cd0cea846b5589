#pragma once
// The stable text form of the graph IR. parseGraph(printGraph(g)) rebuilds g exactly
// when every constant is printed in full (inlineElements = -1).

#include "engine/graph/graph.h"

#include <cstdint>
#include <string>

namespace lathe::graph {

struct PrintOptions {
  // Constants with more elements than this print as `elided`; -1 prints everything.
  std::int64_t inlineElements = 16;
};

std::string printGraph(const Graph& graph, const PrintOptions& options = {});
// One node as a line of IR (no indentation, no newline).
std::string printNode(const Node& node, const PrintOptions& options = {});
std::string printAttribute(const Attribute& attr, const PrintOptions& options = {});
// A name as it appears after '%' or '@': bare when it is a plain identifier, else quoted.
std::string printName(const std::string& name);

} // namespace lathe::graph
