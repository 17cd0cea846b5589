#pragma once
#include "engine/graph/graph.h"

#include <memory>
#include <string>
#include <string_view>

namespace lathe::graph {

// Parses the text printed by printGraph. Errors throw lathe::Error naming `sourceName`,
// the line and column. Elided constants become TensorData::elided.
std::unique_ptr<Graph> parseGraph(std::string_view text, const std::string& sourceName = "<ir>");

} // namespace lathe::graph
