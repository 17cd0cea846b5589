#pragma once
// Property/value table for one node: identity, inputs and outputs with their types, and
// attributes, under section rows.

#include "engine/api/session.h"

#include <QAbstractTableModel>
#include <memory>
#include <vector>

namespace lathe::views {

class NodePropertiesModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { PropertyColumn, ValueColumn, ColumnCount };
  enum class RowKind { Field, Section, Input, Output, Attribute };
  Q_ENUM(RowKind)
  enum Role {
    RowKindRole = Qt::UserRole + 1, // int(RowKind); views span Section rows across columns
  };

  explicit NodePropertiesModel(QObject* parent = nullptr);

  // Shows node `node` of `graph`; a null graph or an out-of-range node clears the table.
  void setNode(std::shared_ptr<const api::GraphSnapshot> graph, int node);
  void clear() { setNode(nullptr, -1); }
  int node() const { return node_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  struct Row {
    RowKind kind;
    QString property, value, toolTip;
    bool monospace = false;
  };

  void build();

  std::shared_ptr<const api::GraphSnapshot> graph_;
  int node_ = -1;
  std::vector<Row> rows_;
};

} // namespace lathe::views
