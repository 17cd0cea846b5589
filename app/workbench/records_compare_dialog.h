#pragma once
// Two tuning records files side by side (the Tune dock's Compare…): per kernel workload and
// machine, the default, each file's best, the winner and the speed-up of B over A; the
// selected row's two best traces diffed below.

#include "engine/api/tuning.h"

#include <QDialog>

class QLabel;
class QStandardItemModel;
class QTableView;

namespace lathe::views {
class IrDiffView;
} // namespace lathe::views

namespace lathe::workbench {

class RecordsCompareDialog : public QDialog {
  Q_OBJECT

public:
  RecordsCompareDialog(const QString& pathA, const QString& pathB,
                       api::RecordsComparison comparison, QWidget* parent = nullptr);

  QTableView* table() const { return table_; }
  views::IrDiffView* diffView() const { return diff_; }
  QLabel* summary() const { return summary_; }
  // Shows row `row`'s traces in the diff (what a click on the row does).
  void showRow(int row);

private:
  api::RecordsComparison comparison_;
  QLabel* summary_;
  QTableView* table_;
  QStandardItemModel* model_;
  views::IrDiffView* diff_;
};

} // namespace lathe::workbench
