#include "app/workbench/session_worker.h"

#include <QMetaObject>
#include <exception>

namespace lathe::workbench {

SessionWorker::SessionWorker(QObject* parent) : QObject(parent) {
  thread_ = std::thread([this] { loop(); });
}

SessionWorker::~SessionWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (Job& job : queue_)
      job.cancel->store(true);
    queue_.clear();
  }
  for (auto& [tag, current] : current_)
    current.second->store(true);
  wake_.notify_all();
  thread_.join(); // results queued to this object after now are discarded by Qt
}

quint64 SessionWorker::post(const QString& tag, Work work,
                            std::function<Deliver(const std::string&)> onError) {
  cancel(tag);
  Job job;
  job.id = ++nextId_;
  job.tag = tag;
  job.work = std::move(work);
  job.onError = std::move(onError);
  current_[tag] = {job.id, job.cancel};
  const quint64 id = job.id;
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return id;
}

bool SessionWorker::cancel(const QString& tag) {
  const auto it = current_.find(tag);
  if (it == current_.end())
    return false;
  const quint64 id = it->second.first;
  it->second.second->store(true);
  current_.erase(it);
  std::lock_guard lock(mutex_);
  for (auto job = queue_.begin(); job != queue_.end(); ++job)
    if (job->id == id) { // never started: nothing to wait for
      queue_.erase(job);
      break;
    }
  return true;
}

bool SessionWorker::isIdle() const {
  std::lock_guard lock(mutex_);
  return queue_.empty() && !running_;
}

void SessionWorker::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_)
        return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
    }
    const quint64 id = job.id;
    const QString tag = job.tag;
    const Context context{*job.cancel, [this, tag, id](int percent, const std::string& stage) {
                            QMetaObject::invokeMethod(
                                this,
                                [this, tag, id, percent, stage = QString::fromStdString(stage)] {
                                  const auto it = current_.find(tag);
                                  if (it != current_.end() && it->second.first == id)
                                    emit progressChanged(tag, percent, stage);
                                },
                                Qt::QueuedConnection);
                          }};
    Deliver deliver;
    try {
      deliver = job.work(context);
    } catch (const std::exception& e) {
      if (job.onError)
        deliver = job.onError(e.what());
    } catch (...) {
      if (job.onError)
        deliver = job.onError("unknown exception");
    }
    {
      std::lock_guard lock(mutex_);
      running_ = false;
    }
    QMetaObject::invokeMethod(
        this, [this, tag, id, deliver = std::move(deliver)] { finish(tag, id, deliver); },
        Qt::QueuedConnection);
  }
}

void SessionWorker::finish(const QString& tag, quint64 id, const Deliver& deliver) {
  const auto it = current_.find(tag);
  const bool wanted = it != current_.end() && it->second.first == id;
  if (wanted)
    current_.erase(it);
  if (wanted && deliver)
    deliver();
  if (isIdle())
    emit idle();
}

} // namespace lathe::workbench
