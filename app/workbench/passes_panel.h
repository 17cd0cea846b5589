#pragma once
// The "Passes" tab: the pipeline's passes with their times, and for the selected one the IR
// before and after it side by side with the line diff (or the IR after it alone).

#include "engine/api/session.h"
#include "views/diff/changed_nodes.h"

#include <QWidget>
#include <memory>
#include <vector>

class QCheckBox;
class QLabel;
class QSortFilterProxyModel;
class QSplitter;
class QStackedWidget;
class QTableView;
class QToolButton;

namespace lathe::views {
class CodeEditor;
class IrDiffView;
class PassListModel;
} // namespace lathe::views

namespace lathe::workbench {

class ExplanationPopup;

class PassesPanel : public QWidget {
  Q_OBJECT

public:
  explicit PassesPanel(QWidget* parent = nullptr);

  // `imported` is the graph before the first pass; without it the first pass's node
  // changes are unknown (nodeChanges(0) reports none).
  void setPasses(std::shared_ptr<const std::vector<api::PassRecord>> passes,
                 std::shared_ptr<const api::GraphSnapshot> imported = nullptr);
  // `pass` is the position in the pipeline; false if it does not exist or is filtered out.
  bool selectPass(int pass);
  QSplitter* splitter() const { return splitter_; }
  views::IrDiffView* diffView() const { return diff_; }
  // Nodes of the pass's graphAfter that are new or changed, and how many went away.
  views::NodeChanges nodeChanges(int pass) const;
  // Side by side diff (the default) or the IR after the pass alone.
  void setShowDiff(bool diff);
  // Why? opens the selected pass's explanation (docs/explain) beside the panel; false without
  // a selected pass that has one. The open window follows the selection.
  bool explainPass();
  ExplanationPopup* explanation() const { return popup_; }

signals:
  void passSelected(int pass); // -1 when the selection is cleared

protected:
  void resizeEvent(QResizeEvent* event) override;

private:
  void showPass(int pass);
  void showIr(int pass);
  void updateSummary();
  void updateDescription();

  QCheckBox* hideUnchanged_;
  QLabel* summary_;
  QTableView* table_;
  QCheckBox* showDiff_;
  QLabel* irTitle_;
  QLabel* description_;
  QToolButton* explain_;
  ExplanationPopup* popup_ = nullptr;
  QStackedWidget* irStack_;
  views::IrDiffView* diff_;
  views::CodeEditor* irView_;
  QSplitter* splitter_;
  views::PassListModel* model_;
  QSortFilterProxyModel* proxy_;
  std::shared_ptr<const api::GraphSnapshot> imported_;
  int shown_ = -1;
};

} // namespace lathe::workbench
