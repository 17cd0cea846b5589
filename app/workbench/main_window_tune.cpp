// MainWindow's Tune dock: a schedule search as a worker job, its live progress, and the
// records it leaves in use for Compile and Run.
#include "app/workbench/engine_jobs.h"
#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "app/workbench/main_window_text.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/session_worker.h"
#include "app/workbench/tune_panel.h"
#include "app/workbench/workbench_document.h"

#include <QDir>
#include <QDockWidget>
#include <QFileInfo>

namespace lathe::workbench {

void MainWindow::createTuneDock() {
  tunePanel_ = new TunePanel(this);
  tuneDock_ = addPanel(tunePanel_, tr("Tune"), QStringLiteral("tuneDock"), Qt::BottomDockWidgetArea,
                       Scroll::WhenSmall);
  connect(tunePanel_, &TunePanel::startRequested, this, [this] { tune(); });
  connect(tunePanel_, &TunePanel::stopRequested, this, &MainWindow::stopTuning);
  connect(tunePanel_, &TunePanel::pauseRequested, this, [this](bool paused) {
    if (!tunePause_ || !worker_->isBusy(jobs::kTune))
      return;
    tunePause_->store(paused);
    log(paused ? tr("Pausing the search after the candidate in flight")
               : tr("Resuming the search"));
  });
  connect(tunePanel_, &TunePanel::kernelActivated, this, &MainWindow::openTunedKernel);
  connect(doc_, &WorkbenchDocument::modelChanged, this, [this] {
    tunePanel_->setCanTune(doc_->model() != nullptr, tr("Open a model to tune it."));
    // A records file beside the model, by default: a second search resumes it.
    if (doc_->model() && tunePanel_->recordsPath().isEmpty()) {
      const QFileInfo model(doc_->path());
      tunePanel_->setRecordsPath(
          model.dir().filePath(model.completeBaseName() + QStringLiteral(".tuning.jsonl")));
    }
  });
}

bool MainWindow::tune() {
  if (!doc_->model() || !doc_->session() || worker_->isBusy(jobs::kTune) ||
      tunePanel_->recordsPath().isEmpty())
    return false;
  if (runPanel_->hasSymbolicInputs() && !runPanel_->shapeProblem().isEmpty()) {
    showPanel(Panel::Run);
    log(tr("%1 has inputs with symbolic dims; to tune it: %2")
            .arg(QFileInfo(doc_->path()).fileName(), runPanel_->shapeProblem()),
        LogLevel::Warning);
    return false;
  }
  api::TuneOptions options = tunePanel_->options();
  options.target = target().toStdString();
  doc_->setRunSettings(runPanel_->settings());
  options.inputsFile = doc_->runSettings().inputsNpz;
  options.inputShapes = doc_->runSettings().inputShapes;
  tuneStop_ = std::make_shared<std::atomic<bool>>(false);
  options.cancel = tuneStop_.get();
  tunePause_ = std::make_shared<std::atomic<bool>>(false);
  options.pause = tunePause_.get();
  // Rounds cross to the GUI thread as queued calls, dropped if the panel is gone.
  options.onProgress = [panel = tunePanel_](const api::TuneProgressSummary& p) {
    QMetaObject::invokeMethod(panel, [panel, p] { panel->addProgress(p); }, Qt::QueuedConnection);
  };
  const auto model = doc_->model();
  const QString records = tunePanel_->recordsPath();
  worker_->post(
      jobs::kTune,
      [this, session = doc_->session(), model, options, records, stop = tuneStop_,
       pause = tunePause_](const SessionWorker::Context&) -> SessionWorker::Deliver {
        api::TuneResult result = session->tune(options);
        return [this, model, result, records] { finishTune(model, result, records); };
      },
      [this, model, records](const std::string& error) -> SessionWorker::Deliver {
        api::TuneResult result;
        result.failure = internalFailure(model->path, error);
        return [this, model, result, records] { finishTune(model, result, records); };
      });
  tunePanel_->setTuning(true);
  showPanel(Panel::Tune);
  updateRunAvailability();
  compileAction_->setEnabled(false);
  log(tr("Tuning %1 on this machine: %2 trials, records in %3")
          .arg(QFileInfo(doc_->path()).fileName())
          .arg(options.trials)
          .arg(QDir::toNativeSeparators(records)));
  return true;
}

void MainWindow::stopTuning() {
  if (!tuneStop_ || !worker_->isBusy(jobs::kTune))
    return;
  tuneStop_->store(true); // the report still arrives, with every record measured so far
  log(tr("Stopping the search after the candidate in flight"));
}

bool MainWindow::isTuning() const {
  return worker_->isBusy(jobs::kTune);
}

void MainWindow::finishTune(const std::shared_ptr<const api::ModelReport>& model,
                            const api::TuneResult& result, const QString& records) {
  if (model != doc_->model())
    return;
  tunePanel_->setTuning(false);
  updateRunAvailability();
  compileAction_->setEnabled(!isCompiling() && doc_->session() != nullptr);
  if (!result.ok()) {
    const QString message = qs(result.failure->message);
    tunePanel_->showFailure(message);
    log(tr("error: tuning failed: %1").arg(message), LogLevel::Error);
    emit tuneFailed(message);
    return;
  }
  tunePanel_->showReport(result.report);
  // From now on Compile and Run apply the best records of this machine.
  doc_->setTuningRecords(QFile::encodeName(records).toStdString());
  const api::TuneReport& r = *result.report;
  log(tr("Tuned %1: %2 trials (%3 errors) in %4 s; Compile and Run now use %5")
          .arg(QFileInfo(doc_->path()).fileName())
          .arg(r.trials)
          .arg(r.errors)
          .arg(r.seconds, 0, 'f', 0)
          .arg(QDir::toNativeSeparators(records)));
  emit tuneFinished();
}

// A kernel of the search: its code, and its best trace in Schedule to try or keep.
void MainWindow::openTunedKernel(const QString& kernel, const QString& trace) {
  const auto& compiled = compileReport();
  if (!compiled) {
    log(tr("Compile the model to see %1's code and schedule").arg(kernel), LogLevel::Warning);
    return;
  }
  for (int k = 0; k < static_cast<int>(compiled->kernels.size()); ++k) {
    if (qs(compiled->kernels[static_cast<std::size_t>(k)].name) != kernel)
      continue;
    selectKernel(k);
    showScheduleKernel(k);
    schedulePanel_->setSteps(trace);
    showPanel(Panel::Schedule);
    return;
  }
}

} // namespace lathe::workbench
