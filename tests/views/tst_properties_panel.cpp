// Properties with weight statistics: Session::constantStats checked against numpy's numbers
// for sample_cnn.onnx initializers (tests/views/gen_weight_stats.py), and the panel
// showing them for the selected node from a worker, dropping stale results.

#include "app/workbench/properties_panel.h"
#include "app/workbench/session_worker.h"
#include "views/models/node_properties_model.h"
#include "views/properties/weight_stats_view.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTest>
#include <QTreeView>
#include <cmath>

using namespace lathe;
using workbench::PropertiesPanel;
using workbench::SessionWorker;

namespace {

struct Expected {
  std::string name;
  std::int64_t count = 0;
  double min = 0, max = 0, mean = 0, std = 0;
  std::vector<std::uint64_t> histogram;
};

std::vector<Expected> readExpected() {
  QFile file(QStringLiteral(LATHE_WEIGHT_STATS));
  if (!file.open(QIODevice::ReadOnly))
    qFatal("missing %s", LATHE_WEIGHT_STATS);
  std::vector<Expected> out;
  for (const QByteArray& line : file.readAll().split('\n')) {
    const QList<QByteArray> f = line.split(' ');
    if (f.size() < 6)
      continue;
    Expected e{f[0].toStdString(),
               f[1].toLongLong(),
               f[2].toDouble(),
               f[3].toDouble(),
               f[4].toDouble(),
               f[5].toDouble(),
               {}};
    for (qsizetype i = 6; i < f.size(); ++i)
      e.histogram.push_back(f[i].toULongLong());
    out.push_back(std::move(e));
  }
  return out;
}

// The final graph's name for a constant of the ONNX file: the same, or its packed copy when
// the layout-nchwc pass reordered it for a blocked Conv (the same values, so the same
// statistics).
std::string finalName(const api::GraphSnapshot& g, const std::string& name) {
  for (const api::ConstantSummary& c : g.constants)
    if (c.tensor.name == name)
      return name;
  return name + "_nchwc";
}

int nodeNamed(const api::GraphSnapshot& g, const std::string& name) {
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].name == name)
      return static_cast<int>(i);
  return -1;
}

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
}

} // namespace

class TestPropertiesPanel : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void statsMatchNumpy();
  void unknownAndNonConstantNames();
  void panelShowsWeightHistograms();
  void staleResultsAreDropped();
  void withoutSessionNoStats();
  void resnet50LargestWeight();

private:
  std::shared_ptr<api::Session> session_;
  SessionWorker worker_; // runs the panels' statistics jobs
  std::shared_ptr<const api::ModelReport> report_;
  std::shared_ptr<const api::GraphSnapshot> final_;
};

void TestPropertiesPanel::initTestCase() {
  session_ = std::make_shared<api::Session>();
  const api::OpenResult r = session_->openModel(QDir(QStringLiteral(LATHE_MODEL_DIR))
                                                    .filePath(QStringLiteral("sample_cnn.onnx"))
                                                    .toStdString());
  QVERIFY(r.ok());
  report_ = r.report;
  final_ = std::shared_ptr<const api::GraphSnapshot>(report_, &report_->final);
}

void TestPropertiesPanel::statsMatchNumpy() {
  const std::vector<Expected> expected = readExpected();
  QCOMPARE(expected.size(), 3u);
  for (const Expected& e : expected) {
    const std::string name = finalName(*final_, e.name);
    const auto s = session_->constantStats(name, static_cast<int>(e.histogram.size()));
    QVERIFY2(s, name.c_str());
    QCOMPARE(s->name, name);
    QCOMPARE(s->dtype, std::string("f32"));
    QCOMPARE(s->count, e.count);
    QCOMPARE(s->nonFinite, 0);
    QVERIFY2(close(s->min, e.min), e.name.c_str());
    QVERIFY2(close(s->max, e.max), e.name.c_str());
    QVERIFY2(close(s->mean, e.mean), e.name.c_str());
    QVERIFY2(close(s->std, e.std), e.name.c_str());
    QCOMPARE(s->histogram, e.histogram);
    std::int64_t product = 1;
    for (std::int64_t d : s->shape)
      product *= d;
    QCOMPARE(product, e.count);
  }
}

void TestPropertiesPanel::unknownAndNonConstantNames() {
  QVERIFY(!session_->constantStats("no such value"));
  QVERIFY(!session_->constantStats(report_->final.inputs.front().name)); // a graph input
  QVERIFY(!session_->constantStats("pw.bias", 0));
  // One bin: everything in it.
  const auto one = session_->constantStats("pw.bias", 1);
  QVERIFY(one);
  QCOMPARE(one->histogram.size(), 1u);
  QCOMPARE(static_cast<std::int64_t>(one->histogram[0]), one->count);
  api::Session empty;
  QVERIFY(!empty.constantStats("pw.bias"));
}

void TestPropertiesPanel::panelShowsWeightHistograms() {
  PropertiesPanel panel;
  panel.resize(420, 760);
  panel.setSession(&worker_, session_);
  const int pw = nodeNamed(*final_, "/pw/Conv");
  QVERIFY(pw >= 0);
  QSignalSpy ready(&panel, &PropertiesPanel::weightStatsReady);
  panel.setNode(final_, pw);
  panel.show();
  // The result may already have arrived while the window was being exposed.
  QTRY_COMPARE_WITH_TIMEOUT(ready.size(), 1, 10000);
  QVERIFY(!panel.statsPending());

  // One view per constant input, in input order, each with stats and a histogram.
  std::vector<std::string> constants;
  for (const std::string& in : final_->nodes[pw].inputs)
    for (const api::ConstantSummary& c : final_->constants)
      if (c.tensor.name == in)
        constants.push_back(in);
  QVERIFY(constants.size() >= 2); // weight and bias
  const auto views = panel.weightViews();
  QCOMPARE(views.size(), constants.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    QCOMPARE(views[i]->name(), QString::fromStdString(constants[i]));
    QVERIFY(views[i]->hasStats());
    QCOMPARE(views[i]->barCount(), 48);
    const auto s = session_->constantStats(constants[i], 48);
    QVERIFY(
        views[i]->statsText().contains(QStringLiteral("mean %1").arg(views::formatStat(s->mean))));
    QVERIFY(
        views[i]->statsText().contains(QStringLiteral("std %1").arg(views::formatStat(s->std))));
  }

  // The table model is unchanged by all this and stays well-formed.
  auto* tree = panel.findChild<QTreeView*>(QStringLiteral("propertiesView"));
  QAbstractItemModelTester tester(tree->model(),
                                  QAbstractItemModelTester::FailureReportingMode::QtTest);
  const QString dir = qEnvironmentVariable("LATHE_SHOT_DIR");
  if (!dir.isEmpty())
    panel.grab().save(QDir(dir).filePath(QStringLiteral("properties_pw_conv.png")));

  // A node without constant inputs hides the weights; selecting the conv again is served
  // from the cache, synchronously.
  const int relu = nodeNamed(*final_, "/head/Relu");
  if (relu >= 0) {
    panel.setNode(final_, relu);
    QVERIFY(panel.weightViews().empty());
  }
  panel.setNode(final_, pw);
  QVERIFY(!panel.statsPending());
  QVERIFY(panel.weightViews().front()->hasStats());
}

void TestPropertiesPanel::staleResultsAreDropped() {
  PropertiesPanel panel;
  panel.setSession(&worker_, session_);
  const int dw = nodeNamed(*final_, "/dw/Conv");
  const int pw = nodeNamed(*final_, "/pw/Conv");
  QVERIFY(dw >= 0 && pw >= 0);
  QSignalSpy ready(&panel, &PropertiesPanel::weightStatsReady);
  panel.setNode(final_, dw); // its worker result must not land on the pw views
  panel.setNode(final_, pw);
  QTRY_COMPARE_WITH_TIMEOUT(ready.size(), 1, 10000);
  QTest::qWait(50); // let a late dw result arrive, if it would
  const auto views = panel.weightViews();
  QVERIFY(!views.empty());
  const std::string pwWeight = finalName(*final_, "pw.weight");
  QCOMPARE(views.front()->name(), QString::fromStdString(pwWeight));
  QVERIFY(views.front()->hasStats());
  QVERIFY(views.front()->statsText().contains(
      views::formatStat(session_->constantStats(pwWeight)->max)));
  QCOMPARE(ready.size(), 1);

  // A new session drops everything cached for the old one.
  panel.setSession(nullptr, nullptr);
  QVERIFY(!panel.weightViews().front()->hasStats());
}

void TestPropertiesPanel::withoutSessionNoStats() {
  PropertiesPanel panel;
  const int pw = nodeNamed(*final_, "/pw/Conv");
  panel.setNode(final_, pw);
  QVERIFY(!panel.statsPending());
  QVERIFY(!panel.weightViews().empty());
  QVERIFY(!panel.weightViews().front()->hasStats());
  panel.setNode(nullptr, -1);
  QVERIFY(panel.weightViews().empty());
}

void TestPropertiesPanel::resnet50LargestWeight() {
  const QString path =
      QDir(QStringLiteral(LATHE_MODEL_DIR)).filePath(QStringLiteral("big/resnet50.onnx"));
  if (!QFile::exists(path))
    QSKIP("big/resnet50.onnx not generated (run the cli/generate_big_models test)");
  auto session = std::make_shared<api::Session>();
  const api::OpenResult r = session->openModel(path.toStdString());
  QVERIFY(r.ok());
  const api::ConstantSummary* largest = nullptr;
  for (const api::ConstantSummary& c : r.report->final.constants)
    if (!largest || c.bytes > largest->bytes)
      largest = &c;
  QVERIFY(largest && largest->bytes >= 2'000'000 * 4);
  QElapsedTimer timer;
  timer.start();
  const auto stats = session->constantStats(largest->tensor.name, 48);
  const qint64 ms = timer.elapsed();
  QVERIFY(stats);
  qInfo("resnet50 %s: %lld values, stats in %lld ms", largest->tensor.name.c_str(),
        static_cast<long long>(stats->count), static_cast<long long>(ms));
  std::uint64_t binned = 0;
  for (std::uint64_t n : stats->histogram)
    binned += n;
  QCOMPARE(static_cast<std::int64_t>(binned), stats->count - stats->nonFinite);
  // The time is printed, not asserted; what matters for the GUI is that it runs on a worker.

  // In the panel the work happens on a worker: setNode() returns at once.
  const auto graph = std::shared_ptr<const api::GraphSnapshot>(r.report, &r.report->final);
  int node = -1;
  for (std::size_t i = 0; i < graph->nodes.size() && node < 0; ++i)
    for (const std::string& in : graph->nodes[i].inputs)
      if (in == largest->tensor.name)
        node = static_cast<int>(i);
  QVERIFY(node >= 0);
  PropertiesPanel panel;
  panel.setSession(&worker_, session);
  QSignalSpy ready(&panel, &PropertiesPanel::weightStatsReady);
  timer.restart();
  panel.setNode(graph, node);
  qInfo("setNode returned after %lld ms", static_cast<long long>(timer.elapsed()));
  QVERIFY(panel.statsPending());
  QTRY_COMPARE_WITH_TIMEOUT(ready.size(), 1, 10000);
  QVERIFY(panel.weightViews().front()->hasStats());
}

QTEST_MAIN(TestPropertiesPanel)
#include "tst_properties_panel.moc"
