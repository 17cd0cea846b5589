#pragma once
#include "engine/graph/graph.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace lathe::graph {

// Parses the text printed by printGraph. Errors throw lathe::Error naming `sourceName`,
// the line and column. Elided constants become TensorData::elided.
std::unique_ptr<Graph> parseGraph(std::string_view text, const std::string& sourceName = "<ir>");

// The bytes of a constant the text elides, by its name, type and dims (e.g. from a file written
// beside the text); nullopt leaves it elided.
using ElidedConstantSource = std::function<std::optional<TensorData>(
    const std::string& name, DType dtype, const std::vector<std::int64_t>& dims)>;
// Same, filling the graph's elided constants from `source`.
std::unique_ptr<Graph> parseGraph(std::string_view text, const std::string& sourceName,
                                  const ElidedConstantSource& source);

} // namespace lathe::graph
