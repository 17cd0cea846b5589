#pragma once
// Lathe's own opset converter, used when the ONNX library's version converter gives up
// (it does whenever an adapter needs a shape the file leaves dynamic). Every node is
// brought to the target opset one schema version at a time: a step whose schema only
// adds optional attributes and inputs (with defaults that keep the old meaning) is taken
// as it is, the steps that change a node's form or meaning have adapters of their own,
// and any other step refuses the node. No node is ever run under another version's
// meaning.

#include <cstdint>
#include <onnx/onnx_pb.h>
#include <stdexcept>
#include <string>

namespace lathe::frontend {

// Thrown for a node that cannot be brought to the target opset, or whose attributes
// Lathe would not honour.
struct NodeRefusal : std::runtime_error {
  NodeRefusal(std::string nodeName, std::string opType, const std::string& reason)
      : std::runtime_error(reason), node(std::move(nodeName)), op(std::move(opType)) {}
  std::string node;
  std::string op;
};

// Rewrites every default-domain node of `model` (subgraphs included) from `sourceOpset`
// to `targetOpset` and sets the model's default-domain opset to `targetOpset`. Uses the
// value types and ranks that shape inference left in the graphs' value_info. Needs the
// ONNX library's schema registry, so it runs where the library's steps run.
// With tolerateUnknownOps, nodes of ops without a schema are left as they are (the model
// is opened to be looked at, not compiled).
void upgradeNodesToOpset(onnx::ModelProto& model, std::int64_t sourceOpset,
                         std::int64_t targetOpset, bool tolerateUnknownOps = false);

} // namespace lathe::frontend
