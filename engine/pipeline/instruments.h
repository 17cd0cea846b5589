#pragma once
// Standard pass instruments: print IR after each pass, time each pass, keep a trace of
// snapshots for the GUI.

#include "engine/graph/printer.h"
#include "engine/pipeline/pass_manager.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace lathe::pipeline {

// Writes "// ----- IR after <pass> -----" and the IR to a stream.
class PrintIrAfterPass : public PassInstrument {
public:
  explicit PrintIrAfterPass(std::ostream& out, bool onlyChanged = false,
                            graph::PrintOptions options = {})
      : out_(out), onlyChanged_(onlyChanged), options_(options) {}
  void beforePipeline(const graph::Graph& graph) override;
  void afterPass(const PassInfo& pass, const graph::Graph& graph, const PassResult& r) override;

private:
  std::ostream& out_;
  bool onlyChanged_;
  graph::PrintOptions options_;
};

struct PassTiming {
  std::string name;
  double milliseconds = 0;
  bool changed = false;
  std::size_t nodesAfter = 0;
};

class PassTimer : public PassInstrument {
public:
  void afterPass(const PassInfo& pass, const graph::Graph& graph, const PassResult& r) override;
  const std::vector<PassTiming>& timings() const { return timings_; }
  double totalMilliseconds() const;

private:
  std::vector<PassTiming> timings_;
};

// One entry per pass: the IR text before and after, and a copy of the graph after it
// (weights shared, not copied).
struct PassSnapshot {
  std::string name;
  std::string description;
  double milliseconds = 0;
  bool changed = false;
  std::string irBefore;
  std::string irAfter;
  std::shared_ptr<const graph::Graph> graphAfter;
};

class PassTrace : public PassInstrument {
public:
  explicit PassTrace(graph::PrintOptions options = {}) : options_(options) {}
  void beforePipeline(const graph::Graph& graph) override;
  void afterPass(const PassInfo& pass, const graph::Graph& graph, const PassResult& r) override;
  const std::vector<PassSnapshot>& snapshots() const { return snapshots_; }
  const std::string& initialIr() const { return initialIr_; }

private:
  graph::PrintOptions options_;
  std::string initialIr_;
  std::string lastIr_;
  std::vector<PassSnapshot> snapshots_;
};

} // namespace lathe::pipeline
