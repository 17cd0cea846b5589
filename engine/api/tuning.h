#pragma once
// Auto-tuning through the Session: the options and the report of Session::tune, and a
// summary of a records file. Plain structs; the search lives in engine/tuner.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lathe::api {

struct Failure;

// Where records apply: the canonical target string, the CPU tuned on, the threads.
struct TuningMachine {
  std::string target, cpu;
  int threads = 1;
};

struct TuneProgressSummary {
  int round = 0, trials = 0, errors = 0;
  double seconds = 0;
  double defaultModelMs = 0, bestModelMs = 0; // the kernels' times summed over their calls
  std::string kernel;                         // the one this round tuned
  double kernelDefaultMs = 0, kernelBestMs = 0;
};

struct TuneOptions {
  std::string target = "llvm";  // must run here
  int threads = 1;              // the kernels run (and the records are) for this many threads
  int trials = 64;              // candidates to measure in this run
  double timeBudgetSeconds = 0; // 0: no limit
  std::string recordsPath;      // appended to as trials finish; its records are resumed
  std::string kernelFilter;     // only kernels whose name contains it
  unsigned seed = 1;
  // "evolutionary": candidates ranked by a learned cost model (XGBoost) among random ones
  // and mutations of the best so far; "random": drawn at random.
  std::string strategy = "evolutionary";
  int repeat = 20;            // timed calls per candidate
  double timeoutSeconds = 20; // per candidate, compile included
  // For a model with symbolic input dims: the shapes to compile (and tune) it for, as
  // CompileOptions::inputsFile and ::inputShapes.
  std::string inputsFile;
  std::map<std::string, std::vector<std::int64_t>> inputShapes;
  // After the search, the records are checked where they matter: the model compiled with
  // its defaults and with the records runs in turns, `checkRounds` times each (`checkRepeat`
  // timed runs a turn, profiled), in this process. A kernel timed alone after a cache flush
  // can win where, inside the model, its input is hot and the win is gone. 0: no check.
  int checkRounds = 4;
  int checkRepeat = 10;
  // A vetoed record's workload is checked again with its next best, for at most this many
  // passes over the model in all; the last pass's vetoes leave their workloads on the default.
  int checkPasses = 3;
  std::function<void(const TuneProgressSummary&)> onProgress;
  const std::atomic<bool>* cancel = nullptr; // stops after the candidate in flight
  const std::atomic<bool>* pause = nullptr;  // while true, waits after the candidate in flight
};

struct TunedWorkload {
  std::string workload;
  std::vector<std::string> kernels; // that share it (tuned once)
  int calls = 0;
  double defaultMs = 0; // the first default timed for it
  // The best record (lowest time against the default timed next to it): its median and
  // that default's (0: none yet). It applies when it beats that default by 3 % or more.
  double bestMs = 0, bestDefaultMs = 0;
  std::string bestTrace;
  int trials = 0, errors = 0; // including resumed ones
  // From the check in the model (TuneReport::modelCheck): its kernels' time per run, as
  // compiled with the defaults and with the records (0: not checked).
  double inModelDefaultMs = 0, inModelTunedMs = 0;
  // Its record made the kernels clearly slower in the model: a veto was appended to the
  // records (engine/tuner/records.h), and the default applies from now on.
  bool vetoed = false;
  // Records that replaced a vetoed best and were checked in turn (best* is the last).
  int nextBests = 0;
};

// The whole model compiled with its defaults and with the records, run in turns.
struct ModelCheck {
  int rounds = 0, runs = 0;       // turns each, and timed runs in all per compile
  int tunedKernels = 0;           // kernels a record applied to
  int vetoes = 0;                 // records clearly slower in the model (vetoed)
  int nextBests = 0;              // next bests checked after a veto of their workload's best
  int passes = 0;                 // times the check ran over the model (1 without vetoes)
  double defaultMs = 0;           // median latency of the model's runs, with the defaults
  double tunedMs = 0;             // and with the records
  std::vector<std::string> notes; // tuning notes of the compile with the records
};

struct TuneReport {
  TuningMachine machine;
  std::vector<TunedWorkload> workloads; // the largest share of the model's time first
  int trials = 0, errors = 0;           // this run's
  // New bests measured a second time (the record keeps the less favourable), and those
  // still a clear win then.
  int remeasured = 0, heldUp = 0;
  double seconds = 0;
  bool cancelled = false;
  int modelExamples = 0;                // measurements the cost model learned from
  std::optional<ModelCheck> modelCheck; // unless cancelled or TuneOptions::checkRounds is 0
};

// What a records file holds, per machine and workload.
struct RecordsSummary {
  struct Workload {
    std::string workload, kernel;
    TuningMachine machine;
    int trials = 0, errors = 0;
    double defaultMs = 0; // the median of its timings beside each trial
    // The best record (as TunedWorkload's): its median and the default's timed next to it.
    double bestMs = 0, bestDefaultMs = 0;
    std::string bestTrace;
    int vetoes = 0; // checks in the model that set its earlier records aside
  };
  std::vector<Workload> workloads;
  std::vector<std::string> warnings; // an unfinished last line
};

// Two records files side by side: per workload and machine found in either, each file's
// best (0: none there) and trace.
struct RecordsComparison {
  struct Row {
    std::string workload, kernel;
    TuningMachine machine;
    double defaultMs = 0;
    double bestA = 0, bestB = 0;
    double bestDefaultA = 0, bestDefaultB = 0; // the default timed next to each best
    bool inA = false, inB = false;             // the workload has records in that file
    std::string traceA, traceB;
    // How much faster B's best makes the kernel than A's does (> 1: B is faster). Each
    // file's gain is its best against the default timed next to it (1 when that is no clear
    // win), so that files tuned at different times, on a busier or a quieter machine,
    // compare fairly; raw medians of the two would compare the machine's moods. 0 when the
    // workload is in one file only.
    double speedupBvsA() const;
    // 'A' or 'B' when that file's best is faster by 3 % or more, '=' within that, 'a' or
    // 'b' when only that file has the workload.
    char winner() const;
  };
  std::vector<Row> rows;
  std::vector<std::string> warnings;
};

// Whether a best of `bestMs` against the default timed next to it, `defaultMs`, is a clear
// win (3 % or more), as compile and run require before they apply a record.
bool clearWin(double bestMs, double defaultMs);

// This machine's key for `target` and `threads` (0: one per core), as tuning records it.
TuningMachine tuningMachine(const std::string& target, int threads);

} // namespace lathe::api
