#include "views/models/model_tree_proxy.h"

#include "views/models/model_tree_model.h"

namespace lathe::views {

ModelTreeProxy::ModelTreeProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setRecursiveFilteringEnabled(true);
  setAutoAcceptChildRows(true); // searching "fused_conv" should list the kernel's nodes
  setFilterCaseSensitivity(Qt::CaseInsensitive);
  setFilterKeyColumn(-1);
  setSortRole(ModelTreeModel::SortRole);
  setSortCaseSensitivity(Qt::CaseInsensitive);
}

void ModelTreeProxy::setSearchText(const QString& text) {
  setFilterFixedString(text.trimmed());
}

bool ModelTreeProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  // Sections keep their reading order whichever way the user sorts the rows inside them.
  if (!left.parent().isValid() && !right.parent().isValid()) {
    return sortOrder() == Qt::AscendingOrder ? left.row() < right.row() : left.row() > right.row();
  }
  return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace lathe::views
