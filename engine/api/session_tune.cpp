// Session::tune and the records helpers of engine/api/tuning.h.
#include "engine/api/session_state.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/runtime/thread_pool.h"
#include "engine/tuner/records.h"
#include "engine/tuner/tuner.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

namespace lathe::api {

TuningMachine tuningMachine(const std::string& targetText, int threads) {
  const target::Target target = target::parseTarget(targetText);
  TuningMachine m;
  m.target = target.text();
  m.cpu = target.cpu.empty() ? codegen::hostCpuName() : target.cpu;
  m.threads = threads > 0 ? threads : runtime::ThreadPool::defaultThreadCount();
  return m;
}

bool clearWin(double bestMs, double defaultMs) {
  return tuner::clearWin(bestMs, defaultMs);
}

namespace {

double medianOf(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

} // namespace

std::optional<ModelCheck> Session::checkInModel(const CompileOptions& defaults,
                                                const TuneOptions& options,
                                                std::vector<TunedWorkload>& workloads) {
  CompileOptions withRecords = defaults;
  withRecords.tuningRecords = options.recordsPath;
  RunOptions run;
  run.repeat = std::max(2, options.checkRepeat);
  run.profile = true;
  run.cancel = options.cancel;
  run.inputsNpz = options.inputsFile;
  const TuningMachine machine = tuningMachine(options.target, options.threads);
  const tuner::MachineKey key{machine.target, machine.cpu, machine.threads};
  ModelCheck check;
  // Each pass times the model with the defaults and with the records in turns; a record that
  // applied and made its kernels clearly slower is vetoed, and its workload's next best (if
  // any) is checked in the next pass. The last pass's vetoes set every record of their
  // workload aside, so that nothing unchecked applies.
  std::vector<TunedWorkload*> checking;
  for (TunedWorkload& w : workloads)
    checking.push_back(&w);
  for (int pass = 0; pass < std::max(1, options.checkPasses) && !checking.empty(); ++pass) {
    // Per compile (0: defaults, 1: records): latencies, and each kernel's time per run.
    std::vector<double> latencies[2];
    std::map<std::string, std::vector<double>> kernelMs[2];
    for (int round = 0; round < options.checkRounds; ++round)
      for (int tuned = 0; tuned < 2; ++tuned) {
        if (options.cancel && options.cancel->load())
          return std::nullopt;
        // Both compiles stay in the session's cache: after the first round nothing compiles
        // (a veto changes the records file, so the next pass compiles them again).
        const CompileResult compiled = compile(tuned ? withRecords : defaults);
        if (!compiled.ok())
          throw Error(ErrorKind::Internal,
                      "the check in the model could not compile it: " + compiled.failure->message);
        if (tuned) {
          check.tunedKernels = compiled.report->tunedKernels;
          check.notes = compiled.report->tuningNotes;
        }
        const RunResult r = this->run(run);
        if (!r.ok()) {
          if (r.failure->kind == "cancelled")
            return std::nullopt;
          throw Error(ErrorKind::Internal,
                      "the check in the model could not run it: " + r.failure->message);
        }
        latencies[tuned].insert(latencies[tuned].end(), r.report->latenciesMs.begin(),
                                r.report->latenciesMs.end());
        if (r.report->profile)
          for (const KernelProfileRow& k : r.report->profile->rows)
            kernelMs[tuned][k.kernel].push_back(k.totalMs / run.repeat);
      }
    check.passes = pass + 1;
    check.rounds = options.checkRounds;
    check.runs = options.checkRounds * run.repeat;
    check.defaultMs = medianOf(latencies[0]);
    check.tunedMs = medianOf(latencies[1]);
    const bool last = pass + 1 == std::max(1, options.checkPasses);
    std::vector<TunedWorkload*> next;
    for (TunedWorkload* w : checking) {
      w->inModelDefaultMs = w->inModelTunedMs = 0;
      for (const std::string& kernel : w->kernels) {
        w->inModelDefaultMs += medianOf(kernelMs[0][kernel]);
        w->inModelTunedMs += medianOf(kernelMs[1][kernel]);
      }
      if (!clearWin(w->bestMs, w->bestDefaultMs) || w->inModelTunedMs <= 0 ||
          !clearWin(w->inModelDefaultMs, w->inModelTunedMs))
        continue;
      tuner::TuningRecord veto;
      veto.workload = w->workload;
      veto.kernel = w->kernels.front();
      veto.machine = key;
      veto.trace = w->bestTrace;
      std::ostringstream why;
      why << (last ? tuner::kInModelVeto : tuner::kInModelTraceVeto) << std::fixed
          << std::setprecision(4) << w->inModelTunedMs << " ms against the default's "
          << w->inModelDefaultMs << " ms per run (" << check.runs << " runs each, in turns)";
      veto.error = why.str();
      veto.time = tuner::utcNow();
      veto.version = tuner::latheVersion();
      tuner::appendRecord(options.recordsPath, veto);
      ++check.vetoes;
      // The next best, if it is still a clear win where it was measured, is checked next.
      if (!last) {
        tuner::RecordDatabase records;
        records.addFile(options.recordsPath);
        const tuner::TuningRecord* best = records.best(w->workload, key);
        if (best && clearWin(best->medianMs, best->defaultMedianMs)) {
          w->bestMs = best->medianMs;
          w->bestDefaultMs = best->defaultMedianMs;
          w->bestTrace = best->trace;
          ++w->nextBests;
          ++check.nextBests;
          next.push_back(w);
          continue;
        }
      }
      w->vetoed = true;
    }
    checking = std::move(next);
  }
  return check;
}

TuneResult Session::tune(const TuneOptions& options) {
  TuneResult result;
  try {
    const target::Target target = target::parseTarget(options.target);
    if (!target.isHost())
      throw Error(ErrorKind::Unsupported,
                  "tuning measures candidates on this machine; tune for the host target "
                  "(\"llvm\" or \"llvm -mcpu=...\" of this CPU)");
    if (options.threads < 0)
      throw Error(ErrorKind::Invalid, "threads must be 0 (one per core) or more");
    // The model as it compiles (constants folded, shapes static), with the default schedules.
    CompileOptions compileOptions;
    compileOptions.target = options.target;
    compileOptions.threads = options.threads;
    compileOptions.cancel = options.cancel;
    compileOptions.inputsFile = options.inputsFile;
    compileOptions.inputShapes = options.inputShapes;
    const CompileResult compiled = compile(compileOptions);
    if (!compiled.ok()) {
      result.failure = compiled.failure;
      return result;
    }
    if (!state_->defaultLowered)
      state_->defaultLowered = std::make_shared<const lowering::LoweredModel>(
          driver::lowerModel(*state_->folded, *state_->target, nullptr));

    const TuningMachine machine = tuningMachine(options.target, options.threads);
    tuner::TuneOptions t;
    t.target = target;
    t.machine = {machine.target, machine.cpu, machine.threads};
    t.trials = options.trials;
    t.timeBudgetSeconds = options.timeBudgetSeconds;
    t.kernelFilter = options.kernelFilter;
    t.recordsPath = options.recordsPath;
    t.seed = options.seed;
    if (options.strategy == "random")
      t.strategy = tuner::Strategy::Random;
    else if (options.strategy == "evolutionary")
      t.strategy = tuner::Strategy::Evolutionary;
    else
      throw Error(ErrorKind::Invalid,
                  "unknown search strategy '" + options.strategy + "' (evolutionary or random)");
    t.measure.repeat = std::max(1, options.repeat);
    t.measure.timeoutSeconds = options.timeoutSeconds;
    t.cancel = options.cancel;
    t.pause = options.pause;
    if (options.onProgress)
      t.onRound = [&](const tuner::TuneProgress& p) {
        options.onProgress({p.round, p.trials, p.errors, p.seconds, p.defaultModelMs, p.bestModelMs,
                            p.kernel, p.kernelDefaultMs, p.kernelBestMs});
      };
    const tuner::TuneReport tuned = tuner::tuneModel(*state_->defaultLowered, t);

    auto report = std::make_shared<TuneReport>();
    report->machine = machine;
    report->trials = tuned.trials;
    report->errors = tuned.errors;
    report->remeasured = tuned.remeasured;
    report->heldUp = tuned.heldUp;
    report->seconds = tuned.seconds;
    report->cancelled = tuned.cancelled;
    report->modelExamples = tuned.modelExamples;
    for (const tuner::WorkloadResult& w : tuned.workloads)
      report->workloads.push_back({w.workload, w.kernels, w.calls, w.defaultMs, w.bestMs,
                                   w.bestDefaultMs, w.bestTrace, w.trials, w.errors, 0, 0});
    if (!tuned.cancelled && options.checkRounds > 0 && !options.recordsPath.empty())
      report->modelCheck = checkInModel(compileOptions, options, report->workloads);
    result.report = std::move(report);
  } catch (const Error& e) {
    result.failure = toFailure(e.within({state_->path, {}, {}}));
  } catch (const std::exception& e) {
    result.failure = Failure{
        "internal", state_->path + ": internal error: " + e.what(), state_->path, {}, {}, e.what()};
  }
  return result;
}

std::optional<RecordsSummary> summarizeRecords(const std::string& path, Failure* failure) {
  try {
    if (!std::filesystem::is_regular_file(path))
      throw Error(ErrorKind::Invalid, "the tuning records file '" + path + "' does not exist",
                  {path, {}, {}});
    RecordsSummary summary;
    const auto records = tuner::readRecords(path, &summary.warnings);
    std::map<std::string, std::size_t> index;
    std::vector<std::vector<double>> defaults;     // per workload, each trial's default
    std::vector<const tuner::TuningRecord*> bests; // per workload, its best good record
    const std::vector<bool> aside = tuner::setAsideByVetoes(records);
    for (std::size_t i = 0; i < records.size(); ++i) {
      const tuner::TuningRecord& r = records[i];
      const std::string key = r.workload + "|" + r.machine.target + "|" + r.machine.cpu + "|" +
                              std::to_string(r.machine.threads);
      auto [it, fresh] = index.emplace(key, summary.workloads.size());
      if (fresh) {
        RecordsSummary::Workload w;
        w.workload = r.workload;
        w.kernel = r.kernel;
        w.machine = {r.machine.target, r.machine.cpu, r.machine.threads};
        summary.workloads.push_back(std::move(w));
        defaults.emplace_back();
        bests.push_back(nullptr);
      }
      RecordsSummary::Workload& w = summary.workloads[it->second];
      if (tuner::isVeto(r)) { // a verdict of the check in the model, not a trial
        ++w.vetoes;
        continue;
      }
      ++w.trials;
      w.errors += !r.ok();
      if (r.defaultMedianMs > 0)
        defaults[it->second].push_back(r.defaultMedianMs);
      const tuner::TuningRecord*& best = bests[it->second];
      if (r.ok() && !aside[i] && (!best || tuner::ranksBefore(r, *best)))
        best = &r;
    }
    for (std::size_t i = 0; i < bests.size(); ++i)
      if (const tuner::TuningRecord* best = bests[i]) {
        RecordsSummary::Workload& w = summary.workloads[i];
        w.bestMs = best->medianMs;
        w.bestDefaultMs = best->defaultMedianMs;
        w.bestTrace = best->trace;
      }
    // The default as the median of its timings next to every trial: one of them, taken
    // while the machine was busy, can be far off.
    for (std::size_t i = 0; i < defaults.size(); ++i)
      if (!defaults[i].empty()) {
        std::vector<double>& d = defaults[i];
        std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
        summary.workloads[i].defaultMs = d[d.size() / 2];
      }
    return summary;
  } catch (const Error& e) {
    if (failure)
      *failure = toFailure(e);
    return std::nullopt;
  }
}

namespace {

// A file's gain on a kernel: its best against the default timed next to it, 1 when that is
// no clear win (compile would keep the default).
double gainOf(double best, double bestDefault) {
  return clearWin(best, bestDefault) ? bestDefault / best : 1.0;
}

} // namespace

double RecordsComparison::Row::speedupBvsA() const {
  if (!inA || !inB)
    return 0;
  return gainOf(bestB, bestDefaultB) / gainOf(bestA, bestDefaultA);
}

char RecordsComparison::Row::winner() const {
  if (!inA || !inB)
    return inA ? 'a' : 'b';
  const double ratio = speedupBvsA();
  return ratio >= 1 / 0.97 ? 'B' : ratio <= 0.97 ? 'A' : '=';
}

std::optional<RecordsComparison> compareRecords(const std::string& a, const std::string& b,
                                                Failure* failure) {
  const auto left = summarizeRecords(a, failure);
  if (!left)
    return std::nullopt;
  const auto right = summarizeRecords(b, failure);
  if (!right)
    return std::nullopt;
  RecordsComparison out;
  out.warnings = left->warnings;
  out.warnings.insert(out.warnings.end(), right->warnings.begin(), right->warnings.end());
  const auto key = [](const RecordsSummary::Workload& w) {
    return w.workload + "|" + w.machine.target + "|" + w.machine.cpu + "|" +
           std::to_string(w.machine.threads);
  };
  std::map<std::string, std::size_t> index;
  const auto row = [&](const RecordsSummary::Workload& w) -> RecordsComparison::Row& {
    auto [it, fresh] = index.emplace(key(w), out.rows.size());
    if (fresh)
      out.rows.push_back(
          {w.workload, w.kernel, w.machine, w.defaultMs, 0, 0, 0, 0, false, false, {}, {}});
    RecordsComparison::Row& r = out.rows[it->second];
    if (r.defaultMs == 0)
      r.defaultMs = w.defaultMs;
    return r;
  };
  for (const auto& w : left->workloads) {
    RecordsComparison::Row& r = row(w);
    r.bestA = w.bestMs;
    r.bestDefaultA = w.bestDefaultMs;
    r.inA = true;
    r.traceA = w.bestTrace;
  }
  for (const auto& w : right->workloads) {
    RecordsComparison::Row& r = row(w);
    r.bestB = w.bestMs;
    r.bestDefaultB = w.bestDefaultMs;
    r.inB = true;
    r.traceB = w.bestTrace;
  }
  return out;
}

} // namespace lathe::api
