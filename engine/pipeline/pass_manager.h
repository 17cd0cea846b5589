#pragma once
// Runs graph passes in order and calls instruments before and after each one. Passes know
// nothing about printing or timing; those are instruments.

#include "engine/graph/graph.h"

#include <atomic>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace lathe::pipeline {

// A pass returns whether it changed the graph.
using PassFunction = bool (*)(graph::Graph&);

struct PassInfo {
  std::string_view name;
  PassFunction run;
  std::string_view description;
};

std::span<const PassInfo> allPasses();
const PassInfo* findPass(std::string_view name); // nullptr if unknown

struct PassResult {
  bool changed = false;
  double milliseconds = 0;
};

class PassInstrument {
public:
  virtual ~PassInstrument() = default;
  virtual void beforePipeline(const graph::Graph&) {}
  virtual void beforePass(const PassInfo&, const graph::Graph&) {}
  virtual void afterPass(const PassInfo&, const graph::Graph&, const PassResult&) {}
  virtual void afterPipeline(const graph::Graph&) {}
};

class PassManager {
public:
  void addPass(const PassInfo& pass) { passes_.push_back(&pass); }
  void addPasses(const std::vector<const PassInfo*>& passes);
  // Instruments are called in the order added; the manager does not own them.
  void addInstrument(PassInstrument* instrument) { instruments_.push_back(instrument); }
  const std::vector<const PassInfo*>& passes() const { return passes_; }

  // Runs every pass; `cancel` is checked between passes (throws Error of kind Cancelled).
  // After each pass the graph is verified: a pass that breaks it is an internal error.
  void run(graph::Graph& graph, const std::atomic<bool>* cancel = nullptr);

private:
  std::vector<const PassInfo*> passes_;
  std::vector<PassInstrument*> instruments_;
};

// The default graph pipeline, in order.
std::vector<const PassInfo*> defaultPipeline();

} // namespace lathe::pipeline
