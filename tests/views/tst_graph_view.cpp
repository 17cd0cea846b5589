// The graph view offscreen with real Graphviz layouts of real engine output: sample_cnn, a
// synthetic 2,000-node ladder, If and Loop models with subgraphs and (when the big-model fixture
// has run) ResNet-50.

#include "views/common/category_palette.h"
#include "views/graph/graph_canvas.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_view.h"
#include "views/graph/heat_colors.h"
#include "views/graph/layout_engine.h"
#include "views/graph/visible_graph.h"

#include <QApplication>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QLabel>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>
#include <algorithm>
#include <memory>

using lathe::views::GraphView;
using lathe::views::LayoutEngine;
using lathe::views::LayoutInput;
using lathe::views::NodeItem;
using lathe::views::VisibleNode;

namespace {

const QString kModelDir = QStringLiteral(LATHE_MODEL_DIR);
constexpr int kLayoutTimeoutMs = 120000;

std::shared_ptr<const lathe::api::GraphSnapshot> openFinal(const QString& path) {
  lathe::api::Session session;
  const lathe::api::OpenResult result = session.openModel(path.toStdString());
  if (!result.ok())
    qFatal("cannot open %s: %s", qPrintable(path), result.failure->message.c_str());
  return {result.report, &result.report->final};
}

// A ladder of `count` elementwise nodes, Relu and Add alternating, each Add also taking the
// value two steps back; every tenth pair is a fused group.
std::shared_ptr<const lathe::api::GraphSnapshot> ladder(int count) {
  auto graph = std::make_shared<lathe::api::GraphSnapshot>();
  const auto tensor = [](const std::string& name) {
    return lathe::api::TensorSummary{name, "f32", {"1", "64", "56", "56"}, true, "f32[1,64,56,56]"};
  };
  graph->name = "ladder";
  graph->inputs.push_back(tensor("x"));
  graph->values["x"] = tensor("x");
  std::string previous = "x", beforePrevious = "x";
  for (int i = 0; i < count; ++i) {
    lathe::api::NodeSummary node;
    const bool add = i % 2 == 1;
    node.opType = add ? "Add" : "Relu";
    node.category = "elementwise";
    node.name = (add ? "add_" : "relu_") + std::to_string(i);
    node.inputs = add ? std::vector<std::string>{previous, beforePrevious}
                      : std::vector<std::string>{previous};
    const std::string out = "v" + std::to_string(i);
    node.outputs = {out};
    graph->values[out] = tensor(out);
    graph->nodes.push_back(std::move(node));
    beforePrevious = previous;
    previous = out;
    if (add && (i / 2) % 10 == 0) {
      graph->groups.push_back({"fused_" + std::to_string(i), "Relu+Add", {i - 1, i}});
      graph->nodes[i - 1].group = graph->nodes[i].group =
          static_cast<int>(graph->groups.size()) - 1;
    }
  }
  graph->outputs.push_back(tensor(previous));
  return graph;
}

bool waitForLayout(GraphView& view, QSignalSpy& spy, int count = 1) {
  return spy.count() >= count ||
         QTest::qWaitFor([&] { return spy.count() >= count; }, kLayoutTimeoutMs);
}

// The first node with subgraphs (If, Loop, Scan), or -1.
int firstNodeWithSubgraphs(const lathe::api::GraphSnapshot& graph) {
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    if (!graph.nodes[n].subgraphs.empty())
      return n;
  }
  return -1;
}

// What expanding `node` adds to the scene: each subgraph's ops, inputs and outputs.
int subgraphItemCount(const lathe::api::NodeSummary& node) {
  int count = 0;
  for (const auto& [name, subgraph] : node.subgraphs)
    count += static_cast<int>(subgraph->nodes.size() + subgraph->inputs.size() +
                              subgraph->outputs.size());
  return count;
}

// The first group with more than one node, or -1.
int firstMultiNodeGroup(const lathe::api::GraphSnapshot& graph) {
  for (int g = 0; g < static_cast<int>(graph.groups.size()); ++g) {
    if (graph.groups[g].nodes.size() > 1)
      return g;
  }
  return -1;
}

} // namespace

class TestGraphView : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void init();
  void cleanup();
  void layoutHasAnItemPerNode();
  void nodesDoNotOverlap();
  void searchFindsByOpTypeAndName();
  void clickingNodeEmitsItsIndex();
  void collapseAndExpandGroup();
  void controlFlowStartsCollapsed_data();
  void controlFlowStartsCollapsed();
  void expandsAndCollapsesSubgraphs_data();
  void expandsAndCollapsesSubgraphs();
  void clickingSubgraphNodeSelectsIt();
  void highlightsNodes();
  void heatMapColoursNodesByShare();
  void zoomsWithKeysWheelAndFit();
  void staleLayoutIsDropped();
  void engineReportsOnlyTheLatestJob();
  void measuresLayoutTimes();

private:
  bool showAndWait(const std::shared_ptr<const lathe::api::GraphSnapshot>& graph);

  std::shared_ptr<const lathe::api::GraphSnapshot> sample_;
  std::unique_ptr<GraphView> view_;
};

void TestGraphView::initTestCase() {
  sample_ = openFinal(kModelDir + QStringLiteral("/sample_cnn.onnx"));
  QVERIFY(sample_->nodes.size() > 5);
  QVERIFY2(firstMultiNodeGroup(*sample_) >= 0, "sample_cnn has no fused group");
}

void TestGraphView::init() {
  view_ = std::make_unique<GraphView>();
  view_->resize(1000, 800);
  view_->show();
  QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
}

void TestGraphView::cleanup() {
  view_.reset();
}

bool TestGraphView::showAndWait(const std::shared_ptr<const lathe::api::GraphSnapshot>& graph) {
  QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
  view_->setSnapshot(graph);
  return waitForLayout(*view_, finished);
}

void TestGraphView::layoutHasAnItemPerNode() {
  QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
  view_->setSnapshot(sample_);
  QVERIFY(view_->isLayingOut());
  QVERIFY(view_->findChild<QWidget*>(QStringLiteral("graphBusy"))->isVisible());
  QVERIFY(waitForLayout(*view_, finished));
  QVERIFY(!view_->isLayingOut());
  QVERIFY(!view_->findChild<QWidget*>(QStringLiteral("graphBusy"))->isVisible());
  QVERIFY(finished.at(0).at(0).toDouble() > 0);

  const auto& graph = *sample_;
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    NodeItem* item = view_->itemForNode(n);
    QVERIFY2(item, qPrintable(QStringLiteral("no item for node %1").arg(n)));
    QCOMPARE(item->node().kind, VisibleNode::Kind::Op);
    QCOMPARE(item->node().index, n);
    QCOMPARE(item->node().title, graph.nodes[n].opType);
  }
  // Ops, plus one small node per graph input and output.
  QCOMPARE(view_->nodeItemCount(),
           static_cast<int>(graph.nodes.size() + graph.inputs.size() + graph.outputs.size()));
  QVERIFY(view_->edgeItemCount() >= static_cast<int>(graph.nodes.size()));
  int groups = 0;
  for (const auto& group : graph.groups)
    groups += group.nodes.size() > 1 ? 1 : 0;
  QCOMPARE(view_->clusterItemCount(), groups);
  // Laid out top to bottom: the first op sits above the last one.
  QVERIFY(view_->itemForNode(0)->scenePos().y() <
          view_->itemForNode(static_cast<int>(graph.nodes.size()) - 1)->scenePos().y());
}

void TestGraphView::nodesDoNotOverlap() {
  QVERIFY(showAndWait(sample_));
  std::vector<QRectF> rects;
  for (QGraphicsItem* item : view_->canvas()->scene()->items()) {
    if (auto* node = dynamic_cast<NodeItem*>(item))
      rects.push_back(node->mapRectToScene(node->shape().boundingRect()));
  }
  QCOMPARE(static_cast<int>(rects.size()), view_->nodeItemCount());
  for (std::size_t i = 0; i < rects.size(); ++i) {
    QVERIFY(rects[i].width() > 20 && rects[i].height() > 20);
    for (std::size_t j = i + 1; j < rects.size(); ++j)
      QVERIFY2(!rects[i].intersects(rects[j]), "two nodes overlap");
  }
}

void TestGraphView::searchFindsByOpTypeAndName() {
  QVERIFY(showAndWait(sample_));
  const auto& graph = *sample_;
  std::vector<int> convs;
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    if (QString::fromStdString(graph.nodes[n].opType)
            .contains(QStringLiteral("conv"), Qt::CaseInsensitive) ||
        QString::fromStdString(graph.nodes[n].name)
            .contains(QStringLiteral("conv"), Qt::CaseInsensitive))
      convs.push_back(n);
  }
  QVERIFY(convs.size() >= 2);

  QSignalSpy selected(view_.get(), &GraphView::nodeSelected);
  view_->setSearchText(QStringLiteral("conv"));
  QCOMPARE(view_->matchCount(), static_cast<int>(convs.size()));
  QCOMPARE(view_->currentMatch(), 0);
  QCOMPARE(view_->selectedNode(), convs[0]);
  QVERIFY(view_->itemForNode(convs[0])->isSelected());
  QCOMPARE(selected.last().at(0).toInt(), convs[0]);
  auto* counter = view_->findChild<QLabel*>(QStringLiteral("graphMatchCount"));
  QCOMPARE(counter->text(), QStringLiteral("1 of %1").arg(convs.size()));

  view_->findNext();
  QCOMPARE(view_->selectedNode(), convs[1]);
  QCOMPARE(selected.last().at(0).toInt(), convs[1]);
  QCOMPARE(counter->text(), QStringLiteral("2 of %1").arg(convs.size()));
  // The match is centred in the viewport, as far as the scroll bars reach.
  {
    QGraphicsView* canvas = view_->canvas();
    const QPointF center = canvas->mapToScene(canvas->viewport()->rect().center());
    const QPointF at = view_->itemForNode(convs[1])->scenePos();
    QVERIFY(canvas->viewport()->rect().contains(canvas->mapFromScene(at)));
    auto free = [](const QScrollBar* bar) {
      return bar->value() > bar->minimum() && bar->value() < bar->maximum();
    };
    if (free(canvas->horizontalScrollBar()))
      QVERIFY(std::abs(center.x() - at.x()) < 40);
    if (free(canvas->verticalScrollBar()))
      QVERIFY(std::abs(center.y() - at.y()) < 40);
  }
  view_->findPrevious();
  QCOMPARE(view_->selectedNode(), convs[0]);
  view_->findPrevious(); // wraps to the last
  QCOMPARE(view_->selectedNode(), convs.back());

  // By exact node name (unique names: one match).
  const int last = static_cast<int>(graph.nodes.size()) - 1;
  QVERIFY(!graph.nodes[last].name.empty());
  view_->setSearchText(QString::fromStdString(graph.nodes[last].name));
  QVERIFY(view_->matchCount() >= 1);
  QCOMPARE(view_->selectedNode(), last);

  view_->setSearchText(QStringLiteral("no-such-op-anywhere"));
  QCOMPARE(view_->matchCount(), 0);
  QCOMPARE(counter->text(), QStringLiteral("No matches"));
}

void TestGraphView::clickingNodeEmitsItsIndex() {
  QVERIFY(showAndWait(sample_));
  const int node = static_cast<int>(sample_->nodes.size()) / 2;
  QSignalSpy selected(view_.get(), &GraphView::nodeSelected);
  QVERIFY(view_->selectNode(node)); // centres it; code-driven selection does not emit
  QCOMPARE(selected.count(), 0);
  QVERIFY(view_->selectNode(-1));
  QVERIFY(!view_->itemForNode(node)->isSelected());

  NodeItem* item = view_->itemForNode(node);
  const QPoint at = view_->canvas()->mapFromScene(item->scenePos());
  QVERIFY(view_->canvas()->viewport()->rect().contains(at));
  QTest::mouseClick(view_->canvas()->viewport(), Qt::LeftButton, {}, at);
  QCOMPARE(selected.count(), 1);
  QCOMPARE(selected.at(0).at(0).toInt(), node);
  QCOMPARE(view_->selectedNode(), node);
  QVERIFY(item->isSelected());
}

void TestGraphView::collapseAndExpandGroup() {
  QVERIFY(showAndWait(sample_));
  const int group = firstMultiNodeGroup(*sample_);
  const auto& members = sample_->groups[group].nodes;
  const int items = view_->nodeItemCount(), clusters = view_->clusterItemCount();

  QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
  view_->collapseGroup(group);
  QVERIFY(view_->isLayingOut());
  QVERIFY(waitForLayout(*view_, finished));
  QVERIFY(view_->isGroupCollapsed(group));
  QCOMPARE(view_->nodeItemCount(), items - static_cast<int>(members.size()) + 1);
  QCOMPARE(view_->clusterItemCount(), clusters - 1);
  NodeItem* groupItem = view_->itemForNode(members.front());
  QVERIFY(groupItem);
  QCOMPARE(groupItem->node().kind, VisibleNode::Kind::Group);
  for (const int member : members)
    QCOMPARE(view_->itemForNode(member), groupItem);

  // Double-clicking the collapsed node expands it again.
  const QPoint at = view_->canvas()->mapFromScene(groupItem->scenePos());
  QVERIFY(view_->canvas()->viewport()->rect().contains(at));
  QTest::mouseDClick(view_->canvas()->viewport(), Qt::LeftButton, {}, at);
  QVERIFY(waitForLayout(*view_, finished, 2));
  QVERIFY(!view_->isGroupCollapsed(group));
  QCOMPARE(view_->nodeItemCount(), items);
  QCOMPARE(view_->clusterItemCount(), clusters);

  view_->setAllGroupsCollapsed(true);
  QVERIFY(waitForLayout(*view_, finished, 3));
  QCOMPARE(view_->clusterItemCount(), 0);
  QVERIFY(view_->nodeItemCount() < items);
}

void TestGraphView::controlFlowStartsCollapsed_data() {
  QTest::addColumn<QString>("model");
  QTest::addColumn<QString>("op");
  QTest::addColumn<int>("subgraphs");
  QTest::newRow("if") << QStringLiteral("if_subgraph.onnx") << QStringLiteral("If") << 2;
  QTest::newRow("loop") << QStringLiteral("loop_subgraph.onnx") << QStringLiteral("Loop") << 1;
}

void TestGraphView::controlFlowStartsCollapsed() {
  QFETCH(QString, model);
  QFETCH(QString, op);
  QFETCH(int, subgraphs);
  const auto graph = openFinal(kModelDir + QLatin1Char('/') + model);
  const int node = firstNodeWithSubgraphs(*graph);
  QVERIFY(node >= 0);
  QCOMPARE(QString::fromStdString(graph->nodes[node].opType), op);
  QCOMPARE(static_cast<int>(graph->nodes[node].subgraphs.size()), subgraphs);
  for (const auto& [name, subgraph] : graph->nodes[node].subgraphs) {
    QVERIFY(subgraph);
    QVERIFY2(!subgraph->nodes.empty(), name.c_str());
  }

  QVERIFY(showAndWait(graph));
  QVERIFY(!view_->isNodeExpanded(node));
  QCOMPARE(view_->clusterItemCount(), 0);
  NodeItem* item = view_->itemForNode(node);
  QVERIFY(item);
  const QString hint = QString::fromStdString(item->node().hint);
  QVERIFY2(hint.startsWith(QStringLiteral("\u25b8 %1 subgraph").arg(subgraphs)), qPrintable(hint));
  for (const VisibleNode& shown : view_->visibleGraph().nodes)
    QCOMPARE(shown.owner, -1);
  const QString shots = qEnvironmentVariable("LATHE_GRAPH_SHOTS");
  if (!shots.isEmpty())
    view_->grab().save(shots + QStringLiteral("/%1_collapsed.png").arg(QTest::currentDataTag()));
}

void TestGraphView::expandsAndCollapsesSubgraphs_data() {
  controlFlowStartsCollapsed_data();
}

void TestGraphView::expandsAndCollapsesSubgraphs() {
  QFETCH(QString, model);
  QFETCH(int, subgraphs);
  const auto graph = openFinal(kModelDir + QLatin1Char('/') + model);
  const int node = firstNodeWithSubgraphs(*graph);
  QVERIFY(showAndWait(graph));
  const int items = view_->nodeItemCount(), edges = view_->edgeItemCount();
  const int added = subgraphItemCount(graph->nodes[node]);

  // Double-clicking the node expands it: one cluster per subgraph, with all its nodes.
  QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
  NodeItem* item = view_->itemForNode(node);
  const QPoint at = view_->canvas()->mapFromScene(item->scenePos());
  QVERIFY(view_->canvas()->viewport()->rect().contains(at));
  QTest::mouseDClick(view_->canvas()->viewport(), Qt::LeftButton, {}, at);
  QVERIFY(waitForLayout(*view_, finished));
  QVERIFY(view_->isNodeExpanded(node));
  QCOMPARE(view_->nodeItemCount(), items + added);
  QCOMPARE(view_->clusterItemCount(), subgraphs);
  QVERIFY(view_->edgeItemCount() > edges);
  QVERIFY(QString::fromStdString(view_->itemForNode(node)->node().hint).startsWith(u'\u25be'));
  const lathe::views::VisibleGraph& shown = view_->visibleGraph();
  for (int s = 0; s < subgraphs; ++s) {
    const auto& [name, subgraph] = graph->nodes[node].subgraphs[s];
    const auto cluster =
        std::find_if(shown.clusters.begin(), shown.clusters.end(),
                     [&](const auto& c) { return c.owner == node && c.subgraph == s; });
    QVERIFY(cluster != shown.clusters.end());
    QCOMPARE(cluster->label, graph->nodes[node].opType + " \u00b7 " + name);
    QCOMPARE(static_cast<int>(cluster->nodes.size()),
             static_cast<int>(subgraph->nodes.size() + subgraph->inputs.size() +
                              subgraph->outputs.size()));
    int ops = 0;
    for (const int v : cluster->nodes)
      ops += shown.nodes[v].kind == VisibleNode::Kind::Op ? 1 : 0;
    QCOMPARE(ops, static_cast<int>(subgraph->nodes.size()));
  }
  // Inner nodes must not overlap the rest of the drawing.
  const QList<QGraphicsItem*> all = view_->canvas()->scene()->items();
  std::vector<QRectF> rects;
  for (QGraphicsItem* i : all) {
    if (auto* n = dynamic_cast<NodeItem*>(i))
      rects.push_back(n->mapRectToScene(n->shape().boundingRect()));
  }
  for (std::size_t a = 0; a < rects.size(); ++a)
    for (std::size_t b = a + 1; b < rects.size(); ++b)
      QVERIFY(!rects[a].intersects(rects[b]));

  // LATHE_GRAPH_SHOTS=DIR saves the expanded drawing, for reviewing the look.
  const QString shots = qEnvironmentVariable("LATHE_GRAPH_SHOTS");
  if (!shots.isEmpty()) {
    view_->fitToView();
    view_->grab().save(shots + QStringLiteral("/%1_expanded.png").arg(QTest::currentDataTag()));
  }

  // Collapsing (from the context menu's action, here directly) restores the single node.
  view_->collapseNode(node);
  QVERIFY(waitForLayout(*view_, finished, 2));
  QVERIFY(!view_->isNodeExpanded(node));
  QCOMPARE(view_->nodeItemCount(), items);
  QCOMPARE(view_->edgeItemCount(), edges);
  QCOMPARE(view_->clusterItemCount(), 0);
}

void TestGraphView::clickingSubgraphNodeSelectsIt() {
  const auto graph = openFinal(kModelDir + QStringLiteral("/loop_subgraph.onnx"));
  const int node = firstNodeWithSubgraphs(*graph);
  QVERIFY(showAndWait(graph));
  QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
  view_->expandNode(node);
  QVERIFY(waitForLayout(*view_, finished));
  view_->fitToView();

  NodeItem* inner = nullptr;
  for (QGraphicsItem* i : view_->canvas()->scene()->items()) {
    auto* n = dynamic_cast<NodeItem*>(i);
    if (n && n->node().owner == node && n->node().kind == VisibleNode::Kind::Op)
      inner = n;
  }
  QVERIFY(inner);
  QSignalSpy selected(view_.get(), &GraphView::subgraphNodeSelected);
  QSignalSpy topLevel(view_.get(), &GraphView::nodeSelected);
  const QPoint at = view_->canvas()->mapFromScene(inner->scenePos());
  QVERIFY(view_->canvas()->viewport()->rect().contains(at));
  QTest::mouseClick(view_->canvas()->viewport(), Qt::LeftButton, {}, at);
  QCOMPARE(selected.count(), 1);
  QCOMPARE(topLevel.count(), 0);
  const auto subgraph =
      selected.at(0).at(0).value<std::shared_ptr<const lathe::api::GraphSnapshot>>();
  QCOMPARE(subgraph, graph->nodes[node].subgraphs[inner->node().subgraph].second);
  QCOMPARE(selected.at(0).at(1).toInt(), inner->node().index);
  QCOMPARE(selected.at(0).at(2).toInt(), node);
  QVERIFY(inner->isSelected());
}

void TestGraphView::highlightsNodes() {
  QVERIFY(showAndWait(sample_));
  view_->highlightNodes({0, 1, 2});
  int distinct = 0;
  std::set<NodeItem*> seen;
  for (int n : {0, 1, 2})
    distinct += seen.insert(view_->itemForNode(n)).second ? 1 : 0;
  QCOMPARE(view_->highlightedItemCount(), distinct);
  QVERIFY(view_->itemForNode(1)->isHighlighted());
  view_->highlightNodes({});
  QCOMPARE(view_->highlightedItemCount(), 0);
}

// The heat map fills each op with its share's colour, scaled to the hottest; survives collapsing
// a group (which sums its nodes); off restores the category colours; a new snapshot drops it.
void TestGraphView::heatMapColoursNodesByShare() {
  QVERIFY(showAndWait(sample_));
  const auto& graph = *sample_;
  const int group = firstMultiNodeGroup(graph);
  const int hottest = graph.groups[group].nodes.front();
  // Convolutions slow, everything else quick, and `hottest` the slowest of all.
  std::vector<double> shares(graph.nodes.size());
  double total = 0;
  for (std::size_t n = 0; n < shares.size(); ++n) {
    shares[n] = graph.nodes[n].category == "convolution" ? 3.0 + static_cast<double>(n % 4)
                                                         : 0.1 * static_cast<double>(n % 5);
    total += shares[n];
  }
  shares[static_cast<std::size_t>(hottest)] = 8.0;
  total += 8.0;
  for (double& share : shares)
    share /= total;
  auto* legend = view_->findChild<QWidget*>(QStringLiteral("graphHeatLegend"));
  QVERIFY(legend);
  QVERIFY(!legend->isVisible());

  view_->setNodeHeat(shares);
  QVERIFY(view_->isHeatMapOn());
  NodeItem* item = view_->itemForNode(hottest);
  QVERIFY(item->hasHeat());
  QCOMPARE(item->fillColor(), lathe::views::heatColor(1.0));
  const QString percent = QString::number(shares[static_cast<std::size_t>(hottest)] * 100, 'f', 1);
  QVERIFY2(item->toolTip().endsWith(percent + QStringLiteral(" % of run time")),
           qPrintable(item->toolTip()));
  QVERIFY(legend->isVisible());
  // Drawn so: a pixel just inside the node's left edge has the heat colour.
  view_->revealNode(hottest);
  const QRectF rect = item->mapRectToScene(item->shape().boundingRect());
  const QPoint at = view_->canvas()->mapFromScene(QPointF(rect.left() + 4, rect.center().y()));
  const QColor drawn = view_->canvas()->viewport()->grab().toImage().pixelColor(at);
  QVERIFY2(std::abs(drawn.red() - lathe::views::heatColor(1.0).red()) < 8 &&
               std::abs(drawn.green() - lathe::views::heatColor(1.0).green()) < 8,
           qPrintable(drawn.name()));
  // Graph inputs and outputs have no time and keep their look.
  for (QGraphicsItem* shown : view_->canvas()->scene()->items()) {
    if (auto* node = dynamic_cast<NodeItem*>(shown))
      QCOMPARE(node->hasHeat(), node->node().kind == VisibleNode::Kind::Op ||
                                    node->node().kind == VisibleNode::Kind::Group);
  }
  const QString shots = qEnvironmentVariable("LATHE_GRAPH_SHOTS");
  if (!shots.isEmpty()) {
    view_->grab().save(shots + QStringLiteral("/sample_cnn_heat.png"));
    view_->fitToView();
    view_->grab().save(shots + QStringLiteral("/sample_cnn_heat_fit.png"));
  }

  // Collapsed, the group's node is as hot as its nodes together: still the hottest.
  QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
  view_->collapseGroup(group);
  QVERIFY(waitForLayout(*view_, finished));
  item = view_->itemForNode(hottest);
  QCOMPARE(item->node().kind, VisibleNode::Kind::Group);
  QCOMPARE(item->fillColor(), lathe::views::heatColor(1.0));
  for (const int member : graph.groups[group].nodes)
    QCOMPARE(view_->itemForNode(member), item);

  // Off: category colours again, no heat line in the tooltip, no legend.
  view_->setNodeHeat({});
  QVERIFY(!view_->isHeatMapOn());
  for (QGraphicsItem* shown : view_->canvas()->scene()->items()) {
    auto* node = dynamic_cast<NodeItem*>(shown);
    if (!node)
      continue;
    QVERIFY(!node->hasHeat());
    QVERIFY(!node->toolTip().contains(QStringLiteral("of run time")));
    QCOMPARE(node->fillColor(),
             lathe::views::categoryColor(QString::fromStdString(node->node().category)));
  }
  QVERIFY(!legend->isVisible());

  // A new snapshot (a pass's graph) drops the heat map.
  view_->setNodeHeat(shares);
  QVERIFY(showAndWait(sample_));
  QVERIFY(!view_->isHeatMapOn());
  QVERIFY(!view_->itemForNode(hottest)->hasHeat());
  QVERIFY(!legend->isVisible());
}

void TestGraphView::zoomsWithKeysWheelAndFit() {
  QVERIFY(showAndWait(sample_));
  auto* canvas = view_->canvas();
  canvas->setFocus();
  const double start = view_->zoom();
  QTest::keyClick(canvas, Qt::Key_Equal, Qt::ControlModifier);
  QVERIFY(view_->zoom() > start);
  QTest::keyClick(canvas, Qt::Key_Minus, Qt::ControlModifier);
  QTest::keyClick(canvas, Qt::Key_Minus, Qt::ControlModifier);
  QVERIFY(view_->zoom() < start);

  // The wheel zooms around the point under the mouse: that scene point stays put (zoomed in
  // first, so the scene is larger than the viewport and can scroll both ways).
  canvas->setZoom(3.0);
  const QPoint at = canvas->viewport()->rect().center() + QPoint(60, 40);
  const QPointF before = canvas->mapToScene(at);
  QWheelEvent wheel(at, canvas->viewport()->mapToGlobal(at), {}, QPoint(0, 120), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  const double beforeZoom = view_->zoom();
  QApplication::sendEvent(canvas->viewport(), &wheel);
  QVERIFY(view_->zoom() > beforeZoom);
  QVERIFY(QLineF(canvas->mapToScene(at), before).length() < 3);

  // Ctrl+0 fits: the whole graph is visible.
  QTest::keyClick(canvas, Qt::Key_0, Qt::ControlModifier);
  const QRectF visible = canvas->mapToScene(canvas->viewport()->rect()).boundingRect();
  QVERIFY(visible.adjusted(-2, -2, 2, 2).contains(canvas->scene()->itemsBoundingRect()));
}

void TestGraphView::staleLayoutIsDropped() {
  QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
  const int staleBefore = view_->layoutEngine()->staleJobs();
  view_->setSnapshot(ladder(400)); // superseded at once
  view_->setSnapshot(sample_);
  QVERIFY(waitForLayout(*view_, finished));
  QTest::qWait(1500); // time enough for the first job to end had it run
  QCOMPARE(finished.count(), 1);
  QCOMPARE(view_->layoutEngine()->staleJobs(), staleBefore + 1);
  QCOMPARE(view_->nodeItemCount(), static_cast<int>(sample_->nodes.size() + sample_->inputs.size() +
                                                    sample_->outputs.size()));
  QCOMPARE(view_->itemForNode(0)->node().title, sample_->nodes[0].opType);
}

void TestGraphView::engineReportsOnlyTheLatestJob() {
  LayoutEngine engine;
  QSignalSpy finished(&engine, &LayoutEngine::finished);
  // Big enough that its layout (about half a second for a 2,000-node ladder) is certainly
  // still running when the second request comes: a 300-node chain sometimes finished
  // within the 20 ms wait and was rightly accepted.
  LayoutInput big;
  for (int i = 0; i < 2000; ++i) {
    big.nodes.push_back({90, 40});
    if (i > 0)
      big.edges.push_back({i - 1, i, "1\u00d764"});
    if (i > 1)
      big.edges.push_back({i - 2, i, "1\u00d764"});
  }
  LayoutInput small;
  small.nodes = {{90, 40}, {90, 40}};
  small.edges = {{0, 1, ""}};
  const quint64 first = engine.request(big);
  QTest::qWait(20); // let the first job start: its result must then be dropped on arrival
  const quint64 second = engine.request(small);
  QVERIFY(second > first);
  QVERIFY(finished.wait(kLayoutTimeoutMs));
  QTest::qWait(500);
  QCOMPARE(finished.count(), 1);
  QCOMPARE(finished.at(0).at(0).value<quint64>(), second);
  const auto result =
      finished.at(0).at(1).value<std::shared_ptr<const lathe::views::LayoutResult>>();
  QVERIFY(result && result->error.empty());
  QCOMPARE(static_cast<int>(result->nodes.size()), 2);
  QVERIFY(result->nodes[0].bottom() < result->nodes[1].top()); // tail above head
  QCOMPARE(engine.staleJobs(), 1);
}

void TestGraphView::measuresLayoutTimes() {
  const auto measure = [this](const char* what,
                              const std::shared_ptr<const lathe::api::GraphSnapshot>& graph) {
    QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
    view_->setSnapshot(graph);
    if (!waitForLayout(*view_, finished))
      return false;
    qInfo("graph layout %s: %zu nodes (%d items, %d edges) shown %.0f ms after setSnapshot "
          "(Graphviz %.0f ms%s)",
          what, graph->nodes.size(), view_->nodeItemCount(), view_->edgeItemCount(),
          finished.at(0).at(0).toDouble(), view_->graphvizMilliseconds(),
          view_->layoutWasBounded() ? ", big-graph limits" : "");
    // LATHE_GRAPH_SHOTS=DIR saves what each graph looks like, for reviewing the look.
    const QString shots = qEnvironmentVariable("LATHE_GRAPH_SHOTS");
    if (!shots.isEmpty())
      view_->grab().save(
          shots + QStringLiteral("/%1.png").arg(QString::fromLatin1(what).section(' ', 0, 0)));
    return view_->itemForNode(static_cast<int>(graph->nodes.size()) - 1) != nullptr;
  };
  QVERIFY(measure("sample_cnn", sample_));
  QVERIFY(measure("ladder", ladder(2000)));
  const QString resnet = kModelDir + QStringLiteral("/big/resnet50.onnx");
  if (!QFileInfo::exists(resnet))
    QSKIP("big/resnet50.onnx not generated (the big_models fixture)");
  const auto resnetFinal = openFinal(resnet);
  QVERIFY(measure("resnet50 (final)", resnetFinal));
  if (!qEnvironmentVariableIsEmpty("LATHE_GRAPH_SHOTS")) {
    QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
    view_->collapseGroup(1);
    QVERIFY(waitForLayout(*view_, finished));
    view_->highlightNodes({0, 1, 2});
    view_->selectNode(resnetFinal->groups[1].nodes.front());
    view_->grab().save(qEnvironmentVariable("LATHE_GRAPH_SHOTS") +
                       QStringLiteral("/resnet50_collapsed.png"));
  }
  lathe::api::Session session;
  const auto imported = session.openModel(resnet.toStdString());
  QVERIFY(imported.ok());
  QVERIFY(measure("resnet50 (imported)", {imported.report, &imported.report->imported}));
}

QTEST_MAIN(TestGraphView)
#include "tst_graph_view.moc"
