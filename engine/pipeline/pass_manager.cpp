#include "engine/pipeline/pass_manager.h"

#include "engine/graph/verifier.h"
#include "engine/graph_passes/eliminate_common_subexpressions.h"
#include "engine/graph_passes/eliminate_dead_code.h"
#include "engine/graph_passes/fold_batch_norm.h"
#include "engine/graph_passes/fold_constants.h"
#include "engine/graph_passes/fuse_elementwise.h"
#include "engine/graph_passes/infer_shapes.h"
#include "engine/graph_passes/inline_constant_if.h"
#include "engine/graph_passes/layout_nchwc.h"
#include "engine/graph_passes/layout_weights.h"
#include "engine/graph_passes/simplify_inference.h"
#include "engine/graph_passes/winograd_nchwc.h"
#include "engine/support/diagnostics.h"
#include "engine/support/timer.h"

#include <algorithm>

namespace lathe::pipeline {
namespace {
constexpr PassInfo kPasses[] = {
#define LATHE_PASS(NAME, FUNCTION, DESCRIPTION) {NAME, &passes::FUNCTION, DESCRIPTION},
#include "engine/pipeline/passes.def"
#undef LATHE_PASS
};
} // namespace

std::span<const PassInfo> allPasses() {
  return kPasses;
}

const PassInfo* findPass(std::string_view name) {
  for (const PassInfo& p : kPasses)
    if (p.name == name)
      return &p;
  return nullptr;
}

void PassManager::addPasses(const std::vector<const PassInfo*>& passes) {
  passes_.insert(passes_.end(), passes.begin(), passes.end());
}

void PassManager::run(graph::Graph& graph, const std::atomic<bool>* cancel) {
  for (PassInstrument* i : instruments_)
    i->beforePipeline(graph);
  for (const PassInfo* pass : passes_) {
    if (cancel && cancel->load())
      throw Error(ErrorKind::Cancelled, "cancelled before pass " + std::string(pass->name));
    for (PassInstrument* i : instruments_)
      i->beforePass(*pass, graph);
    Stopwatch watch;
    PassResult result;
    result.changed = pass->run(graph);
    result.milliseconds = watch.elapsedMs();
    auto issues = graph::verifyGraph(graph);
    if (!issues.empty())
      throw Error(ErrorKind::Internal, "pass " + std::string(pass->name) +
                                           " left an invalid graph: " + issues.front().text());
    for (PassInstrument* i : instruments_)
      i->afterPass(*pass, graph, result);
  }
  for (PassInstrument* i : instruments_)
    i->afterPipeline(graph);
}

std::vector<const PassInfo*> defaultPipeline() {
  // One straight line; every step named. Shapes are inferred again after folding because
  // folded shape chains turn Reshape targets into constants.
  std::vector<const PassInfo*> p;
  auto add = [&p](std::string_view name) {
    const PassInfo* pass = findPass(name);
    LATHE_CHECK(pass, "unknown pass in the default pipeline");
    p.push_back(pass);
  };
  add("infer-shapes");
  add("simplify-inference");
  add("fold-constants");
  // A branch taken for certain becomes plain nodes whose shapes and constants are then
  // inferred and folded like the rest.
  add("inline-constant-if");
  add("infer-shapes");
  add("fold-constants");
  add("infer-shapes");
  add("eliminate-common-subexpressions");
  add("fold-batchnorm");
  add("eliminate-dead-code");
  add("layout-weights");
  add("layout-nchwc");
  add("winograd-nchwc");
  add("fuse-elementwise");
  return p;
}

} // namespace lathe::pipeline
