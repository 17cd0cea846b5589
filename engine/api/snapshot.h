#pragma once
// Internal to engine/api: turns graph IR into the plain snapshot structs.
#include "engine/api/session.h"
#include "engine/frontend/authored_ops.h"
#include "engine/graph/graph.h"

namespace lathe::api {

TensorSummary summarizeValue(const graph::Value& value);
GraphSnapshot makeSnapshot(const graph::Graph& graph);
// The graph as a translating importer's file has it: each AuthoredOp becomes one node standing
// for its nodes of `imported` (reading what they read from outside, writing what is read
// outside); nodes no op claims stay as they are. `format` names the file's format.
GraphSnapshot makeAuthoredSnapshot(const GraphSnapshot& imported,
                                   const std::vector<frontend::AuthoredOp>& ops,
                                   const std::string& format);

} // namespace lathe::api
