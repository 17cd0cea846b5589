#pragma once
// Tuning a lowered model's kernels on this machine: candidates from the search space
// (search_space.h), each measured in a child process (measure.h) and written to the records
// file as it finishes. Kernels with the same workload key are tuned once. A simple task
// scheduler spends the trials where they pay: every workload gets a first batch, then each
// round goes to the workload with the largest share of the model's time (default time ×
// calls) weighted by how much its last batch improved on its best and by an optimistic hope
// that shrinks with the rounds already spent on it (taskPriority).

#include "engine/lowering/lowered_model.h"
#include "engine/target/target.h"
#include "engine/tuner/measure.h"
#include "engine/tuner/records.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace lathe::tuner {

// The scheduler's priority of a workload: `share` of the model's time (ms per run) times the
// relative gain of its last round plus a hope of 0.5 / rounds spent on it. Without the hope's
// decay a kernel with a large share and a space of useless knobs took 793 of 911 trials.
double taskPriority(double share, double lastGain, int rounds);

struct WorkloadResult {
  std::string workload;
  std::vector<std::string> kernels; // the kernels that share it
  int calls = 0;                    // calls per model run, over those kernels
  double defaultMs = 0;             // median of the default schedule (0: not measured)
  // The best good record (RecordDatabase::best): its median and the default's timed next to
  // it (0: none yet). It is applied when a clear win over that default (clearWin).
  double bestMs = 0, bestDefaultMs = 0;
  std::string bestTrace;      // empty: the default is the best
  int trials = 0, errors = 0; // this run's and earlier ones' (resumed) together
};

struct TuneProgress {
  int round = 0;
  int trials = 0, errors = 0; // this run's so far
  double seconds = 0;
  double defaultModelMs = 0, bestModelMs = 0; // sum over calls of default / best kernel times
  std::string workload, kernel;               // what the round tuned
  double kernelDefaultMs = 0, kernelBestMs = 0;
};

// Random: candidates drawn at random from the space. Evolutionary: once the cost model has
// seen enough measurements, each round draws many candidates (random ones and mutations of
// the workload's best so far), ranks them with the model and measures the most promising
// (one in each batch still at random, so that the model keeps learning).
enum class Strategy { Random, Evolutionary };

struct TuneOptions {
  target::Target target = target::parseTarget("llvm");
  Strategy strategy = Strategy::Evolutionary;
  MachineKey machine;           // target text, CPU and threads the records are for
  int trials = 64;              // candidates measured by this run, over all kernels
  double timeBudgetSeconds = 0; // 0: no limit
  int batch = 4;                // candidates per round
  std::string kernelFilter;     // only kernels whose name contains it
  std::string recordsPath;      // appended to; its records count (resume)
  unsigned seed = 1;
  MeasureOptions measure;
  std::function<void(const TuneProgress&)> onRound;
  const std::atomic<bool>* cancel = nullptr; // stops after the measurement in flight
  // While true, the search waits after the measurement in flight (time paused does not
  // count against timeBudgetSeconds); cancel still ends it.
  const std::atomic<bool>* pause = nullptr;
};

struct TuneReport {
  std::vector<WorkloadResult> workloads; // largest share of the model's time first
  int trials = 0, errors = 0;            // this run's
  // New bests measured a second time, and those still a clear win (kClearWin) then.
  int remeasured = 0, heldUp = 0;
  double seconds = 0;
  bool cancelled = false;
  int modelExamples = 0; // measurements the cost model was trained on at the end
};

TuneReport tuneModel(const lowering::LoweredModel& lowered, const TuneOptions& options);

} // namespace lathe::tuner
