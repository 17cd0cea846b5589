// Session::compile and Session::run.
#include "engine/api/profile_report.h"
#include "engine/api/run_inputs.h"
#include "engine/api/session_state.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/driver/bundle_io.h"
#include "engine/driver/compile_model.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/profiler/peak_flops.h"
#include "engine/profiler/profiler.h"
#include "engine/runtime/npy.h"
#include "engine/runtime/timing_stats.h"
#include "engine/schedule/schedule_io.h"
#include "engine/support/timer.h"
#include "engine/tuner/measure.h"
#include "engine/tuner/records.h"
#include "engine/tuner/workload.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace lathe::api {
namespace {

// What decides which records a compile applies: the file, its size and time.
std::string recordsVersion(const std::string& path) {
  if (path.empty())
    return {};
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto time = std::filesystem::last_write_time(path, ec).time_since_epoch().count();
  return path + ":" + std::to_string(size) + ":" + std::to_string(time);
}

// The best trace per kernel in the records at `path` for this machine, target and threads,
// among records that beat the default they were timed next to by 3 % or more. `notes` says why none
// may apply (records kept for other machines).
driver::TunedLookup tunedLookup(const std::string& path, const std::string& target, int threads,
                                std::vector<std::string>& notes) {
  if (!std::filesystem::is_regular_file(path))
    throw Error(ErrorKind::Invalid, "the tuning records file '" + path + "' does not exist",
                {path, {}, {}});
  auto records = std::make_shared<tuner::RecordDatabase>();
  records->addFile(path, &notes);
  const TuningMachine m = tuningMachine(target, threads);
  const tuner::MachineKey machine{m.target, m.cpu, m.threads};
  for (const tuner::MachineKey& other : records->otherMachines(machine))
    notes.push_back("records for " + other.cpu + ", " + std::to_string(other.threads) +
                    (other.threads == 1 ? " thread" : " threads") +
                    (other.target == m.target ? "" : " (\"" + other.target + "\")") +
                    " do not apply here (" + m.cpu + ", " + std::to_string(m.threads) +
                    (m.threads == 1 ? " thread" : " threads") + ")");
  return [records, machine](const loop::Kernel& kernel) -> std::optional<driver::TunedTrace> {
    const std::string workload = tuner::workloadKey(kernel);
    const tuner::TuningRecord* best = records->best(workload, machine);
    if (!best || !tuner::clearWin(best->medianMs, best->defaultMedianMs))
      return std::nullopt;
    return driver::TunedTrace{best->trace, records->trials(workload, machine)};
  };
}

// The loop IR of kernel k after each step of the trace replayed on it (none without one).
std::vector<std::string> loopIrAfterEachStep(const lowering::LoweredModel& lowered, std::size_t k) {
  std::vector<std::string> out;
  if (k >= lowered.scheduleTraces.size() || lowered.scheduleTraces[k].empty())
    return out;
  const loop::Kernel& naive = lowered.unscheduledKernel(k);
  schedule::Schedule prefix{naive.name, {}};
  for (const schedule::Step& step :
       schedule::parseTrace(naive.name, lowered.scheduleTraces[k]).steps) {
    prefix.steps.push_back(step);
    // Every prefix of a trace that replayed in full replays too.
    out.push_back(loop::toString(schedule::apply(naive, prefix)));
  }
  return out;
}

// Kernel, ONNX nodes and FLOP estimate of each call of the compiled model's plan.
std::vector<profiler::CallInfo> describeCalls(const driver::CompiledModel& compiled) {
  std::vector<profiler::CallInfo> calls;
  for (const exporter::BundleCall& c : compiled.layout.calls)
    calls.push_back({c.kernel, c.nodes, c.flops});
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
    const bool reusable = codegen::runsOnHost(target) && options.bundlePath.empty() &&
                          options.exportDir.empty() && options.schedulePath.empty();
    const std::string optionsKey =
        reusable ? target.text() + "|threads " + std::to_string(options.threads) +
                       (options.keepCode ? "|code" : "") +
                       (options.gpuSchedulesOnHost ? "|gpu-on-host" : "") + "|" +
                       options.scheduleText + "|" + recordsVersion(options.tuningRecords)
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
    driver::requireCompilable(*state_->graph, state_->path);
    std::optional<schedule::ScheduleSet> schedules;
    if (!options.schedulePath.empty())
      schedules = schedule::readFile(options.schedulePath);
    else if (!options.scheduleText.empty())
      schedules = schedule::parseText(options.scheduleText, "schedule");
    driver::CompileSettings settings;
    settings.target = target;
    settings.threads = options.threads;
    settings.keepText = options.keepCode;
    settings.schedules = schedules ? &*schedules : nullptr;
    settings.bundlePath = options.bundlePath;
    settings.dumpDir = options.dumpDir;
    settings.exportDir = options.exportDir;
    settings.exportName = options.exportName;
    settings.modelPath = state_->path;
    settings.cancel = options.cancel;
    settings.gpuSchedulesOnHost = options.gpuSchedulesOnHost;
    if (options.onProgress)
      settings.onStage = [&](int percent, const std::string& name) {
        options.onProgress({percent, name});
      };
    std::vector<std::string> tuningNotes;
    if (!options.tuningRecords.empty())
      settings.tuned =
          tunedLookup(options.tuningRecords, options.target, options.threads, tuningNotes);
    driver::CompileOutcome outcome = driver::compileModel(*state_->graph, settings);
    state_->compiled = std::move(outcome.compiled);

    auto report = std::make_shared<CompileReport>();
    report->target = target.text();
    report->foldedNodes = outcome.foldedNodes;
    report->foldMilliseconds = outcome.foldMilliseconds;
    report->lowerMilliseconds = outcome.lowerMilliseconds;
    report->codegenMilliseconds = outcome.codegenMilliseconds;
    report->arenaBytes = outcome.arenaBytes;
    report->naiveArenaBytes = outcome.naiveArenaBytes;
    report->constantBytes = outcome.constantBytes;
    report->bundleBytes = outcome.bundleBytes;
    if (outcome.exported) {
      const driver::ExportSummary& e = *outcome.exported;
      ExportReport exported;
      exported.folder = e.folder;
      exported.triple = e.triple;
      exported.codeBytes = e.codeBytes;
      exported.kernelCodeBytes = e.kernelCodeBytes;
      exported.weightBytes = e.weightBytes;
      exported.arenaBytes = e.arenaBytes;
      exported.scratchBytes = e.scratchBytes;
      exported.ioBytes = e.ioBytes;
      exported.board = e.board;
      exported.boardFlashBytes = e.boardFlashBytes;
      exported.boardRamBytes = e.boardRamBytes;
      exported.stackBytes = e.stackBytes;
      exported.buildCommand = e.buildCommand;
      exported.runCommand = e.runCommand;
      for (const driver::ExportedFile& f : e.files)
        exported.files.push_back({f.name, f.description, f.bytes});
      report->exported = std::move(exported);
    }
    const lowering::LoweredModel& lowered = *outcome.lowered;
    const codegen::JitKernels* jit = state_->compiled ? state_->compiled->jit.get() : nullptr;
    for (std::size_t k = 0; k < lowered.kernels.size(); ++k) {
      KernelReport kr;
      kr.name = lowered.kernels[k].name;
      kr.nodes = lowered.kernels[k].sourceNodes;
      kr.loopIr = loop::toString(lowered.kernels[k]);
      if (k < lowered.scheduleTraces.size())
        kr.schedule = lowered.scheduleTraces[k];
      kr.defaultTrace = lowered.unscheduledKernel(k).defaultTrace;
      if (!kr.schedule.empty())
        kr.naiveLoopIr = loop::toString(lowered.unscheduledKernel(k));
      kr.strategy = lowered.kernels[k].strategy;
      if (k < outcome.tunedTrials.size() && outcome.tunedTrials[k] > 0) {
        kr.tunedTrials = outcome.tunedTrials[k];
        ++report->tunedKernels;
      }
      const std::vector<codegen::KernelCode>& code = jit ? jit->code() : outcome.crossCode;
      if (k < code.size()) {
        kr.codeBytes = code[k].codeBytes;
        for (const codegen::GpuFunctionCode& f : code[k].gpuFunctions) {
          GpuLaunchReport g;
          g.name = f.name;
          for (int i = 0; i < 3; ++i) {
            g.grid[i] = f.grid[i];
            g.block[i] = f.block[i];
          }
          g.registers = f.registers;
          g.sharedBytes = f.sharedBytes;
          g.stackBytes = f.stackBytes;
          g.spillStores = f.spillStores;
          g.spillLoads = f.spillLoads;
          kr.gpuLaunches.push_back(g);
        }
        kr.ptxasNote = code[k].ptxasLog;
        if (options.keepCode) {
          kr.traceLoopIrs = loopIrAfterEachStep(lowered, k);
          kr.llvmIr = code[k].llvmIr;
          kr.llvmIrOptimized = code[k].llvmIrOptimized;
          kr.assembly = code[k].assembly;
          kr.assemblyLoopLines = code[k].assemblyLoopLines;
          kr.llvmIrLoopLines = code[k].llvmIrLoopLines;
          kr.llvmIrOptimizedLoopLines = code[k].llvmIrOptimizedLoopLines;
        }
      }
      report->kernels.push_back(std::move(kr));
    }
    if (!options.tuningRecords.empty() && report->tunedKernels == 0)
      report->tuningNotes = std::move(tuningNotes);
    state_->folded = outcome.folded;
    state_->target = target;
    state_->layoutPlan = outcome.layoutPlan;
    // Kernels are tried against the default lowering: without schedules, this one.
    state_->defaultLowered = settings.schedules || settings.tuned ? nullptr : outcome.lowered;
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
    std::unique_ptr<driver::CompiledModel> loaded = driver::loadCompiledBundle(path, threads);
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
          toRunProfile(recorder->finish(describeCalls(*state_->compiled)),
                       profiler::measurePeakGflops(exec.threads()), profiler::peakFlopsIsa());
    const runtime::TimingStats stats = runtime::computeTimingStats(report->latenciesMs);
    report->meanMs = stats.mean;
    report->medianMs = stats.median;
    report->minMs = stats.min;
    report->maxMs = stats.max;
    report->stdMs = stats.stddev;
    reportOutputs(plan, std::move(outputs), options.topK, options.outputsNpz, *report);
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
