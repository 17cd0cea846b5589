#pragma once
// The graph pipeline as a table: one row per pass with its time and whether it changed
// the graph.

#include "engine/api/session.h"

#include <QAbstractTableModel>
#include <memory>
#include <vector>

namespace lathe::views {

class PassListModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { PassColumn, TimeColumn, ChangedColumn, ColumnCount };
  enum Role {
    // What a QSortFilterProxyModel should sort by: pipeline position for the Pass column
    // (the order that means something), milliseconds as a double, changed as a bool.
    SortRole = Qt::UserRole + 1,
    PassIndexRole, // int: row in the pipeline
    ChangedRole,   // bool
  };

  explicit PassListModel(QObject* parent = nullptr);

  // Shared rather than copied: every record carries two IR texts. nullptr clears.
  void setPasses(std::shared_ptr<const std::vector<api::PassRecord>> passes);
  // nullptr when `row` is out of range.
  const api::PassRecord* pass(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  std::shared_ptr<const std::vector<api::PassRecord>> passes_;
};

} // namespace lathe::views
