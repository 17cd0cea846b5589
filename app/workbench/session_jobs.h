#pragma once
// The bookkeeping ModelCompiler and ModelRunner share: jobs that each use one Session on a
// worker thread, with an id, a cancel flag the worker polls and a future watcher. Only the
// current (newest) job reports; drop() forgets it and asks it to stop. A Session serves one
// thread at a time, so isBusyWith() counts dropped jobs that still run.

#include "engine/api/session.h"

#include <QFutureWatcher>
#include <QObject>
#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

namespace lathe::workbench {

template <typename Result>
class SessionJobs {
public:
  struct Job {
    quint64 id = 0;
    std::shared_ptr<api::Session> session;
    std::shared_ptr<const api::ModelReport> model;
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
    QFutureWatcher<Result>* watcher = nullptr; // a child of the owner
  };

  SessionJobs() = default;
  SessionJobs(const SessionJobs&) = delete;
  SessionJobs& operator=(const SessionJobs&) = delete;
  // Nobody will see the results: stop every job as soon as possible and wait for it, so no
  // worker outlives its owner.
  ~SessionJobs() {
    for (const auto& job : jobs_)
      job->cancel->store(true);
    for (const auto& job : jobs_)
      job->watcher->waitForFinished();
  }

  // A new current job; the caller connects its watcher and starts the work.
  Job& add(std::shared_ptr<api::Session> session, std::shared_ptr<const api::ModelReport> model,
           QObject* owner) {
    auto job = std::make_unique<Job>();
    job->id = ++nextId_;
    job->session = std::move(session);
    job->model = std::move(model);
    job->watcher = new QFutureWatcher<Result>(owner);
    current_ = job.get();
    jobs_.push_back(std::move(job));
    return *current_;
  }

  void drop() {
    if (current_)
      current_->cancel->store(true);
    current_ = nullptr;
  }

  bool hasCurrent() const { return current_ != nullptr; }
  bool isCurrent(quint64 id) const { return current_ && current_->id == id; }
  bool empty() const { return jobs_.empty(); }
  bool isBusyWith(const api::Session* session) const {
    return std::any_of(jobs_.begin(), jobs_.end(),
                       [session](const auto& job) { return job->session.get() == session; });
  }

  // The finished job `id`, removed from the list (its watcher is deleted later), and whether
  // it was the current one; null if there is no such job.
  std::pair<std::unique_ptr<Job>, bool> take(quint64 id) {
    const auto it =
        std::find_if(jobs_.begin(), jobs_.end(), [id](const auto& job) { return job->id == id; });
    if (it == jobs_.end())
      return {nullptr, false};
    std::unique_ptr<Job> job = std::move(*it);
    jobs_.erase(it);
    job->watcher->deleteLater();
    const bool wasCurrent = current_ == job.get();
    if (wasCurrent)
      current_ = nullptr;
    return {std::move(job), wasCurrent};
  }

private:
  quint64 nextId_ = 0;
  std::vector<std::unique_ptr<Job>> jobs_; // running, dropped ones included
  Job* current_ = nullptr;                 // the job whose result will be shown
};

} // namespace lathe::workbench
