#pragma once
// Runs the compiled model on a worker thread and reports back on the GUI thread, like
// ModelCompiler does compiles: only the newest job reports, stale results are dropped by job
// id. Progress is per timed run and Cancel stops between runs; a profiled run is one engine
// call (its profile spans every timed run) that reports and polls the flag itself.

#include "app/workbench/session_jobs.h"
#include "engine/api/session.h"

#include <QObject>
#include <map>
#include <memory>
#include <string>

namespace lathe::workbench {

struct RunSettings {
  std::string inputsNpz;       // inputs by name; empty: every input is filled
  std::string fill = "random"; // random | zeros | ones; ignored (strict) with inputsNpz
  int repeat = 10;             // timed runs, after one warm-up run
  bool profile = false;
  int topK = 5;
  // Compile for the host with this many threads (0: one per core) before running; -1 keeps
  // the compiled model the Session holds (it compiles one if it has none).
  int compileThreads = -1;
  std::string target = "llvm";
  std::string scheduleText; // kept schedules for that compile (schedule set text)
  // The model has symbolic input dims: it is compiled for the shapes of inputsNpz's arrays
  // or of inputShapes (CompileOptions::inputShapes) before the run.
  bool symbolicInputs = false;
  std::map<std::string, std::vector<std::int64_t>> inputShapes;
};

class ModelRunner : public QObject {
  Q_OBJECT

public:
  explicit ModelRunner(QObject* parent = nullptr);

  // Refuses (false) while any job of this runner, a dropped one included, uses `session`.
  bool run(std::shared_ptr<api::Session> session, std::shared_ptr<const api::ModelReport> model,
           const RunSettings& settings);
  // Forgets the job in flight and asks it to stop at its next run.
  void drop();
  bool isRunning() const { return jobs_.hasCurrent(); }
  // Whether a job (a dropped one included) still uses `session` on a worker.
  bool isBusyWith(const api::Session* session) const { return jobs_.isBusyWith(session); }

signals:
  void progressChanged(int percent, const QString& stage); // percent -1: unknown
  void finished(std::shared_ptr<const lathe::api::ModelReport> model,
                std::shared_ptr<const lathe::api::RunReport> report);
  void failed(std::shared_ptr<const lathe::api::ModelReport> model,
              const lathe::api::Failure& failure);
  // The last job on a worker has ended, dropped ones included: the Session is free.
  void idle();

private:
  void finish(quint64 id);

  // Destroyed before the QObject base deletes the watchers: it stops and waits for the
  // workers.
  SessionJobs<api::RunResult> jobs_;
};

} // namespace lathe::workbench
