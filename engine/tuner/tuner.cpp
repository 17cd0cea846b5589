#include "engine/tuner/tuner.h"

#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"
#include "engine/support/timer.h"
#include "engine/tuner/cost_model.h"
#include "engine/tuner/features.h"
#include "engine/tuner/search_space.h"
#include "engine/tuner/workload.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <thread>

#ifndef LATHE_VERSION
#define LATHE_VERSION "dev"
#endif

namespace lathe::tuner {
namespace {

// The cost model ranks candidates once it has seen this many measurements.
constexpr std::size_t kMinExamples = 8;

struct Task {
  WorkloadResult result;
  const loop::Kernel* kernel = nullptr;    // the first kernel with this workload, as lowered
  const loop::Kernel* reference = nullptr; // that kernel with its default trace replayed
  // The reference (and its inputs' producers) compiled once for every child that measures
  // one of its candidates; null until first needed, or when it could not be compiled here.
  std::unique_ptr<Baseline> baseline;
  bool baselineTried = false;
  schedule::Schedule defaults;   // its default trace (empty: none)
  std::vector<std::string> seen; // traces tried (this run and resumed)
  double lastGain = 1;           // relative improvement of its last round
  int rounds = 0;                // rounds given to it in this run
  bool exhausted = false;        // the space has no new legal trace
  // This run's good candidates: (time, knobs), parents for mutations.
  std::vector<std::pair<double, std::vector<std::size_t>>> measured;
};

// The knobs of the workload's fastest candidates of this run, fastest first.
std::vector<std::vector<std::size_t>> parentsOf(const Task& task, std::size_t count) {
  auto sorted = task.measured;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t i = 0; i < sorted.size() && i < count; ++i)
    out.push_back(sorted[i].second);
  return out;
}

// Candidates to measure this round: at random, or the ones the model ranks best among
// many, keeping one random one per batch.
std::vector<Candidate> chooseCandidates(Task& task, int want, const TuneOptions& options,
                                        const CostModel& model, std::mt19937& rng) {
  const bool guided = options.strategy == Strategy::Evolutionary && model.trained();
  if (!guided)
    return sampleCandidates(*task.kernel, want, rng, task.seen, {}, &task.defaults);
  std::vector<std::string> scratch = task.seen; // only measured traces become seen
  std::vector<Candidate> pool =
      sampleCandidates(*task.kernel, want * 8, rng, scratch, parentsOf(task, 4), &task.defaults);
  if (static_cast<int>(pool.size()) <= want) {
    for (const Candidate& c : pool)
      task.seen.push_back(c.trace);
    return pool;
  }
  std::vector<Features> rows;
  for (const Candidate& c : pool)
    rows.push_back(featuresOf(c.scheduled));
  const std::vector<float> predicted = model.predict(rows);
  std::vector<std::size_t> order(pool.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return predicted[a] < predicted[b]; });
  std::vector<Candidate> chosen;
  for (int i = 0; i + 1 < want; ++i)
    chosen.push_back(std::move(pool[order[static_cast<std::size_t>(i)]]));
  // Exploration: one of the rest, at random.
  std::uniform_int_distribution<std::size_t> rest(static_cast<std::size_t>(want) - 1,
                                                  order.size() - 1);
  chosen.push_back(std::move(pool[order[rest(rng)]]));
  for (const Candidate& c : chosen)
    task.seen.push_back(c.trace);
  return chosen;
}

// The best's median against its own default (1: none yet).
double bestRelative(const WorkloadResult& w) {
  return w.bestMs > 0 && w.bestDefaultMs > 0 ? w.bestMs / w.bestDefaultMs : 1.0;
}

// The model's kernels summed over their calls: the defaults, or each scaled by what its best
// saves against the default timed next to it, where that is a clear win and so applies.
double modelMs(const std::vector<Task>& tasks, bool best) {
  double total = 0;
  for (const Task& t : tasks) {
    const bool applies = best && clearWin(t.result.bestMs, t.result.bestDefaultMs);
    total += t.result.defaultMs * (applies ? bestRelative(t.result) : 1.0) * t.result.calls;
  }
  return total;
}

} // namespace

double taskPriority(double share, double lastGain, int rounds) {
  return share * (std::max(0.0, lastGain) + 0.5 / std::max(1, rounds));
}

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
  for (std::size_t index = 0; index < lowered.kernels.size(); ++index) {
    const loop::Kernel& k = lowered.unscheduledKernel(index);
    if (!options.kernelFilter.empty() && k.name.find(options.kernelFilter) == std::string::npos)
      continue;
    const std::string key = workloadKey(k);
    auto [it, fresh] = byWorkload.emplace(key, tasks.size());
    if (fresh) {
      Task t;
      t.result.workload = key;
      t.kernel = &k;
      t.reference = &lowered.kernels[index];
      t.defaults = schedule::parseTrace(k.name, k.defaultTrace);
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
        t.result.bestDefaultMs = best->defaultMedianMs;
        t.result.bestTrace = best->trace;
      }
      tasks.push_back(std::move(t));
    }
    Task& task = tasks[it->second];
    task.result.kernels.push_back(k.name);
    task.result.calls += callsOf[k.name];
  }

  // The cost model learns from every good measurement of these workloads, resumed ones
  // included (their traces replayed to read their features).
  CostModel model;
  for (const Task& t : tasks)
    for (const TuningRecord& r : database.records())
      if (r.ok() && r.workload == t.result.workload && r.machine == options.machine &&
          r.defaultMedianMs > 0) {
        try {
          const loop::Kernel k =
              schedule::apply(*t.kernel, schedule::parseTrace(t.kernel->name, r.trace));
          model.add(featuresOf(k), static_cast<float>(std::log2(r.medianMs / r.defaultMedianMs)));
        } catch (const Error&) {
          // A record that no longer replays teaches nothing.
        }
      }
  if (model.examples() >= kMinExamples)
    model.train();

  std::mt19937 rng(options.seed);
  double pausedMs = 0;
  const auto cancelled = [&] { return options.cancel && options.cancel->load(); };
  // A pause holds the search here, between measurements, until resumed or cancelled.
  const auto waitWhilePaused = [&] {
    if (!options.pause || !options.pause->load())
      return;
    Stopwatch paused;
    while (options.pause->load() && !cancelled())
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pausedMs += paused.elapsedMs();
  };
  const auto outOfTime = [&] {
    waitWhilePaused();
    return cancelled() || (options.timeBudgetSeconds > 0 &&
                           (clock.elapsedMs() - pausedMs) / 1000 >= options.timeBudgetSeconds);
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
      const double score = taskPriority(share, t.lastGain, t.rounds);
      if (score > bestScore) {
        bestScore = score;
        next = &t;
      }
    }
    if (!next)
      break; // every space is exhausted
    ++round;
    ++next->rounds;
    const int want = std::min(options.batch, options.trials - report.trials);
    const auto candidates = chooseCandidates(*next, want, options, model, rng);
    if (candidates.empty()) {
      next->exhausted = true;
      continue;
    }
    const bool hadBest = next->result.bestMs > 0;
    const double bestBefore = bestRelative(next->result);
    for (const Candidate& c : candidates) {
      if (outOfTime())
        break;
      TuningRecord record;
      record.workload = next->result.workload;
      record.kernel = next->kernel->name;
      record.machine = options.machine;
      record.trace = c.trace;
      record.time = utcNow();
      record.version = LATHE_VERSION;
      MeasureOptions measure = options.measure;
      measure.threads = options.machine.threads;
      if (!next->baselineTried) {
        next->baselineTried = true;
        try {
          next->baseline = std::make_unique<Baseline>(lowered, *next->reference, options.target,
                                                      measure.warmInputs);
        } catch (const Error&) {
          // Each child compiles the default itself, and reports what fails there.
        }
      }
      const auto measured = [&] {
        return next->baseline
                   ? measureInChild(lowered, *next->baseline, c.scheduled, options.target, measure)
                   : measureInChild(lowered, *next->reference, c.scheduled, options.target,
                                    measure);
      };
      Measurement m = measured();
      // A candidate that would be the workload's new best and applied is measured again;
      // the record keeps the measurement less in its favour.
      if (m.ok() && clearWin(m.medianMs, m.defaultMedianMs) &&
          m.medianMs / m.defaultMedianMs < bestRelative(next->result) && !outOfTime()) {
        const Measurement again = measured();
        ++report.remeasured;
        m = lessFavourable(m, again);
        report.heldUp += m.ok() && clearWin(m.medianMs, m.defaultMedianMs);
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
        next->measured.emplace_back(m.medianMs, c.knobs);
        if (m.defaultMedianMs > 0)
          model.add(featuresOf(c.scheduled),
                    static_cast<float>(std::log2(m.medianMs / m.defaultMedianMs)));
        if (next->result.bestMs == 0 || relativeTime(record) < bestRelative(next->result)) {
          next->result.bestMs = m.medianMs;
          next->result.bestDefaultMs = m.defaultMedianMs;
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
    if (model.examples() >= kMinExamples)
      model.train();
    next->lastGain = hadBest && next->result.bestMs > 0
                         ? std::max(0.0, (bestBefore - bestRelative(next->result)) / bestBefore)
                         : 1;
    if (options.onRound) {
      TuneProgress p;
      p.round = round;
      p.trials = report.trials;
      p.errors = report.errors;
      p.seconds = (clock.elapsedMs() - pausedMs) / 1000;
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
  report.seconds = (clock.elapsedMs() - pausedMs) / 1000;
  report.modelExamples = static_cast<int>(model.examples());
  for (Task& t : tasks)
    report.workloads.push_back(std::move(t.result));
  std::sort(report.workloads.begin(), report.workloads.end(), [](const auto& a, const auto& b) {
    return a.defaultMs * a.calls > b.defaultMs * b.calls;
  });
  return report;
}

} // namespace lathe::tuner
