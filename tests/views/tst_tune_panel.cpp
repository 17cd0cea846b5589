// The Tune dock offscreen on sample_cnn: a real search as a worker job, its live plot and
// table, the records it writes and then uses for Compile, Stop keeping the report, and a
// kernel's row opening its best trace in Schedule.
#include "app/workbench/main_window.h"
#include "app/workbench/records_compare_dialog.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/tune_panel.h"
#include "app/workbench/workbench_document.h"
#include "views/code/code_editor.h"
#include "views/diff/ir_diff_view.h"
#include "views/tune/convergence_plot.h"

#include <QAbstractItemModel>
#include <QCoreApplication>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using lathe::workbench::MainWindow;
using lathe::workbench::TunePanel;

namespace {

const QString kSample = QStringLiteral(LATHE_MODEL_DIR "/sample_cnn.onnx");
constexpr int kTimeoutMs = 120000;

int lines(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    return -1;
  return static_cast<int>(f.readAll().count('\n'));
}

// The vetoes the check in the model appended (one line each, after the trials).
int vetoLines(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    return -1;
  return static_cast<int>(f.readAll().count("slower in the model"));
}

} // namespace

class TestTunePanel : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void searchPlotsRecordsAndIsUsedByCompile();
  void stopKeepsTheReport();
  void pauseHoldsTheSearchAndCompareShowsTwoFiles();

private:
  QTemporaryDir dir_;
};

void TestTunePanel::initTestCase() {
  QVERIFY(dir_.isValid());
  QCoreApplication::setOrganizationName(QStringLiteral("Lathe"));
  QCoreApplication::setApplicationName(QStringLiteral("lathe-workbench-tune-tests"));
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
}

void TestTunePanel::searchPlotsRecordsAndIsUsedByCompile() {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(kSample);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  TunePanel* panel = window.tunePanel();
  QVERIFY2(panel->recordsPath().endsWith(QStringLiteral("sample_cnn.tuning.jsonl")),
           qPrintable(panel->recordsPath())); // a default beside the model
  const QString records = dir_.filePath(QStringLiteral("r.jsonl"));
  panel->setRecordsPath(records);
  panel->setTrials(12);
  panel->setThreads(1);
  auto* start = panel->findChild<QPushButton*>(QStringLiteral("tuneStart"));
  QVERIFY(start && start->isEnabled());
  QSignalSpy finished(&window, &MainWindow::tuneFinished);
  QSignalSpy failed(&window, &MainWindow::tuneFailed);
  QTest::mouseClick(start, Qt::LeftButton);
  QVERIFY(window.isTuning());
  QVERIFY(!start->isEnabled());
  QVERIFY(!window.run());     // the engine is busy with the search
  QVERIFY(!window.compile()); // likewise
  QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, kTimeoutMs);
  QCOMPARE(failed.count(), 0);
  QVERIFY(!window.isTuning());
  const auto& report = panel->report();
  QVERIFY(report);
  QCOMPARE(report->trials, 12);
  // A trial per line, then a veto per record that was slower in the model (timing decides).
  QVERIFY(report->modelCheck);
  QCOMPARE(vetoLines(records), report->modelCheck->vetoes);
  QCOMPARE(lines(records), 12 + report->modelCheck->vetoes);
  QVERIFY(panel->plot()->pointCount() >= 3); // one point per round, four trials a round
  QCOMPARE(panel->table()->model()->rowCount(), static_cast<int>(report->workloads.size()));
  QVERIFY2(panel->statusText().startsWith(QStringLiteral("Done:")),
           qPrintable(panel->statusText()));
  // The records checked in the whole model, defaults against records in turns.
  QVERIFY(report->modelCheck && report->modelCheck->defaultMs > 0 &&
          report->modelCheck->tunedMs > 0);
  QVERIFY2(panel->statusText().contains(QStringLiteral("In the model (40 runs each)")),
           qPrintable(panel->statusText()));
  QCOMPARE(window.document()->tuningRecords(), records.toStdString());
  // LATHE_SCREENSHOT_DIR=DIR keeps a picture of the window after the search, to look at.
  if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty())
    QVERIFY(window.grab().save(shots + QStringLiteral("/tune.png")));

  // Compile now applies the records (for one thread: the Run panel's threads pick them).
  QSignalSpy compiled(&window, &MainWindow::compiled);
  QVERIFY(window.compile());
  QTRY_COMPARE_WITH_TIMEOUT(compiled.count(), 1, kTimeoutMs);
  QVERIFY(window.compileReport());

  // A row opens the kernel's code and its best trace in Schedule.
  int row = -1;
  for (std::size_t w = 0; w < report->workloads.size() && row < 0; ++w)
    if (!report->workloads[w].bestTrace.empty())
      row = static_cast<int>(w);
  if (row >= 0) {
    const QModelIndex index = panel->table()->model()->index(row, 0);
    panel->table()->scrollTo(index);
    QTest::mouseClick(panel->table()->viewport(), Qt::LeftButton, {},
                      panel->table()->visualRect(index).center());
    QCOMPARE(window.schedulePanel()->kernel(),
             report->workloads[static_cast<std::size_t>(row)].kernels.front());
    QCOMPARE(window.schedulePanel()->steps().trimmed(),
             QString::fromStdString(report->workloads[static_cast<std::size_t>(row)].bestTrace)
                 .trimmed());
  }
}

void TestTunePanel::stopKeepsTheReport() {
  MainWindow window;
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(kSample);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  TunePanel* panel = window.tunePanel();
  const QString records = dir_.filePath(QStringLiteral("stop.jsonl"));
  panel->setRecordsPath(records);
  panel->setTrials(100000);
  QSignalSpy finished(&window, &MainWindow::tuneFinished);
  QVERIFY(window.tune());
  QVERIFY(!window.tune()); // one search at a time
  QTRY_VERIFY_WITH_TIMEOUT(panel->plot()->pointCount() >= 1, kTimeoutMs);
  window.stopTuning();
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
  QVERIFY(panel->report() && panel->report()->cancelled);
  QVERIFY(panel->report()->trials < 100000);
  QCOMPARE(lines(records), panel->report()->trials); // every measured trial kept
  QVERIFY2(panel->statusText().startsWith(QStringLiteral("Stopped after")),
           qPrintable(panel->statusText()));
  QVERIFY(window.run()); // the engine is free again
  // Closing the window mid-search ends it after the candidate in flight (the test would
  // hang here otherwise): the window's destructor waits for the worker.
  panel->setRecordsPath(dir_.filePath(QStringLiteral("closed.jsonl")));
  QVERIFY(window.tune());
}

void TestTunePanel::pauseHoldsTheSearchAndCompareShowsTwoFiles() {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(kSample);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  TunePanel* panel = window.tunePanel();
  const QString records = dir_.filePath(QStringLiteral("pause.jsonl"));
  panel->setRecordsPath(records);
  panel->setTrials(100000);
  panel->setThreads(1);
  QSignalSpy finished(&window, &MainWindow::tuneFinished);
  QVERIFY(window.tune());
  QTRY_VERIFY_WITH_TIMEOUT(lines(records) >= 6, kTimeoutMs);
  auto* pause = panel->findChild<QPushButton*>(QStringLiteral("tunePause"));
  QVERIFY(pause && pause->isEnabled());
  QTest::mouseClick(pause, Qt::LeftButton);
  QVERIFY(panel->isPaused());
  QCOMPARE(pause->text(), QStringLiteral("Resume"));
  // The candidate in flight finishes; then nothing more is measured while paused.
  QTest::qWait(1500);
  const int held = lines(records);
  QTest::qWait(1500);
  QCOMPARE(lines(records), held);
  QVERIFY(window.isTuning());
  QTest::mouseClick(pause, Qt::LeftButton);
  QVERIFY(!panel->isPaused());
  QTRY_VERIFY_WITH_TIMEOUT(lines(records) > held, kTimeoutMs);
  // Stop while paused ends the search too.
  QTest::mouseClick(pause, Qt::LeftButton);
  window.stopTuning();
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
  QVERIFY(!panel->isPaused());
  QCOMPARE(lines(records), panel->report()->trials);

  // Compare with a second file: the first six records of this one.
  const QString other = dir_.filePath(QStringLiteral("pause_head.jsonl"));
  {
    QFile in(records), out(other);
    QVERIFY(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
    for (int l = 0; l < 6; ++l)
      out.write(in.readLine());
  }
  lathe::workbench::RecordsCompareDialog* dialog = panel->compareWith(other);
  QVERIFY2(dialog, qPrintable(panel->statusText()));
  QVERIFY(dialog->table()->model()->rowCount() >= 1);
  QVERIFY2(dialog->summary()->text().contains(QStringLiteral("wins")),
           qPrintable(dialog->summary()->text()));
  QVERIFY(!dialog->diffView()->before()->toPlainText().isEmpty());
  if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty())
    QVERIFY(dialog->grab().save(shots + QStringLiteral("/records_compare.png")));
  QVERIFY(!panel->compareWith(dir_.filePath(QStringLiteral("missing.jsonl"))));
  QVERIFY2(panel->statusText().contains(QStringLiteral("Cannot compare")),
           qPrintable(panel->statusText()));
}

QTEST_MAIN(TestTunePanel)
#include "tst_tune_panel.moc"
