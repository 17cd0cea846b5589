#include "app/workbench/model_compiler.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <functional>

namespace lathe::workbench {
namespace {

api::CompileResult internalFailure(const std::string& path, const std::string& reason) {
  api::Failure failure;
  failure.kind = "internal";
  failure.message = (path.empty() ? std::string() : path + ": ") + "internal error: " + reason;
  failure.file = path;
  failure.reason = reason;
  api::CompileResult result;
  result.failure = std::move(failure);
  return result;
}

api::CompileResult compileOnWorker(const std::shared_ptr<api::Session>& session,
                                   const std::string& path, const std::string& target,
                                   const std::string& scheduleText, const std::string& inputsFile,
                                   const ShapeMap& inputShapes,
                                   const std::shared_ptr<std::atomic<bool>>& cancel,
                                   const std::function<void(const api::Progress&)>& onProgress) {
  api::CompileOptions options;
  options.target = target;
  options.scheduleText = scheduleText;
  options.inputsFile = inputsFile; // specialises a model with symbolic input dims
  options.inputShapes = inputShapes;
  options.cancel = cancel.get(); // drop() sets it: the engine stops at its next stage
  options.onProgress = onProgress;
  options.keepCode = true; // the Kernels tab shows LLVM IR and assembly
  // compile promises not to throw; if a bug makes it throw anyway, the window stays up.
  try {
    return session->compile(options);
  } catch (const std::exception& e) {
    return internalFailure(path, e.what());
  } catch (...) {
    return internalFailure(path, "unknown exception");
  }
}

} // namespace

ModelCompiler::ModelCompiler(QObject* parent) : QObject(parent) {}

bool ModelCompiler::compile(std::shared_ptr<api::Session> session,
                            std::shared_ptr<const api::ModelReport> model,
                            const std::string& target, const std::string& scheduleText,
                            const std::string& inputsFile, const ShapeMap& inputShapes) {
  if (!session || !model || jobs_.isBusyWith(session.get()))
    return false;
  auto& job = jobs_.add(std::move(session), std::move(model), this);
  const quint64 id = job.id;
  // Called on the worker: the stage crosses to the GUI thread as a queued call, which Qt
  // discards if the compiler is gone by then.
  auto onProgress = [this, id](const api::Progress& progress) {
    QMetaObject::invokeMethod(
        this,
        [this, id, stage = QString::fromStdString(progress.stage)] {
          if (jobs_.isCurrent(id))
            emit stageChanged(stage);
        },
        Qt::QueuedConnection);
  };
  connect(job.watcher, &QFutureWatcherBase::finished, this, [this, id] { finish(id); });
  // The worker gets its own reference: the Session lives until the compile is done even if
  // the window has moved on to another model.
  job.watcher->setFuture(QtConcurrent::run(compileOnWorker, job.session, job.model->path, target,
                                           scheduleText, inputsFile, inputShapes, job.cancel,
                                           onProgress));
  return true;
}

void ModelCompiler::drop() {
  jobs_.drop();
}

void ModelCompiler::finish(quint64 id) {
  const auto [job, wanted] = jobs_.take(id);
  if (!job)
    return;
  // Queued: whoever waits for a free Session hears of it after this job's result.
  if (jobs_.empty())
    QMetaObject::invokeMethod(this, &ModelCompiler::idle, Qt::QueuedConnection);
  if (!wanted)
    return; // dropped: nobody wants this result any more

  const api::CompileResult result = job->watcher->result();
  if (result.ok()) {
    emit compiled(job->model, result.report);
  } else if (!result.failure) {
    emit failed(job->model,
                *internalFailure(job->model->path,
                                 "the engine returned neither a compiled model nor an error")
                     .failure);
  } else {
    emit failed(job->model, *result.failure);
  }
}

} // namespace lathe::workbench
