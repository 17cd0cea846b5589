#pragma once
// Builds the graph IR from a checked, shape-inferred ModelProto. Internal to the importer.

#include "engine/graph/graph.h"

#include <memory>
#include <string>
#include <unordered_map>

namespace onnx {
class ModelProto;
}

namespace lathe::frontend {

// `weights` holds initializer data already taken out of the proto, by name.
std::unique_ptr<graph::Graph>
buildGraph(onnx::ModelProto& model, std::unordered_map<std::string, graph::TensorData> weights);

} // namespace lathe::frontend
