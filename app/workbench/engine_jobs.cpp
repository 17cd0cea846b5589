#include "app/workbench/engine_jobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lathe::workbench {
namespace {

api::Failure failure(const std::string& kind, const std::string& path, const std::string& reason) {
  api::Failure f;
  f.kind = kind;
  f.file = path;
  f.reason = reason;
  f.message = (path.empty() ? std::string() : path + ": ") +
              (kind == "internal" ? "internal error: " : std::string()) + reason;
  return f;
}

void fillStatistics(api::RunReport& report) {
  std::vector<double> sorted = report.latenciesMs;
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  report.minMs = sorted.front();
  report.maxMs = sorted.back();
  report.meanMs = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  const std::size_t mid = sorted.size() / 2;
  report.medianMs = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  double squares = 0;
  for (double v : sorted)
    squares += (v - report.meanMs) * (v - report.meanMs);
  report.stdMs = std::sqrt(squares / n);
}

// A compile for `target` with what the document keeps for it: schedules, tuning records, the
// inputs or shapes that fix symbolic dims; stopped by the job's Cancel.
api::CompileOptions compileOptionsFor(const RunSettings& settings, const std::string& target,
                                      const SessionWorker::Context& context) {
  api::CompileOptions compile;
  compile.target = target;
  compile.scheduleText = settings.scheduleText;
  compile.tuningRecords = settings.tuningRecords;
  compile.inputsFile = settings.inputsNpz;
  compile.inputShapes = settings.inputShapes;
  compile.cancel = &context.cancel;
  return compile;
}

} // namespace

api::Failure internalFailure(const std::string& path, const std::string& reason) {
  return failure("internal", path, reason);
}

Opened openModelJob(const std::string& path, bool forGpu, const SessionWorker::Context& context,
                    const std::map<std::string, std::vector<std::int64_t>>& inputShapes) {
  api::OpenOptions options;
  options.inputShapes = inputShapes;
  options.allowUnknownOps = true; // the window shows any model; compiling says what blocks it
  options.forGpu = forGpu;
  options.cancel = &context.cancel;
  options.onProgress = [&](const api::Progress& p) {
    context.progress(std::clamp(p.percent, 0, 100), p.stage);
  };
  // One Session per model: it lives on with the model it opened, for compiling it later.
  auto session = std::make_shared<api::Session>();
  Opened opened{session->openModel(path, options), nullptr, forGpu};
  if (opened.result.ok())
    opened.session = std::move(session);
  else if (!opened.result.failure)
    opened.result.failure =
        internalFailure(path, "the engine returned neither a model nor an error");
  return opened;
}

api::CompileResult compileJob(api::Session& session, api::CompileOptions options,
                              const SessionWorker::Context& context) {
  options.cancel = &context.cancel; // the engine stops at its next stage
  options.onProgress = [&](const api::Progress& p) { context.progress(-1, p.stage); };
  options.keepCode = true; // the Code panel shows LLVM IR and assembly
  api::CompileResult result = session.compile(options);
  if (!result.ok() && !result.failure)
    result.failure =
        internalFailure({}, "the engine returned neither a compiled model nor an error");
  return result;
}

RunOutcome runJob(api::Session& session, const std::string& path, const RunSettings& settings,
                  const SessionWorker::Context& context) {
  RunOutcome outcome;
  const auto progress = context.progress;
  if (!api::runsInThisProcess(settings.target)) {
    // Code for another machine: exported, built with its toolchain and run under its
    // emulator (or Node), in one engine call that reports its stages and polls Cancel.
    const api::CompileOptions compile = compileOptionsFor(settings, settings.target, context);
    api::RunOptions options;
    options.inputsNpz = settings.inputsNpz;
    options.fill = settings.inputsNpz.empty() ? settings.fill : std::string();
    options.topK = settings.topK;
    options.repeat = std::max(1, settings.repeat);
    options.cancel = &context.cancel;
    options.onProgress = [&](const api::Progress& p) { progress(p.percent, p.stage); };
    outcome.run = session.runOnTarget(compile, options);
    return outcome;
  }
  if (settings.compileThreads >= 0) {
    progress(-1, "compiling for " + (settings.compileThreads == 0
                                         ? std::string("every core")
                                         : std::to_string(settings.compileThreads) + " threads"));
    api::CompileOptions compile = compileOptionsFor(settings, settings.target, context);
    compile.threads = settings.compileThreads;
    compile.keepCode = true; // a profiled kernel shows its code
    const api::CompileResult compiled = session.compile(compile);
    if (!compiled.ok()) {
      outcome.compileFailed = true;
      outcome.run.failure =
          compiled.failure ? *compiled.failure : internalFailure(path, "compile returned nothing");
      return outcome;
    }
    outcome.compiled = compiled.report;
  }
  api::RunOptions options;
  options.inputsNpz = settings.inputsNpz;
  options.fill = settings.inputsNpz.empty() ? settings.fill : std::string();
  options.topK = settings.topK;
  const int repeat = std::max(1, settings.repeat);
  if (settings.profile) {
    // One engine call (the profile spans all runs); it reports each run and stops between
    // runs when cancelled.
    progress(-1, "warming up with profiling");
    options.repeat = repeat;
    options.profile = true;
    options.cancel = &context.cancel;
    options.onProgress = [&](const api::Progress& p) { progress(p.percent, p.stage); };
    outcome.run = session.run(options);
    return outcome;
  }
  // A warm-up run, then one engine call per timed run: progress and Cancel between them.
  progress(0, "warming up");
  options.repeat = 1;
  api::RunResult last = session.run(options);
  if (!last.ok()) {
    outcome.run = std::move(last);
    return outcome;
  }
  auto report = std::make_shared<api::RunReport>();
  for (int r = 0; r < repeat; ++r) {
    if (context.cancel.load()) {
      outcome.run.failure = failure("cancelled", path, "the run was cancelled");
      return outcome;
    }
    progress(r * 100 / repeat, "run " + std::to_string(r + 1) + " of " + std::to_string(repeat));
    last = session.run(options);
    if (!last.ok()) {
      outcome.run = std::move(last);
      return outcome;
    }
    report->latenciesMs.push_back(last.report->latenciesMs.front());
  }
  report->outputs = last.report->outputs;
  report->threads = last.report->threads;
  fillStatistics(*report);
  outcome.run.report = std::move(report);
  return outcome;
}

ExportOutcome exportJob(const std::string& path, const RunSettings& settings,
                        const ExportRequest& request, const SessionWorker::Context& context) {
  ExportOutcome outcome;
  api::Session session;
  api::OpenOptions open;
  open.cancel = &context.cancel;
  open.onProgress = [&](const api::Progress& p) { context.progress(-1, p.stage); };
  const api::OpenResult opened = session.openModel(path, open);
  if (!opened.ok()) {
    outcome.compiled.failure =
        opened.failure ? *opened.failure : internalFailure(path, "the model did not open");
    return outcome;
  }
  api::CompileOptions options = compileOptionsFor(settings, request.target, context);
  options.exportDir = request.folder;
  options.exportName = request.name;
  options.onProgress = [&](const api::Progress& p) { context.progress(-1, p.stage); };
  outcome.compiled = session.compile(options);
  if (!outcome.compiled.ok() && !outcome.compiled.failure)
    outcome.compiled.failure = internalFailure(path, "the export returned nothing");
  if (outcome.compiled.ok() && outcome.compiled.report->exported && request.build) {
    context.progress(-1, "building the example");
    outcome.build = api::buildExport(*outcome.compiled.report->exported, &context.cancel);
  }
  return outcome;
}

} // namespace lathe::workbench
