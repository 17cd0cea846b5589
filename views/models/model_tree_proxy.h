#pragma once
// Search and sorting for the model tree: a match anywhere in a row keeps the row and its
// ancestors; rows under a matching row stay visible; the four sections never reorder.

#include <QSortFilterProxyModel>

namespace lathe::views {

class ModelTreeProxy : public QSortFilterProxyModel {
  Q_OBJECT

public:
  explicit ModelTreeProxy(QObject* parent = nullptr);

  // Case-insensitive substring search over every column; empty shows everything.
  void setSearchText(const QString& text);

protected:
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

} // namespace lathe::views
