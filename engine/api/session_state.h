#pragma once
// Internal to engine/api: what a Session holds between calls.
#include "engine/api/compiled_model.h"
#include "engine/api/session.h"
#include "engine/graph/graph.h"
#include "engine/support/diagnostics.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace lathe::api {

struct Session::State {
  std::string path;
  // How the model was opened by the caller; when its inputs are not all static, compile()
  // with an inputs file opens it again with that file's shapes (specialisedFor says which).
  OpenOptions openOptions;
  bool symbolicInputs = false;
  std::string specialisedFor; // "name:[dims] ..." of the last specialisation; empty if none
  std::shared_ptr<graph::Graph> graph;     // after the pipeline
  std::unique_ptr<CompiledModel> compiled; // what run() executes
  // From the last compile(): its graph after constant folding and its target, which
  // tryKernelSchedule lowers again; the default lowering and kernel times it keeps.
  std::shared_ptr<const graph::Graph> folded;
  std::optional<target::Target> target;
  std::shared_ptr<const lowering::LoweredModel> defaultLowered;
  std::map<std::string, double> defaultMedianMs;
  // The pool tryKernelSchedule times on, kept between calls so that its workers are warm
  // (a fresh pool's first loops pay for starting threads).
  std::unique_ptr<runtime::ThreadPool> trialPool;

  // A new model or bundle: nothing of the last compile applies.
  void forgetCompile() {
    compiled.reset();
    folded.reset();
    target.reset();
    defaultLowered.reset();
    defaultMedianMs.clear();
  }
};

Failure toFailure(const Error& e);

} // namespace lathe::api
