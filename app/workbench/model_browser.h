#pragma once
// Left-hand side of the window: the model tree with a search box above it.

#include "engine/api/session.h"

#include <QWidget>
#include <memory>

class QLabel;
class QLineEdit;
class QTreeView;

namespace lathe::views {
class ModelTreeModel;
class ModelTreeProxy;
} // namespace lathe::views

namespace lathe::workbench {

class ModelBrowser : public QWidget {
  Q_OBJECT

public:
  explicit ModelBrowser(QWidget* parent = nullptr);

  // `caption` says which graph the tree lists (the file's, the optimised one, a pass's).
  void setSnapshot(std::shared_ptr<const api::GraphSnapshot> snapshot,
                   const QString& caption = QString());
  const std::shared_ptr<const api::GraphSnapshot>& snapshot() const;
  // Makes `node` the current row, clearing the search if it hides the node (with
  // `clearSearchIfHidden`; without, a hidden node is not selected and false is returned).
  bool selectNode(int node, bool clearSearchIfHidden = true);
  void focusSearch();
  // Empties the search box (a different model: its names are not the last one's).
  void clearSearch();

signals:
  // The current row changed; -1 when it is not a node (section, kernel, value).
  void nodeSelected(int node);

private:
  void applySearch(const QString& text);
  void expandDefault();
  void fitColumns();

  QLabel* caption_;
  QLineEdit* search_;
  QTreeView* tree_;
  views::ModelTreeModel* model_;
  views::ModelTreeProxy* proxy_;
};

} // namespace lathe::workbench
