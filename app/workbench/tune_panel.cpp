#include "app/workbench/tune_panel.h"

#include "app/workbench/records_compare_dialog.h"
#include "app/workbench/tune_cells.h"
#include "views/common/table_style.h"
#include "views/tune/convergence_plot.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QResizeEvent>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <algorithm>

namespace lathe::workbench {
namespace {} // namespace

TunePanel::TunePanel(QWidget* parent)
    : QWidget(parent), records_(new QLineEdit(this)), trials_(new QSpinBox(this)),
      threads_(new QSpinBox(this)), strategy_(new QComboBox(this)),
      start_(new QPushButton(tr("Start"), this)), stop_(new QPushButton(tr("Stop"), this)),
      pause_(new QPushButton(tr("Pause"), this)),
      compare_(new QPushButton(tr("Compare\u2026"), this)), status_(new QLabel(this)),
      plot_(new views::ConvergencePlot(this)), table_(new QTableView(this)),
      model_(new QStandardItemModel(this)) {
  setObjectName(QStringLiteral("tunePanel"));
  records_->setObjectName(QStringLiteral("tuneRecords"));
  records_->setPlaceholderText(tr("records file (JSON lines), appended to"));
  auto* browse = new QPushButton(tr("Browse\u2026"), this);
  connect(browse, &QPushButton::clicked, this, &TunePanel::chooseRecords);
  auto* recordsRow = new QHBoxLayout;
  recordsRow->addWidget(records_, 1);
  recordsRow->addWidget(browse);

  trials_->setRange(1, 100000);
  trials_->setValue(64);
  trials_->setPrefix(tr("trials: "));
  threads_->setRange(0, std::max(64, QThread::idealThreadCount() * 2));
  threads_->setSpecialValueText(tr("all cores (%1)").arg(QThread::idealThreadCount()));
  threads_->setPrefix(tr("threads: "));
  threads_->setValue(0);
  threads_->setToolTip(tr("Records apply to compiles and runs for this many threads"));
  strategy_->addItem(tr("Evolutionary (cost model)"), QStringLiteral("evolutionary"));
  strategy_->addItem(tr("Random"), QStringLiteral("random"));
  auto* settingsRow = new QHBoxLayout;
  settingsRow->addWidget(trials_);
  settingsRow->addWidget(threads_);
  settingsRow->addWidget(strategy_, 1);

  start_->setObjectName(QStringLiteral("tuneStart"));
  stop_->setObjectName(QStringLiteral("tuneStop"));
  start_->setDefault(true);
  connect(start_, &QPushButton::clicked, this, &TunePanel::startRequested);
  connect(stop_, &QPushButton::clicked, this, &TunePanel::stopRequested);
  pause_->setObjectName(QStringLiteral("tunePause"));
  pause_->setToolTip(tr("Hold the search after the candidate in flight; Resume goes on"));
  connect(pause_, &QPushButton::clicked, this, [this] { setPaused(!paused_); });
  compare_->setObjectName(QStringLiteral("tuneCompare"));
  compare_->setToolTip(tr("Put another records file beside this one: each kernel's winner, "
                          "speed-up and the two traces"));
  connect(compare_, &QPushButton::clicked, this, [this] {
    const QString other = QFileDialog::getOpenFileName(this, tr("Compare With Records"),
                                                       QFileInfo(recordsPath()).path(),
                                                       tr("Tuning records (*.jsonl *.json)"));
    if (!other.isEmpty())
      compareWith(other);
  });
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(pause_);
  buttons->addWidget(stop_);
  buttons->addWidget(compare_);
  buttons->addWidget(status_, 1);
  status_->setObjectName(QStringLiteral("tuneStatus"));
  status_->setWordWrap(true);

  auto* form = new QFormLayout;
  form->addRow(tr("Records:"), recordsRow);
  form->addRow(tr("Search:"), settingsRow);

  model_->setHorizontalHeaderLabels(
      {tr("Kernel"), tr("Calls"), tr("Default"), tr("Best"), tr("Speed-up"), tr("Trials")});
  table_->setObjectName(QStringLiteral("tuneTable"));
  table_->setModel(model_);
  views::styleListTable(table_);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  for (int c = 1; c < model_->columnCount(); ++c)
    table_->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
    if (!report_ || index.row() >= static_cast<int>(report_->workloads.size()))
      return;
    const api::TunedWorkload& w = report_->workloads[static_cast<std::size_t>(index.row())];
    emit kernelActivated(QString::fromStdString(w.kernels.front()),
                         QString::fromStdString(w.bestTrace));
  });

  splitter_ = new QSplitter(Qt::Vertical, this);
  splitter_->addWidget(plot_);
  splitter_->addWidget(table_);
  splitter_->setStretchFactor(0, 2);
  splitter_->setStretchFactor(1, 3);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(splitter_, 1);
  reset();
}

api::TuneOptions TunePanel::options() const {
  api::TuneOptions o;
  o.recordsPath = records_->text().trimmed().toStdString();
  o.trials = trials_->value();
  o.threads = threads_->value();
  o.strategy = strategy_->currentData().toString().toStdString();
  return o;
}

void TunePanel::setRecordsPath(const QString& path) {
  records_->setText(path);
  updateButtons();
}

QString TunePanel::recordsPath() const {
  return records_->text().trimmed();
}

void TunePanel::setTrials(int trials) {
  trials_->setValue(trials);
}

void TunePanel::setThreads(int threads) {
  threads_->setValue(threads);
}

void TunePanel::chooseRecords() {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Tuning Records"), records_->text(), tr("Tuning records (*.jsonl *.json)"), nullptr,
      QFileDialog::DontConfirmOverwrite); // appended to, never overwritten
  if (!path.isEmpty())
    setRecordsPath(path);
}

void TunePanel::setCanTune(bool canTune, const QString& why) {
  canTune_ = canTune;
  if (!tuning_)
    status_->setText(canTune ? QString() : why);
  updateButtons();
}

void TunePanel::setPaused(bool paused) {
  if (!tuning_ || paused == paused_)
    return;
  paused_ = paused;
  pause_->setText(paused ? tr("Resume") : tr("Pause"));
  if (paused)
    status_->setText(tr("Paused (the candidate in flight finishes first). Resume goes on; Stop "
                        "keeps every record."));
  emit pauseRequested(paused);
}

RecordsCompareDialog* TunePanel::compareWith(const QString& other) {
  api::Failure failure;
  const auto comparison = api::compareRecords(QFile::encodeName(recordsPath()).toStdString(),
                                              QFile::encodeName(other).toStdString(), &failure);
  if (!comparison) {
    status_->setText(tr("<b>Cannot compare:</b> %1")
                         .arg(QString::fromStdString(failure.message).toHtmlEscaped()));
    return nullptr;
  }
  auto* dialog = new RecordsCompareDialog(recordsPath(), other, *comparison, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  return dialog;
}

void TunePanel::setTuning(bool tuning) {
  tuning_ = tuning;
  if (!tuning && paused_) {
    paused_ = false;
    pause_->setText(tr("Pause"));
  }
  if (tuning) {
    plot_->clear();
    status_->setText(tr("Compiling the model, then measuring candidates\u2026"));
  }
  updateButtons();
}

void TunePanel::updateButtons() {
  start_->setEnabled(canTune_ && !tuning_ && !records_->text().trimmed().isEmpty());
  stop_->setEnabled(tuning_);
  pause_->setEnabled(tuning_);
  compare_->setEnabled(!records_->text().trimmed().isEmpty());
  records_->setEnabled(!tuning_);
  trials_->setEnabled(!tuning_);
  threads_->setEnabled(!tuning_);
  strategy_->setEnabled(!tuning_);
}

void TunePanel::addProgress(const api::TuneProgressSummary& p) {
  plot_->addPoint(p.trials, p.bestModelMs, p.defaultModelMs);
  status_->setText((paused_ ? tr("Paused after round %1: %2 trials (%3 errors), %4 s \u00b7 %5 "
                                 "%6 (default %7)")
                            : tr("Round %1: %2 trials (%3 errors), %4 s \u00b7 %5 %6 (default %7)"))
                       .arg(p.round)
                       .arg(p.trials)
                       .arg(p.errors)
                       .arg(p.seconds, 0, 'f', 0)
                       .arg(QString::fromStdString(p.kernel), tuneMsText(p.kernelBestMs),
                            tuneMsText(p.kernelDefaultMs)));
}

void TunePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const Qt::Orientation wanted = width() > 2 * height() ? Qt::Horizontal : Qt::Vertical;
  if (splitter_->orientation() != wanted)
    splitter_->setOrientation(wanted);
}

void TunePanel::showReport(std::shared_ptr<const api::TuneReport> report) {
  report_ = std::move(report);
  model_->removeRows(0, model_->rowCount());
  if (!report_)
    return;
  const api::TuneReport& r = *report_;
  double defaults = 0, best = 0;
  for (const api::TunedWorkload& w : r.workloads) {
    // The best applies when it clearly beats the default timed next to it; the estimate
    // scales the default by what it saves there.
    const bool better = api::clearWin(w.bestMs, w.bestDefaultMs);
    defaults += w.defaultMs * w.calls;
    best += (better ? w.defaultMs * w.bestMs / w.bestDefaultMs : w.defaultMs) * w.calls;
    QString name = QString::fromStdString(w.kernels.front());
    if (w.kernels.size() > 1)
      name += tr(" (+%1 alike)").arg(w.kernels.size() - 1);
    auto* kernel = tuneCell(name, Qt::AlignLeft | Qt::AlignVCenter);
    kernel->setToolTip(w.bestTrace.empty() ? tr("The default schedule is the best found")
                                           : QString::fromStdString(w.bestTrace).trimmed());
    model_->appendRow(
        {kernel, tuneCell(QString::number(w.calls)),
         // Where a best applies: the default it was timed next to, which its speed-up is of.
         tuneCell(tuneMsText(better ? w.bestDefaultMs : w.defaultMs)),
         tuneCell(better ? tuneMsText(w.bestMs) : tr("default")),
         tuneCell(better ? QStringLiteral("%1\u00d7").arg(w.bestDefaultMs / w.bestMs, 0, 'f', 2)
                         : QStringLiteral("\u2013")),
         tuneCell(QString::number(w.trials))});
  }
  status_->setText(
      tr("%1 %2 trials (%3 errors) in %4 s on %5, %6 thread(s): estimated %7, default %8")
          .arg(r.cancelled ? tr("Stopped after") : tr("Done:"))
          .arg(r.trials)
          .arg(r.errors)
          .arg(r.seconds, 0, 'f', 0)
          .arg(QString::fromStdString(r.machine.cpu))
          .arg(r.machine.threads)
          .arg(tuneMsText(best), tuneMsText(defaults)) +
      // The records where they matter: the whole model, defaults against records, in turns.
      // With no record applied the two compiles are the same code: their ratio is noise.
      (r.modelCheck && r.modelCheck->tunedKernels == 0
           ? tr(". In the model (%1 runs each): %2; no record beat its default by 3 % or more, "
                "so it compiles with its defaults")
                 .arg(r.modelCheck->runs)
                 .arg(tuneMsText(r.modelCheck->defaultMs))
       : r.modelCheck
           ? tr(". In the model (%1 runs each): %2 with the defaults, %3 with the "
                "records (%4\u00d7), %5 kernel(s) tuned")
                     .arg(r.modelCheck->runs)
                     .arg(tuneMsText(r.modelCheck->defaultMs))
                     .arg(tuneMsText(r.modelCheck->tunedMs))
                     .arg(r.modelCheck->tunedMs > 0
                              ? r.modelCheck->defaultMs / r.modelCheck->tunedMs
                              : 0.0,
                          0, 'f', 2)
                     .arg(r.modelCheck->tunedKernels) +
                 (r.modelCheck->vetoes > 0
                      ? tr("; %1 record(s) were slower there and are vetoed, %2 next best "
                           "record(s) checked in their place, %3 workload(s) keep the default")
                            .arg(r.modelCheck->vetoes)
                            .arg(r.modelCheck->nextBests)
                            .arg(
                                std::count_if(r.workloads.begin(), r.workloads.end(),
                                              [](const api::TunedWorkload& w) { return w.vetoed; }))
                      : QString())
           : QString()));
}

void TunePanel::showFailure(const QString& message) {
  status_->setText(tr("<b>Tuning failed:</b> %1").arg(message.toHtmlEscaped()));
}

void TunePanel::reset() {
  report_.reset();
  model_->removeRows(0, model_->rowCount());
  plot_->clear();
  tuning_ = false;
  status_->setText(tr("Tune searches schedules for this model's kernels on this machine."));
  updateButtons();
}

QString TunePanel::statusText() const {
  return status_->text();
}

} // namespace lathe::workbench
