// MainWindow's File > Save Session / Open Session / Recent Sessions: the document's state as
// a .lathe file (engine/api/session_file.h), written and read on the worker, and restored
// once the session's model has loaded.
#include "app/workbench/engine_jobs.h"
#include "app/workbench/input_shapes_table.h"
#include "app/workbench/main_window.h"
#include "app/workbench/main_window_text.h"
#include "app/workbench/recent_files.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/session_worker.h"
#include "app/workbench/tune_panel.h"
#include "app/workbench/workbench_document.h"

#include <QAction>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>

namespace lathe::workbench {

namespace {

const QString kSessionTag = QStringLiteral("session");
const QString kSessionFilter = QStringLiteral("Lathe sessions (*.lathe);;All files (*)");

std::string encoded(const QString& path) {
  return QFile::encodeName(path).toStdString();
}

QString decoded(const std::string& path) {
  return QFile::decodeName(QByteArray::fromStdString(path));
}

} // namespace

void MainWindow::createSessionActions(QMenu* file) {
  auto* open = new QAction(tr("Open &Session\u2026"), this);
  open->setObjectName(QStringLiteral("openSessionAction"));
  open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  open->setStatusTip(tr("Open a saved session: its model, inputs, target, schedules and runs"));
  connect(open, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Session"), QSettings().value(QStringLiteral("lastSessionDir")).toString(),
        kSessionFilter);
    if (!path.isEmpty())
      openSession(path);
  });
  saveSessionAction_ = new QAction(tr("Save Session &As\u2026"), this);
  saveSessionAction_->setObjectName(QStringLiteral("saveSessionAction"));
  saveSessionAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  saveSessionAction_->setStatusTip(
      tr("Save the model's inputs, target, kept schedules, tuning records, pinned run and "
         "layout as a .lathe file"));
  saveSessionAction_->setEnabled(false);
  connect(saveSessionAction_, &QAction::triggered, this, [this] {
    const QFileInfo model(doc_->path());
    const QString suggested =
        model.absoluteDir().filePath(model.completeBaseName() + QStringLiteral(".lathe"));
    QString path =
        QFileDialog::getSaveFileName(this, tr("Save Session"), suggested, kSessionFilter);
    if (path.isEmpty())
      return;
    if (QFileInfo(path).suffix().isEmpty())
      path += QStringLiteral(".lathe");
    saveSession(path);
  });
  connect(doc_, &WorkbenchDocument::modelChanged, this,
          [this] { saveSessionAction_->setEnabled(doc_->model() && !doc_->path().isEmpty()); });
  file->addAction(open);
  QMenu* recent = file->addMenu(tr("Recent Sess&ions"));
  recent->setObjectName(QStringLiteral("recentSessionsMenu"));
  recentSessions_ = new RecentFiles(recent, this, QStringLiteral("recentSessions"));
  connect(recentSessions_, &RecentFiles::openRequested, this, &MainWindow::openSession);
  file->addAction(saveSessionAction_);
}

bool MainWindow::saveSession(const QString& path) {
  if (!doc_->model() || doc_->path().isEmpty() || path.isEmpty() || worker_->isBusy(kSessionTag))
    return false;
  api::WorkbenchSession s;
  s.model = encoded(doc_->path());
  const RunSettings run = runPanel_->settings();
  s.inputsNpz = run.inputsNpz;
  s.fill = run.inputsNpz.empty() ? run.fill : std::string("random");
  s.inputShapes = run.inputShapes;
  s.threads = runPanel_->threads();
  s.repeat = run.repeat;
  s.profile = run.profile;
  s.target = target().toStdString();
  s.schedules = doc_->keptSchedules();
  s.tuningRecords = doc_->tuningRecords();
  s.pinnedRun = runPanel_->pinned();
  s.layout = saveState(kLayoutVersion).toBase64().toStdString();
  worker_->post(
      kSessionTag,
      [this, path, s](const SessionWorker::Context&) -> SessionWorker::Deliver {
        const api::WriteResult written = api::writeSessionFile(encoded(path), s);
        return [this, path, written] {
          if (!written.ok()) {
            const QString message = qs(written.failure->message);
            log(tr("error: %1").arg(message), LogLevel::Error);
            showErrorDialog(QStringLiteral("sessionErrorDialog"), tr("Cannot Save Session"),
                            tr("Lathe could not save the session."), message);
            emit sessionFailed(message);
            return;
          }
          if (persistSettings_) {
            recentSessions_->add(path);
            QSettings().setValue(QStringLiteral("lastSessionDir"), QFileInfo(path).absolutePath());
          }
          log(tr("Saved the session to %1").arg(path));
          emit sessionSaved(path);
        };
      },
      [this](const std::string& error) -> SessionWorker::Deliver {
        return [this, error] { emit sessionFailed(qs(error)); };
      });
  return true;
}

bool MainWindow::openSession(const QString& path) {
  if (path.isEmpty() || worker_->isBusy(kSessionTag))
    return false;
  worker_->post(
      kSessionTag,
      [this, path](const SessionWorker::Context&) -> SessionWorker::Deliver {
        api::SessionFileResult read = api::readSessionFile(encoded(path));
        return [this, path, read] {
          if (!read.ok()) {
            const QString message = qs(read.failure->message);
            log(tr("error: %1").arg(message), LogLevel::Error);
            showErrorDialog(QStringLiteral("sessionErrorDialog"), tr("Cannot Open Session"),
                            tr("Lathe could not open %1.").arg(QFileInfo(path).fileName()),
                            message);
            emit sessionFailed(message);
            return;
          }
          if (persistSettings_) {
            recentSessions_->add(path);
            QSettings().setValue(QStringLiteral("lastSessionDir"), QFileInfo(path).absolutePath());
          }
          log(tr("Opening the session %1").arg(path));
          pendingSession_ = std::make_shared<const api::WorkbenchSession>(*read.session);
          pendingSessionChange_ = qs(read.modelChange);
          openFile(decoded(read.session->model));
        };
      },
      [this](const std::string& error) -> SessionWorker::Deliver {
        return [this, error] { emit sessionFailed(qs(error)); };
      });
  return true;
}

void MainWindow::applyPendingSession(const QString& modelPath) {
  if (!pendingSession_ || decoded(pendingSession_->model) != modelPath)
    return;
  const std::shared_ptr<const api::WorkbenchSession> s = std::move(pendingSession_);
  const QString change = pendingSessionChange_;
  pendingSession_.reset();
  // The layout first: the panels restored below may then be raised by it.
  if (!s->layout.empty())
    restoreState(QByteArray::fromBase64(QByteArray::fromStdString(s->layout)), kLayoutVersion);
  if (!setTarget(qs(s->target)))
    log(tr("warning: the session's target %1 is not offered here; compiling for %2")
            .arg(qs(s->target), target()),
        LogLevel::Warning);
  if (!s->inputsNpz.empty())
    runPanel_->setInputsNpz(decoded(s->inputsNpz));
  else
    runPanel_->setFill(qs(s->fill));
  for (const auto& [name, dims] : s->inputShapes) {
    QStringList parts;
    for (std::int64_t d : dims)
      parts << QString::number(d);
    runPanel_->shapesTable()->setShapeText(qs(name), parts.join(QStringLiteral(", ")));
  }
  runPanel_->setThreads(s->threads);
  runPanel_->setRepeat(s->repeat);
  runPanel_->setProfile(s->profile);
  if (!s->schedules.empty()) {
    QString error;
    if (!schedulePanel_->setKeptText(s->schedules, &error))
      log(tr("warning: the session's kept schedules were not restored: %1").arg(error),
          LogLevel::Warning);
  }
  doc_->setTuningRecords(s->tuningRecords);
  if (!s->tuningRecords.empty())
    tunePanel_->setRecordsPath(decoded(s->tuningRecords));
  runPanel_->setPinned(s->pinnedRun);
  log(tr("Restored the session: target %1, %2 kept schedule(s)%3")
          .arg(target())
          .arg(schedulePanel_->kept().size())
          .arg(s->pinnedRun ? tr(", a pinned run") : QString()));
  if (!change.isEmpty()) {
    log(tr("warning: %1").arg(change), LogLevel::Warning);
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Model Changed"),
                                tr("The session's model is not the one it was saved with."),
                                QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("sessionChangedDialog"));
    box->setInformativeText(change);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  }
  emit sessionOpened(change);
}

} // namespace lathe::workbench
