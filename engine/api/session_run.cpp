// Session::compile and Session::run.
#include "engine/api/bundle_io.h"
#include "engine/api/fold_constant_subgraphs.h"
#include "engine/api/profile_report.h"
#include "engine/api/run_inputs.h"
#include "engine/api/session_state.h"
#include "engine/graph/op_table.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/lowering/lower_graph.h"
#include "engine/profiler/kernel_flops.h"
#include "engine/profiler/peak_flops.h"
#include "engine/profiler/profiler.h"
#include "engine/runtime/memory_plan.h"
#include "engine/runtime/npy.h"
#include "engine/runtime/timing_stats.h"
#include "engine/schedule/schedule_io.h"
#include "engine/support/timer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace lathe::api {
namespace {

OutputSummary summarize(const std::string& name, const runtime::Tensor& t, int topK) {
  OutputSummary s;
  s.name = name;
  s.dtype = std::string(runtime::elementTypeName(t.elementType()));
  s.shape = t.shape();
  const std::int64_t n = t.numElements();
  if (n == 0)
    return s;
  s.min = s.max = t.elementAsDouble(0);
  double sum = 0;
  std::vector<std::pair<std::int64_t, double>> all;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = t.elementAsDouble(i);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    if (topK > 0)
      all.emplace_back(i, v);
  }
  s.mean = sum / static_cast<double>(n);
  if (topK > 0) {
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(topK), all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                      [](const auto& a, const auto& b) { return a.second > b.second; });
    s.top.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return s;
}

// Memory figures of a lowered model without compiling it for this machine.
void planOnly(const lowering::LoweredModel& lowered, CompileReport& report) {
  std::vector<std::optional<std::uint64_t>> bytes;
  for (const lowering::TensorSlot& slot : lowered.slots) {
    if (slot.kind == lowering::SlotKind::Constant)
      report.constantBytes += static_cast<std::uint64_t>(slot.byteSize());
    bytes.push_back(slot.kind == lowering::SlotKind::Intermediate
                        ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(slot.byteSize()))
                        : std::nullopt);
  }
  std::vector<const std::vector<int>*> args;
  for (const lowering::KernelCall& call : lowered.calls)
    args.push_back(&call.args);
  // The same lifetimes and placement as the executor's arena.
  const runtime::MemoryPlan plan = runtime::planMemory(runtime::lifetimeRequests(bytes, args));
  report.arenaBytes = plan.peakBytes;
  report.naiveArenaBytes = plan.naiveBytes;
}

// A model opened to be looked at may use ops Lathe does not know: name them all.
void collectUnknownOps(const graph::Graph& g, std::vector<std::string>& found) {
  for (const auto& n : g.nodes()) {
    if (!graph::findOp(n->domain(), n->opType()))
      found.push_back("'" + n->name + "' (" +
                      (n->domain().empty() ? std::string() : n->domain() + "::") + n->opType() +
                      ")");
    for (const auto& [key, attr] : n->attributes)
      for (const graph::Graph* sub : attr.graphs())
        collectUnknownOps(*sub, found);
  }
}

void requireUnknownOpsAbsent(const graph::Graph& g, const std::string& path) {
  if (!g.hasUnknownOps)
    return;
  std::vector<std::string> found;
  collectUnknownOps(g, found);
  if (found.empty())
    return;
  std::string list;
  for (std::size_t i = 0; i < found.size() && i < 8; ++i)
    list += (i ? ", " : "") + found[i];
  if (found.size() > 8)
    list += " and " + std::to_string(found.size() - 8) + " more";
  throw Error(
      ErrorKind::Unsupported,
      std::to_string(found.size()) + (found.size() == 1 ? " node uses" : " nodes use") +
          " an op Lathe does not know, so the model can be looked at but not compiled: " + list,
      {path, {}, {}});
}

// Code generation needs static shapes: name every input that is not, and how to fix it.
// The symbols stay symbols: a made-up number would only move the failure elsewhere.
void requireStaticInputs(const graph::Graph& g) {
  std::string listed, example, symbols;
  for (const graph::Value* in : g.inputs) {
    if (in->type.isStatic())
      continue;
    listed += (listed.empty() ? "" : ", ") + in->name() + " " + graph::toString(in->type);
    std::string dims;
    if (in->type.hasRank())
      for (const graph::Dim& d : *in->type.shape) {
        const std::string text = graph::toString(d);
        dims += (dims.empty() ? "" : ",") + text;
        if (!d.isKnown() && (", " + symbols + ",").find(", " + text + ",") == std::string::npos)
          symbols += (symbols.empty() ? "" : ", ") + text;
      }
    example += (example.empty() ? "" : " ") + in->name() + ":[" + dims + "]";
  }
  if (!listed.empty())
    throw Error(
        ErrorKind::Invalid,
        "inputs with symbolic or unknown dims: " + listed + "; fix them with " +
            "--input-shapes \"" + example + "\" with numbers in place of " +
            (symbols.empty() ? std::string("the unknown ranks") : symbols) +
            " (or give the inputs: lathe run and lathe compile take the shapes, and integer "
            "scalars, of the arrays in --inputs FILE.npz)");
}

// Kernel, ONNX nodes and FLOP estimate of each call of the compiled model's plan.
std::vector<profiler::CallInfo> describeCalls(const CompiledModel& compiled,
                                              const graph::Graph* graph) {
  const auto& planCalls = compiled.executor->plan().calls;
  std::vector<std::vector<std::string>> nodes(planCalls.size());
  if (compiled.lowered.calls.size() == planCalls.size()) {
    for (std::size_t c = 0; c < planCalls.size(); ++c)
      nodes[c] = compiled.lowered.calls[c].nodes;
  } else if (compiled.bundle && compiled.bundle->manifest.calls.size() == planCalls.size()) {
    for (std::size_t c = 0; c < planCalls.size(); ++c)
      nodes[c] = compiled.bundle->manifest.calls[c].nodes;
  }
  // From the graph when there is one; a bundle carries the estimate in its manifest.
  std::vector<double> flops(planCalls.size(), 0.0);
  if (graph && compiled.lowered.calls.size() == planCalls.size())
    flops = profiler::estimateCallFlops(*graph, nodes);
  else if (compiled.bundle && compiled.bundle->manifest.calls.size() == planCalls.size())
    for (std::size_t c = 0; c < planCalls.size(); ++c)
      flops[c] = compiled.bundle->manifest.calls[c].flops;
  std::vector<profiler::CallInfo> calls;
  for (std::size_t c = 0; c < planCalls.size(); ++c)
    calls.push_back({planCalls[c].kernel, std::move(nodes[c]), flops[c]});
  return calls;
}

} // namespace

// Test-only: LATHE_INJECT_FAULT=compile or =run makes that call throw a plain
// std::exception half-way, as a bug in the engine would; the workbench's fault tests
// (tests/views/tst_fault_injection.cpp) check that nothing of the open model is lost.
static void injectedFault(const char* where) {
  const char* v = std::getenv("LATHE_INJECT_FAULT");
  if (v && std::strcmp(v, where) == 0)
    throw std::runtime_error(std::string("injected fault in ") + where + " (LATHE_INJECT_FAULT)");
}

CompileResult Session::compile(const CompileOptions& options) {
  CompileResult result;
  // The compile current before this one: a failed compile makes it current again.
  std::optional<std::pair<std::string, std::string>> previous;
  const auto restorePrevious = [&] {
    if (previous && !state_->compiled && !previous->second.empty())
      state_->restoreCompile(previous->first, previous->second);
  };
  try {
    if (!state_->graph)
      throw Error(ErrorKind::Invalid, "no model is open");
    injectedFault("compile");
    const std::string shapes =
        state_->symbolicInputs ? specialisationKey(options.inputsFile, options.inputShapes) : "";
    // Code compiled in memory for the host is kept per set of shapes and options, and a
    // compile asked for again is not done again.
    const target::Target target = target::parseTarget(options.target);
    const bool reusable =
        target.isHost() && options.bundlePath.empty() && options.schedulePath.empty();
    const std::string optionsKey =
        reusable ? target.text() + "|threads " + std::to_string(options.threads) +
                       (options.keepCode ? "|code" : "") + "|" + options.scheduleText
                 : std::string();
    if (reusable && ((state_->compiled && state_->specialisedFor == shapes &&
                      state_->compiledOptions == optionsKey && state_->compiledReport) ||
                     state_->restoreCompile(shapes, optionsKey))) {
      auto reused = std::make_shared<CompileReport>(*state_->compiledReport);
      reused->reused = true;
      result.report = std::move(reused);
      if (options.onProgress)
        options.onProgress({100, "done (compiled before for these shapes and options)"});
      return result;
    }
    previous = {state_->specialisedFor, state_->compiledOptions};
    state_->stashCompile();
    if (state_->symbolicInputs)
      specialiseForInputs(options.inputsFile, options.inputShapes, shapes, options.cancel);
    requireUnknownOpsAbsent(*state_->graph, state_->path);
    requireStaticInputs(*state_->graph);
    if (state_->graph->outputs.empty())
      throw Error(ErrorKind::Invalid, "the model has no outputs: there is nothing to compute",
                  {state_->path, {}, {}});
    auto stage = [&](int percent, const std::string& name) {
      if (options.cancel && options.cancel->load())
        throw Error(ErrorKind::Cancelled, "compile cancelled");
      if (options.onProgress)
        options.onProgress({percent, name});
    };
    auto report = std::make_shared<CompileReport>();
    report->target = target.text();
    // Constant subgraphs the pipeline could not fold are computed once, here.
    stage(0, "folding constants");
    const std::shared_ptr<graph::Graph> folded = state_->graph->clone();
    Stopwatch foldWatch;
    report->foldedNodes = foldConstantSubgraphs(*folded);
    report->foldMilliseconds = foldWatch.elapsedMs();
    stage(10, "lowering and generating code");
    // In memory (JIT) when running here without a bundle; otherwise the code is generated
    // once, into the bundle, and a host bundle is loaded back for run().
    const bool inMemory = target.isHost() && options.bundlePath.empty();
    std::optional<schedule::ScheduleSet> schedules;
    if (!options.schedulePath.empty())
      schedules = schedule::readFile(options.schedulePath);
    else if (!options.scheduleText.empty())
      schedules = schedule::parseText(options.scheduleText, "schedule");
    const schedule::ScheduleSet* scheduleSet = schedules ? &*schedules : nullptr;
    lowering::LoweredModel bundleLowered;
    if (inMemory) {
      state_->compiled =
          compileForHost(*folded, target, options.threads, options.keepCode, scheduleSet);
      report->lowerMilliseconds = state_->compiled->lowerMilliseconds;
      report->codegenMilliseconds = state_->compiled->codegenMilliseconds;
      report->arenaBytes = state_->compiled->executor->arenaBytes();
      report->naiveArenaBytes = state_->compiled->executor->naiveArenaBytes();
      report->constantBytes = state_->compiled->executor->constantBytes();
    } else {
      Stopwatch watch;
      bundleLowered = lowerModel(*folded, target, scheduleSet);
      report->lowerMilliseconds = watch.elapsedMs();
      planOnly(bundleLowered, *report);
      stage(20, "generating code");
    }
    const lowering::LoweredModel& lowered = inMemory ? state_->compiled->lowered : bundleLowered;
    if (!options.bundlePath.empty()) {
      Stopwatch watch;
      std::vector<std::vector<std::string>> callNodes;
      for (const lowering::KernelCall& c : lowered.calls)
        callNodes.push_back(c.nodes);
      writeCompiledBundle(lowered, target, state_->path, options.bundlePath, options.dumpDir,
                          profiler::estimateCallFlops(*folded, callNodes), *report);
      report->codegenMilliseconds += watch.elapsedMs();
      if (target.isHost())
        state_->compiled = loadCompiledBundle(options.bundlePath, options.threads);
    }
    for (std::size_t k = 0; k < lowered.kernels.size(); ++k) {
      KernelReport kr;
      kr.name = lowered.kernels[k].name;
      kr.nodes = lowered.kernels[k].sourceNodes;
      kr.loopIr = loop::toString(lowered.kernels[k]);
      if (k < lowered.scheduleTraces.size())
        kr.schedule = lowered.scheduleTraces[k];
      kr.strategy = lowered.kernels[k].strategy;
      if (options.keepCode && state_->compiled && k < state_->compiled->jit->code().size()) {
        const auto& code = state_->compiled->jit->code()[k];
        kr.llvmIr = code.llvmIr;
        kr.llvmIrOptimized = code.llvmIrOptimized;
        kr.assembly = code.assembly;
      }
      report->kernels.push_back(std::move(kr));
    }
    state_->folded = folded;
    state_->target = target;
    state_->defaultLowered.reset();
    state_->defaultMedianMs.clear();
    report->specialisedFor = shapes;
    if (reusable && state_->compiled) {
      state_->compiledOptions = optionsKey;
      state_->compiledReport = report;
    }
    if (options.onProgress)
      options.onProgress({100, "done"});
    result.report = std::move(report);
  } catch (const Error& e) {
    Error located = e.within({state_->path, {}, {}});
    result.failure = toFailure(located);
    restorePrevious();
  } catch (const std::exception& e) {
    result.failure = Failure{
        "internal", state_->path + ": internal error: " + e.what(), state_->path, {}, {}, e.what()};
    restorePrevious();
  }
  return result;
}

OpenResult Session::openBundle(const std::string& path, int threads) {
  OpenResult result;
  try {
    Stopwatch watch;
    std::unique_ptr<CompiledModel> loaded = loadCompiledBundle(path, threads);
    state_->forgetCompile();
    state_->variants.clear();
    state_->declaredInputs.clear();
    state_->symbolicInputs = false;
    state_->specialisedFor.clear();
    state_->compiled = std::move(loaded);
    state_->graph.reset();
    state_->path = path;
    auto report = std::make_shared<ModelReport>();
    report->path = path;
    report->importMilliseconds = watch.elapsedMs();
    const runtime::ExecutionPlan& plan = state_->compiled->executor->plan();
    auto summary = [&](int slot) {
      const runtime::PlanSlot& s = plan.slots[slot];
      TensorSummary t;
      t.name = s.name;
      t.dtype = std::string(runtime::elementTypeName(s.type));
      std::string text = t.dtype + "[";
      for (std::size_t i = 0; i < s.shape.size(); ++i) {
        t.dims.push_back(std::to_string(s.shape[i]));
        text += (i ? "," : "") + t.dims.back();
      }
      t.typeText = text + "]";
      return t;
    };
    for (int s : plan.inputs)
      report->imported.inputs.push_back(summary(s));
    for (int s : plan.outputs)
      report->imported.outputs.push_back(summary(s));
    report->imported.name = std::filesystem::path(path).stem().string();
    report->final = report->imported;
    result.report = std::move(report);
  } catch (const Error& e) {
    result.failure = toFailure(e.within({path, {}, {}}));
  } catch (const std::exception& e) {
    result.failure =
        Failure{"internal", path + ": internal error: " + e.what(), path, {}, {}, e.what()};
  }
  return result;
}

RunResult Session::run(const RunOptions& options) {
  RunResult result;
  try {
    injectedFault("run");
    if (!state_->compiled) {
      CompileOptions compileOptions;
      compileOptions.inputsFile = options.inputsNpz; // the shapes of a symbolic model
      CompileResult c = compile(compileOptions);
      if (!c.ok()) {
        result.failure = c.failure;
        return result;
      }
    }
    runtime::Executor& exec = *state_->compiled->executor;
    const auto& plan = exec.plan();
    std::vector<runtime::Tensor> inputs =
        prepareRunInputs(plan, options.inputsNpz, options.fill, options.seed);
    auto report = std::make_shared<RunReport>();
    report->threads = exec.threads();
    std::vector<runtime::Tensor> outputs;
    const int repeat = std::max(1, options.repeat);
    std::optional<profiler::Profiler> recorder;
    if (options.profile)
      recorder.emplace(*exec.pool(), plan.calls.size(), repeat);
    runtime::CallObserver* observer = recorder ? &*recorder : nullptr;
    if (repeat > 1 || recorder) { // warm-up; with profiling it sizes the event buffers
      if (recorder)
        recorder->beginRun();
      outputs = exec.run(inputs, observer);
      if (recorder) {
        recorder->endRun();
        recorder->resetForRuns(repeat);
      }
    }
    for (int r = 0; r < repeat; ++r) {
      if (options.cancel && options.cancel->load())
        throw Error(ErrorKind::Cancelled, "run cancelled");
      if (options.onProgress)
        options.onProgress(
            {r * 100 / repeat, "run " + std::to_string(r + 1) + " of " + std::to_string(repeat)});
      Stopwatch watch;
      if (recorder)
        recorder->beginRun();
      outputs = exec.run(inputs, observer);
      if (recorder)
        recorder->endRun();
      report->latenciesMs.push_back(watch.elapsedMs());
    }
    if (recorder)
      report->profile =
          toRunProfile(recorder->finish(describeCalls(*state_->compiled, state_->graph.get())),
                       profiler::measurePeakGflops(exec.threads()), profiler::peakFlopsIsa());
    const runtime::TimingStats stats = runtime::computeTimingStats(report->latenciesMs);
    report->meanMs = stats.mean;
    report->medianMs = stats.median;
    report->minMs = stats.min;
    report->maxMs = stats.max;
    report->stdMs = stats.stddev;
    std::vector<runtime::NamedTensor> named;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const std::string& name = plan.slots[plan.outputs[o]].name;
      report->outputs.push_back(summarize(name, outputs[o], options.topK));
      if (!options.outputsNpz.empty())
        named.push_back({name, std::move(outputs[o])});
    }
    if (!options.outputsNpz.empty())
      runtime::writeNpz(options.outputsNpz, named);
    result.report = std::move(report);
  } catch (const Error& e) {
    result.failure = toFailure(e.within({state_->path, {}, {}}));
  } catch (const std::exception& e) {
    result.failure = Failure{
        "internal", state_->path + ": internal error: " + e.what(), state_->path, {}, {}, e.what()};
  }
  return result;
}

} // namespace lathe::api
