#include "views/profile/profile_view.h"

#include "views/common/category_palette.h"
#include "views/common/plot_style.h"
#include "views/common/table_style.h"
#include "views/models/run_models.h"
#include "views/profile/timeline_view.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QResizeEvent>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <qcustomplot.h>

namespace lathe::views {
namespace {

constexpr int kChartKernels = 12; // the chart shows the slowest; the table has them all
constexpr int kBarPixels = 17;    // a bar and its label need this much height

} // namespace

QHash<QString, QString> kernelCategories(const api::RunProfile& profile,
                                         const api::GraphSnapshot* graph) {
  QHash<QString, QString> result;
  if (!graph)
    return result;
  std::map<std::string, const std::string*> categoryOf;
  for (const api::NodeSummary& node : graph->nodes) {
    if (!node.name.empty())
      categoryOf[node.name] = &node.category;
  }
  for (const api::KernelProfileRow& row : profile.rows) {
    QString category;
    for (const std::string& node : row.nodes) {
      const auto it = categoryOf.find(node);
      if (it == categoryOf.end())
        continue;
      const QString c = QString::fromStdString(*it->second);
      if (category.isEmpty())
        category = c;
      if (c != QLatin1String("elementwise")) { // the anchor names the kernel's kind
        category = c;
        break;
      }
    }
    if (!category.isEmpty())
      result.insert(QString::fromStdString(row.kernel), category);
  }
  return result;
}

std::vector<double> nodeTimeShares(const api::RunProfile& profile,
                                   const api::GraphSnapshot& graph) {
  std::vector<double> shares(graph.nodes.size(), 0.0);
  std::map<std::string, int> indexOf;
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    if (!graph.nodes[n].name.empty())
      indexOf.emplace(graph.nodes[n].name, n);
  }
  double total = 0;
  for (const api::KernelProfileRow& row : profile.rows)
    total += std::max(0.0, row.totalMs);
  if (total <= 0)
    return shares;
  for (const api::KernelProfileRow& row : profile.rows) {
    int anchor = -1;
    for (const std::string& name : row.nodes) {
      const auto it = indexOf.find(name);
      if (it == indexOf.end())
        continue;
      if (anchor < 0)
        anchor = it->second;
      if (graph.nodes[it->second].category != "elementwise") {
        anchor = it->second;
        break;
      }
    }
    if (anchor >= 0)
      shares[anchor] += std::max(0.0, row.totalMs) / total;
  }
  return shares;
}

ProfileView::ProfileView(QWidget* parent)
    : QWidget(parent), stack_(new QStackedWidget(this)), placeholder_(new QLabel(this)),
      summary_(new QLabel(this)), heatMap_(new QToolButton(this)),
      timeline_(new TimelineView(this)), chart_(new QCustomPlot(this)),
      table_(new QTableView(this)), model_(new KernelProfileModel(this)),
      proxy_(new QSortFilterProxyModel(this)), splitter_(new QSplitter(Qt::Vertical, this)) {
  setObjectName(QStringLiteral("profileView"));
  placeholder_->setObjectName(QStringLiteral("profilePlaceholder"));
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  placeholder_->setForegroundRole(QPalette::PlaceholderText);
  placeholder_->setText(
      tr("No profile yet.\nCheck \u201cProfile\u201d in the Run panel and run the model (F5)."));
  summary_->setObjectName(QStringLiteral("profileSummary"));
  summary_->setTextFormat(Qt::PlainText);
  summary_->setWordWrap(true);
  summary_->setContentsMargins(4, 2, 4, 2);
  heatMap_->setObjectName(QStringLiteral("profileHeatMap"));
  heatMap_->setText(tr("Heat map"));
  heatMap_->setCheckable(true);
  heatMap_->setToolTip(tr("Colour the graph by each node's share of the run time"));
  connect(heatMap_, &QToolButton::toggled, this, &ProfileView::heatMapToggled);

  proxy_->setSourceModel(model_);
  proxy_->setSortRole(KernelProfileModel::SortRole);
  table_->setObjectName(QStringLiteral("profileTable"));
  table_->setModel(proxy_);
  styleListTable(table_);
  QHeaderView* header = table_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::ResizeToContents);
  header->setSectionResizeMode(KernelProfileModel::NodesColumn, QHeaderView::Stretch);
  table_->setSortingEnabled(true);
  table_->sortByColumn(KernelProfileModel::TotalColumn, Qt::DescendingOrder);
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
    activate(index.data(KernelProfileModel::KernelNameRole).toString());
  });
  connect(table_, &QTableView::activated, this, [this](const QModelIndex& index) {
    activate(index.data(KernelProfileModel::KernelNameRole).toString());
  });

  chart_->setObjectName(QStringLiteral("kernelChart"));
  chart_->setMinimumHeight(110); // the profile dock must fit a 768-pixel-high window
  chart_->xAxis->setLabel(tr("total time (ms)"));
  chart_->yAxis->setRangeReversed(true); // slowest on top
  chart_->yAxis->grid()->setVisible(false);
  chart_->xAxis->ticker()->setTickCount(4);
  connect(
      chart_, &QCustomPlot::plottableClick, this,
      [this](QCPAbstractPlottable* plottable, int, QMouseEvent*) { activate(plottable->name()); });
  connect(timeline_, &TimelineView::kernelClicked, this, &ProfileView::activate);
  connect(timeline_, &TimelineView::chunkClicked, this, [this](int event) {
    if (!report_ || !report_->profile || event < 0 ||
        event >= static_cast<int>(report_->profile->events.size()))
      return;
    const api::TraceEvent& e = report_->profile->events[static_cast<std::size_t>(event)];
    if (!e.kernel.empty() && e.iterations > 0)
      emit parallelChunkActivated(QString::fromStdString(e.kernel), e.firstIteration,
                                  e.endIteration, e.iterations);
  });

  auto* lower = new QSplitter(Qt::Horizontal, this);
  lower->addWidget(chart_);
  lower->addWidget(table_);
  lower->setStretchFactor(0, 1);
  lower->setStretchFactor(1, 1);    // the chart needs room for kernel names and ticks
  lower->setSizes({500, 500});      // halves, whatever the table's columns would like
  chart_->installEventFilter(this); // fewer bars when it is short
  splitter_->addWidget(timeline_);
  splitter_->addWidget(lower);
  splitter_->setStretchFactor(0, 2);
  splitter_->setStretchFactor(1, 3);
  splitter_->setChildrenCollapsible(false);

  auto* page = new QWidget(this);
  auto* pageLayout = new QVBoxLayout(page);
  pageLayout->setContentsMargins(0, 0, 0, 0);
  pageLayout->setSpacing(2);
  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 4, 0);
  top->addWidget(summary_, 1);
  top->addWidget(heatMap_, 0, Qt::AlignTop);
  pageLayout->addLayout(top);
  pageLayout->addWidget(splitter_, 1);
  stack_->addWidget(placeholder_);
  stack_->addWidget(page);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(stack_);
  applyPalette();
}

void ProfileView::setReport(std::shared_ptr<const api::RunReport> report,
                            std::shared_ptr<const api::GraphSnapshot> graph) {
  report_ = report && report->profile ? std::move(report) : nullptr;
  selected_.clear();
  categories_ =
      report_ ? kernelCategories(*report_->profile, graph.get()) : QHash<QString, QString>();
  model_->setReport(report_, categories_);
  timeline_->setReport(report_, categories_);
  timeline_->setSelectedKernel({});
  rebuildChart();
  stack_->setCurrentIndex(report_ ? 1 : 0);
  if (!report_) {
    summary_->clear();
    return;
  }
  const api::RunProfile& p = *report_->profile;
  double kernelsMs = 0;
  for (const api::KernelProfileRow& row : p.rows)
    kernelsMs += row.totalMs;
  const double runs = std::max<double>(1, static_cast<double>(p.runsUs.size()));
  QString text = tr("%1 timed runs \u00b7 %2 threads \u00b7 %3 kernels \u00b7 %4 ms in kernels per "
                    "run \u00b7 median latency %5 ms")
                     .arg(p.runsUs.size())
                     .arg(p.threads)
                     .arg(p.rows.size())
                     .arg(kernelsMs / runs, 0, 'f', 3)
                     .arg(report_->medianMs, 0, 'f', 3);
  if (p.peakGflops > 0)
    text += tr(" \u00b7 peak %1 GFLOP/s (%2)")
                .arg(p.peakGflops, 0, 'f', 1)
                .arg(QString::fromStdString(p.peakIsa));
  if (p.droppedEvents > 0)
    text += tr(" \u00b7 %1 timeline events dropped").arg(p.droppedEvents);
  summary_->setText(text);
}

bool ProfileView::selectKernel(const QString& kernel) {
  const int row = model_->rowOfKernel(kernel);
  if (row < 0)
    return false;
  selected_ = kernel;
  const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
  table_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                       QItemSelectionModel::Rows);
  table_->scrollTo(index);
  timeline_->setSelectedKernel(kernel);
  rebuildChart();
  return true;
}

bool ProfileView::isHeatMapOn() const {
  return heatMap_->isChecked();
}

void ProfileView::setHeatMapOn(bool on) {
  heatMap_->setChecked(on);
}

void ProfileView::activate(const QString& kernel) {
  if (kernel.isEmpty() || !selectKernel(kernel))
    return;
  const int row = model_->rowOfKernel(kernel);
  emit kernelActivated(
      kernel, model_->index(row, 0).data(KernelProfileModel::NodeNamesRole).toStringList());
}

int ProfileView::chartBarCount() const {
  return chart_->plottableCount();
}

QString ProfileView::summaryText() const {
  return summary_->text();
}

void ProfileView::rebuildChart() {
  chart_->clearPlottables();
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  if (!report_) {
    chart_->yAxis->setTicker(ticker);
    chart_->replot();
    return;
  }
  const auto& rows = report_->profile->rows; // largest first
  // As many as fit with readable labels, at most kChartKernels.
  const int fit = std::max(3, (chart_->height() - 50) / kBarPixels);
  const int shown = std::min({kChartKernels, fit, static_cast<int>(rows.size())});
  double longest = 0;
  const QColor outline = palette().color(QPalette::Text);
  const int labelWidth = std::max(60, chart_->width() / 2 - 20);
  // One time tick per 70 pixels of bars, so that the numbers never run into each other.
  chart_->xAxis->ticker()->setTickCount(std::clamp((chart_->width() - labelWidth) / 70, 1, 4));
  for (int i = 0; i < shown; ++i) {
    const api::KernelProfileRow& row = rows[static_cast<std::size_t>(i)];
    const QString name = QString::fromStdString(row.kernel);
    // One QCPBars per kernel: each gets its category's colour and its own click.
    auto* bars = new QCPBars(chart_->yAxis, chart_->xAxis);
    bars->setName(name);
    bars->setWidth(0.7);
    bars->addData(i, row.totalMs);
    const QColor color = categoryColor(categories_.value(name, QStringLiteral("other")));
    bars->setBrush(color);
    bars->setPen(name == selected_ ? QPen(outline, 2) : QPen(color.darker(130)));
    bars->setSelectable(QCP::stNone);
    // Kernel names are long: in a narrow chart they are shortened in the middle (the table and
    // the tooltip of the timeline have them whole) so the bars keep half the width.
    ticker->addTick(i, chart_->fontMetrics().elidedText(name, Qt::ElideMiddle, labelWidth));
    longest = std::max(longest, row.totalMs);
  }
  if (static_cast<int>(rows.size()) > shown)
    ticker->addTick(shown, tr("(%1 more in the table)").arg(rows.size() - shown));
  chart_->yAxis->setTicker(ticker);
  chart_->yAxis->setRange(-0.6, std::max(shown, 1) - 0.4 +
                                    (static_cast<int>(rows.size()) > shown ? 1 : 0));
  chart_->xAxis->setRange(0, std::max(longest * 1.05, 1e-3));
  chart_->replot();
}

bool ProfileView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == chart_ && event->type() == QEvent::Resize && report_) {
    const int fit = std::max(3, (chart_->height() - 50) / kBarPixels);
    const int rows = static_cast<int>(report_->profile->rows.size());
    const auto* resize = static_cast<QResizeEvent*>(event);
    if (std::min({kChartKernels, fit, rows}) != chartBarCount() ||
        resize->size().width() != resize->oldSize().width())
      rebuildChart(); // fewer bars, or names and ticks for another width
  }
  return QWidget::eventFilter(watched, event);
}

void ProfileView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange)
    applyPalette();
}

void ProfileView::applyPalette() {
  const QPalette p = palette();
  applyPlotPalette(chart_, p);
  rebuildChart();
}

} // namespace lathe::views
