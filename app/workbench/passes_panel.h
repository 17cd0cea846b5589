#pragma once
// The "Passes" tab: the pipeline's passes with their times, and the IR after the selected one.

#include "engine/api/session.h"

#include <QWidget>
#include <memory>
#include <vector>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;

namespace lathe::views {
class PassListModel;
}

namespace lathe::workbench {

class PassesPanel : public QWidget {
  Q_OBJECT

public:
  explicit PassesPanel(QWidget* parent = nullptr);

  void setPasses(std::shared_ptr<const std::vector<api::PassRecord>> passes);
  // `pass` is the position in the pipeline; false if it does not exist or is filtered out.
  bool selectPass(int pass);
  QSplitter* splitter() const { return splitter_; }

signals:
  void passSelected(int pass); // -1 when the selection is cleared

private:
  void showPass(int pass);
  void updateSummary();

  QCheckBox* hideUnchanged_;
  QLabel* summary_;
  QTableView* table_;
  QLabel* irTitle_;
  QPlainTextEdit* irView_;
  QSplitter* splitter_;
  views::PassListModel* model_;
  QSortFilterProxyModel* proxy_;
};

} // namespace lathe::workbench
