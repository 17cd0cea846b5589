#pragma once
// Left-hand side of the window: the model tree with a search box above it.

#include "engine/api/session.h"

#include <QWidget>
#include <memory>

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

  void setSnapshot(std::shared_ptr<const api::GraphSnapshot> snapshot);
  // Makes `node` the current row, clearing the search if it hides the node.
  bool selectNode(int node);
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

  QLineEdit* search_;
  QTreeView* tree_;
  views::ModelTreeModel* model_;
  views::ModelTreeProxy* proxy_;
};

} // namespace lathe::workbench
