// The Numerics dock offscreen on sample_cnn: compare with Lathe's reference interpreter (every
// value matches), then with a copy whose first layer1 Conv has doubled weights (that Conv is
// the first divergent node, selected in the graph). Writes a screenshot when
// LATHE_NUMERICS_SCREENSHOT names a PNG.

#include "app/workbench/main_window.h"
#include "app/workbench/numerics_panel.h"
#include "views/graph/graph_view.h"
#include "views/models/numerics_model.h"
#include "views/properties/weight_stats_view.h"

#include <QAbstractItemModelTester>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using lathe::views::NumericsModel;
using lathe::workbench::MainWindow;
using lathe::workbench::NumericsPanel;

namespace {

const QString kSample = QStringLiteral(LATHE_MODEL_DIR "/sample_cnn.onnx");
const QString kScaled = QStringLiteral(LATHE_SCALED_MODEL);
const std::string kScaledConv = "/layer1/conv1/conv/Conv";
constexpr int kTimeoutMs = 120000;

} // namespace

class TestNumerics : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void compareMatchesThenFindsScaledConv();
  void partialComparisonSaysWhereTheReferenceStopped();

private:
  QTemporaryDir dir_;
};

void TestNumerics::initTestCase() {
  QVERIFY(dir_.isValid());
  QCoreApplication::setOrganizationName(QStringLiteral("Lathe"));
  QCoreApplication::setApplicationName(QStringLiteral("lathe-workbench-tests"));
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.path());
}

void TestNumerics::compareMatchesThenFindsScaledConv() {
  MainWindow window;
  window.resize(1500, 950);
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(kSample);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);

  NumericsPanel* panel = window.numericsPanel();
  QAbstractItemModelTester tester(panel->model(),
                                  QAbstractItemModelTester::FailureReportingMode::QtTest);
  QSignalSpy finished(panel, &NumericsPanel::finished);
  QSignalSpy failed(panel, &NumericsPanel::failed);

  // Against the same model: every compared value matches, a row per value.
  auto* button = panel->findChild<QWidget*>(QStringLiteral("compareButton"));
  QVERIFY(button && button->isEnabled());
  QTest::mouseClick(button, Qt::LeftButton);
  QVERIFY(panel->isComparing());
  QVERIFY(!window.compareNumerics()); // one at a time
  QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, kTimeoutMs);
  QCOMPARE(failed.count(), 0);
  auto report = panel->report();
  QVERIFY(report);
  QCOMPARE(panel->model()->rowCount(), static_cast<int>(report->values.size()));
  QVERIFY(report->matched > 0);
  QCOMPARE(report->diverged, std::size_t{0});
  QCOMPARE(report->firstDivergent, -1);
  for (const auto& v : report->values)
    QVERIFY2(v.status == "match", (v.value + ": " + v.status + " " + v.note).c_str());
  QVERIFY(window.graphView()->isHeatMapOn());

  // A row selects its node in the graph and shows both sides' statistics.
  QVERIFY(panel->selectValue(0));
  QTRY_VERIFY(window.graphView()->selectedNode() >= 0);
  QVERIFY(panel->latheStats()->hasStats());
  QVERIFY(panel->referenceStats()->hasStats());

  // Against the copy with one Conv's weights doubled: that Conv diverges first, is selected.
  QVERIFY(window.compareNumerics(kScaled));
  QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 2, kTimeoutMs);
  QCOMPARE(failed.count(), 0);
  report = panel->report();
  QVERIFY(report->firstDivergent >= 0);
  const auto& first = report->values[static_cast<std::size_t>(report->firstDivergent)];
  QCOMPARE(first.node, kScaledConv);
  QCOMPARE(first.status, std::string("diverges"));
  // Both sides' histograms cover one range (the doubled weights widen Lathe's values), so
  // that the two plots line up bin for bin.
  QCOMPARE(first.latheStats.histogramMin, first.referenceStats.histogramMin);
  QCOMPARE(first.latheStats.histogramMax, first.referenceStats.histogramMax);
  QVERIFY(first.latheStats.histogramMin <=
          std::min(first.latheStats.min, first.referenceStats.min));
  QVERIFY(first.latheStats.histogramMax >=
          std::max(first.latheStats.max, first.referenceStats.max));
  QVERIFY(first.latheStats.max != first.referenceStats.max);
  QCOMPARE(panel->selectedValue(), report->firstDivergent);
  const int selected = window.graphView()->selectedNode();
  QVERIFY(selected >= 0);
  QCOMPARE(window.report()->final.nodes[static_cast<std::size_t>(selected)].name, kScaledConv);
  QCOMPARE(
      panel->model()->index(report->firstDivergent, NumericsModel::StatusColumn).data().toString(),
      QStringLiteral("diverges"));

  if (const QByteArray png = qgetenv("LATHE_NUMERICS_SCREENSHOT"); !png.isEmpty()) {
    QTest::qWait(500);
    QVERIFY(window.grab().save(QString::fromLocal8Bit(png)));
  }

  // A comparison that cannot run says so in the dock.
  QVERIFY(window.compareNumerics(QStringLiteral("/nonexistent/model.onnx")));
  QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 3, kTimeoutMs);
  QCOMPARE(failed.count(), 1);
  QVERIFY(panel->summaryText().contains(QStringLiteral("failed")));
}

// The interpreter has no ScatterElements: the dock names the node it stopped at, the rest
// "not evaluated".
void TestNumerics::partialComparisonSaysWhereTheReferenceStopped() {
  MainWindow window;
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(QStringLiteral(LATHE_MODEL_DIR "/old_forms/upsample9.onnx"));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  NumericsPanel* panel = window.numericsPanel();
  QSignalSpy finished(panel, &NumericsPanel::finished);
  QVERIFY(window.compareNumerics());
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
  const auto report = panel->report();
  QCOMPARE(report->referenceStoppedOp, std::string("ScatterElements"));
  QVERIFY(report->notEvaluated > 0);
  QVERIFY(panel->summaryText().contains(QStringLiteral("The reference stopped at")));
  QCOMPARE(panel->model()->rowCount(), static_cast<int>(report->values.size()));
}

QTEST_MAIN(TestNumerics)
#include "tst_numerics.moc"
