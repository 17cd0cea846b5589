// MainWindow's Schedule dock: which kernel it shows, whether Apply can start, and trying the
// steps on a worker.
#include "app/workbench/engine_jobs.h"
#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "app/workbench/main_window_text.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/session_worker.h"
#include "app/workbench/workbench_document.h"

#include <QLabel>

namespace lathe::workbench {

void MainWindow::updateScheduleAvailability() {
  const auto& report = compileReport();
  if (!report) {
    schedulePanel_->setAvailable(false, tr("Compile the model first"));
  } else if (report->target != target().toStdString()) {
    schedulePanel_->setAvailable(false, tr("The kernels are compiled for %1; compile for %2 "
                                           "first")
                                            .arg(qs(report->target), target()));
  } else if (!api::runsInThisProcess(report->target)) {
    schedulePanel_->setAvailable(false, tr("Schedules are timed on this machine, and code for "
                                           "%1 does not run here: pick a host target")
                                            .arg(qs(report->target)));
  } else if (worker_->isBusy(jobs::kCompile) || worker_->isBusy(jobs::kRun) ||
             worker_->isBusy(jobs::kSchedule)) {
    schedulePanel_->setAvailable(false, tr("Waiting for the engine"));
  } else {
    schedulePanel_->setAvailable(true);
  }
}

void MainWindow::markStaleCode() {
  const auto& report = compileReport();
  if (!report || report->target == target().toStdString()) {
    kernels_->setStale({});
    return;
  }
  kernels_->setStale(tr("This code is for %1, not for the target picked now (%2): Compile "
                        "shows the code for %2.")
                         .arg(qs(report->target), target()));
}

void MainWindow::showScheduleKernel(int kernel) {
  const auto& report = compileReport();
  if (!report || kernel < 0 || kernel >= static_cast<int>(report->kernels.size())) {
    schedulePanel_->setKernel({}, {});
    return;
  }
  const api::KernelReport& k = report->kernels[static_cast<std::size_t>(kernel)];
  if (k.name != schedulePanel_->kernel())
    schedulePanel_->setKernel(k.name, k.naiveLoopIr.empty() ? k.loopIr : k.naiveLoopIr, k.strategy,
                              k.defaultTrace);
}

bool MainWindow::trySchedule(bool timed) {
  updateScheduleAvailability();
  if (!doc_->model() || !doc_->session() || schedulePanel_->kernel().empty() || !compileReport() ||
      worker_->isBusy(jobs::kCompile) || worker_->isBusy(jobs::kRun) ||
      worker_->isBusy(jobs::kSchedule))
    return false;
  api::KernelScheduleOptions options;
  options.kernel = schedulePanel_->kernel();
  options.steps = schedulePanel_->steps().toStdString();
  options.threads = doc_->compiledThreads() > 0 ? doc_->compiledThreads() : 0;
  options.repeat = timed ? 30 : 0;
  const auto model = doc_->model();
  const QString steps = schedulePanel_->steps();
  worker_->post(
      jobs::kSchedule,
      [this, session = doc_->session(), model, steps,
       options](const SessionWorker::Context& context) mutable -> SessionWorker::Deliver {
        options.cancel = &context.cancel;
        api::KernelScheduleResult result = session->tryKernelSchedule(options);
        return [this, model, steps, result] { finishTry(model, steps, result); };
      },
      [this, model, steps](const std::string& error) -> SessionWorker::Deliver {
        api::KernelScheduleResult result;
        result.failure = internalFailure({}, error);
        return [this, model, steps, result] { finishTry(model, steps, result); };
      });
  schedulePanel_->setTrying(true, timed);
  updateScheduleAvailability();
  return true;
}

void MainWindow::finishTry(const std::shared_ptr<const api::ModelReport>& model,
                           const QString& steps, const api::KernelScheduleResult& result) {
  if (model != doc_->model())
    return;
  schedulePanel_->showResult(steps, result);
  if (result.ok())
    log(tr("Schedule of %1: %2")
            .arg(qs(result.report->kernel), schedulePanel_->resultLabel()->text()));
  else
    log(tr("Schedule refused: %1").arg(qs(result.failure->message)), LogLevel::Warning);
  updateScheduleAvailability();
  emit scheduleTried();
}

} // namespace lathe::workbench
