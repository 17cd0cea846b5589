#include "views/models/pass_list_model.h"

#include <QGuiApplication>
#include <QPalette>

namespace lathe::views {

PassListModel::PassListModel(QObject* parent) : QAbstractTableModel(parent) {}

void PassListModel::setPasses(std::shared_ptr<const std::vector<api::PassRecord>> passes) {
  beginResetModel();
  passes_ = std::move(passes);
  endResetModel();
}

const api::PassRecord* PassListModel::pass(int row) const {
  if (!passes_ || row < 0 || row >= static_cast<int>(passes_->size()))
    return nullptr;
  return &(*passes_)[row];
}

int PassListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !passes_ ? 0 : static_cast<int>(passes_->size());
}

int PassListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant PassListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const api::PassRecord& p = (*passes_)[index.row()];
  switch (role) {
  case Qt::DisplayRole:
    switch (index.column()) {
    case PassColumn:
      return QString::fromStdString(p.name);
    case TimeColumn:
      return QString::number(p.milliseconds, 'f', 2);
    case ChangedColumn:
      return p.changed ? tr("yes") : tr("no");
    }
    return {};
  case Qt::ToolTipRole:
    return p.description.empty() ? QVariant() : QVariant(QString::fromStdString(p.description));
  case Qt::TextAlignmentRole:
    if (index.column() == TimeColumn)
      return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  case Qt::ForegroundRole:
    // Passes that did nothing fade, so the eye lands on the ones that did.
    if (!p.changed)
      return QGuiApplication::palette().brush(QPalette::Disabled, QPalette::Text);
    return {};
  case SortRole:
    switch (index.column()) {
    case PassColumn:
      return index.row();
    case TimeColumn:
      return p.milliseconds;
    case ChangedColumn:
      return p.changed;
    }
    return {};
  case PassIndexRole:
    return index.row();
  case ChangedRole:
    return p.changed;
  default:
    return {};
  }
}

QVariant PassListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal)
    return {};
  if (role == Qt::TextAlignmentRole && section == TimeColumn)
    return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole)
    return {};
  switch (section) {
  case PassColumn:
    return tr("Pass");
  case TimeColumn:
    return tr("Time (ms)");
  case ChangedColumn:
    return tr("Changed");
  default:
    return {};
  }
}

} // namespace lathe::views
