#include "views/graph/graph_view.h"

#include "views/common/category_palette.h"
#include "views/graph/graph_canvas.h"
#include "views/graph/graph_image.h"
#include "views/graph/graph_minimap.h"
#include "views/graph/heat_colors.h"
#include "views/graph/layout_engine.h"

#include <QAction>
#include <QEvent>
#include <QFileDialog>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace lathe::views {
namespace {

constexpr double kSceneMargin = 40;
// A new graph opens fitted when that keeps text readable; else at this zoom, at its top.
constexpr double kReadableZoom = 0.6;
// Graphs this big open with their fused groups collapsed: fewer nodes to lay out and to read.
constexpr std::size_t kCollapseGroupsFrom = 3000;

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QToolButton* toolButton(QWidget* parent, const QString& name, QStyle::StandardPixmap icon,
                        const QString& tip) {
  auto* button = new QToolButton(parent);
  button->setObjectName(name);
  button->setIcon(parent->style()->standardIcon(icon));
  button->setToolTip(tip);
  button->setAutoRaise(true);
  return button;
}

QAction* shortcutAction(QWidget* parent, const QString& text, const QList<QKeySequence>& keys) {
  auto* action = new QAction(text, parent);
  // The platform's ZoomIn/ZoomOut may equal the explicit keys: a key listed twice is ambiguous.
  QList<QKeySequence> unique;
  for (const QKeySequence& key : keys) {
    if (!key.isEmpty() && !unique.contains(key))
      unique.append(key);
  }
  action->setShortcuts(unique);
  action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  parent->addAction(action);
  return action;
}

} // namespace

GraphView::GraphView(QWidget* parent)
    : QWidget(parent), style_(GraphStyle::fromPalette(palette(), font())),
      engine_(new LayoutEngine(this)), scene_(new QGraphicsScene(this)),
      canvas_(new GraphCanvas(this)), search_(new QLineEdit(this)) {
  setObjectName(QStringLiteral("graphView"));
  scene_->setBackgroundBrush(style_.background);
  // Items are placed once per layout and never move: no index to keep up to date.
  scene_->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  canvas_->setScene(scene_);

  search_->setObjectName(QStringLiteral("graphSearch"));
  search_->setPlaceholderText(tr("Find node by name or op type\u2026"));
  search_->setClearButtonEnabled(true);
  search_->setMaximumWidth(320);
  previous_ = toolButton(this, QStringLiteral("graphFindPrevious"), QStyle::SP_ArrowUp,
                         tr("Previous match (Shift+Enter)"));
  next_ = toolButton(this, QStringLiteral("graphFindNext"), QStyle::SP_ArrowDown,
                     tr("Next match (Enter)"));
  matchLabel_ = new QLabel(this);
  matchLabel_->setObjectName(QStringLiteral("graphMatchCount"));
  matchLabel_->setMinimumWidth(80);
  zoomLabel_ = new QLabel(this);
  zoomLabel_->setObjectName(QStringLiteral("graphZoom"));
  zoomLabel_->setToolTip(tr("Zoom: wheel, Ctrl+= and Ctrl+-; Ctrl+0 fits the graph"));

  fitAction_ = shortcutAction(this, tr("&Fit Graph to View"), {QKeySequence(Qt::CTRL | Qt::Key_0)});
  fitAction_->setObjectName(QStringLiteral("graphFitAction"));
  fitAction_->setIcon(style()->standardIcon(QStyle::SP_TitleBarNormalButton));
  zoomInAction_ = shortcutAction(this, tr("Zoom &In"),
                                 {QKeySequence(Qt::CTRL | Qt::Key_Equal), QKeySequence::ZoomIn});
  zoomOutAction_ = shortcutAction(this, tr("Zoom &Out"),
                                  {QKeySequence(Qt::CTRL | Qt::Key_Minus), QKeySequence::ZoomOut});
  connect(fitAction_, &QAction::triggered, this, &GraphView::fitToView);
  connect(zoomInAction_, &QAction::triggered, this, &GraphView::zoomIn);
  connect(zoomOutAction_, &QAction::triggered, this, &GraphView::zoomOut);
  auto* fit = new QToolButton(this);
  fit->setObjectName(QStringLiteral("graphFit"));
  fit->setText(tr("Fit"));
  fit->setToolTip(tr("Show the whole graph (Ctrl+0)"));
  connect(fit, &QToolButton::clicked, this, &GraphView::fitToView);
  fit->setAutoRaise(true);
  auto* save = new QToolButton(this);
  save->setObjectName(QStringLiteral("graphSaveImage"));
  save->setText(tr("Save Image\u2026"));
  save->setToolTip(tr("Save the whole graph as it is drawn, as SVG or PNG"));
  save->setAutoRaise(true);
  connect(save, &QToolButton::clicked, this, [this] {
    const QString name = snapshot_ && !snapshot_->name.empty()
                             ? QString::fromStdString(snapshot_->name)
                             : QStringLiteral("graph");
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save Graph Image"), name + QStringLiteral(".svg"),
                                     tr("SVG image (*.svg);;PNG image (*.png)"));
    QString error;
    if (!path.isEmpty() && !saveImage(path, &error))
      QMessageBox::warning(this, tr("Cannot Save Image"), error);
  });

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(6, 4, 6, 4);
  bar->setSpacing(2);
  bar->addWidget(search_, 1);
  bar->addWidget(previous_);
  bar->addWidget(next_);
  bar->addSpacing(4);
  bar->addWidget(matchLabel_);
  bar->addStretch(1);
  bar->addWidget(zoomLabel_);
  bar->addWidget(fit);
  bar->addWidget(save);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(bar);
  layout->addWidget(canvas_, 1);

  // The busy indicator floats over the canvas; the old picture stays visible around it.
  overlay_ = new QWidget(this);
  overlay_->setObjectName(QStringLiteral("graphBusy"));
  overlay_->setAutoFillBackground(true);
  overlayLabel_ = new QLabel(overlay_);
  auto* busyBar = new QProgressBar(overlay_);
  busyBar->setRange(0, 0);
  busyBar->setTextVisible(false);
  busyBar->setFixedWidth(200);
  auto* overlayLayout = new QVBoxLayout(overlay_);
  overlayLayout->setContentsMargins(16, 12, 16, 12);
  overlayLayout->addWidget(overlayLabel_, 0, Qt::AlignHCenter);
  overlayLayout->addWidget(busyBar, 0, Qt::AlignHCenter);
  overlay_->hide();
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("graphMessage"));
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  message_->hide();
  heatLegend_ = new HeatLegend(canvas_->viewport(), this);
  minimap_ = new GraphMinimap(canvas_, scene_);
  connect(canvas_, &GraphCanvas::zoomChanged, minimap_, &GraphMinimap::updateFrame);

  connect(search_, &QLineEdit::textChanged, this, &GraphView::setSearchText);
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    if (QGuiApplication::keyboardModifiers() & Qt::ShiftModifier)
      findPrevious();
    else
      findNext();
  });
  connect(previous_, &QToolButton::clicked, this, &GraphView::findPrevious);
  connect(next_, &QToolButton::clicked, this, &GraphView::findNext);
  connect(engine_, &LayoutEngine::finished, this, &GraphView::showLayout);
  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSceneSelectionChanged);
  connect(canvas_, &GraphCanvas::zoomChanged, this, [this](double zoom) {
    zoomLabel_->setText(QStringLiteral("%1%").arg(qRound(zoom * 100)));
  });
  canvas_->onDoubleClick = [this](QGraphicsItem* item) { toggleGroupAt(item); };
  canvas_->onContextMenu = [this](QGraphicsItem* item, const QPoint& pos) {
    showContextMenu(item, pos);
  };
  zoomLabel_->setText(QStringLiteral("100%"));
  updateMatchLabel();
}

GraphView::~GraphView() {
  // QObject deletes the children after this destructor: a signal they send on the way out
  // (the scene's selectionChanged as its items go) must not reach a GraphView slot, whose
  // object is by then only a QWidget (UBSan's vptr check caught one).
  for (QObject* child : findChildren<QObject*>())
    disconnect(child, nullptr, this, nullptr);
}

void GraphView::clearSearch() {
  search_->clear();
}

void GraphView::setSnapshot(std::shared_ptr<const api::GraphSnapshot> snapshot) {
  snapshot_ = std::move(snapshot);
  collapsed_.clear();
  expanded_.clear();
  selectedNode_ = -1;
  highlighted_.clear();
  heat_.clear();
  heatLegend_->hide();
  focusGroup_ = -1;
  focusNode_ = -1;
  revealNode_ = -1;
  newSnapshot_ = true;
  message_->hide();
  // The old graph's items refer to the old snapshot's indices: take them down now.
  selecting_ = true;
  scene_->clear();
  selecting_ = false;
  nodeItems_.clear();
  sceneSnapshot_ = nullptr;
  setSearchText(search_->text());
  if (!snapshot_) {
    engine_->cancel();
    setBusy(false);
    return;
  }
  if (snapshot_->nodes.size() >= kCollapseGroupsFrom) {
    for (int g = 0; g < static_cast<int>(snapshot_->groups.size()); ++g) {
      if (snapshot_->groups[g].nodes.size() > 1)
        collapsed_.insert(g);
    }
  }
  requestLayout();
}

bool GraphView::isLayingOut() const {
  return engine_->isBusy();
}

void GraphView::requestLayout() {
  timer_.start();
  pending_ = buildVisibleGraph(*snapshot_, collapsed_, expanded_);
  LayoutInput input;
  input.nodes.reserve(pending_.nodes.size());
  for (const VisibleNode& node : pending_.nodes) {
    const QSizeF size = nodeSize(node, style_);
    input.nodes.push_back({size.width(), size.height()});
  }
  for (const VisibleEdge& edge : pending_.edges)
    input.edges.push_back({edge.tail, edge.head, edge.label});
  const QFontMetricsF clusterFont(style_.clusterFont);
  for (const VisibleCluster& cluster : pending_.clusters)
    input.clusters.push_back(
        {cluster.nodes, cluster.label, clusterFont.horizontalAdvance(qs(cluster.label)) + 20});
  input.edgeLabelFontSize = style_.edgeFont.pixelSize();
  input.clusterLabelFontSize = style_.clusterFont.pixelSize();
  engine_->request(std::move(input));
  setBusy(true);
}

void GraphView::showLayout(quint64, const std::shared_ptr<const LayoutResult>& result) {
  setBusy(false);
  shown_ = std::move(pending_);
  pending_ = {};
  graphvizMilliseconds_ = result->milliseconds;
  layoutBounded_ = result->bounded;
  if (!result->error.empty()) {
    message_->setText(tr("The graph could not be laid out: %1").arg(qs(result->error)));
    message_->show();
    placeOverlay();
  } else {
    buildScene(*result);
  }
  const bool fresh = newSnapshot_;
  newSnapshot_ = false;
  applyHighlights();
  applyHeat();
  applySelection(false);
  minimap_->refresh(); // before the view moves: the frame follows it
  if (fresh)
    showInitialView();
  if (revealNode_ >= 0) {
    if (NodeItem* item = itemForNode(revealNode_))
      canvas_->centerOn(item);
    revealNode_ = -1;
  }
  if (focusGroup_ >= 0) {
    // Keep the toggled group in view: its node when collapsed, else its frame.
    QRectF target;
    for (NodeItem* item : nodeItems_) {
      if (item->node().kind == VisibleNode::Kind::Group && item->node().index == focusGroup_)
        target = item->sceneBoundingRect();
    }
    for (QGraphicsItem* item : scene_->items()) {
      if (auto* cluster = dynamic_cast<ClusterItem*>(item);
          cluster && cluster->group() == focusGroup_)
        target = cluster->sceneBoundingRect();
    }
    if (!target.isNull())
      canvas_->centerOn(target.center());
    focusGroup_ = -1;
  } else if (focusNode_ >= 0) {
    focusOnNodeScope(focusNode_);
    focusNode_ = -1;
  } else if (!fresh && selectedNode_ >= 0) {
    applySelection(true);
  }
  emit layoutFinished(static_cast<double>(timer_.nsecsElapsed()) / 1e6);
}

void GraphView::buildScene(const LayoutResult& result) {
  selecting_ = true;
  scene_->clear();
  selecting_ = false;
  nodeItems_.clear();
  sceneSnapshot_ = snapshot_.get();
  const api::GraphSnapshot& snapshot = *snapshot_;

  for (std::size_t c = 0; c < shown_.clusters.size() && c < result.clusters.size(); ++c) {
    const VisibleCluster& cluster = shown_.clusters[c];
    if (cluster.owner >= 0) {
      scene_->addItem(new ClusterItem(-1, result.clusters[c].rect, qs(cluster.label),
                                      categoryColor(QStringLiteral("control flow")), &style_,
                                      cluster.owner));
      continue;
    }
    const api::GroupSummary& group = snapshot.groups[cluster.group];
    // Tinted like the op the group is built around (the first that is not elementwise).
    QString category;
    for (const int node : group.nodes) {
      category = qs(snapshot.nodes[node].category);
      if (category != QLatin1String("elementwise"))
        break;
    }
    scene_->addItem(new ClusterItem(cluster.group, result.clusters[c].rect, qs(cluster.label),
                                    categoryColor(category), &style_));
  }
  nodeItems_.reserve(shown_.nodes.size());
  for (std::size_t n = 0; n < shown_.nodes.size(); ++n) {
    auto* item = new NodeItem(shown_.nodes[n], static_cast<int>(n), result.nodes[n], &style_);
    scene_->addItem(item);
    nodeItems_.push_back(item);
  }
  for (std::size_t e = 0; e < shown_.edges.size() && e < result.edges.size(); ++e) {
    const LayoutResult::Edge& route = result.edges[e];
    scene_->addItem(new EdgeItem(route.spline, route.hasArrow, route.arrowTip,
                                 qs(shown_.edges[e].label), route.hasLabel, route.labelCenter,
                                 &style_, shown_.edges[e].kind));
  }
  scene_->setSceneRect(
      result.bounds.adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
}

void GraphView::showInitialView() {
  const QRectF bounds = scene_->sceneRect();
  const QSizeF viewport = canvas_->viewport()->size();
  if (bounds.isEmpty() || viewport.isEmpty())
    return;
  const double fit =
      std::min(viewport.width() / bounds.width(), viewport.height() / bounds.height());
  canvas_->resetTransform();
  if (fit >= kReadableZoom) {
    canvas_->setZoom(std::min(fit, 1.0));
    canvas_->centerOn(bounds.center());
  } else {
    // A tall network: start readable at the inputs rather than as a thumbnail.
    const double zoom = std::max(kReadableZoom, std::min(1.0, viewport.width() / bounds.width()));
    canvas_->setZoom(zoom);
    canvas_->centerOn(bounds.center().x(), bounds.top() + viewport.height() / (2 * zoom));
  }
  zoomLabel_->setText(QStringLiteral("%1%").arg(qRound(canvas_->zoom() * 100)));
}

void GraphView::setBusy(bool busy) {
  if (busy && snapshot_) {
    overlayLabel_->setText(
        tr("Laying out %1 nodes\u2026")
            .arg(QLocale().toString(static_cast<qlonglong>(pending_.nodes.size()))));
  }
  overlay_->setVisible(busy);
  if (busy) {
    placeOverlay();
    overlay_->raise();
  }
}

void GraphView::placeOverlay() {
  const QRect area = canvas_->geometry();
  overlay_->adjustSize();
  overlay_->move(area.center() - QPoint(overlay_->width() / 2, overlay_->height() / 2));
  message_->setGeometry(area.adjusted(40, 40, -40, -40));
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeOverlay();
}

void GraphView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) {
    style_ = GraphStyle::fromPalette(palette(), font());
    scene_->setBackgroundBrush(style_.background);
    scene_->update();
  }
}

NodeItem* GraphView::itemForNode(int node) const {
  if (!snapshot_ || sceneSnapshot_ != snapshot_.get() || node < 0 ||
      node >= static_cast<int>(shown_.nodeOfOp.size()))
    return nullptr;
  const int visible = shown_.nodeOfOp[node];
  return visible >= 0 && visible < static_cast<int>(nodeItems_.size()) ? nodeItems_[visible]
                                                                       : nullptr;
}

int GraphView::clusterItemCount() const {
  int count = 0;
  for (QGraphicsItem* item : scene_->items())
    count += dynamic_cast<ClusterItem*>(item) ? 1 : 0;
  return count;
}

int GraphView::edgeItemCount() const {
  int count = 0;
  for (QGraphicsItem* item : scene_->items())
    count += dynamic_cast<EdgeItem*>(item) ? 1 : 0;
  return count;
}

bool GraphView::selectNode(int node) {
  if (!snapshot_ || node >= static_cast<int>(snapshot_->nodes.size()) || node < -1)
    return false;
  selectedNode_ = node;
  applySelection(true);
  return true;
}

void GraphView::applySelection(bool center) {
  selecting_ = true;
  scene_->clearSelection();
  if (NodeItem* item = itemForNode(selectedNode_)) {
    item->setSelected(true);
    if (center)
      canvas_->centerOn(item);
  }
  selecting_ = false;
}

void GraphView::onSceneSelectionChanged() {
  if (selecting_)
    return;
  const QList<QGraphicsItem*> selected = scene_->selectedItems();
  auto* item = selected.isEmpty() ? nullptr : dynamic_cast<NodeItem*>(selected.front());
  if (item && item->node().owner >= 0 && snapshot_) {
    // Inside a subgraph: its own snapshot, which the node's index counts in.
    const VisibleNode& inner = item->node();
    selectedNode_ = -1;
    if (inner.kind == VisibleNode::Kind::Op)
      emit subgraphNodeSelected(snapshot_->nodes[inner.owner].subgraphs[inner.subgraph].second,
                                inner.index, inner.owner);
    return;
  }
  int node = -1;
  if (item && item->node().kind == VisibleNode::Kind::Op)
    node = item->node().index;
  else if (item && item->node().kind == VisibleNode::Kind::Group && snapshot_ &&
           !snapshot_->groups[item->node().index].nodes.empty())
    node = snapshot_->groups[item->node().index].nodes.front();
  selectedNode_ = node;
  emit nodeSelected(node);
}

void GraphView::highlightNodes(std::vector<int> nodes) {
  highlighted_ = std::move(nodes);
  applyHighlights();
}

void GraphView::applyHighlights() {
  for (NodeItem* item : nodeItems_)
    item->setHighlighted(false);
  for (const int node : highlighted_) {
    if (NodeItem* item = itemForNode(node))
      item->setHighlighted(true);
  }
}

void GraphView::setNodeHeat(std::vector<double> share) {
  heat_ = snapshot_ ? std::move(share) : std::vector<double>();
  applyHeat();
  minimap_->refresh(); // the colours changed
}

void GraphView::applyHeat() {
  // Shares summed per drawn node: a collapsed group is as hot as its nodes together.
  std::vector<double> drawn(nodeItems_.size(), 0.0);
  for (std::size_t n = 0; n < heat_.size() && n < shown_.nodeOfOp.size(); ++n) {
    const int visible = shown_.nodeOfOp[n];
    if (visible >= 0 && visible < static_cast<int>(drawn.size()))
      drawn[visible] += std::max(0.0, heat_[n]);
  }
  const double hottest = drawn.empty() ? 0.0 : *std::max_element(drawn.begin(), drawn.end());
  for (std::size_t v = 0; v < nodeItems_.size(); ++v) {
    const VisibleNode::Kind kind = nodeItems_[v]->node().kind;
    const bool op = kind == VisibleNode::Kind::Op || kind == VisibleNode::Kind::Group;
    nodeItems_[v]->setHeat(heat_.empty() || !op ? -1
                           : hottest > 0        ? drawn[v] / hottest
                                                : 0,
                           drawn[v]);
  }
  heatLegend_->setMaximumShare(hottest);
  heatLegend_->setVisible(!heat_.empty() && !nodeItems_.empty());
  heatLegend_->raise();
}

void GraphView::setHeatTitle(const QString& title) {
  heatLegend_->setTitle(title);
}

void GraphView::revealNode(int node) {
  if (NodeItem* item = itemForNode(node)) {
    canvas_->centerOn(item);
    return;
  }
  revealNode_ = node; // not laid out yet
}

int GraphView::highlightedItemCount() const {
  return static_cast<int>(
      std::count_if(nodeItems_.begin(), nodeItems_.end(),
                    [](const NodeItem* item) { return item->isHighlighted(); }));
}

void GraphView::collapseGroup(int group) {
  if (!snapshot_ || group < 0 || group >= static_cast<int>(snapshot_->groups.size()) ||
      !collapsed_.insert(group).second)
    return;
  focusGroup_ = group;
  requestLayout();
}

void GraphView::expandGroup(int group) {
  if (!snapshot_ || collapsed_.erase(group) == 0)
    return;
  focusGroup_ = group;
  requestLayout();
}

void GraphView::setAllGroupsCollapsed(bool collapse) {
  if (!snapshot_)
    return;
  collapsed_.clear();
  if (collapse) {
    for (int g = 0; g < static_cast<int>(snapshot_->groups.size()); ++g) {
      if (snapshot_->groups[g].nodes.size() > 1)
        collapsed_.insert(g);
    }
  }
  requestLayout();
}

int GraphView::groupOfItem(QGraphicsItem* item) const {
  if (auto* cluster = dynamic_cast<ClusterItem*>(item))
    return cluster->group();
  auto* node = dynamic_cast<NodeItem*>(item);
  if (!node || !snapshot_)
    return -1;
  if (node->node().kind == VisibleNode::Kind::Group)
    return node->node().index;
  if (node->node().kind == VisibleNode::Kind::Op && node->node().cluster >= 0 &&
      node->node().owner < 0)
    return snapshot_->nodes[node->node().index].group;
  return -1;
}

int GraphView::ownerOfItem(QGraphicsItem* item) const {
  if (auto* cluster = dynamic_cast<ClusterItem*>(item))
    return cluster->owner();
  auto* node = dynamic_cast<NodeItem*>(item);
  if (!node || !snapshot_)
    return -1;
  if (node->node().owner >= 0)
    return node->node().owner;
  if (node->node().kind == VisibleNode::Kind::Op &&
      !snapshot_->nodes[node->node().index].subgraphs.empty())
    return node->node().index;
  return -1;
}

void GraphView::toggleGroupAt(QGraphicsItem* item) {
  auto* node = dynamic_cast<NodeItem*>(item);
  if (node && node->node().kind == VisibleNode::Kind::Group) {
    expandGroup(node->node().index);
    return;
  }
  if (auto* cluster = dynamic_cast<ClusterItem*>(item)) {
    if (cluster->owner() >= 0)
      collapseNode(cluster->owner());
    else
      collapseGroup(cluster->group());
    return;
  }
  // A double-click inside a subgraph selects there; only the node itself toggles.
  if (node && node->node().owner < 0) {
    if (const int owner = ownerOfItem(item); owner >= 0)
      isNodeExpanded(owner) ? collapseNode(owner) : expandNode(owner);
  }
}

void GraphView::expandNode(int node) {
  if (!snapshot_ || node < 0 || node >= static_cast<int>(snapshot_->nodes.size()) ||
      snapshot_->nodes[node].subgraphs.empty() || !expanded_.insert(node).second)
    return;
  focusNode_ = node;
  requestLayout();
}

void GraphView::collapseNode(int node) {
  if (!snapshot_ || expanded_.erase(node) == 0)
    return;
  focusNode_ = node;
  requestLayout();
}

// Centres the node together with the frames of its subgraphs, as far as the view shows them.
void GraphView::focusOnNodeScope(int node) {
  NodeItem* head = itemForNode(node);
  if (!head)
    return;
  QRectF target = head->sceneBoundingRect();
  for (QGraphicsItem* item : scene_->items()) {
    if (auto* cluster = dynamic_cast<ClusterItem*>(item); cluster && cluster->owner() == node)
      target = target.united(cluster->sceneBoundingRect());
  }
  canvas_->centerOn(target.center());
}

void GraphView::showContextMenu(QGraphicsItem* item, const QPoint& globalPos) {
  QMenu menu(this);
  const int group = groupOfItem(item);
  if (group >= 0) {
    const QString pattern = qs(snapshot_->groups[group].pattern);
    if (isGroupCollapsed(group))
      menu.addAction(tr("Expand Group \u201c%1\u201d").arg(pattern), this,
                     [this, group] { expandGroup(group); });
    else
      menu.addAction(tr("Collapse Group \u201c%1\u201d").arg(pattern), this,
                     [this, group] { collapseGroup(group); });
    menu.addSeparator();
  }
  if (const int owner = ownerOfItem(item); owner >= 0) {
    const QString op = qs(snapshot_->nodes[owner].opType);
    if (isNodeExpanded(owner))
      menu.addAction(tr("Collapse Subgraphs of \u201c%1\u201d").arg(op), this,
                     [this, owner] { collapseNode(owner); });
    else
      menu.addAction(tr("Expand Subgraphs of \u201c%1\u201d").arg(op), this,
                     [this, owner] { expandNode(owner); });
    menu.addSeparator();
  }
  menu.addAction(tr("Collapse All Groups"), this, [this] { setAllGroupsCollapsed(true); });
  menu.addAction(tr("Expand All Groups"), this, [this] { setAllGroupsCollapsed(false); });
  menu.addSeparator();
  menu.addAction(fitAction_);
  menu.exec(globalPos);
}

void GraphView::setSearchText(const QString& text) {
  if (search_->text() != text) {
    search_->setText(text); // comes back here through textChanged
    return;
  }
  matches_.clear();
  currentMatch_ = -1;
  const QString needle = text.trimmed();
  if (snapshot_ && !needle.isEmpty()) {
    for (int n = 0; n < static_cast<int>(snapshot_->nodes.size()); ++n) {
      const api::NodeSummary& node = snapshot_->nodes[n];
      if (qs(node.name).contains(needle, Qt::CaseInsensitive) ||
          qs(node.opType).contains(needle, Qt::CaseInsensitive))
        matches_.push_back(n);
    }
  }
  updateMatchLabel();
  if (!matches_.empty())
    goToMatch(0);
}

void GraphView::findNext() {
  if (!matches_.empty())
    goToMatch((currentMatch_ + 1) % matchCount());
}

void GraphView::findPrevious() {
  if (!matches_.empty())
    goToMatch((currentMatch_ + matchCount() - 1) % matchCount());
}

void GraphView::goToMatch(int match) {
  currentMatch_ = match;
  updateMatchLabel();
  selectNode(matches_[match]);
  emit nodeSelected(matches_[match]);
}

void GraphView::updateMatchLabel() {
  const bool any = !matches_.empty();
  previous_->setEnabled(any);
  next_->setEnabled(any);
  if (search_->text().trimmed().isEmpty())
    matchLabel_->clear();
  else if (!any)
    matchLabel_->setText(tr("No matches"));
  else
    matchLabel_->setText(tr("%1 of %2").arg(currentMatch_ + 1).arg(matchCount()));
}

void GraphView::focusSearch() {
  search_->setFocus(Qt::ShortcutFocusReason);
  search_->selectAll();
}

bool GraphView::saveImage(const QString& path, QString* error) {
  const QString why =
      nodeItems_.empty()
          ? tr("there is no graph to save")
          : saveSceneImage(*scene_, path,
                           snapshot_ ? QString::fromStdString(snapshot_->name) : QString());
  if (error)
    *error = why;
  return why.isEmpty();
}

void GraphView::fitToView() {
  const QRectF bounds = scene_->sceneRect();
  if (bounds.isEmpty())
    return;
  canvas_->fitInView(bounds, Qt::KeepAspectRatio);
  if (canvas_->zoom() > 1.5) // a tiny graph is not blown up past readable
    canvas_->setZoom(1.5);
  else if (canvas_->zoom() < GraphCanvas::kMinZoom)
    canvas_->setZoom(GraphCanvas::kMinZoom);
  canvas_->centerOn(bounds.center());
  zoomLabel_->setText(QStringLiteral("%1%").arg(qRound(canvas_->zoom() * 100)));
  minimap_->updateFrame(); // fitInView says nothing of the new scale
}

void GraphView::zoomIn() {
  canvas_->zoomBy(1.25);
}

void GraphView::zoomOut() {
  canvas_->zoomBy(1 / 1.25);
}

double GraphView::zoom() const {
  return canvas_->zoom();
}

} // namespace lathe::views
