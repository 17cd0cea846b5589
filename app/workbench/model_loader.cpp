#include "app/workbench/model_loader.h"

#include <QFile>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>

namespace lathe::workbench {
namespace {

api::OpenResult internalFailure(const std::string& path, const std::string& reason) {
  api::Failure failure;
  failure.kind = "internal";
  failure.message = path + ": internal error: " + reason;
  failure.file = path;
  failure.reason = reason;
  api::OpenResult result;
  result.failure = std::move(failure);
  return result;
}

ModelLoader::Opened openOnWorker(const std::string& path, const std::atomic<bool>* cancel,
                                 std::function<void(const api::Progress&)> onProgress) {
  api::OpenOptions options;
  options.allowUnknownOps = true; // the window shows any model; compiling says what blocks it
  options.cancel = cancel;
  options.onProgress = std::move(onProgress);
  // openModel promises not to throw; if a bug makes it throw anyway, the window stays up.
  try {
    // One per job: a Session serves one thread at a time. It lives on with the model it
    // opened, for compiling it later.
    auto session = std::make_shared<api::Session>();
    ModelLoader::Opened opened{session->openModel(path, options), nullptr};
    if (opened.result.ok())
      opened.session = std::move(session);
    return opened;
  } catch (const std::exception& e) {
    return {internalFailure(path, e.what()), nullptr};
  } catch (...) {
    return {internalFailure(path, "unknown exception"), nullptr};
  }
}

} // namespace

ModelLoader::ModelLoader(QObject* parent) : QObject(parent) {}

ModelLoader::~ModelLoader() {
  for (const auto& job : jobs_)
    job->cancel->store(true);
  // Workers post progress to this object; after they stop, Qt discards what is still queued.
  for (const auto& job : jobs_)
    job->watcher->waitForFinished();
}

QString ModelLoader::loadingPath() const {
  return current_ ? current_->path : QString();
}

quint64 ModelLoader::load(const QString& path) {
  supersede();
  auto job = std::make_unique<Job>();
  job->id = ++nextId_;
  job->path = path;
  job->cancel = std::make_shared<std::atomic<bool>>(false);
  job->watcher = new QFutureWatcher<Opened>(this);

  const quint64 id = job->id;
  auto progress = [this, id](const api::Progress& p) {
    const QString stage = QString::fromStdString(p.stage);
    const int percent = std::clamp(p.percent, 0, 100);
    // Runs on the worker: hop to the GUI thread, where the id check is race-free.
    QMetaObject::invokeMethod(
        this,
        [this, id, percent, stage] {
          if (current_ && current_->id == id)
            emit progressChanged(percent, stage);
        },
        Qt::QueuedConnection);
  };
  connect(job->watcher, &QFutureWatcherBase::finished, this, [this, id] { finish(id); });
  job->watcher->setFuture(QtConcurrent::run(openOnWorker, QFile::encodeName(path).toStdString(),
                                            job->cancel.get(), std::move(progress)));
  current_ = job.get();
  jobs_.push_back(std::move(job));
  return id;
}

void ModelLoader::supersede() {
  if (!current_)
    return;
  current_->cancel->store(true);
  current_ = nullptr; // whatever it returns now is stale
}

void ModelLoader::cancel() {
  if (!current_)
    return;
  const QString path = current_->path;
  supersede();
  emit cancelled(path);
}

void ModelLoader::finish(quint64 id) {
  const auto it =
      std::find_if(jobs_.begin(), jobs_.end(), [id](const auto& job) { return job->id == id; });
  if (it == jobs_.end())
    return;
  const std::unique_ptr<Job> job = std::move(*it);
  jobs_.erase(it);
  job->watcher->deleteLater();
  if (current_ != job.get())
    return; // superseded or cancelled: nobody wants this result any more
  current_ = nullptr;

  Opened opened = job->watcher->result();
  const api::OpenResult& result = opened.result;
  if (result.ok()) {
    emit loaded(job->path, result.report, std::move(opened.session));
  } else if (!result.failure) {
    const api::OpenResult bug = internalFailure(job->path.toStdString(),
                                                "the engine returned neither a model nor an error");
    emit failed(job->path, *bug.failure);
  } else if (result.failure->kind == "cancelled") {
    emit cancelled(job->path); // the engine gave up on its own
  } else {
    emit failed(job->path, *result.failure);
  }
}

} // namespace lathe::workbench
