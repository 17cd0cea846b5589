// MainWindow's File > Export…: the dialog, and the export it asks for as a worker job.
#include "app/workbench/engine_jobs.h"
#include "app/workbench/export_dialog.h"
#include "app/workbench/main_window.h"
#include "app/workbench/main_window_text.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/session_worker.h"
#include "app/workbench/workbench_document.h"

#include <QFileInfo>

namespace lathe::workbench {

ExportDialog* MainWindow::exportDialog() const {
  return exportDialog_;
}

ExportDialog* MainWindow::showExportDialog() {
  if (!doc_->model() || doc_->path().isEmpty())
    return nullptr;
  if (exportDialog_) {
    exportDialog_->raise();
    exportDialog_->activateWindow();
    return exportDialog_;
  }
  auto* dialog = new ExportDialog(doc_->path(), target(), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  exportDialog_ = dialog;
  const auto model = doc_->model();
  connect(
      dialog, &ExportDialog::exportRequested, this,
      [this, dialog, model](const ExportRequest& request) {
        doc_->setRunSettings(runPanel_->settings());
        RunSettings settings = doc_->runSettings();
        settings.scheduleText = doc_->keptSchedules();
        settings.tuningRecords = doc_->tuningRecords();
        const std::string path = doc_->path().toStdString();
        const QPointer<ExportDialog> target = dialog;
        worker_->post(
            jobs::kExport,
            [this, path, settings, request,
             target](const SessionWorker::Context& context) -> SessionWorker::Deliver {
              ExportOutcome outcome = exportJob(path, settings, request, context);
              return [this, target, outcome] { finishExport(target, outcome); };
            },
            [this, path, target](const std::string& error) -> SessionWorker::Deliver {
              ExportOutcome outcome;
              outcome.compiled.failure = internalFailure(path, error);
              return [this, target, outcome] { finishExport(target, outcome); };
            });
        log(tr("Exporting %1 for %2 into %3")
                .arg(QFileInfo(doc_->path()).fileName(), qs(request.target), qs(request.folder)));
      });
  connect(dialog, &ExportDialog::cancelRequested, this, [this, dialog] {
    if (!worker_->cancel(jobs::kExport))
      return;
    ExportOutcome cancelled;
    cancelled.compiled.failure =
        api::Failure{"cancelled", "the export was cancelled", {}, {}, {}, {}};
    dialog->showOutcome(cancelled);
    log(tr("Cancelled the export of %1").arg(QFileInfo(doc_->path()).fileName()));
  });
  // Closing the dialog stops an export in flight: nobody would see its result.
  connect(dialog, &QObject::destroyed, this, [this] { worker_->cancel(jobs::kExport); });
  dialog->show();
  return dialog;
}

void MainWindow::finishExport(const QPointer<ExportDialog>& dialog, const ExportOutcome& outcome) {
  const api::CompileResult& c = outcome.compiled;
  if (c.ok() && c.report->exported) {
    const api::ExportReport& e = *c.report->exported;
    log(tr("Exported %1 for %2 into %3: code %4 bytes, weights %5 bytes%6")
            .arg(QFileInfo(doc_->path()).fileName(), qs(c.report->target), qs(e.folder))
            .arg(e.codeBytes)
            .arg(e.weightBytes)
            .arg(outcome.build ? tr("; build %1").arg(qs(outcome.build->status)) : QString()),
        outcome.build && outcome.build->status == "failed" ? LogLevel::Error : LogLevel::Info);
  } else if (c.failure && c.failure->kind != "cancelled") {
    log(tr("error: export failed: %1").arg(qs(c.failure->message)), LogLevel::Error);
  }
  if (dialog)
    dialog->showOutcome(outcome);
  emit exportFinished();
}

} // namespace lathe::workbench
