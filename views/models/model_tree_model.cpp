#include "views/models/model_tree_model.h"

#include "views/common/category_palette.h"

#include <QFont>
#include <QLocale>
#include <QStringList>
#include <map>

namespace lathe::views {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// Unnamed ONNX nodes are common; "Relu #12" still says what and where.
QString nodeLabel(const api::GraphSnapshot& graph, int node) {
  const api::NodeSummary& n = graph.nodes[node];
  if (!n.name.empty())
    return qs(n.name);
  return QStringLiteral("%1 #%2").arg(qs(n.opType)).arg(node);
}

QString joinNames(const std::vector<std::string>& names) {
  QStringList parts;
  for (const std::string& name : names)
    parts << (name.empty() ? QStringLiteral("\u2014") : qs(name)); // absent optional value
  return parts.join(QStringLiteral(", "));
}

QString sectionTitle(ModelTreeModel::Section section) {
  switch (section) {
  case ModelTreeModel::InputsSection:
    return ModelTreeModel::tr("Inputs");
  case ModelTreeModel::OutputsSection:
    return ModelTreeModel::tr("Outputs");
  case ModelTreeModel::NodesSection:
    return ModelTreeModel::tr("Nodes");
  case ModelTreeModel::ConstantsSection:
    return ModelTreeModel::tr("Constants");
  case ModelTreeModel::SectionCount:
    break;
  }
  return {};
}

} // namespace

ModelTreeModel::ModelTreeModel(QObject* parent) : QAbstractItemModel(parent) {
  build();
}

void ModelTreeModel::setSnapshot(std::shared_ptr<const api::GraphSnapshot> snapshot) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  build();
  endResetModel();
}

int ModelTreeModel::addItem(ItemKind kind, int index, int parent) {
  const int id = static_cast<int>(items_.size());
  const int row = static_cast<int>(items_[parent].children.size());
  items_.push_back({kind, index, parent, row, {}});
  items_[parent].children.push_back(id);
  return id;
}

void ModelTreeModel::build() {
  items_.clear();
  items_.push_back({ItemKind::Root, -1, 0, 0, {}});
  nodeItem_.clear();
  sectionItem_.assign(SectionCount, -1);
  consumers_.clear();
  producers_.clear();
  if (!snapshot_)
    return;
  const api::GraphSnapshot& g = *snapshot_;

  for (int s = 0; s < SectionCount; ++s)
    sectionItem_[s] = addItem(ItemKind::Section, s, 0);
  for (int i = 0; i < static_cast<int>(g.inputs.size()); ++i)
    addItem(ItemKind::Input, i, sectionItem_[InputsSection]);
  for (int i = 0; i < static_cast<int>(g.outputs.size()); ++i)
    addItem(ItemKind::Output, i, sectionItem_[OutputsSection]);

  // A kernel's row goes where its first node is, so the tree keeps topological order.
  nodeItem_.assign(g.nodes.size(), -1);
  std::vector<int> groupItem(g.groups.size(), -1);
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    int parent = sectionItem_[NodesSection];
    const int group = g.nodes[i].group;
    if (group >= 0 && group < static_cast<int>(g.groups.size())) {
      if (groupItem[group] < 0)
        groupItem[group] = addItem(ItemKind::Group, group, parent);
      parent = groupItem[group];
    }
    nodeItem_[i] = addItem(ItemKind::Node, i, parent);
  }
  for (int i = 0; i < static_cast<int>(g.constants.size()); ++i)
    addItem(ItemKind::Constant, i, sectionItem_[ConstantsSection]);

  std::map<std::string, QStringList> readers;
  std::map<std::string, QString> writer;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    for (const std::string& in : g.nodes[i].inputs) {
      QStringList& list = readers[in];
      if (!in.empty() && (list.isEmpty() || list.back() != nodeLabel(g, i)))
        list << nodeLabel(g, i);
    }
    for (const std::string& out : g.nodes[i].outputs)
      writer[out] = nodeLabel(g, i);
  }
  for (const api::TensorSummary& input : g.inputs) {
    const auto it = readers.find(input.name);
    consumers_.push_back(it == readers.end() ? QString() : it->second.join(QStringLiteral(", ")));
  }
  for (const api::TensorSummary& output : g.outputs) {
    const auto it = writer.find(output.name);
    producers_.push_back(it == writer.end() ? QString() : it->second);
  }
}

QModelIndex ModelTreeModel::indexForNode(int node, int column) const {
  if (node < 0 || node >= static_cast<int>(nodeItem_.size()) || column < 0 || column >= ColumnCount)
    return {};
  const int id = nodeItem_[node];
  return createIndex(items_[id].row, column, static_cast<quintptr>(id));
}

QModelIndex ModelTreeModel::sectionIndex(Section section) const {
  if (section < 0 || section >= SectionCount || sectionItem_[section] < 0)
    return {};
  const int id = sectionItem_[section];
  return createIndex(items_[id].row, NameColumn, static_cast<quintptr>(id));
}

const ModelTreeModel::Item* ModelTreeModel::itemFor(const QModelIndex& index) const {
  if (!index.isValid() || index.model() != this)
    return nullptr;
  const auto id = static_cast<std::size_t>(index.internalId());
  return id > 0 && id < items_.size() ? &items_[id] : nullptr;
}

QModelIndex ModelTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (row < 0 || column < 0 || column >= ColumnCount)
    return {};
  if (parent.isValid() && parent.column() != NameColumn)
    return {};
  const int parentId = parent.isValid() ? static_cast<int>(parent.internalId()) : 0;
  if (parentId < 0 || parentId >= static_cast<int>(items_.size()))
    return {};
  const std::vector<int>& children = items_[parentId].children;
  if (row >= static_cast<int>(children.size()))
    return {};
  return createIndex(row, column, static_cast<quintptr>(children[row]));
}

QModelIndex ModelTreeModel::parent(const QModelIndex& child) const {
  const Item* item = itemFor(child);
  if (!item || item->parent == 0)
    return {};
  return createIndex(items_[item->parent].row, NameColumn, static_cast<quintptr>(item->parent));
}

int ModelTreeModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid())
    return static_cast<int>(items_[0].children.size());
  if (parent.column() != NameColumn)
    return 0;
  const Item* item = itemFor(parent);
  return item ? static_cast<int>(item->children.size()) : 0;
}

int ModelTreeModel::columnCount(const QModelIndex&) const {
  return ColumnCount;
}

QString ModelTreeModel::valueType(const std::string& valueName) const {
  if (valueName.empty())
    return QStringLiteral("\u2014");
  const auto it = snapshot_->values.find(valueName);
  return it == snapshot_->values.end() ? QStringLiteral("?") : qs(it->second.typeText);
}

QString ModelTreeModel::category(const Item& item) const {
  const api::GraphSnapshot& g = *snapshot_;
  if (item.kind == ItemKind::Node)
    return qs(g.nodes[item.index].category);
  if (item.kind == ItemKind::Group && !item.children.empty())
    return qs(g.nodes[items_[item.children.front()].index].category);
  return {};
}

QString ModelTreeModel::text(const Item& item, int column) const {
  const api::GraphSnapshot& g = *snapshot_;
  switch (item.kind) {
  case ItemKind::Root:
    return {};
  case ItemKind::Section: {
    if (column != NameColumn)
      return {};
    const std::size_t counts[SectionCount] = {g.inputs.size(), g.outputs.size(), g.nodes.size(),
                                              g.constants.size()};
    return QStringLiteral("%1 (%2)")
        .arg(sectionTitle(static_cast<Section>(item.index)))
        .arg(counts[item.index]);
  }
  case ItemKind::Input:
  case ItemKind::Output: {
    const bool isInput = item.kind == ItemKind::Input;
    const api::TensorSummary& t = isInput ? g.inputs[item.index] : g.outputs[item.index];
    switch (column) {
    case NameColumn:
      return qs(t.name);
    case TypeColumn:
      return qs(t.dtype);
    case ShapeColumn:
      return qs(t.typeText);
    case DetailsColumn: {
      const QString& other = isInput ? consumers_[item.index] : producers_[item.index];
      if (other.isEmpty())
        return {};
      return (isInput ? QStringLiteral("\u2192 ") : QStringLiteral("\u2190 ")) + other;
    }
    }
    return {};
  }
  case ItemKind::Node: {
    const api::NodeSummary& n = g.nodes[item.index];
    switch (column) {
    case NameColumn:
      return nodeLabel(g, item.index);
    case TypeColumn:
      return qs(n.opType);
    case ShapeColumn: {
      QStringList types;
      for (const std::string& out : n.outputs) {
        if (!out.empty())
          types << valueType(out);
      }
      return types.join(QStringLiteral(", "));
    }
    case DetailsColumn:
      return QStringLiteral("%1 \u2192 %2 \u00b7 %3")
          .arg(joinNames(n.inputs), joinNames(n.outputs), qs(n.category));
    }
    return {};
  }
  case ItemKind::Group: {
    const api::GroupSummary& grp = g.groups[item.index];
    switch (column) {
    case NameColumn:
      return qs(grp.name);
    case TypeColumn:
      return qs(grp.pattern);
    case ShapeColumn: {
      // The kernel produces what its last node produces.
      if (item.children.empty())
        return {};
      const api::NodeSummary& last = g.nodes[items_[item.children.back()].index];
      return last.outputs.empty() ? QString() : valueType(last.outputs.front());
    }
    case DetailsColumn:
      return tr("fused kernel \u00b7 %n node(s)", nullptr, static_cast<int>(item.children.size()));
    }
    return {};
  }
  case ItemKind::Constant: {
    const api::ConstantSummary& c = g.constants[item.index];
    switch (column) {
    case NameColumn:
      return qs(c.tensor.name);
    case TypeColumn:
      return qs(c.tensor.dtype);
    case ShapeColumn:
      return qs(c.tensor.typeText);
    case DetailsColumn:
      return QLocale().formattedDataSize(static_cast<qint64>(c.bytes));
    }
    return {};
  }
  }
  return {};
}

QVariant ModelTreeModel::sortValue(const Item& item, int column) const {
  if (item.kind == ItemKind::Section)
    return item.index;
  if (item.kind == ItemKind::Constant && column == DetailsColumn)
    return static_cast<qulonglong>(snapshot_->constants[item.index].bytes);
  return text(item, column);
}

QString ModelTreeModel::toolTip(const Item& item) const {
  const api::GraphSnapshot& g = *snapshot_;
  switch (item.kind) {
  case ItemKind::Node: {
    const api::NodeSummary& n = g.nodes[item.index];
    QString tip = QStringLiteral("<b>%1</b> (%2)")
                      .arg(qs(n.opType).toHtmlEscaped(), qs(n.category).toHtmlEscaped());
    if (!n.summary.empty())
      tip += QStringLiteral(": ") + qs(n.summary).toHtmlEscaped();
    if (!n.irLine.empty())
      tip += QStringLiteral("<pre>%1</pre>").arg(qs(n.irLine).toHtmlEscaped());
    return tip;
  }
  case ItemKind::Group: {
    const api::GroupSummary& grp = g.groups[item.index];
    return tr("Fused kernel %1: %2").arg(qs(grp.name), qs(grp.pattern));
  }
  case ItemKind::Constant: {
    const api::ConstantSummary& c = g.constants[item.index];
    return tr("%1: %2, %3 bytes")
        .arg(qs(c.tensor.name), qs(c.tensor.typeText))
        .arg(static_cast<qulonglong>(c.bytes));
  }
  case ItemKind::Input:
    return tr("Graph input %1").arg(qs(g.inputs[item.index].typeText));
  case ItemKind::Output:
    return tr("Graph output %1").arg(qs(g.outputs[item.index].typeText));
  case ItemKind::Root:
  case ItemKind::Section:
    break;
  }
  return {};
}

QVariant ModelTreeModel::data(const QModelIndex& index, int role) const {
  const Item* item = itemFor(index);
  if (!item)
    return {};
  switch (role) {
  case Qt::DisplayRole:
    return text(*item, index.column());
  case Qt::ToolTipRole:
    return toolTip(*item);
  case Qt::DecorationRole:
    if (index.column() == NameColumn &&
        (item->kind == ItemKind::Node || item->kind == ItemKind::Group))
      return categoryIcon(category(*item));
    return {};
  case Qt::FontRole: {
    if (item->kind == ItemKind::Section) {
      QFont font;
      font.setBold(true);
      return font;
    }
    if (item->kind == ItemKind::Node && index.column() == NameColumn &&
        snapshot_->nodes[item->index].name.empty()) {
      QFont font;
      font.setItalic(true); // a made-up label, not the model's name
      return font;
    }
    return {};
  }
  case NodeIndexRole:
    return item->kind == ItemKind::Node ? item->index : -1;
  case ItemKindRole:
    return static_cast<int>(item->kind);
  case ItemIndexRole:
    return item->index;
  case CategoryRole: {
    const QString c = category(*item);
    return c.isEmpty() ? QVariant() : QVariant(c);
  }
  case SortRole:
    return sortValue(*item, index.column());
  default:
    return {};
  }
}

QVariant ModelTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case NameColumn:
    return tr("Name");
  case TypeColumn:
    return tr("Op / Type");
  case ShapeColumn:
    return tr("Shape");
  case DetailsColumn:
    return tr("Details");
  default:
    return {};
  }
}

} // namespace lathe::views
