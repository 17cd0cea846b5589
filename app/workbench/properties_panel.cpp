#include "app/workbench/properties_panel.h"

#include "app/workbench/placeholder_label.h"
#include "views/common/padded_item_delegate.h"
#include "views/models/node_properties_model.h"

#include <QHeaderView>
#include <QLabel>
#include <QStackedWidget>
#include <QTreeView>
#include <QVBoxLayout>

namespace lathe::workbench {

using views::NodePropertiesModel;

PropertiesPanel::PropertiesPanel(QWidget* parent)
    : QWidget(parent), stack_(new QStackedWidget(this)), view_(new QTreeView(this)),
      model_(new NodePropertiesModel(this)) {
  view_->setObjectName(QStringLiteral("propertiesView"));
  view_->setModel(model_);
  view_->setItemDelegate(new views::PaddedItemDelegate(view_));
  view_->setRootIsDecorated(false);
  view_->setUniformRowHeights(true);
  view_->setAlternatingRowColors(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->setTextElideMode(Qt::ElideMiddle); // keeps both ends of long names and IR lines
  view_->header()->setStretchLastSection(true);
  view_->header()->resizeSection(NodePropertiesModel::PropertyColumn, 200);
  connect(model_, &QAbstractItemModel::modelReset, this, &PropertiesPanel::spanSectionRows);

  stack_->addWidget(createPlaceholderLabel(
      tr("Select a node in the model tree to see its op, inputs, outputs and attributes."), this));
  stack_->addWidget(view_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(stack_);
}

void PropertiesPanel::setNode(std::shared_ptr<const api::GraphSnapshot> graph, int node) {
  model_->setNode(std::move(graph), node);
  stack_->setCurrentIndex(model_->node() < 0 ? 0 : 1);
}

void PropertiesPanel::spanSectionRows() {
  for (int row = 0; row < model_->rowCount(); ++row) {
    const auto kind = static_cast<NodePropertiesModel::RowKind>(
        model_->index(row, 0).data(NodePropertiesModel::RowKindRole).toInt());
    view_->setFirstColumnSpanned(row, {}, kind == NodePropertiesModel::RowKind::Section);
  }
}

} // namespace lathe::workbench
