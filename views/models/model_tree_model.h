#pragma once
// The model browser's tree: a graph's inputs, outputs, nodes and constants under four
// section rows. Nodes of a fused kernel sit under a row for that kernel.

#include "engine/api/session.h"

#include <QAbstractItemModel>
#include <memory>
#include <vector>

namespace lathe::views {

class ModelTreeModel : public QAbstractItemModel {
  Q_OBJECT

public:
  enum Column { NameColumn, TypeColumn, ShapeColumn, DetailsColumn, ColumnCount };
  enum Section { InputsSection, OutputsSection, NodesSection, ConstantsSection, SectionCount };
  enum class ItemKind { Root, Section, Input, Output, Node, Group, Constant };
  Q_ENUM(ItemKind)

  enum Role {
    // int: index into GraphSnapshot::nodes, -1 on rows that are not nodes.
    NodeIndexRole = Qt::UserRole + 1,
    // int(ItemKind) of the row.
    ItemKindRole,
    // int: index into the snapshot vector the row shows (inputs, outputs, constants,
    // groups), the Section for section rows, the node index for nodes.
    ItemIndexRole,
    // QString: NodeSummary::category for nodes, the first member's for groups.
    CategoryRole,
    // What a QSortFilterProxyModel should sort by: sizes as numbers, sections by position.
    SortRole,
  };

  explicit ModelTreeModel(QObject* parent = nullptr);

  // Shows `snapshot` (nullptr clears the model).
  void setSnapshot(std::shared_ptr<const api::GraphSnapshot> snapshot);
  const std::shared_ptr<const api::GraphSnapshot>& snapshot() const { return snapshot_; }

  // Invalid if the node does not exist.
  QModelIndex indexForNode(int node, int column = NameColumn) const;
  QModelIndex sectionIndex(Section section) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  struct Item {
    ItemKind kind;
    int index;  // meaning depends on kind, see ItemIndexRole
    int parent; // item id; the root (id 0) is its own parent
    int row;    // position under the parent
    std::vector<int> children;
  };

  void build();
  int addItem(ItemKind kind, int index, int parent);
  const Item* itemFor(const QModelIndex& index) const;
  QString text(const Item& item, int column) const;
  QVariant sortValue(const Item& item, int column) const;
  QString toolTip(const Item& item) const;
  QString category(const Item& item) const;
  QString valueType(const std::string& valueName) const;

  std::shared_ptr<const api::GraphSnapshot> snapshot_;
  std::vector<Item> items_;   // items_[0] is the invisible root; an item's id is its position
  std::vector<int> nodeItem_; // node index -> item id
  std::vector<int> sectionItem_;
  // Derived once per snapshot so data() stays cheap.
  std::vector<QString> consumers_; // per graph input: nodes that read it
  std::vector<QString> producers_; // per graph output: the node that writes it
};

} // namespace lathe::views
