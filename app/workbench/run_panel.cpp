#include "app/workbench/run_panel.h"

#include "app/workbench/input_shapes_table.h"
#include "views/common/table_style.h"
#include "views/models/run_models.h"
#include "views/profile/latency_plot.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QThread>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace lathe::workbench {
namespace {

enum InputSource { Random, Zeros, Ones, Npz };

// "1 thread", "4 threads".
QString countOf(int n, const QString& one, const QString& many) {
  return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

QString ms(double value) {
  return QString::number(value, 'f', value < 10 ? 3 : 2) + QStringLiteral(" ms");
}

QTableView* createTable(QWidget* parent, const QString& name) {
  auto* table = new QTableView(parent);
  table->setObjectName(name);
  views::styleListTable(table);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->horizontalHeader()->setStretchLastSection(true);
  return table;
}

} // namespace

RunPanel::RunPanel(QWidget* parent)
    : QWidget(parent), inputs_(new QComboBox(this)), npzPath_(new QLineEdit(this)),
      shapes_(new InputShapesTable(this)), browseNpz_(new QToolButton(this)),
      threads_(new QSpinBox(this)), repeat_(new QSpinBox(this)),
      profile_(new QCheckBox(tr("&Profile kernels and threads"), this)),
      runButton_(new QPushButton(tr("Run"), this)),
      cancelButton_(new QPushButton(tr("Cancel"), this)), progress_(new QProgressBar(this)),
      stage_(new QLabel(this)), tabs_(new QTabWidget(this)), stats_(new QLabel(this)),
      top_(new QLabel(this)), outputsTable_(createTable(this, QStringLiteral("runOutputs"))),
      outputs_(new views::RunOutputsModel(this)), latency_(new views::LatencyPlot(this)),
      pinButton_(new QPushButton(tr("Pin Run"), this)),
      exportButton_(new QPushButton(tr("Export CSV\u2026"), this)),
      compareSummary_(new QLabel(this)),
      comparisonTable_(createTable(this, QStringLiteral("comparisonTable"))),
      comparison_(new views::RunComparisonModel(this)) {
  setObjectName(QStringLiteral("runPanel"));
  inputs_->setObjectName(QStringLiteral("runInputs"));
  inputs_->addItems({tr("Random"), tr("Zeros"), tr("Ones"), tr("From .npz file")});
  inputs_->setToolTip(
      tr("Values for the model's inputs (random: a fixed seed, the same every run)"));
  npzPath_->setObjectName(QStringLiteral("runNpzPath"));
  npzPath_->setPlaceholderText(tr("inputs.npz (arrays named like the inputs)"));
  browseNpz_->setText(tr("\u2026"));
  browseNpz_->setToolTip(tr("Choose an .npz file"));
  connect(browseNpz_, &QToolButton::clicked, this, &RunPanel::chooseNpz);
  const auto showNpz = [this] {
    const bool npz = inputs_->currentIndex() == Npz;
    npzPath_->setVisible(npz);
    browseNpz_->setVisible(npz);
    shapes_->setInputFile(npz ? npzPath_->text() : QString());
  };
  connect(inputs_, &QComboBox::currentIndexChanged, this, showNpz);
  connect(npzPath_, &QLineEdit::textChanged, this, showNpz);
  connect(shapes_, &InputShapesTable::changed, this, [this] {
    updateButtons();
    emit shapesChanged();
  });

  threads_->setObjectName(QStringLiteral("runThreads"));
  threads_->setRange(0, std::max(64, QThread::idealThreadCount() * 2));
  threads_->setSpecialValueText(tr("all cores (%1)").arg(QThread::idealThreadCount()));
  threads_->setToolTip(tr("Executor threads; changing it recompiles before the run"));
  repeat_->setObjectName(QStringLiteral("runRepeat"));
  repeat_->setRange(1, 100000);
  repeat_->setValue(20);
  repeat_->setSuffix(tr(" runs"));
  repeat_->setToolTip(tr("Timed runs, after one warm-up run"));
  profile_->setObjectName(QStringLiteral("runProfile"));
  profile_->setToolTip(tr("Record every kernel call and parallel chunk (the Profile panel)"));

  runButton_->setObjectName(QStringLiteral("runButton"));
  runButton_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  runButton_->setToolTip(tr("Run the model (F5)"));
  runButton_->setDefault(true);
  connect(runButton_, &QPushButton::clicked, this, &RunPanel::runRequested);
  cancelButton_->setObjectName(QStringLiteral("cancelRun"));
  connect(cancelButton_, &QPushButton::clicked, this, &RunPanel::cancelRequested);
  pinButton_->setObjectName(QStringLiteral("pinRun"));
  pinButton_->setCheckable(true);
  pinButton_->setToolTip(tr("Keep this run as the baseline the next runs are compared with"));
  connect(pinButton_, &QPushButton::clicked, this, [this](bool checked) {
    if (checked)
      pin();
    else
      unpin();
  });
  progress_->setObjectName(QStringLiteral("runProgress"));
  progress_->setTextVisible(false);
  progress_->setMaximumHeight(progress_->fontMetrics().height());
  stage_->setObjectName(QStringLiteral("runStage"));
  stage_->setForegroundRole(QPalette::PlaceholderText);

  auto* form = new QGridLayout;
  form->setContentsMargins(0, 0, 0, 0);
  form->setHorizontalSpacing(8);
  form->addWidget(new QLabel(tr("Inputs:"), this), 0, 0);
  form->addWidget(inputs_, 0, 1);
  auto* npzRow = new QHBoxLayout;
  npzRow->setContentsMargins(0, 0, 0, 0);
  npzRow->addWidget(npzPath_, 1);
  npzRow->addWidget(browseNpz_);
  form->addLayout(npzRow, 1, 1);
  form->addWidget(shapes_, 2, 0, 1, 2);
  form->addWidget(new QLabel(tr("Threads, repeats:"), this), 3, 0);
  auto* counts = new QHBoxLayout;
  counts->setContentsMargins(0, 0, 0, 0);
  counts->addWidget(threads_, 3);
  counts->addWidget(repeat_, 2);
  form->addLayout(counts, 3, 1);
  form->addWidget(profile_, 4, 1);
  form->setColumnStretch(1, 1);
  repeat_->setPrefix(tr("\u00d7 "));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(runButton_);
  buttons->addWidget(cancelButton_);
  buttons->addStretch(1);
  buttons->addWidget(pinButton_);
  auto* status = new QHBoxLayout;
  status->addWidget(stage_, 1);
  status->addWidget(progress_);

  stats_->setObjectName(QStringLiteral("runStats"));
  stats_->setWordWrap(true);
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stats_->setText(tr("No run yet. Press Run (F5)."));
  outputsTable_->setModel(outputs_);
  auto* results = new QWidget(this);
  auto* resultsLayout = new QVBoxLayout(results);
  resultsLayout->setContentsMargins(4, 4, 4, 4);
  resultsLayout->addWidget(stats_);
  resultsLayout->addWidget(latency_, 1);
  resultsLayout->addWidget(outputsTable_);
  resultsLayout->addWidget(top_);
  latency_->setMinimumHeight(120);
  outputsTable_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
  outputsTable_->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  top_->setObjectName(QStringLiteral("runTopClasses"));
  top_->setWordWrap(true);
  top_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* sorted = new QSortFilterProxyModel(this);
  sorted->setSourceModel(comparison_);
  sorted->setSortRole(views::RunComparisonModel::SortRole);
  comparisonTable_->setModel(sorted);
  comparisonTable_->setSortingEnabled(true);
  comparisonTable_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  compareSummary_->setObjectName(QStringLiteral("compareSummary"));
  compareSummary_->setWordWrap(true);
  compareSummary_->setTextFormat(Qt::RichText);
  exportButton_->setObjectName(QStringLiteral("exportComparison"));
  exportButton_->setToolTip(tr("Write the comparison table as CSV"));
  connect(exportButton_, &QPushButton::clicked, this, &RunPanel::chooseExportFile);
  auto* compare = new QWidget(this);
  auto* compareLayout = new QVBoxLayout(compare);
  compareLayout->setContentsMargins(4, 4, 4, 4);
  compareLayout->addWidget(compareSummary_);
  compareLayout->addWidget(comparisonTable_, 1);
  auto* exportRow = new QHBoxLayout;
  exportRow->addStretch(1);
  exportRow->addWidget(exportButton_);
  compareLayout->addLayout(exportRow);

  tabs_->setObjectName(QStringLiteral("runTabs"));
  tabs_->setDocumentMode(true);
  tabs_->addTab(results, tr("Results"));
  tabs_->addTab(compare, tr("Compare"));

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 0);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addLayout(status);
  layout->addWidget(tabs_, 1);

  showNpz();
  updateComparison();
  setRunning(false);
}

RunSettings RunPanel::settings() const {
  RunSettings s;
  switch (inputs_->currentIndex()) {
  case Zeros:
    s.fill = "zeros";
    break;
  case Ones:
    s.fill = "ones";
    break;
  case Npz:
    s.inputsNpz = npzPath_->text().trimmed().toStdString();
    break;
  default:
    s.fill = "random";
    break;
  }
  s.inputShapes = shapes_->givenShapes();
  s.symbolicInputs = shapes_->hasSymbolicInputs();
  s.repeat = repeat_->value();
  s.profile = profile_->isChecked();
  return s;
}

void RunPanel::setModelInputs(const std::vector<api::TensorSummary>& inputs) {
  shapes_->setModelInputs(inputs);
}

bool RunPanel::hasSymbolicInputs() const {
  return shapes_->hasSymbolicInputs();
}

QString RunPanel::shapeProblem() const {
  return shapes_->problem();
}

int RunPanel::threads() const {
  return threads_->value();
}

void RunPanel::setThreads(int threads) {
  threads_->setValue(threads);
}

void RunPanel::setRepeat(int repeat) {
  repeat_->setValue(repeat);
}

void RunPanel::setProfile(bool profile) {
  profile_->setChecked(profile);
}

void RunPanel::setFill(const QString& fill) {
  inputs_->setCurrentIndex(fill == QLatin1String("zeros")  ? Zeros
                           : fill == QLatin1String("ones") ? Ones
                                                           : Random);
}

void RunPanel::resetInputs() {
  npzPath_->clear();
  inputs_->setCurrentIndex(Random);
}

void RunPanel::setInputsNpz(const QString& path) {
  inputs_->setCurrentIndex(Npz);
  npzPath_->setText(path);
}

void RunPanel::setCanRun(bool canRun) {
  canRun_ = canRun;
  updateButtons();
}

void RunPanel::setRunning(bool running) {
  running_ = running;
  progress_->setVisible(running);
  if (running) {
    progress_->setRange(0, 0);
    stage_->setText(tr("Running\u2026"));
  } else {
    stage_->clear();
  }
  updateButtons();
}

void RunPanel::setProgress(int percent, const QString& stage) {
  if (percent < 0) {
    progress_->setRange(0, 0);
  } else {
    progress_->setRange(0, 100);
    progress_->setValue(percent);
  }
  stage_->setText(stage);
}

void RunPanel::updateButtons() {
  runButton_->setEnabled(canRun_ && !running_ && shapes_->problem().isEmpty());
  cancelButton_->setEnabled(running_);
  pinButton_->setEnabled(report_ != nullptr || pinned_ != nullptr);
  exportButton_->setEnabled(comparison_->rowCount() > 0);
}

void RunPanel::showReport(std::shared_ptr<const api::RunReport> report) {
  report_ = std::move(report);
  if (!report_)
    pinned_ = nullptr;
  outputs_->setReport(report_);
  if (!report_) {
    stats_->setText(tr("No run yet. Press Run (F5)."));
  } else {
    const api::RunReport& r = *report_;
    // Run for another target: how it ran says what its time means, if it has one.
    const QString runner = r.runner.empty()
                               ? QString()
                               : tr("<br>%1: %2")
                                     .arg(QString::fromStdString(r.target).toHtmlEscaped(),
                                          QString::fromStdString(r.runner).toHtmlEscaped());
    if (!r.timed) {
      stats_->setText(tr("<b>not timed</b>") + runner);
    } else if (!r.runner.empty()) {
      stats_->setText(
          tr("<b>median %1</b>, as the exported program timed itself").arg(ms(r.medianMs)) +
          runner);
    } else {
      const double p10 = views::percentile(r.latenciesMs, 10);
      const double p90 = views::percentile(r.latenciesMs, 90);
      stats_->setText(
          tr("<b>median %1</b> (p10 %2, p90 %3); mean %4 \u00b1 %5, min %6, max %7 \u00b7 %8 on "
             "%9%10")
              .arg(ms(r.medianMs), ms(p10), ms(p90), ms(r.meanMs), ms(r.stdMs), ms(r.minMs),
                   ms(r.maxMs))
              .arg(countOf(static_cast<int>(r.latenciesMs.size()), tr("run"), tr("runs")))
              .arg(countOf(r.threads, tr("thread"), tr("threads")))
              .arg(r.profile ? tr(", profiled") : QString()));
    }
  }
  // The top-5 of classifier-like outputs (those with a top list) in full below the table.
  QStringList tops;
  if (report_) {
    for (const api::OutputSummary& output : report_->outputs) {
      if (!output.top.empty())
        tops << tr("<b>%1</b> top %2 (class: score): %3")
                    .arg(QString::fromStdString(output.name).toHtmlEscaped())
                    .arg(output.top.size())
                    .arg(views::RunOutputsModel::topText(output).toHtmlEscaped());
    }
  }
  top_->setText(tops.join(QStringLiteral("<br>")));
  top_->setVisible(!tops.isEmpty());
  // A header and up to three outputs; the plot takes the rest of the height.
  const int shownRows = std::clamp(outputs_->rowCount(), 1, 3);
  outputsTable_->setMaximumHeight(
      outputsTable_->horizontalHeader()->sizeHint().height() +
      shownRows * outputsTable_->verticalHeader()->defaultSectionSize() +
      2 * outputsTable_->frameWidth() + outputsTable_->horizontalScrollBar()->sizeHint().height());
  for (int c = 0; c < views::RunOutputsModel::TopColumn; ++c)
    outputsTable_->resizeColumnToContents(c);
  updateComparison();
}

bool RunPanel::pin() {
  if (!report_) {
    pinButton_->setChecked(false);
    return false;
  }
  pinned_ = report_;
  pinButton_->setChecked(true);
  pinButton_->setText(tr("Pinned"));
  updateComparison();
  return true;
}

void RunPanel::setPinned(std::shared_ptr<const api::RunReport> run) {
  if (!run)
    return unpin();
  pinned_ = std::move(run);
  pinButton_->setChecked(true);
  pinButton_->setText(tr("Pinned"));
  updateComparison();
}

void RunPanel::unpin() {
  pinned_ = nullptr;
  pinButton_->setChecked(false);
  pinButton_->setText(tr("Pin Run"));
  updateComparison();
}

void RunPanel::showComparison() {
  tabs_->setCurrentIndex(1);
}

QString RunPanel::statsText() const {
  return stats_->text();
}

void RunPanel::updateComparison() {
  const bool comparing = pinned_ && report_ && pinned_ != report_;
  latency_->setLatencies(report_ ? report_->latenciesMs : std::vector<double>(),
                         comparing ? pinned_->latenciesMs : std::vector<double>());
  comparison_->setRows(comparing ? views::compareKernels(*pinned_, *report_)
                                 : std::vector<views::KernelComparison>());
  if (!pinned_) {
    compareSummary_->setText(
        tr("Pin a run, change threads, inputs or the schedule, and run again: the kernels of "
           "both runs appear here side by side."));
  } else if (!comparing) {
    compareSummary_->setText(tr("Pinned: median %1 over %2 runs. Run again to compare.")
                                 .arg(ms(pinned_->medianMs))
                                 .arg(pinned_->latenciesMs.size()));
  } else {
    const double speedup = report_->medianMs > 0 ? pinned_->medianMs / report_->medianMs : 0;
    // Always a factor of at least 1: "1.28x slower", never "0.78x slower".
    const bool faster = speedup >= 1;
    QString text = tr("Median <b>%1</b> now vs %2 pinned: <b>%3\u00d7</b> %4")
                       .arg(ms(report_->medianMs), ms(pinned_->medianMs))
                       .arg(faster || speedup <= 0 ? speedup : 1 / speedup, 0, 'f', 2)
                       .arg(faster ? tr("faster") : tr("slower"));
    if (comparison_->rowCount() == 0)
      text += tr("<br>Profile both runs to compare their kernels.");
    compareSummary_->setText(text);
  }
  comparisonTable_->resizeColumnsToContents();
  updateButtons();
}

bool RunPanel::exportComparison(const QString& path) {
  QFile file(path);
  const std::string csv = views::comparisonCsv(comparison_->rows());
  if (comparison_->rowCount() == 0 || !file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      file.write(csv.data(), static_cast<qint64>(csv.size())) != static_cast<qint64>(csv.size())) {
    compareSummary_->setText(
        tr("Cannot write %1: %2")
            .arg(QFileInfo(path).fileName().toHtmlEscaped(),
                 comparison_->rowCount() == 0 ? tr("nothing to compare") : file.errorString()));
    return false;
  }
  return true;
}

void RunPanel::chooseNpz() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Inputs"), npzPath_->text(),
                                                    tr("NumPy archives (*.npz);;All files (*)"));
  if (!path.isEmpty())
    npzPath_->setText(path);
}

void RunPanel::chooseExportFile() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export Comparison"), QStringLiteral("comparison.csv"),
                                   tr("CSV files (*.csv);;All files (*)"));
  if (!path.isEmpty())
    exportComparison(path);
}

} // namespace lathe::workbench
