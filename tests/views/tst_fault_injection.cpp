// Fault injection in the workbench: a compile or run that fails, throws (an engine bug,
// injected with LATHE_INJECT_FAULT) or is cancelled never closes the window or loses the
// open model, its compiled kernels, the last run or the pinned run.

#include "app/workbench/main_window.h"
#include "app/workbench/run_panel.h"
#include "engine/runtime/npy.h"

#include <QElapsedTimer>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using lathe::workbench::MainWindow;
using lathe::workbench::RunPanel;

namespace {

const QString kSample = QStringLiteral(LATHE_MODEL_DIR "/sample_cnn.onnx");
constexpr int kTimeoutMs = 120000;

// Closes the error dialogs a failure opened (they are window-modal, opened not exec'd).
void closeDialogs(MainWindow& window) {
  for (auto* box : window.findChildren<QMessageBox*>())
    box->accept();
  QTRY_VERIFY(window.findChildren<QMessageBox*>().isEmpty());
}

// Starts a run as soon as the window accepts one (a dropped job may still hold the engine).
bool runWhenFree(MainWindow& window) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < kTimeoutMs) {
    if (window.run())
      return true;
    QTest::qWait(50);
  }
  return false;
}

} // namespace

class TestFaultInjection : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void failuresKeepTheModelAndTheRuns();
  void cleanup() { qunsetenv("LATHE_INJECT_FAULT"); }

private:
  QTemporaryDir dir_;
};

void TestFaultInjection::initTestCase() {
  QVERIFY(dir_.isValid());
  QCoreApplication::setOrganizationName(QStringLiteral("Lathe"));
  QCoreApplication::setApplicationName(QStringLiteral("lathe-workbench-fault-tests"));
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.path());
}

void TestFaultInjection::failuresKeepTheModelAndTheRuns() {
  MainWindow window;
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(kSample);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  RunPanel* panel = window.runPanel();
  panel->setRepeat(2);
  panel->setProfile(false);
  panel->setFill(QStringLiteral("random"));
  QSignalSpy finished(&window, &MainWindow::runFinished);
  QSignalSpy runFailed(&window, &MainWindow::runFailed);
  QSignalSpy compileFailed(&window, &MainWindow::compileFailed);
  QVERIFY(window.run());
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
  QVERIFY(panel->pin());
  const auto model = window.report();
  const auto kernels = window.compileReport();
  const auto pinned = panel->pinned();
  const auto lastRun = window.runReport();
  QVERIFY(model && kernels && pinned && lastRun);

  auto unchanged = [&](const char* path) {
    QVERIFY2(window.isVisible(), path);
    QVERIFY2(window.report() == model, path);
    QVERIFY2(panel->pinned() == pinned, path);
    QVERIFY2(!window.isRunning() && !window.isCompiling(), path);
  };

  // A run that fails: an input file that does not fit the model.
  const QString bad = dir_.filePath(QStringLiteral("bad.npz"));
  {
    lathe::runtime::Tensor t =
        lathe::runtime::Tensor::allocate(lathe::runtime::ElementType::F32, {2, 2});
    const lathe::runtime::NamedTensor arrays[] = {{"image", t.view()}};
    lathe::runtime::writeNpz(bad.toStdString(), arrays);
  }
  panel->setInputsNpz(bad);
  QVERIFY(window.run());
  QTRY_COMPARE_WITH_TIMEOUT(runFailed.count(), 1, kTimeoutMs);
  closeDialogs(window);
  unchanged("failed run");
  QVERIFY(window.compileReport() == kernels);
  QVERIFY(window.runReport() == lastRun);
  panel->setFill(QStringLiteral("random"));

  // A run that throws inside the engine.
  qputenv("LATHE_INJECT_FAULT", "run");
  QVERIFY(window.run());
  QTRY_COMPARE_WITH_TIMEOUT(runFailed.count(), 2, kTimeoutMs);
  QVERIFY(runFailed.last().at(0).toString().contains(QStringLiteral("injected fault")));
  closeDialogs(window);
  unchanged("run that throws");
  QVERIFY(window.runReport() == lastRun);
  qunsetenv("LATHE_INJECT_FAULT");

  // A compile that throws: the kernels of the last compile stay on display.
  qputenv("LATHE_INJECT_FAULT", "compile");
  QVERIFY(window.compile());
  QTRY_COMPARE_WITH_TIMEOUT(compileFailed.count(), 1, kTimeoutMs);
  QVERIFY(compileFailed.last().at(0).toString().contains(QStringLiteral("injected fault")));
  closeDialogs(window);
  unchanged("compile that throws");
  qunsetenv("LATHE_INJECT_FAULT");

  // A compile that is cancelled, then a run that is cancelled.
  QVERIFY(window.compile());
  window.cancelCompile();
  unchanged("cancelled compile");
  panel->setRepeat(1000);
  QVERIFY(runWhenFree(window)); // once the cancelled compile lets go of the Session
  QTRY_VERIFY_WITH_TIMEOUT(window.isRunning(), kTimeoutMs);
  window.cancelRun();
  QTRY_VERIFY_WITH_TIMEOUT(!window.isRunning(), kTimeoutMs);
  unchanged("cancelled run");

  // And the window still works: a run succeeds and compares with the pinned one.
  panel->setRepeat(2);
  const int before = finished.count();
  QVERIFY(runWhenFree(window));
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), before + 1, kTimeoutMs);
  QVERIFY(panel->pinned() == pinned);
  QVERIFY(window.report() == model);
}

QTEST_MAIN(TestFaultInjection)
#include "tst_fault_injection.moc"
