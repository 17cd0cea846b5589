#pragma once
// `lathe compare`'s report as a table: one row per compared node output (node, op, value,
// shape, errors, NaN/Inf counts, status), tinted by status and error, the first divergent
// row in bold. A plain adapter over api::CompareReport.

#include "engine/api/numerics_compare.h"

#include <QAbstractTableModel>
#include <memory>

namespace lathe::views {

class NumericsModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column {
    NodeColumn,
    OpColumn,
    ValueColumn,
    ShapeColumn,
    AbsErrorColumn,
    RelErrorColumn,
    LatheNanInfColumn,
    ReferenceNanInfColumn,
    StatusColumn,
    ColumnCount
  };

  explicit NumericsModel(QObject* parent = nullptr);
  void setReport(std::shared_ptr<const api::CompareReport> report); // nullptr clears
  const std::shared_ptr<const api::CompareReport>& report() const { return report_; }
  // The comparison behind `row`; nullptr if there is none.
  const api::ValueComparison* comparison(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  std::shared_ptr<const api::CompareReport> report_;
};

// An error in three significant digits ("0" for none, exponent form when small).
QString formatError(double error);

} // namespace lathe::views
