// Session files in the workbench, offscreen: a session saved from one window reopens in
// another with the same target, run settings, kept schedules and pinned run; a changed model
// is said (and the rest restored); a missing model or a malformed file fails with a message.
// LATHE_SCREENSHOT_DIR=DIR keeps a picture of the reopened session.
#include "app/workbench/main_window.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/schedule_panel.h"

#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using lathe::workbench::MainWindow;

namespace {
const QString kModelDir = QStringLiteral(LATHE_MODEL_DIR);
const QString kSample = kModelDir + QStringLiteral("/sample_cnn.onnx");
const QString kOther = kModelDir + QStringLiteral("/kws_cnn.onnx");
constexpr int kTimeoutMs = 120000;
const std::string kKept = "kernel k1_maxpoolnchwc:\n  split(ow, 8)\n";
} // namespace

class TestSessions : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void savedSessionReopensTheSameState();
  void aChangedModelIsSaid();
  void missingModelAndBadFileFail();

private:
  std::unique_ptr<MainWindow> newWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1366, 768);
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get()))
      qFatal("window not exposed");
    return w;
  }
  // Opens `model` in a window of its own and saves a session of it with nothing changed.
  bool saveSessionOf(const QString& model, const QString& session) {
    auto w = newWindow();
    if (!openModel(*w, model))
      return false;
    QSignalSpy saved(w.get(), &MainWindow::sessionSaved);
    return w->saveSession(session) && saved.wait(kTimeoutMs);
  }
  bool openModel(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::modelLoaded);
    w.openFile(path);
    return loaded.wait(kTimeoutMs);
  }

  QTemporaryDir dir_;
  QTemporaryDir settingsDir_;
};

void TestSessions::initTestCase() {
  QVERIFY(dir_.isValid());
  QCoreApplication::setOrganizationName(QStringLiteral("Lathe"));
  QCoreApplication::setApplicationName(QStringLiteral("SessionTest"));
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir_.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir_.path());
}

void TestSessions::savedSessionReopensTheSameState() {
  const QString session = dir_.filePath(QStringLiteral("work.lathe"));
  std::shared_ptr<const lathe::api::RunReport> pinned;
  QString target;
  {
    auto a = newWindow();
    QVERIFY(openModel(*a, kSample));
    // Another target if this CPU runs it, so that restoring it is seen.
    target = a->setTarget(QStringLiteral("llvm -mcpu=x86-64-v3"))
                 ? QStringLiteral("llvm -mcpu=x86-64-v3")
                 : QStringLiteral("llvm");
    a->runPanel()->setFill(QStringLiteral("ones"));
    a->runPanel()->setRepeat(7);
    a->runPanel()->setThreads(1);
    QSignalSpy ran(a.get(), &MainWindow::runFinished);
    QVERIFY(a->run());
    QVERIFY(ran.wait(kTimeoutMs));
    QVERIFY(a->runPanel()->pin());
    pinned = a->runPanel()->pinned();
    QString error;
    QVERIFY2(a->schedulePanel()->setKeptText(kKept, &error), qPrintable(error));
    QSignalSpy saved(a.get(), &MainWindow::sessionSaved);
    QVERIFY(a->saveSession(session));
    QVERIFY(saved.wait(kTimeoutMs));
  }
  QVERIFY(QFile::exists(session));

  auto b = newWindow();
  QSignalSpy opened(b.get(), &MainWindow::sessionOpened);
  QVERIFY(b->openSession(session));
  QVERIFY(opened.wait(kTimeoutMs));
  QVERIFY2(opened.first().first().toString().isEmpty(),
           qPrintable(opened.first().first().toString()));
  QCOMPARE(b->currentFile(), QFileInfo(kSample).absoluteFilePath());
  QCOMPARE(b->target(), target);
  const auto settings = b->runPanel()->settings();
  QCOMPARE(settings.fill, std::string("ones"));
  QCOMPARE(settings.repeat, 7);
  QCOMPARE(b->runPanel()->threads(), 1);
  QCOMPARE(b->schedulePanel()->keptScheduleText(), kKept);
  QVERIFY(b->runPanel()->pinned());
  QCOMPARE(b->runPanel()->pinned()->latenciesMs, pinned->latenciesMs);
  QCOMPARE(b->runPanel()->pinned()->outputs.size(), pinned->outputs.size());
  QCOMPARE(b->runPanel()->pinned()->outputs[0].mean, pinned->outputs[0].mean);
  // A run now is compared with the pinned one from the session.
  QSignalSpy ran(b.get(), &MainWindow::runFinished);
  QSignalSpy runFailed(b.get(), &MainWindow::runFailed);
  QVERIFY(b->run()); // compiles with the restored schedule
  QTRY_VERIFY_WITH_TIMEOUT(ran.count() + runFailed.count() > 0, kTimeoutMs);
  QVERIFY2(runFailed.isEmpty(), qPrintable(runFailed.value(0).value(0).toString()));
  QVERIFY(b->compileReport());
  QCOMPARE(b->compileReport()->kernels[1].schedule, std::string("split(ow, 8)\n"));
  const QString compared =
      b->runPanel()->findChild<QLabel*>(QStringLiteral("compareSummary"))->text();
  QVERIFY2(compared.contains(QStringLiteral("pinned")) && compared.contains(QStringLiteral("now")),
           qPrintable(compared));
  if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty()) {
    b->showPanel(MainWindow::Panel::Run);
    QVERIFY(b->grab().save(shots + QStringLiteral("/session_reopened.png")));
  }
}

void TestSessions::aChangedModelIsSaid() {
  const QString model = dir_.filePath(QStringLiteral("model.onnx"));
  QFile::remove(model);
  QVERIFY(QFile::copy(kSample, model));
  const QString session = dir_.filePath(QStringLiteral("changed.lathe"));
  QVERIFY(saveSessionOf(model, session));
  QVERIFY(QFile::remove(model));
  QVERIFY(QFile::copy(kOther, model)); // another model in its place
  auto b = newWindow();
  QSignalSpy opened(b.get(), &MainWindow::sessionOpened);
  QVERIFY(b->openSession(session));
  QVERIFY(opened.wait(kTimeoutMs));
  const QString change = opened.first().first().toString();
  QVERIFY2(change.contains(QStringLiteral("model.onnx has changed")), qPrintable(change));
  QTRY_VERIFY(b->findChild<QMessageBox*>(QStringLiteral("sessionChangedDialog")));
}

void TestSessions::missingModelAndBadFileFail() {
  const QString model = dir_.filePath(QStringLiteral("gone.onnx"));
  QFile::remove(model);
  QVERIFY(QFile::copy(kSample, model));
  const QString session = dir_.filePath(QStringLiteral("gone.lathe"));
  QVERIFY(saveSessionOf(model, session));
  QVERIFY(QFile::remove(model));
  auto b = newWindow();
  QSignalSpy failed(b.get(), &MainWindow::sessionFailed);
  QVERIFY(b->openSession(session));
  QVERIFY(failed.wait(kTimeoutMs));
  QVERIFY(!b->report()); // nothing half-opened

  const QString bad = dir_.filePath(QStringLiteral("bad.lathe"));
  QFile file(bad);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("{\"format\": \"lathe-session\", \"version\": 1, \"model\": 7}");
  file.close();
  QSignalSpy failedAgain(b.get(), &MainWindow::sessionFailed);
  QVERIFY(b->openSession(bad));
  QVERIFY(failedAgain.wait(kTimeoutMs));
  QVERIFY2(failedAgain.first().first().toString().contains(QStringLiteral("\"model\"")),
           qPrintable(failedAgain.first().first().toString()));
  QTRY_VERIFY(b->findChild<QMessageBox*>(QStringLiteral("sessionErrorDialog")));
}

QTEST_MAIN(TestSessions)
#include "tst_sessions.moc"
