// Fault injection in the workbench: a compile or run that fails, throws (an engine bug,
// injected with LATHE_INJECT_FAULT) or is cancelled never closes the window or loses the
// open model, its compiled kernels, the kept schedules, the last run or the pinned run.

#include "app/workbench/main_window.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/schedule_panel.h"
#include "engine/runtime/npy.h"

#include <QElapsedTimer>
#include <QFile>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using lathe::workbench::MainWindow;
using lathe::workbench::RunPanel;
using lathe::workbench::SchedulePanel;

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

  // A kept schedule (the elementwise tail kernel fused, parallel and vectorized), compiled.
  SchedulePanel* schedules = window.schedulePanel();
  int tail = -1;
  const auto& compiledKernels = window.compileReport()->kernels;
  for (std::size_t k = 0; k < compiledKernels.size(); ++k)
    if (compiledKernels[k].name.rfind("fused_add_mul", 0) == 0)
      tail = static_cast<int>(k);
  QVERIFY(tail >= 0);
  QStringList loops;
  static const QRegularExpression loop(QStringLiteral(R"(for \((\S+), 0, \d+\))"));
  for (auto it = loop.globalMatch(
           QString::fromStdString(compiledKernels[static_cast<std::size_t>(tail)].loopIr));
       it.hasNext();)
    loops << it.next().captured(1);
  QVERIFY(loops.size() >= 3); // channel (blocks), rows, columns (and channels in a block)
  QVERIFY(window.selectKernel(tail));
  schedules->setSteps(QStringLiteral("fuse(%1, %2)\nparallel(%1.%2.fused)\nvectorize(%3)\n")
                          .arg(loops[0], loops[1], loops.last()));
  schedules->keep();
  const std::string kept = schedules->keptScheduleText();
  QVERIFY(!kept.empty());
  QSignalSpy compiled(&window, &MainWindow::compiled);
  QVERIFY(window.compile());
  QTRY_COMPARE_WITH_TIMEOUT(compiled.count(), 1, kTimeoutMs);

  const auto model = window.report();
  const auto kernels = window.compileReport();
  const auto pinned = panel->pinned();
  const auto lastRun = window.runReport();
  QVERIFY(model && kernels && pinned && lastRun);

  auto unchanged = [&](const char* path) {
    QVERIFY2(window.isVisible(), path);
    QVERIFY2(window.report() == model, path);
    QVERIFY2(panel->pinned() == pinned, path);
    QVERIFY2(window.schedulePanel()->keptScheduleText() == kept, path);
    QVERIFY2(!window.isRunning() && !window.isCompiling(), path);
  };

  // An input file that does not fit the model: Run refuses it before anything runs.
  const QString misfit = dir_.filePath(QStringLiteral("misfit.npz"));
  {
    lathe::runtime::Tensor t =
        lathe::runtime::Tensor::allocate(lathe::runtime::ElementType::F32, {2, 2});
    const lathe::runtime::NamedTensor arrays[] = {{"image", t.view()}};
    lathe::runtime::writeNpz(misfit.toStdString(), arrays);
  }
  panel->setInputsNpz(misfit);
  QVERIFY2(panel->shapeProblem().contains(QStringLiteral("'image'")),
           qPrintable(panel->shapeProblem()));
  QVERIFY(!window.run());
  unchanged("misfit input file");

  // A run that fails: the file's headers fit, but its data is corrupt (a CRC mismatch
  // that only reading the data finds).
  const QString bad = dir_.filePath(QStringLiteral("bad.npz"));
  {
    lathe::runtime::Tensor t =
        lathe::runtime::Tensor::allocate(lathe::runtime::ElementType::F32, {1, 3, 64, 64});
    const lathe::runtime::NamedTensor arrays[] = {{"image", t.view()}};
    lathe::runtime::writeNpz(bad.toStdString(), arrays);
    QFile file(bad);
    QVERIFY(file.open(QIODevice::ReadWrite));
    QVERIFY(file.seek(file.size() / 2));
    QVERIFY(file.write("\x55\xaa", 2) == 2);
  }
  panel->setInputsNpz(bad);
  QVERIFY2(panel->shapeProblem().isEmpty(), qPrintable(panel->shapeProblem()));
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
