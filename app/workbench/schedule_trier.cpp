#include "app/workbench/schedule_trier.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace lathe::workbench {
namespace {

api::KernelScheduleResult tryOnWorker(const std::shared_ptr<api::Session>& session,
                                      api::KernelScheduleOptions options,
                                      const std::shared_ptr<std::atomic<bool>>& cancel) {
  options.cancel = cancel.get();
  try {
    return session->tryKernelSchedule(options);
  } catch (const std::exception& e) {
    api::KernelScheduleResult result;
    result.failure =
        api::Failure{"internal", std::string("internal error: ") + e.what(), {}, {}, {}, e.what()};
    return result;
  }
}

} // namespace

ScheduleTrier::ScheduleTrier(QObject* parent) : QObject(parent) {}

bool ScheduleTrier::tryKernel(std::shared_ptr<api::Session> session,
                              std::shared_ptr<const api::ModelReport> model,
                              const api::KernelScheduleOptions& options) {
  if (!session || !model || jobs_.isBusyWith(session.get()))
    return false;
  auto& job = jobs_.add(std::move(session), std::move(model), this);
  const quint64 id = job.id;
  const QString steps = QString::fromStdString(options.steps);
  connect(job.watcher, &QFutureWatcherBase::finished, this,
          [this, id, steps] { finish(id, steps); });
  job.watcher->setFuture(QtConcurrent::run(tryOnWorker, job.session, options, job.cancel));
  return true;
}

void ScheduleTrier::drop() {
  jobs_.drop();
}

void ScheduleTrier::finish(quint64 id, const QString& steps) {
  const auto [job, wanted] = jobs_.take(id);
  if (!job)
    return;
  if (jobs_.empty())
    QMetaObject::invokeMethod(this, &ScheduleTrier::idle, Qt::QueuedConnection);
  if (wanted)
    emit tried(job->model, steps, job->watcher->result());
}

} // namespace lathe::workbench
