#pragma once
// Internal to engine/api: what a Session holds between calls.
#include "engine/api/session.h"
#include "engine/driver/compile_model.h"
#include "engine/graph/graph.h"
#include "engine/support/diagnostics.h"

#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace lathe::api {

// A compile kept for reuse: the graph it was compiled from (the model specialised to one
// set of input shapes, or the model itself), its code and its report.
struct CompiledVariant {
  std::string shapes;  // Session::State::specialisedFor when it was compiled
  std::string options; // what else decides the code: target, threads, schedule, keepCode
  std::shared_ptr<graph::Graph> graph;
  std::unique_ptr<driver::CompiledModel> compiled;
  std::shared_ptr<const graph::Graph> folded;
  std::optional<target::Target> target;
  std::shared_ptr<const CompileReport> report;
};

struct Session::State {
  std::string path;
  // How the model was opened by the caller; when its inputs are not all static, compile()
  // with an inputs file or input shapes opens it again with those shapes (specialisedFor
  // says which).
  OpenOptions openOptions;
  bool symbolicInputs = false;
  // The inputs as the caller's open declared them, before any specialisation.
  struct DeclaredInput {
    std::string name;
    bool symbolic = false;      // some dim is not a number
    bool integerScalar = false; // one element of an integer type
  };
  std::vector<DeclaredInput> declaredInputs;
  bool specialising = false;  // openModel() is opening the model again for other shapes
  std::string specialisedFor; // "x:[1,16000] sr=16000" of the last specialisation; empty if none
  // The options key (CompiledVariant::options) and report of `compiled`; empty/null when it
  // cannot be reused (a bundle, a schedule file).
  std::string compiledOptions;
  std::shared_ptr<const CompileReport> compiledReport;
  // Earlier compiles of this model, newest first: switching back to a set of input shapes
  // (or threads, or schedule) compiled before reuses its code.
  static constexpr std::size_t kMaxVariants = 4;
  std::list<CompiledVariant> variants;
  std::shared_ptr<graph::Graph> graph;             // after the pipeline
  std::unique_ptr<driver::CompiledModel> compiled; // what run() executes
  // From the last compile(): its graph after constant folding and its target, which
  // tryKernelSchedule lowers again; the default lowering and kernel times it keeps.
  std::shared_ptr<const graph::Graph> folded;
  std::optional<target::Target> target;
  std::shared_ptr<const lowering::LoweredModel> defaultLowered;
  std::map<std::string, double> defaultMedianMs;
  // A compile for code that does not run here: its plan's inputs and outputs (runOnTarget).
  std::shared_ptr<const runtime::ExecutionPlan> layoutPlan;
  // The pool tryKernelSchedule times on, kept between calls so that its workers are warm
  // (a fresh pool's first loops pay for starting threads).
  std::unique_ptr<runtime::ThreadPool> trialPool;

  // The model is opened again (a specialisation, or a new model or bundle): nothing of the
  // last compile applies (a new model or bundle also clears `variants`).
  void forgetCompile() {
    compiledOptions.clear();
    compiledReport.reset();
    compiled.reset();
    folded.reset();
    target.reset();
    defaultLowered.reset();
    defaultMedianMs.clear();
    layoutPlan.reset();
  }
  // Moves the current compile into `variants` (dropping the oldest beyond kMaxVariants);
  // nothing when it cannot be reused.
  void stashCompile();
  // Makes the variant for (shapes, options) current, stashing the current compile; false
  // if there is none.
  bool restoreCompile(const std::string& shapes, const std::string& options);
};

Failure toFailure(const Error& e);

} // namespace lathe::api
