#include "views/models/numerics_model.h"

#include "views/graph/heat_colors.h"

#include <QBrush>
#include <QFont>
#include <QPalette>
#include <QStringList>
#include <algorithm>
#include <cmath>

namespace lathe::views {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QString shapeText(const api::ValueComparison& v) {
  if (!v.shapeKnown)
    return QStringLiteral("?");
  QStringList dims;
  for (std::int64_t d : v.shape)
    dims << QString::number(d);
  return QStringLiteral("[%1]").arg(dims.join(QLatin1Char(',')));
}

QString nanInfText(std::int64_t nan, std::int64_t inf) {
  return nan == 0 && inf == 0 ? QStringLiteral("\u2013")
                              : QStringLiteral("%1 / %2").arg(nan).arg(inf);
}

bool compared(const api::ValueComparison& v) {
  return v.status == "match" || v.status == "diverges";
}

} // namespace

QString formatError(double error) {
  if (error == 0)
    return QStringLiteral("0");
  return std::fabs(error) < 1e-3 || std::fabs(error) >= 1e4 ? QString::number(error, 'e', 2)
                                                            : QString::number(error, 'g', 3);
}

NumericsModel::NumericsModel(QObject* parent) : QAbstractTableModel(parent) {}

void NumericsModel::setReport(std::shared_ptr<const api::CompareReport> report) {
  beginResetModel();
  report_ = std::move(report);
  endResetModel();
}

const api::ValueComparison* NumericsModel::comparison(int row) const {
  if (!report_ || row < 0 || row >= static_cast<int>(report_->values.size()))
    return nullptr;
  return &report_->values[static_cast<std::size_t>(row)];
}

int NumericsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !report_ ? 0 : static_cast<int>(report_->values.size());
}

int NumericsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant NumericsModel::data(const QModelIndex& index, int role) const {
  const api::ValueComparison* v = index.isValid() ? comparison(index.row()) : nullptr;
  if (!v)
    return {};
  const bool diverges = v->status == "diverges";
  switch (role) {
  case Qt::DisplayRole:
    switch (index.column()) {
    case NodeColumn:
      return qs(v->node);
    case OpColumn:
      return qs(v->op);
    case ValueColumn:
      return qs(v->value);
    case ShapeColumn:
      return shapeText(*v);
    case AbsErrorColumn:
      return compared(*v) ? formatError(v->maxAbsError) : QString();
    case RelErrorColumn:
      return compared(*v) ? formatError(v->maxRelError) : QString();
    case LatheNanInfColumn:
      return compared(*v) ? nanInfText(v->latheNaN, v->latheInf) : QString();
    case ReferenceNanInfColumn:
      return compared(*v) ? nanInfText(v->referenceNaN, v->referenceInf) : QString();
    case StatusColumn:
      return qs(v->status);
    }
    return {};
  case Qt::ToolTipRole:
    if (!v->note.empty())
      return qs(v->note);
    return diverges ? tr("%1 of %2 elements outside tolerance").arg(v->outside).arg(v->elements)
                    : QVariant();
  case Qt::TextAlignmentRole:
    if (index.column() >= AbsErrorColumn && index.column() <= ReferenceNanInfColumn)
      return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  case Qt::BackgroundRole:
    // Divergent rows along the heat ramp by relative error (kept light enough to read); matches
    // untinted.
    if (diverges)
      return QBrush(heatColor(0.35 + 0.45 * std::clamp(v->maxRelError, 0.0, 1.0)));
    return {};
  case Qt::ForegroundRole:
    if (diverges)
      return QBrush(readableTextOn(heatColor(0.35 + 0.45 * std::clamp(v->maxRelError, 0.0, 1.0))));
    if (!compared(*v))
      return QBrush(QPalette().color(QPalette::Disabled, QPalette::Text));
    return {};
  case Qt::FontRole:
    if (report_->firstDivergent == index.row()) {
      QFont bold;
      bold.setBold(true);
      return bold;
    }
    return {};
  default:
    return {};
  }
}

QVariant NumericsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
  case NodeColumn:
    return tr("Node");
  case OpColumn:
    return tr("Op");
  case ValueColumn:
    return tr("Value");
  case ShapeColumn:
    return tr("Shape");
  case AbsErrorColumn:
    return tr("Max abs err");
  case RelErrorColumn:
    return tr("Max rel err");
  case LatheNanInfColumn:
    return tr("NaN/Inf Lathe");
  case ReferenceNanInfColumn:
    return tr("NaN/Inf ref");
  case StatusColumn:
    return tr("Status");
  }
  return {};
}

} // namespace lathe::views
