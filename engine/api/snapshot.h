#pragma once
// Internal to engine/api: turns graph IR into the plain snapshot structs.
#include "engine/api/session.h"
#include "engine/graph/graph.h"

namespace lathe::api {

TensorSummary summarizeValue(const graph::Value& value);
GraphSnapshot makeSnapshot(const graph::Graph& graph);

} // namespace lathe::api
