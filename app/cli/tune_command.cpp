// lathe tune MODEL --records FILE [--target T] [--threads N] [--trials N | --time-budget 30m]
//   [--kernels PATTERN] [--resume]
// lathe records FILE: what a records file holds.
#include "app/cli/commands.h"
#include "app/cli/option_checks.h"
#include "engine/api/session.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace lathe::cli {
namespace {

struct TuneCommandOptions {
  std::string model, target = "llvm", records, timeBudget, kernels, inputShapes, inputs;
  std::string strategy = "evolutionary";
  int threads = 1, trials = 64, repeat = 20, checkRounds = 4, checkPasses = 3;
  unsigned seed = 1;
  bool resume = false;
  std::vector<std::string> disabledPasses;
};

// A column as wide as its longest entry and two spaces (at least `minimum`): kernel names
// such as fused_convwinogradnchwc_add_relu_11 outgrow any fixed width.
template <class Rows, class Name>
int columnWidth(const Rows& rows, Name name, std::size_t minimum) {
  std::size_t width = minimum;
  for (const auto& row : rows)
    width = std::max(width, name(row).size() + 2);
  return static_cast<int>(width);
}

std::atomic<bool> interrupted{false};

extern "C" void onInterrupt(int) {
  interrupted = true;
  std::signal(SIGINT, SIG_DFL); // a second Ctrl-C stops at once
}

// "30m", "90s", "1h", "45" (seconds) -> seconds; throws CLI::ValidationError.
double parseDuration(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (used == 0 || scale == 0 || !(value > 0))
    throw CLI::ValidationError("--time-budget",
                               "'" + text + "' is not a duration like 30m, 90s or 1h");
  return value * scale;
}

std::string ms(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(v < 1 ? 4 : 2) << v << " ms";
  return s.str();
}

int tune(const TuneCommandOptions& o) {
  if (!o.resume && std::filesystem::exists(o.records)) {
    std::cerr << "lathe: error: the records file " << o.records
              << " exists; pass --resume to continue it (its trials are kept and not measured "
                 "again), or name another file\n";
    return 2;
  }
  if (o.trials == 0 && (!o.resume || o.checkRounds == 0)) {
    std::cerr << "lathe: error: --trials 0 measures nothing and only checks the records of an "
                 "existing file in the model: pass --resume and leave --check-rounds above 0\n";
    return 2;
  }
  api::TuneOptions options;
  options.target = o.target;
  options.threads = boundedThreads(o.threads);
  options.trials = o.trials;
  options.timeBudgetSeconds = o.timeBudget.empty() ? 0 : parseDuration(o.timeBudget);
  options.recordsPath = o.records;
  options.kernelFilter = o.kernels;
  options.seed = o.seed;
  options.strategy = o.strategy;
  options.repeat = o.repeat;
  options.checkRounds = o.checkRounds;
  options.checkPasses = o.checkPasses;
  options.cancel = &interrupted;
  options.onProgress = [](const api::TuneProgressSummary& p) {
    std::cout << "round " << p.round << ": " << p.trials << " trials (" << p.errors << " errors), "
              << std::fixed << std::setprecision(0) << p.seconds << " s; kernels measured so far "
              << ms(p.bestModelMs) << " (default " << ms(p.defaultModelMs) << "); " << p.kernel
              << " " << ms(p.kernelBestMs) << " (default " << ms(p.kernelDefaultMs) << ")\n"
              << std::flush;
  };
  api::Session session;
  api::OpenOptions open;
  open.inputShapes = parseInputShapes(o.inputShapes);
  open.inputShapesFile = o.inputs;
  open.disabledPasses = o.disabledPasses;
  const api::OpenResult opened = session.openModel(o.model, open);
  if (!opened.ok()) {
    std::cerr << "lathe: error: " << opened.failure->message << "\n";
    return 1;
  }
  std::signal(SIGINT, onInterrupt);
  const api::TuneResult tuned = session.tune(options);
  std::signal(SIGINT, SIG_DFL);
  if (!tuned.ok()) {
    std::cerr << "lathe: error: " << tuned.failure->message << "\n";
    return 1;
  }
  const api::TuneReport& r = *tuned.report;
  std::cout << (r.cancelled ? "stopped" : "tuned") << " " << o.model << " on " << r.machine.cpu
            << ", " << r.machine.threads << (r.machine.threads == 1 ? " thread" : " threads")
            << ": " << r.trials << " trials (" << r.errors << " errors) in " << std::fixed
            << std::setprecision(0) << r.seconds << " s; records in " << o.records;
  if (r.modelExamples > 0)
    std::cout << "; the cost model learned from " << r.modelExamples << " measurements";
  std::cout << "\n";
  if (r.remeasured > 0)
    std::cout << r.remeasured << " new bests measured again: " << r.heldUp << " still a clear win, "
              << r.remeasured - r.heldUp << " not (their records keep the second look)\n";
  const auto nameOf = [](const api::TunedWorkload& w) {
    return w.kernels.front() +
           (w.kernels.size() > 1 ? " (+" + std::to_string(w.kernels.size() - 1) + ")" : "");
  };
  const int kernelWidth = columnWidth(r.workloads, nameOf, 34);
  const bool checked = r.modelCheck.has_value();
  std::cout << std::left << std::setw(kernelWidth) << "kernel" << std::right << std::setw(7)
            << "calls" << std::setw(13) << "default" << std::setw(13) << "best" << std::setw(9)
            << "speedup" << std::setw(8) << "trials" << (checked ? "  in model" : "") << "\n";
  for (const api::TunedWorkload& w : r.workloads) {
    const std::string name = nameOf(w);
    // The best and its speed-up over the default timed next to it, when that applies.
    const bool better = api::clearWin(w.bestMs, w.bestDefaultMs);
    std::ostringstream speedup;
    if (better)
      speedup << std::fixed << std::setprecision(2) << w.bestDefaultMs / w.bestMs << "x";
    else
      speedup << "-";
    std::cout << std::left << std::setw(kernelWidth) << name << std::right << std::setw(7)
              << w.calls << std::setw(13)
              << (better            ? ms(w.bestDefaultMs)
                  : w.defaultMs > 0 ? ms(w.defaultMs)
                                    : "-")
              << std::setw(13) << (better ? ms(w.bestMs) : "default") << std::setw(9)
              << speedup.str() << std::setw(7) << w.trials;
    // The same kernels inside the model, defaults against records, run in turns.
    if (checked && better && w.inModelTunedMs > 0)
      std::cout << std::setw(9) << std::fixed << std::setprecision(2)
                << w.inModelDefaultMs / w.inModelTunedMs << "x"
                << (w.vetoed          ? " vetoed"
                    : w.nextBests > 0 ? " (next best)"
                                      : "");
    std::cout << "\n";
  }
  if (checked) {
    const api::ModelCheck& c = *r.modelCheck;
    std::cout << "in the model (" << c.runs << " runs each, in turns, in this process): default "
              << ms(c.defaultMs) << ", with the records " << ms(c.tunedMs);
    // With no record applied the two compiles are the same code: their ratio is noise.
    if (c.tunedKernels > 0)
      std::cout << " (" << std::fixed << std::setprecision(2)
                << (c.tunedMs > 0 ? c.defaultMs / c.tunedMs : 0) << "x), " << c.tunedKernels
                << " kernels tuned\n";
    else
      std::cout << " (the same code: no record beat its default by 3 % or more)\n";
    if (c.vetoes > 0) {
      const auto onDefault = std::count_if(r.workloads.begin(), r.workloads.end(),
                                           [](const api::TunedWorkload& w) { return w.vetoed; });
      std::cout << c.vetoes << " record(s) made their kernels slower in the model by 3 % or more: "
                << "vetoed in " << o.records;
      if (c.nextBests > 0)
        std::cout << "; " << c.nextBests << " next best record(s) checked in " << c.passes
                  << " passes over the model";
      std::cout << "; " << onDefault << " workload(s) keep the default\n";
    }
  }
  // The records are for the kernels of these shapes: the compile needs the same ones.
  std::cout << "apply them with: lathe compile " << o.model
            << (o.inputShapes.empty() ? "" : " --input-shapes \"" + o.inputShapes + "\"")
            << (o.inputs.empty() ? "" : " --inputs " + o.inputs) << " --tuning-records "
            << o.records << " --threads " << r.machine.threads << " -o MODEL.tar\n";
  return r.cancelled ? 130 : 0;
}

int summarize(const std::string& path) {
  api::Failure failure;
  const auto summary = api::summarizeRecords(path, &failure);
  if (!summary) {
    std::cerr << "lathe: error: " << failure.message << "\n";
    return 1;
  }
  for (const std::string& w : summary->warnings)
    std::cerr << "lathe: warning: " << w << "\n";
  std::cout << summary->workloads.size() << " workloads in " << path << "\n";
  const int kernelWidth =
      columnWidth(summary->workloads, [](const auto& w) { return w.kernel; }, 30);
  std::cout << std::left << std::setw(18) << "workload" << std::setw(kernelWidth) << "kernel"
            << std::setw(26) << "machine" << std::right << std::setw(8) << "trials" << std::setw(13)
            << "default" << std::setw(13) << "best" << "\n";
  for (const auto& w : summary->workloads) {
    const std::string machine = w.machine.cpu + ", " + std::to_string(w.machine.threads) + "t" +
                                (w.machine.target == "llvm" ? "" : " (" + w.machine.target + ")");
    std::cout << std::left << std::setw(18) << w.workload << std::setw(kernelWidth) << w.kernel
              << std::setw(26) << machine << std::right << std::setw(8) << w.trials << std::setw(13)
              << (w.defaultMs > 0 ? ms(w.defaultMs) : "-") << std::setw(13)
              << (w.bestMs > 0 ? ms(w.bestMs) : "-") << "\n";
  }
  return 0;
}

// Each workload and machine of either file: both bests, the winner (by each file's gain over
// the default timed next to its best), and where the best traces differ, their lines as a
// diff (- only in A's, + only in B's).
int compare(const std::string& a, const std::string& b) {
  api::Failure failure;
  const auto comparison = api::compareRecords(a, b, &failure);
  if (!comparison) {
    std::cerr << "lathe: error: " << failure.message << "\n";
    return 1;
  }
  for (const std::string& w : comparison->warnings)
    std::cerr << "lathe: warning: " << w << "\n";
  std::cout << "A = " << a << "\nB = " << b << "\n";
  const int kernelWidth = columnWidth(comparison->rows, [](const auto& r) { return r.kernel; }, 30);
  std::cout << std::left << std::setw(kernelWidth) << "kernel" << std::setw(22) << "machine"
            << std::right << std::setw(12) << "default" << std::setw(12) << "A best"
            << std::setw(12) << "B best" << std::setw(8) << "winner" << std::setw(11) << "B vs A"
            << "\n";
  int wonA = 0, wonB = 0;
  for (const auto& r : comparison->rows) {
    const std::string machine = r.machine.cpu + ", " + std::to_string(r.machine.threads) + "t";
    const char w = r.winner();
    const std::string winner = w == 'a' ? "A only" : w == 'b' ? "B only" : std::string(1, w);
    wonA += w == 'A';
    wonB += w == 'B';
    std::ostringstream ratio;
    if (r.speedupBvsA() > 0)
      ratio << std::fixed << std::setprecision(2) << r.speedupBvsA() << "x";
    std::cout << std::left << std::setw(kernelWidth) << r.kernel << std::setw(22) << machine
              << std::right << std::setw(12) << (r.defaultMs > 0 ? ms(r.defaultMs) : "-")
              << std::setw(12) << (r.bestA > 0 ? ms(r.bestA) : "-") << std::setw(12)
              << (r.bestB > 0 ? ms(r.bestB) : "-") << std::setw(8) << winner << " " << std::setw(10)
              << ratio.str() << "\n";
    if (r.traceA == r.traceB)
      continue;
    const auto lines = [](const std::string& text) {
      std::vector<std::string> out;
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);)
        out.push_back(line);
      return out;
    };
    const auto la = lines(r.traceA), lb = lines(r.traceB);
    for (const auto& line : la)
      if (std::find(lb.begin(), lb.end(), line) == lb.end())
        std::cout << "    - " << line << "\n";
    for (const auto& line : lb)
      if (std::find(la.begin(), la.end(), line) == la.end())
        std::cout << "    + " << line << "\n";
  }
  std::cout << comparison->rows.size() << " workloads: A faster on " << wonA << ", B faster on "
            << wonB << " (by 3 % or more)\n";
  return 0;
}

} // namespace

void addTuneCommands(CLI::App& app, int& exitCode) {
  auto o = std::make_shared<TuneCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Search schedules for the model's kernels on this machine; every candidate is "
              "measured in a child process and written to the records file as it finishes "
              "(Ctrl-C keeps them)");
  cmd->add_option("model", o->model, "Model file (.onnx or .tflite)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--records", o->records, "Tuning records to write (JSON lines)")->required();
  addDisablePassOption(cmd, &o->disabledPasses);
  cmd->add_option("--target", o->target, "Target string of this machine (see lathe targets)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Threads the kernels run on (records apply to this count only); 0: one per "
                  "core")
      ->check(threadCount)
      ->capture_default_str();
  cmd->add_option("--trials", o->trials,
                  "Candidates to measure in this run; 0 (with --resume): none, only the check "
                  "of the file's records in the model")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--time-budget", o->timeBudget, "Stop after this long: 30m, 90s, 1h");
  cmd->add_option("--kernels", o->kernels, "Only kernels whose name contains this");
  cmd->add_flag("--resume", o->resume,
                "Continue an existing records file: its trials count and are not measured again");
  cmd->add_option("--repeat", o->repeat, "Timed calls per candidate")
      ->check(atLeastOne)
      ->capture_default_str();
  cmd->add_option("--strategy", o->strategy,
                  "evolutionary: a learned cost model (XGBoost) ranks random candidates and "
                  "mutations of the best so far, and the most promising are measured; random: "
                  "candidates at random")
      ->check(CLI::IsMember({"evolutionary", "random"}))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the random search")->capture_default_str();
  cmd->add_option("--check-rounds", o->checkRounds,
                  "After the search, run the model with its defaults and with the records in "
                  "turns, this many times each (10 runs a turn), and report both; 0: no check")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--check-passes", o->checkPasses,
                  "A record slower in the model is vetoed and its kernel's next best record is "
                  "checked in another pass, up to this many passes in all; a veto in the last "
                  "pass leaves the kernel on its default")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
  cmd->add_option("--input-shapes", o->inputShapes,
                  "Fix symbolic input dims: \"name:[d0,d1,...] other:[...]\"");
  cmd->add_option("--inputs", o->inputs, "An .npz whose arrays' shapes fix symbolic dims")
      ->check(CLI::ExistingFile);
  cmd->callback([o, &exitCode] {
    try {
      exitCode = tune(*o);
    } catch (const CLI::ValidationError& e) {
      std::cerr << "lathe: error: " << e.what() << "\n";
      exitCode = 2;
    }
  });

  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* records = app.add_subcommand(
      "records", "Summarise a tuning records file (workloads, machines, trials, default and "
                 "best times), or compare two: each workload's winner, speed-up and traces");
  records->add_option("files", *paths, "One or two records files (JSON lines)")
      ->required()
      ->expected(1, 2)
      ->check(CLI::ExistingFile);
  records->callback([paths, &exitCode] {
    exitCode = paths->size() == 2 ? compare(paths->at(0), paths->at(1)) : summarize(paths->at(0));
  });
}

} // namespace lathe::cli
