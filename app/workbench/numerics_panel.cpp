#include "app/workbench/numerics_panel.h"

#include "views/common/table_style.h"
#include "views/models/numerics_model.h"
#include "views/properties/weight_stats_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>

namespace lathe::workbench {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

api::CompareResult compareOnWorker(const api::CompareOptions& options) {
  try {
    return api::compareNumerics(options);
  } catch (const std::exception& e) { // compareNumerics promises not to throw; be safe anyway
    api::CompareResult result;
    result.failure = api::Failure{};
    result.failure->kind = "internal";
    result.failure->message = std::string("internal error: ") + e.what();
    return result;
  }
}

} // namespace

NumericsPanel::NumericsPanel(QWidget* parent)
    : QWidget(parent), reference_(new QComboBox(this)),
      compareButton_(new QPushButton(tr("Compare with reference"), this)),
      cancelButton_(new QPushButton(tr("Cancel"), this)), busy_(new QProgressBar(this)),
      heatMap_(new QCheckBox(tr("Colour graph by error"), this)), summary_(new QLabel(this)),
      table_(new QTableView(this)), model_(new views::NumericsModel(this)),
      latheStats_(new views::WeightStatsView(this)),
      referenceStats_(new views::WeightStatsView(this)) {
  reference_->addItem(tr("Lathe reference interpreter"), QStringLiteral("reference"));
  reference_->addItem(tr("ONNX Runtime"), QStringLiteral("onnxruntime"));
  reference_->setToolTip(tr("ONNX Runtime needs the npm package onnxruntime-node (NODE_PATH)"));
  compareButton_->setObjectName(QStringLiteral("compareButton"));
  cancelButton_->setObjectName(QStringLiteral("cancelCompareButton"));
  busy_->setRange(0, 0); // compareNumerics reports no progress
  busy_->setMaximumWidth(120);
  busy_->setTextVisible(false);
  heatMap_->setChecked(true);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setText(tr("Compares every node output of the open model with a reference run "
                       "(the Run panel's input file, else seeded random inputs)."));

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Reference:"), this));
  controls->addWidget(reference_);
  controls->addWidget(compareButton_);
  controls->addWidget(cancelButton_);
  controls->addWidget(busy_);
  controls->addStretch(1);
  controls->addWidget(heatMap_);

  table_->setModel(model_);
  views::styleListTable(table_);
  table_->setAlternatingRowColors(false); // rows are coloured by status
  table_->setShowGrid(true);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setTextElideMode(Qt::ElideMiddle);

  auto* stats = new QWidget(this);
  auto* statsLayout = new QHBoxLayout(stats);
  statsLayout->setContentsMargins(0, 0, 0, 0);
  statsLayout->addWidget(latheStats_);
  statsLayout->addWidget(referenceStats_);
  latheStats_->setUnavailable(tr("Lathe"), tr("Select a value"));
  referenceStats_->setUnavailable(tr("Reference"), tr("Select a value"));

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(table_);
  split->addWidget(stats);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({700, 360}); // the table's errors and status in view next to both histograms

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);

  connect(compareButton_, &QPushButton::clicked, this, &NumericsPanel::compareRequested);
  connect(cancelButton_, &QPushButton::clicked, this, &NumericsPanel::cancel);
  connect(heatMap_, &QCheckBox::toggled, this, &NumericsPanel::heatMapToggled);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &NumericsPanel::showSelected);
  setBusy(false);
}

NumericsPanel::~NumericsPanel() {
  // Stop every comparison at its next check and wait, so that no worker outlives the panel.
  for (auto& [watcher, flag] : cancelFlags_)
    flag->store(true);
  for (auto* watcher : watchers_)
    watcher->waitForFinished();
}

QString NumericsPanel::reference() const {
  return reference_->currentData().toString();
}

bool NumericsPanel::isHeatMapOn() const {
  return heatMap_->isChecked();
}

void NumericsPanel::setCanCompare(bool canCompare) {
  canCompare_ = canCompare;
  setBusy(isComparing());
}

void NumericsPanel::setBusy(bool busy) {
  compareButton_->setEnabled(canCompare_ && !busy);
  reference_->setEnabled(!busy);
  cancelButton_->setVisible(busy);
  busy_->setVisible(busy);
}

bool NumericsPanel::compare(api::CompareOptions options) {
  if (isComparing())
    return false;
  options.reference = reference().toStdString();
  auto* watcher = new QFutureWatcher<api::CompareResult>(this);
  watchers_.push_back(watcher);
  auto flag = std::make_shared<std::atomic<bool>>(false);
  cancelFlags_[watcher] = flag;
  options.cancel = flag.get();
  current_ = watcher;
  connect(watcher, &QFutureWatcher<api::CompareResult>::finished, this,
          [this, watcher] { onFinished(watcher); });
  watcher->setFuture(QtConcurrent::run([options = std::move(options), flag] {
    return compareOnWorker(options); // `flag` lives as long as the worker needs it
  }));
  summary_->setText(tr("Comparing with %1\u2026").arg(reference_->currentText()));
  setBusy(true);
  return true;
}

void NumericsPanel::cancel() {
  if (!current_)
    return;
  if (const auto flag = cancelFlags_.find(current_); flag != cancelFlags_.end())
    flag->second->store(true); // the engine stops at its next check
  current_ = nullptr;          // its result is dropped when it arrives
  summary_->setText(tr("Cancelled."));
  setBusy(false);
}

void NumericsPanel::onFinished(QFutureWatcher<api::CompareResult>* watcher) {
  watchers_.erase(std::remove(watchers_.begin(), watchers_.end(), watcher), watchers_.end());
  cancelFlags_.erase(watcher);
  watcher->deleteLater();
  if (watcher != current_)
    return;
  current_ = nullptr;
  setBusy(false);
  const api::CompareResult result = watcher->result();
  if (!result.ok()) {
    const QString message = result.failure ? qs(result.failure->message) : tr("no result");
    summary_->setText(tr("<b>The comparison failed:</b> %1").arg(message.toHtmlEscaped()));
    emit failed(message);
    return;
  }
  showReport(result.report);
  emit finished();
}

void NumericsPanel::showReport(std::shared_ptr<const api::CompareReport> report) {
  report_ = std::move(report);
  model_->setReport(report_);
  latheStats_->setUnavailable(tr("Lathe"), tr("Select a value"));
  referenceStats_->setUnavailable(tr("Reference"), tr("Select a value"));
  if (!report_) {
    summary_->setText(tr("Compare the model with a reference to see its values here."));
    return;
  }
  const api::CompareReport& r = *report_;
  QString text = tr("%1 values: %2 match, %3 diverge, %4 not kept, %5 not evaluated, %6 not in "
                    "reference (rtol %7, atol %8).")
                     .arg(r.values.size())
                     .arg(r.matched)
                     .arg(r.diverged)
                     .arg(r.notKept)
                     .arg(r.notEvaluated)
                     .arg(r.notInReference)
                     .arg(r.rtol)
                     .arg(r.atol);
  if (r.firstDivergent >= 0) {
    const auto& v = r.values[static_cast<std::size_t>(r.firstDivergent)];
    text +=
        QStringLiteral(" <b>%1</b>")
            .arg(tr("First divergent node: %1 (%2).").arg(qs(v.node), qs(v.op)).toHtmlEscaped());
  }
  if (!r.referenceStoppedNode.empty())
    text += QStringLiteral("<br><b>%1</b>")
                .arg(tr("The reference stopped at %1 (%2): %3")
                         .arg(qs(r.referenceStoppedNode), qs(r.referenceStoppedOp),
                              qs(r.referenceStopReason))
                         .toHtmlEscaped());
  summary_->setText(text);
  // Long node and value names elide in the middle rather than push the errors out of view.
  table_->resizeColumnsToContents();
  for (int c = 0; c < model_->columnCount(); ++c)
    table_->setColumnWidth(c, std::min(table_->columnWidth(c), 200));
  if (r.firstDivergent >= 0)
    selectValue(r.firstDivergent);
}

bool NumericsPanel::selectValue(int index) {
  if (!model_->comparison(index))
    return false;
  table_->setCurrentIndex(model_->index(index, 0));
  table_->scrollTo(model_->index(index, 0), QAbstractItemView::PositionAtCenter);
  return true;
}

int NumericsPanel::selectedValue() const {
  return table_->currentIndex().isValid() ? table_->currentIndex().row() : -1;
}

QString NumericsPanel::summaryText() const {
  return summary_->text();
}

void NumericsPanel::showSelected() {
  const api::ValueComparison* v = model_->comparison(selectedValue());
  if (!v)
    return;
  const auto show = [v](views::WeightStatsView* view, const api::ConstantStats& stats,
                        const QString& side) {
    if (stats.count == 0) {
      view->setUnavailable(side, v->note.empty() ? qs(v->status) : qs(v->note));
      return;
    }
    api::ConstantStats named = stats; // the value's name is in the table: keep the title short
    named.name = side.toStdString();
    view->setStats(named);
  };
  show(latheStats_, v->latheStats, tr("Lathe"));
  show(referenceStats_, v->referenceStats, tr("Reference"));
  emit nodeActivated(qs(v->node));
}

} // namespace lathe::workbench
