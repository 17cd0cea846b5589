#include "app/workbench/properties_panel.h"

#include "app/workbench/engine_jobs.h"
#include "app/workbench/placeholder_label.h"
#include "views/common/padded_item_delegate.h"
#include "views/models/node_properties_model.h"
#include "views/properties/weight_stats_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <set>

namespace lathe::workbench {

using views::NodePropertiesModel;

namespace {

// Enough bars to see the shape of a weight distribution in a narrow dock.
constexpr int kHistogramBins = 48;
// A node with more constant inputs than this (rare: Concat of constants) shows the first ones.
constexpr std::size_t kMaxWeights = 8;
// Title, statistics line and histogram of one weight.
constexpr int kWeightViewHeight = 210;

} // namespace

PropertiesPanel::PropertiesPanel(QWidget* parent)
    : QWidget(parent), stack_(new QStackedWidget(this)),
      splitter_(new QSplitter(Qt::Vertical, this)), view_(new QTreeView(this)),
      weightsArea_(new QScrollArea(this)), weightsLayout_(nullptr),
      model_(new NodePropertiesModel(this)) {
  view_->setObjectName(QStringLiteral("propertiesView"));
  view_->setModel(model_);
  view_->setItemDelegate(new views::PaddedItemDelegate(view_));
  view_->setRootIsDecorated(false);
  view_->setUniformRowHeights(true);
  view_->setAlternatingRowColors(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->setTextElideMode(Qt::ElideMiddle); // keeps both ends of long names and IR lines
  view_->header()->setStretchLastSection(true);
  view_->header()->resizeSection(NodePropertiesModel::PropertyColumn, 200);
  connect(model_, &QAbstractItemModel::modelReset, this, &PropertiesPanel::spanSectionRows);

  auto* weights = new QWidget(weightsArea_);
  weightsLayout_ = new QVBoxLayout(weights);
  weightsLayout_->setContentsMargins(6, 0, 6, 0);
  weightsLayout_->setSpacing(0);
  weightsArea_->setObjectName(QStringLiteral("weightsArea"));
  weightsArea_->setWidget(weights);
  weightsArea_->setWidgetResizable(true);
  weightsArea_->setFrameShape(QFrame::NoFrame);
  weightsArea_->setMinimumHeight(kWeightViewHeight);

  splitter_->setObjectName(QStringLiteral("propertiesSplitter"));
  splitter_->setChildrenCollapsible(false);
  splitter_->addWidget(view_);
  splitter_->addWidget(weightsArea_);
  splitter_->setStretchFactor(0, 1);
  splitter_->setStretchFactor(1, 1);

  stack_->addWidget(createPlaceholderLabel(
      tr("Select a node in the model tree to see its op, inputs, outputs and attributes."), this));
  stack_->addWidget(splitter_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(stack_);
}

void PropertiesPanel::setSession(SessionWorker* worker, std::shared_ptr<api::Session> session) {
  if (session == session_ && worker == worker_)
    return;
  if (worker_)
    worker_->cancel(jobs::kStats);
  worker_ = session ? worker : nullptr;
  session_ = worker_ ? std::move(session) : nullptr;
  cache_.clear();
  pendingJob_ = 0; // whatever is in flight belongs to the old model
  showWeights();
}

void PropertiesPanel::setNode(std::shared_ptr<const api::GraphSnapshot> graph, int node) {
  model_->setNode(graph, node);
  graph_ = model_->node() < 0 ? nullptr : std::move(graph);
  node_ = model_->node();
  stack_->setCurrentIndex(node_ < 0 ? 0 : 1);
  showWeights();
}

std::vector<views::WeightStatsView*> PropertiesPanel::weightViews() const {
  std::vector<views::WeightStatsView*> out;
  for (int i = 0; i < weightsLayout_->count(); ++i)
    if (auto* v = qobject_cast<views::WeightStatsView*>(weightsLayout_->itemAt(i)->widget()))
      out.push_back(v);
  return out;
}

void PropertiesPanel::showWeights() {
  const std::uint64_t job = ++lastJob_; // anything still in flight is stale from here on
  pendingJob_ = 0;
  while (QLayoutItem* item = weightsLayout_->takeAt(0)) {
    delete item->widget();
    delete item;
  }

  // Constant inputs of the node, in input order, each once.
  std::vector<const api::ConstantSummary*> constants;
  if (graph_) {
    std::map<std::string, const api::ConstantSummary*> byName;
    for (const api::ConstantSummary& c : graph_->constants)
      byName[c.tensor.name] = &c;
    std::set<std::string> seen;
    for (const std::string& input : graph_->nodes[node_].inputs) {
      const auto it = byName.find(input);
      if (it != byName.end() && seen.insert(input).second && constants.size() < kMaxWeights)
        constants.push_back(it->second);
    }
  }
  weightsArea_->setVisible(!constants.empty());
  weightCount_ = 0;
  if (constants.empty())
    return;
  weightCount_ = static_cast<int>(constants.size());
  fitWeightsPane();

  auto* heading = new QLabel(tr("<b>Weights</b> (%1)").arg(constants.size()));
  heading->setContentsMargins(0, 6, 0, 0);
  weightsLayout_->addWidget(heading);
  std::vector<std::string> missing;
  StatsResults cached;
  for (const api::ConstantSummary* c : constants) {
    auto* view = new views::WeightStatsView;
    view->setPending(QString::fromStdString(c->tensor.name),
                     QString::fromStdString(c->tensor.typeText));
    weightsLayout_->addWidget(view);
    if (!session_)
      view->setUnavailable(QString::fromStdString(c->tensor.name),
                           tr("%1 \u00b7 statistics need the open model")
                               .arg(QString::fromStdString(c->tensor.typeText)));
    else if (const auto it = cache_.find(c->tensor.name); it != cache_.end())
      cached.emplace_back(it->first, it->second);
    else
      missing.push_back(c->tensor.name);
  }
  weightsLayout_->addStretch(1);
  applyStats(cached);
  if (missing.empty() || !session_) {
    if (session_)
      emit weightStatsReady();
    return;
  }

  // Off the GUI thread: a ResNet-50 conv weight has millions of values. The job holds a
  // reference to the Session, so a model closed meanwhile stays alive until it returns.
  pendingJob_ = job;
  worker_->post(jobs::kStats,
                [this, job, session = session_, names = std::move(missing)](
                    const SessionWorker::Context&) -> SessionWorker::Deliver {
                  StatsResults results;
                  for (const std::string& name : names)
                    results.emplace_back(name, session->constantStats(name, kHistogramBins));
                  return [this, job, session, results] {
                    if (session != session_)
                      return; // another model: these names may mean other tensors now
                    for (const auto& [name, stats] : results)
                      cache_[name] = stats;
                    if (job != pendingJob_)
                      return; // the selection moved on while this ran
                    pendingJob_ = 0;
                    applyStats(results);
                    emit weightStatsReady();
                  };
                });
}

// Room for the histograms: the table rarely needs more than half the height, and a
// squeezed plot is unreadable. Only ever grows the weights pane, so a user's split stays.
void PropertiesPanel::fitWeightsPane() {
  if (weightCount_ == 0)
    return;
  const QList<int> sizes = splitter_->sizes();
  const int total = sizes.value(0) + sizes.value(1);
  const int wanted = std::min(total * 3 / 5, kWeightViewHeight * weightCount_ + 30);
  if (total > 0 && sizes.value(1) < wanted)
    splitter_->setSizes({total - wanted, wanted});
}

void PropertiesPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  fitWeightsPane(); // setNode() may have run before the panel had a size
}

void PropertiesPanel::applyStats(const StatsResults& results) {
  const std::vector<views::WeightStatsView*> views = weightViews();
  for (const auto& [name, stats] : results)
    for (views::WeightStatsView* view : views) {
      if (view->name() != QString::fromStdString(name))
        continue;
      if (stats)
        view->setStats(*stats);
      else
        view->setUnavailable(view->name(), tr("No values to summarise (not in the final graph, "
                                              "or its bytes are not loaded)."));
    }
}

void PropertiesPanel::spanSectionRows() {
  for (int row = 0; row < model_->rowCount(); ++row) {
    const auto kind = static_cast<NodePropertiesModel::RowKind>(
        model_->index(row, 0).data(NodePropertiesModel::RowKindRole).toInt());
    view_->setFirstColumnSpanned(row, {}, kind == NodePropertiesModel::RowKind::Section);
  }
}

} // namespace lathe::workbench
