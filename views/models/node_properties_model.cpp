#include "views/models/node_properties_model.h"

#include <QFont>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QPalette>

namespace lathe::views {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

} // namespace

NodePropertiesModel::NodePropertiesModel(QObject* parent) : QAbstractTableModel(parent) {}

void NodePropertiesModel::setNode(std::shared_ptr<const api::GraphSnapshot> graph, int node) {
  beginResetModel();
  const bool valid = graph && node >= 0 && node < static_cast<int>(graph->nodes.size());
  graph_ = valid ? std::move(graph) : nullptr;
  node_ = valid ? node : -1;
  build();
  endResetModel();
}

void NodePropertiesModel::build() {
  rows_.clear();
  if (!graph_)
    return;
  const api::GraphSnapshot& g = *graph_;
  const api::NodeSummary& n = g.nodes[node_];
  const auto typeOf = [&g](const std::string& value) {
    const auto it = g.values.find(value);
    return it == g.values.end() ? QStringLiteral("?") : qs(it->second.typeText);
  };

  rows_.push_back({RowKind::Field,
                   tr("Name"),
                   n.name.empty() ? tr("(unnamed, #%1)").arg(node_) : qs(n.name),
                   {}});
  rows_.push_back({RowKind::Field, tr("Op"), qs(n.opType), {}});
  rows_.push_back({RowKind::Field, tr("Category"), qs(n.category), {}});
  if (!n.summary.empty())
    rows_.push_back({RowKind::Field, tr("Summary"), qs(n.summary), qs(n.summary)});
  if (n.group >= 0 && n.group < static_cast<int>(g.groups.size())) {
    const api::GroupSummary& grp = g.groups[n.group];
    rows_.push_back({RowKind::Field,
                     tr("Fused kernel"),
                     QStringLiteral("%1 (%2)").arg(qs(grp.name), qs(grp.pattern)),
                     {}});
  }
  if (!n.source.empty())
    rows_.push_back({RowKind::Field, tr("Source"), qs(n.source), {}});
  if (!n.irLine.empty())
    rows_.push_back({RowKind::Field, tr("IR"), qs(n.irLine), qs(n.irLine), true});

  const auto addValues = [&](RowKind kind, const QString& title,
                             const std::vector<std::string>& names) {
    if (names.empty())
      return;
    rows_.push_back(
        {RowKind::Section, QStringLiteral("%1 (%2)").arg(title).arg(names.size()), {}, {}});
    for (std::size_t i = 0; i < names.size(); ++i) {
      const bool absent = names[i].empty();
      const QString tip = kind == RowKind::Input ? tr("input %1").arg(i) : tr("output %1").arg(i);
      rows_.push_back({kind, absent ? tr("(absent)") : qs(names[i]),
                       absent ? QStringLiteral("\u2014") : typeOf(names[i]), tip, true});
    }
  };
  addValues(RowKind::Input, tr("Inputs"), n.inputs);
  addValues(RowKind::Output, tr("Outputs"), n.outputs);

  if (!n.attributes.empty()) {
    rows_.push_back({RowKind::Section,
                     QStringLiteral("%1 (%2)").arg(tr("Attributes")).arg(n.attributes.size()),
                     {},
                     {}});
    for (const api::AttributeSummary& a : n.attributes)
      rows_.push_back({RowKind::Attribute, qs(a.name), qs(a.text), qs(a.kind), true});
  }
}

int NodePropertiesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int NodePropertiesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant NodePropertiesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& row = rows_[index.row()];
  const bool isValue = index.column() == ValueColumn;
  switch (role) {
  case Qt::DisplayRole:
    return isValue ? row.value : row.property;
  case Qt::ToolTipRole:
    return row.toolTip.isEmpty() ? QVariant() : QVariant(row.toolTip);
  case Qt::FontRole: {
    if (row.kind == RowKind::Section) {
      QFont font;
      font.setBold(true);
      return font;
    }
    if (isValue && row.monospace)
      return QFontDatabase::systemFont(QFontDatabase::FixedFont);
    return {};
  }
  case Qt::BackgroundRole:
    // A band behind section titles; from the palette, so dark themes get a dark band.
    if (row.kind == RowKind::Section)
      return QGuiApplication::palette().brush(QPalette::Window);
    return {};
  case RowKindRole:
    return static_cast<int>(row.kind);
  default:
    return {};
  }
}

QVariant NodePropertiesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case PropertyColumn:
    return tr("Property");
  case ValueColumn:
    return tr("Value");
  default:
    return {};
  }
}

} // namespace lathe::views
