#pragma once
// The "Properties" tab: everything the snapshot knows about the selected node.

#include "engine/api/session.h"

#include <QWidget>
#include <memory>

class QStackedWidget;
class QTreeView;

namespace lathe::views {
class NodePropertiesModel;
}

namespace lathe::workbench {

class PropertiesPanel : public QWidget {
  Q_OBJECT

public:
  explicit PropertiesPanel(QWidget* parent = nullptr);

  // node -1 (or a null graph) shows a hint instead of an empty table.
  void setNode(std::shared_ptr<const api::GraphSnapshot> graph, int node);

private:
  void spanSectionRows();

  QStackedWidget* stack_;
  QTreeView* view_;
  views::NodePropertiesModel* model_;
};

} // namespace lathe::workbench
