#include "engine/tuner/tuner.h"

#include "engine/support/diagnostics.h"
#include "engine/support/timer.h"
#include "engine/tuner/search_space.h"
#include "engine/tuner/workload.h"

#include <algorithm>
#include <map>
#include <random>

#ifndef LATHE_VERSION
#define LATHE_VERSION "dev"
#endif

namespace lathe::tuner {
namespace {

struct Task {
  WorkloadResult result;
  const loop::Kernel* kernel = nullptr; // the first kernel with this workload
  std::vector<std::string> seen;        // traces tried (this run and resumed)
  double lastGain = 1;                  // relative improvement of its last round
  bool exhausted = false;               // the space has no new legal trace
};

double modelMs(const std::vector<Task>& tasks, bool best) {
  double total = 0;
  for (const Task& t : tasks) {
    const double ms = best && t.result.bestMs > 0 ? std::min(t.result.bestMs, t.result.defaultMs)
                                                  : t.result.defaultMs;
    total += ms * t.result.calls;
  }
  return total;
}

} // namespace

TuneReport tuneModel(const lowering::LoweredModel& lowered, const TuneOptions& options) {
  Stopwatch clock;
  TuneReport report;
  RecordDatabase database;
  if (!options.recordsPath.empty())
    database.addFile(options.recordsPath);

  // One task per workload, with what earlier runs found.
  std::vector<Task> tasks;
  std::map<std::string, std::size_t> byWorkload;
  std::map<std::string, int> callsOf;
  for (const lowering::KernelCall& c : lowered.calls)
    if (!c.hostNode)
      ++callsOf[c.kernel];
  for (const loop::Kernel& k : lowered.kernels) {
    if (!options.kernelFilter.empty() && k.name.find(options.kernelFilter) == std::string::npos)
      continue;
    const std::string key = workloadKey(k);
    auto [it, fresh] = byWorkload.emplace(key, tasks.size());
    if (fresh) {
      Task t;
      t.result.workload = key;
      t.kernel = &k;
      for (const TuningRecord& r : database.records())
        if (r.workload == key && r.machine == options.machine) {
          t.seen.push_back(r.trace);
          ++t.result.trials;
          t.result.errors += !r.ok();
          if (r.defaultMedianMs > 0 && t.result.defaultMs == 0)
            t.result.defaultMs = r.defaultMedianMs;
        }
      if (const TuningRecord* best = database.best(key, options.machine)) {
        t.result.bestMs = best->medianMs;
        t.result.bestTrace = best->trace;
      }
      tasks.push_back(std::move(t));
    }
    Task& task = tasks[it->second];
    task.result.kernels.push_back(k.name);
    task.result.calls += callsOf[k.name];
  }

  std::mt19937 rng(options.seed);
  const auto outOfTime = [&] {
    return (options.cancel && options.cancel->load()) ||
           (options.timeBudgetSeconds > 0 && clock.elapsedMs() / 1000 >= options.timeBudgetSeconds);
  };
  int round = 0;
  while (report.trials < options.trials && !outOfTime()) {
    // The task to tune: first those never measured, then the largest weighted share.
    Task* next = nullptr;
    double bestScore = -1;
    for (Task& t : tasks) {
      if (t.exhausted)
        continue;
      const double share = t.result.defaultMs > 0 ? t.result.defaultMs * t.result.calls : 1e9;
      const double score = share * (0.05 + t.lastGain);
      if (score > bestScore) {
        bestScore = score;
        next = &t;
      }
    }
    if (!next)
      break; // every space is exhausted
    ++round;
    const int want = std::min(options.batch, options.trials - report.trials);
    const auto candidates = sampleSchedules(*next->kernel, want, rng, next->seen);
    if (candidates.empty()) {
      next->exhausted = true;
      continue;
    }
    const double bestBefore = next->result.bestMs;
    for (const schedule::Schedule& s : candidates) {
      if (outOfTime())
        break;
      TuningRecord record;
      record.workload = next->result.workload;
      record.kernel = next->kernel->name;
      record.machine = options.machine;
      record.trace = schedule::traceText(s);
      record.time = utcNow();
      record.version = LATHE_VERSION;
      MeasureOptions measure = options.measure;
      measure.threads = options.machine.threads;
      Measurement m;
      try {
        const loop::Kernel scheduled = schedule::apply(*next->kernel, s);
        m = measureInChild(lowered, *next->kernel, scheduled, options.target, measure);
      } catch (const Error& e) {
        m.error = e.what();
      }
      ++report.trials;
      ++next->result.trials;
      if (m.ok()) {
        record.medianMs = m.medianMs;
        record.p10Ms = m.p10Ms;
        record.p90Ms = m.p90Ms;
        record.defaultMedianMs = m.defaultMedianMs;
        if (next->result.defaultMs == 0)
          next->result.defaultMs = m.defaultMedianMs;
        if (next->result.bestMs == 0 || m.medianMs < next->result.bestMs) {
          next->result.bestMs = m.medianMs;
          next->result.bestTrace = record.trace;
        }
      } else {
        record.error = m.error;
        ++report.errors;
        ++next->result.errors;
      }
      if (!options.recordsPath.empty())
        appendRecord(options.recordsPath, record);
    }
    next->lastGain = bestBefore > 0 && next->result.bestMs > 0
                         ? std::max(0.0, (bestBefore - next->result.bestMs) / bestBefore)
                         : 1;
    if (options.onRound) {
      TuneProgress p;
      p.round = round;
      p.trials = report.trials;
      p.errors = report.errors;
      p.seconds = clock.elapsedMs() / 1000;
      p.defaultModelMs = modelMs(tasks, false);
      p.bestModelMs = modelMs(tasks, true);
      p.workload = next->result.workload;
      p.kernel = next->kernel->name;
      p.kernelDefaultMs = next->result.defaultMs;
      p.kernelBestMs = next->result.bestMs;
      options.onRound(p);
    }
  }
  report.cancelled = options.cancel && options.cancel->load();
  report.seconds = clock.elapsedMs() / 1000;
  for (Task& t : tasks)
    report.workloads.push_back(std::move(t.result));
  std::sort(report.workloads.begin(), report.workloads.end(), [](const auto& a, const auto& b) {
    return a.defaultMs * a.calls > b.defaultMs * b.calls;
  });
  return report;
}

} // namespace lathe::tuner
