#include "app/workbench/records_compare_dialog.h"

#include "app/workbench/tune_cells.h"
#include "views/common/table_style.h"
#include "views/diff/ir_diff_view.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

namespace lathe::workbench {

RecordsCompareDialog::RecordsCompareDialog(const QString& pathA, const QString& pathB,
                                           api::RecordsComparison comparison, QWidget* parent)
    : QDialog(parent), comparison_(std::move(comparison)), summary_(new QLabel(this)),
      table_(new QTableView(this)), model_(new QStandardItemModel(this)),
      diff_(new views::IrDiffView(this)) {
  setObjectName(QStringLiteral("recordsCompare"));
  const QString a = QFileInfo(pathA).fileName(), b = QFileInfo(pathB).fileName();
  setWindowTitle(tr("Tuning records: %1 against %2").arg(a, b));
  model_->setHorizontalHeaderLabels({tr("Kernel"), tr("Machine"), tr("Default"), tr("A: %1").arg(a),
                                     tr("B: %1").arg(b), tr("Winner"), tr("B vs A")});
  int winsA = 0, winsB = 0;
  for (const api::RecordsComparison::Row& r : comparison_.rows) {
    // Each file's gain over the default timed next to its best; within 3 %: a tie, the
    // noise of one measurement.
    const char w = r.winner();
    const QString winner = w == 'A'   ? tr("A")
                           : w == 'B' ? tr("B")
                           : w == '=' ? tr("tie")
                           : w == 'a' ? tr("A only")
                                      : tr("B only");
    const QString ratio = r.speedupBvsA() > 0
                              ? QStringLiteral("%1\u00d7").arg(r.speedupBvsA(), 0, 'f', 2)
                              : QStringLiteral("\u2013");
    winsA += w == 'A';
    winsB += w == 'B';
    auto* kernel = tuneCell(QString::fromStdString(r.kernel), Qt::AlignLeft | Qt::AlignVCenter);
    kernel->setToolTip(tr("workload %1").arg(QString::fromStdString(r.workload)));
    model_->appendRow(
        {kernel,
         tuneCell(tr("%1, %2t").arg(QString::fromStdString(r.machine.cpu)).arg(r.machine.threads),
                  Qt::AlignLeft | Qt::AlignVCenter),
         tuneCell(tuneMsText(r.defaultMs)), tuneCell(tuneMsText(r.bestA)),
         tuneCell(tuneMsText(r.bestB)), tuneCell(winner, Qt::AlignCenter), tuneCell(ratio)});
  }
  summary_->setObjectName(QStringLiteral("recordsCompareSummary"));
  summary_->setWordWrap(true);
  summary_->setText(tr("%1 kernel workload(s): A (%2) wins %3, B (%4) wins %5, the rest tie "
                       "within 3 % or are in one file only. Pick a row to diff its two best "
                       "traces.")
                        .arg(comparison_.rows.size())
                        .arg(a)
                        .arg(winsA)
                        .arg(b)
                        .arg(winsB));
  table_->setObjectName(QStringLiteral("recordsCompareTable"));
  table_->setModel(model_);
  views::styleListTable(table_);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  for (int c = 1; c < model_->columnCount(); ++c)
    table_->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  connect(table_, &QTableView::clicked, this,
          [this](const QModelIndex& index) { showRow(index.row()); });
  diff_->setPlaceholderText(tr("Pick a kernel to diff the best trace of A (left) against B's"));
  diff_->setCaptions(tr("A: best trace in %1").arg(a), tr("B: best trace in %1").arg(b));

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(table_);
  splitter->addWidget(diff_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(splitter, 1);
  layout->addWidget(close);
  resize(980, 620);
  if (!comparison_.rows.empty()) {
    table_->selectRow(0);
    showRow(0);
  }
}

void RecordsCompareDialog::showRow(int row) {
  if (row < 0 || row >= static_cast<int>(comparison_.rows.size()))
    return;
  const api::RecordsComparison::Row& r = comparison_.rows[static_cast<std::size_t>(row)];
  const auto trace = [](const std::string& t, double best) {
    return best > 0 ? (t.empty() ? std::string("# the default trace\n") : t)
                    : std::string("# no record for this kernel\n");
  };
  diff_->setTexts(trace(r.traceA, r.bestA), trace(r.traceB, r.bestB));
}

} // namespace lathe::workbench
