#pragma once
// Internal to engine/api: what a Session holds between calls.
#include "engine/api/compiled_model.h"
#include "engine/api/session.h"
#include "engine/graph/graph.h"
#include "engine/support/diagnostics.h"

#include <memory>
#include <string>

namespace lathe::api {

struct Session::State {
  std::string path;
  std::shared_ptr<graph::Graph> graph; // after the pipeline
  std::unique_ptr<CompiledModel> compiled; // what run() executes
};

Failure toFailure(const Error& e);

} // namespace lathe::api
