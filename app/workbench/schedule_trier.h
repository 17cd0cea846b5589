#pragma once
// Tries a schedule on one kernel (Session::tryKernelSchedule) on a worker thread and reports
// back on the GUI thread, like ModelCompiler does compiles: only the newest job reports.

#include "app/workbench/session_jobs.h"
#include "engine/api/session.h"

#include <QObject>
#include <memory>
#include <string>

namespace lathe::workbench {

class ScheduleTrier : public QObject {
  Q_OBJECT

public:
  explicit ScheduleTrier(QObject* parent = nullptr);

  // Refuses (false) while a job of this trier, a dropped one included, uses `session`.
  bool tryKernel(std::shared_ptr<api::Session> session,
                 std::shared_ptr<const api::ModelReport> model,
                 const api::KernelScheduleOptions& options);
  // Forgets the job in flight and asks it to stop timing.
  void drop();
  bool isTrying() const { return jobs_.hasCurrent(); }
  bool isBusyWith(const api::Session* session) const { return jobs_.isBusyWith(session); }

signals:
  // `steps` is the text the job was given, for the panel to match results to its editor.
  void tried(std::shared_ptr<const lathe::api::ModelReport> model, const QString& steps,
             const lathe::api::KernelScheduleResult& result);
  // The last job on a worker has ended, dropped ones included: the Session is free.
  void idle();

private:
  void finish(quint64 id, const QString& steps);

  SessionJobs<api::KernelScheduleResult> jobs_;
};

} // namespace lathe::workbench
