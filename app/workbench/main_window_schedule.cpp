// MainWindow's Schedule dock: which kernel it shows, whether Apply can start, and trying the
// steps on a worker.
#include "app/workbench/main_window.h"
#include "app/workbench/model_compiler.h"
#include "app/workbench/model_runner.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/schedule_trier.h"

namespace lathe::workbench {

void MainWindow::updateScheduleAvailability() {
  const auto& report = compileReport();
  if (!report) {
    schedulePanel_->setAvailable(false, tr("Compile the model first"));
  } else if (report->target.rfind("llvm", 0) != 0 ||
             report->target.find("-mtriple") != std::string::npos) {
    schedulePanel_->setAvailable(false, tr("Schedules are tried on this machine: compile for "
                                           "the host target"));
  } else if (session_ &&
             (compiler_->isBusyWith(session_.get()) || runner_->isBusyWith(session_.get()) ||
              trier_->isBusyWith(session_.get()))) {
    schedulePanel_->setAvailable(false, tr("Waiting for the engine"));
  } else {
    schedulePanel_->setAvailable(true);
  }
}

void MainWindow::showScheduleKernel(int kernel) {
  const auto& report = compileReport();
  if (!report || kernel < 0 || kernel >= static_cast<int>(report->kernels.size())) {
    schedulePanel_->setKernel({}, {});
    return;
  }
  const api::KernelReport& k = report->kernels[static_cast<std::size_t>(kernel)];
  if (k.name != schedulePanel_->kernel())
    schedulePanel_->setKernel(k.name, k.loopIr, k.strategy);
}

bool MainWindow::trySchedule(bool timed) {
  updateScheduleAvailability();
  if (!report_ || !session_ || schedulePanel_->kernel().empty() || !compileReport() ||
      compiler_->isBusyWith(session_.get()) || runner_->isBusyWith(session_.get()) ||
      trier_->isBusyWith(session_.get()))
    return false;
  api::KernelScheduleOptions options;
  options.kernel = schedulePanel_->kernel();
  options.steps = schedulePanel_->steps().toStdString();
  options.threads = sessionThreads_ > 0 ? sessionThreads_ : 0;
  options.repeat = timed ? 30 : 0;
  if (!trier_->tryKernel(session_, report_, options))
    return false;
  schedulePanel_->setTrying(true, timed);
  updateScheduleAvailability();
  return true;
}

} // namespace lathe::workbench
