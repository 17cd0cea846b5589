#pragma once
// The workbench's one worker thread: every job that uses the engine (open, compile, run,
// try a schedule, weight statistics, compare) runs there, one after another, so a Session
// is never used by two threads and no panel has to wait for another's job by hand.
//
// Jobs are tagged ("compile", "run", ...). Only the newest job of a tag reports: posting
// another one of the same tag replaces a queued one and asks a running one to stop (its
// result is dropped), as cancel(tag) does. A job's work runs on the worker and returns what
// to do with its result on the GUI thread.

#include <QObject>
#include <QString>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace lathe::workbench {

class SessionWorker : public QObject {
  Q_OBJECT

public:
  // What a job's work gets: the flag cancel() sets (the engine polls it at its stages), and
  // a way to report progress (percent -1: unknown) that reaches the GUI while the job is
  // current.
  struct Context {
    const std::atomic<bool>& cancel;
    std::function<void(int percent, const std::string& stage)> progress;
  };
  // Runs on the worker; what it returns runs on the GUI thread if the job is still current.
  // The engine promises not to throw; if a bug makes it throw anyway, `onError` (given to
  // post) turns the message into a result instead.
  using Deliver = std::function<void()>;
  using Work = std::function<Deliver(const Context&)>;

  explicit SessionWorker(QObject* parent = nullptr);
  // Cancels every job, drops the queue and waits for the running job to return.
  ~SessionWorker() override;

  // Queues `work` as the current job of `tag`; returns its id.
  quint64 post(const QString& tag, Work work,
               std::function<Deliver(const std::string& error)> onError = {});
  // Forgets the current job of `tag` (nothing arrives for it) and asks it to stop; false if
  // there was none.
  bool cancel(const QString& tag);
  // Whether `tag` has a current job (queued or running).
  bool isBusy(const QString& tag) const { return current_.count(tag) != 0; }
  // Nothing queued or running, forgotten jobs included.
  bool isIdle() const;

signals:
  void progressChanged(const QString& tag, int percent, const QString& stage);
  // A job has ended and nothing is queued or running.
  void idle();

private:
  struct Job {
    quint64 id = 0;
    QString tag;
    Work work;
    std::function<Deliver(const std::string&)> onError;
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  };
  void loop();
  void finish(const QString& tag, quint64 id, const Deliver& deliver);

  // GUI thread only: the current job of each tag, and its cancel flag.
  std::map<QString, std::pair<quint64, std::shared_ptr<std::atomic<bool>>>> current_;
  quint64 nextId_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool running_ = false; // a job is on the worker
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace lathe::workbench
