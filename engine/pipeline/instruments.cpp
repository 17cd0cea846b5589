#include "engine/pipeline/instruments.h"

#include <ostream>

namespace lathe::pipeline {

// Snapshots keep small constants (shapes, axes) but not weights: holding every pass's
// weights would multiply memory by the number of passes that rewrite them.
constexpr std::int64_t kSnapshotInlineElements = 4096;

void PrintIrAfterPass::beforePipeline(const graph::Graph& graph) {
  out_ << "// ----- IR after import -----\n" << graph::printGraph(graph, options_);
}

void PrintIrAfterPass::afterPass(const PassInfo& pass, const graph::Graph& graph,
                                 const PassResult& r) {
  if (onlyChanged_ && !r.changed)
    return;
  out_ << "// ----- IR after " << pass.name << (r.changed ? "" : " (unchanged)") << " -----\n"
       << graph::printGraph(graph, options_);
}

void PassTimer::afterPass(const PassInfo& pass, const graph::Graph& graph, const PassResult& r) {
  timings_.push_back({std::string(pass.name), r.milliseconds, r.changed, graph.nodes().size()});
}

double PassTimer::totalMilliseconds() const {
  double total = 0;
  for (const PassTiming& t : timings_)
    total += t.milliseconds;
  return total;
}

void PassTrace::beforePipeline(const graph::Graph& graph) {
  initialIr_ = graph::printGraph(graph, options_);
  lastIr_ = initialIr_;
}

void PassTrace::afterPass(const PassInfo& pass, const graph::Graph& graph, const PassResult& r) {
  PassSnapshot s;
  s.name = pass.name;
  s.description = pass.description;
  s.milliseconds = r.milliseconds;
  s.irBefore = lastIr_;
  s.irAfter = graph::printGraph(graph, options_);
  // A pass may report a change that left the printed IR identical (e.g. a reorder that
  // restored the order); the text is what the user sees, so it decides.
  s.changed = r.changed && s.irAfter != s.irBefore;
  s.graphAfter = graph.clone(kSnapshotInlineElements);
  lastIr_ = s.irAfter;
  snapshots_.push_back(std::move(s));
}

} // namespace lathe::pipeline
