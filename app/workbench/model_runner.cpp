#include "app/workbench/model_runner.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <numeric>

namespace lathe::workbench {
namespace {

using ProgressFn = std::function<void(int, const std::string&)>;

api::RunResult failure(const std::string& kind, const std::string& path,
                       const std::string& reason) {
  api::Failure f;
  f.kind = kind;
  f.file = path;
  f.reason = reason;
  f.message = (path.empty() ? std::string() : path + ": ") +
              (kind == "internal" ? "internal error: " : std::string()) + reason;
  api::RunResult result;
  result.failure = std::move(f);
  return result;
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

api::RunResult runOnWorker(const std::shared_ptr<api::Session>& session, const std::string& path,
                           const RunSettings& settings,
                           const std::shared_ptr<std::atomic<bool>>& cancel,
                           const ProgressFn& progress) {
  if (settings.compileThreads >= 0) {
    progress(-1, "compiling for " + (settings.compileThreads == 0
                                         ? std::string("every core")
                                         : std::to_string(settings.compileThreads) + " threads"));
    api::CompileOptions compile;
    compile.target = settings.target;
    compile.threads = settings.compileThreads;
    compile.scheduleText = settings.scheduleText;
    compile.inputsFile = settings.inputsNpz;
    compile.inputShapes = settings.inputShapes;
    compile.cancel = cancel.get();
    const api::CompileResult compiled = session->compile(compile);
    if (!compiled.ok())
      return compiled.failure ? api::RunResult{nullptr, compiled.failure}
                              : failure("internal", path, "compile returned nothing");
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
    options.cancel = cancel.get();
    options.onProgress = [&](const api::Progress& p) { progress(p.percent, p.stage); };
    return session->run(options);
  }
  // A warm-up run, then one engine call per timed run: progress and Cancel between them.
  progress(0, "warming up");
  options.repeat = 1;
  api::RunResult last = session->run(options);
  if (!last.ok())
    return last;
  auto report = std::make_shared<api::RunReport>();
  for (int r = 0; r < repeat; ++r) {
    if (cancel->load())
      return failure("cancelled", path, "the run was cancelled");
    progress(r * 100 / repeat, "run " + std::to_string(r + 1) + " of " + std::to_string(repeat));
    last = session->run(options);
    if (!last.ok())
      return last;
    report->latenciesMs.push_back(last.report->latenciesMs.front());
  }
  report->outputs = last.report->outputs;
  report->threads = last.report->threads;
  fillStatistics(*report);
  return {report, std::nullopt};
}

api::RunResult guardedRun(const std::shared_ptr<api::Session>& session, const std::string& path,
                          const RunSettings& settings,
                          const std::shared_ptr<std::atomic<bool>>& cancel,
                          const ProgressFn& progress) {
  // The engine promises not to throw; if a bug makes it throw anyway, the window stays up.
  try {
    return runOnWorker(session, path, settings, cancel, progress);
  } catch (const std::exception& e) {
    return failure("internal", path, e.what());
  } catch (...) {
    return failure("internal", path, "unknown exception");
  }
}

} // namespace

ModelRunner::ModelRunner(QObject* parent) : QObject(parent) {}

bool ModelRunner::run(std::shared_ptr<api::Session> session,
                      std::shared_ptr<const api::ModelReport> model, const RunSettings& settings) {
  if (!session || !model || jobs_.isBusyWith(session.get()))
    return false;
  auto& job = jobs_.add(std::move(session), std::move(model), this);
  const quint64 id = job.id;
  // Called on the worker; crosses to the GUI thread as a queued call.
  ProgressFn progress = [this, id](int percent, const std::string& stage) {
    QMetaObject::invokeMethod(
        this,
        [this, id, percent, stage = QString::fromStdString(stage)] {
          if (jobs_.isCurrent(id))
            emit progressChanged(percent, stage);
        },
        Qt::QueuedConnection);
  };
  connect(job.watcher, &QFutureWatcherBase::finished, this, [this, id] { finish(id); });
  job.watcher->setFuture(
      QtConcurrent::run(guardedRun, job.session, job.model->path, settings, job.cancel, progress));
  return true;
}

void ModelRunner::drop() {
  jobs_.drop();
}

void ModelRunner::finish(quint64 id) {
  const auto [job, wanted] = jobs_.take(id);
  if (!job)
    return;
  if (wanted) {
    const api::RunResult result = job->watcher->result();
    if (result.ok())
      emit finished(job->model, result.report);
    else
      emit failed(job->model, result.failure
                                  ? *result.failure
                                  : *failure("internal", job->model->path,
                                             "the engine returned neither a report nor an error")
                                         .failure);
  }
  if (jobs_.empty())
    emit idle();
}

} // namespace lathe::workbench
