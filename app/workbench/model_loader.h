#pragma once
// Opens models on a worker thread and reports back on the GUI thread. Only the newest job
// reports: starting another one cancels the previous job and drops its result by id. A
// loaded model comes with the Session that opened it: compiling needs that same Session.

#include "engine/api/session.h"

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <vector>

template <typename T>
class QFutureWatcher;

namespace lathe::workbench {

class ModelLoader : public QObject {
  Q_OBJECT

public:
  explicit ModelLoader(QObject* parent = nullptr);
  // Cancels every job and waits for the workers, so none outlives the loader.
  ~ModelLoader() override;

  // Starts opening `path` and returns the job's id; any job in flight is superseded.
  quint64 load(const QString& path);
  // Stops the current job at its next stage and reports cancelled() at once; nothing more
  // arrives for that job.
  void cancel();
  bool isLoading() const { return current_ != nullptr; }
  QString loadingPath() const;

signals:
  void progressChanged(int percent, const QString& stage);
  // `session` holds the opened graph; use it from one thread at a time.
  void loaded(const QString& path, std::shared_ptr<const lathe::api::ModelReport> report,
              std::shared_ptr<lathe::api::Session> session);
  void failed(const QString& path, const lathe::api::Failure& failure);
  void cancelled(const QString& path);

public:
  // What a worker hands back: the result and, on success, the Session that holds the model.
  struct Opened {
    api::OpenResult result;
    std::shared_ptr<api::Session> session;
  };

private:
  struct Job {
    quint64 id = 0;
    QString path;
    std::shared_ptr<std::atomic<bool>> cancel;
    QFutureWatcher<Opened>* watcher = nullptr; // child of the loader
  };

  void supersede();
  void finish(quint64 id);

  quint64 nextId_ = 0;
  std::vector<std::unique_ptr<Job>> jobs_; // running, superseded ones included
  Job* current_ = nullptr;                 // the job whose result will be shown
};

} // namespace lathe::workbench
