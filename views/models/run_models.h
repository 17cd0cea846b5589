#pragma once
// A run's results as tables: the output summaries, the per-kernel profile, and the comparison
// of a pinned run with the current one. Plain adapters over api::RunReport.

#include "engine/api/session.h"

#include <QAbstractTableModel>
#include <QHash>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lathe::views {

// The p-th percentile (0..100) of `values` with linear interpolation; 0 when empty.
double percentile(std::vector<double> values, double p);

class RunOutputsModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { NameColumn, ShapeColumn, MinColumn, MaxColumn, MeanColumn, TopColumn, ColumnCount };

  explicit RunOutputsModel(QObject* parent = nullptr);
  void setReport(std::shared_ptr<const api::RunReport> report); // nullptr clears
  // "3: 0.812, 7: 0.101, ..." (flat index: value), largest first; empty when not computed.
  static QString topText(const api::OutputSummary& output);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  std::shared_ptr<const api::RunReport> report_;
};

class KernelProfileModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column {
    KernelColumn,
    NodesColumn,
    CallsColumn,
    TotalColumn,
    MeanColumn,
    PercentColumn,
    GflopsColumn,
    PeakColumn,
    ColumnCount
  };
  enum Role {
    SortRole = Qt::UserRole + 1, // numbers as doubles, text as text
    KernelNameRole,              // QString
    NodeNamesRole,               // QStringList
  };

  explicit KernelProfileModel(QObject* parent = nullptr);
  // `categories`: kernel name -> op category (colour of its swatch); missing ones are "other".
  void setReport(std::shared_ptr<const api::RunReport> report,
                 QHash<QString, QString> categories = {});
  // The row of the kernel named `kernel`, or -1.
  int rowOfKernel(const QString& kernel) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  const std::vector<api::KernelProfileRow>& rows() const;

  std::shared_ptr<const api::RunReport> report_;
  QHash<QString, QString> categories_;
};

// One kernel in both runs; a time is missing when that run has no such kernel.
struct KernelComparison {
  std::string kernel;
  std::optional<double> pinnedMs, currentMs; // per timed run
  double deltaMs() const { return pinnedMs && currentMs ? *currentMs - *pinnedMs : 0; }
  // pinned / current: > 1 when the current run is faster; 0 when unknown.
  double speedup() const {
    return pinnedMs && currentMs && *currentMs > 0 ? *pinnedMs / *currentMs : 0;
  }
};

// Kernels of both profiles, by the current run's time (largest first), kernels only the
// pinned run has last. Empty unless both runs were profiled.
std::vector<KernelComparison> compareKernels(const api::RunReport& pinned,
                                             const api::RunReport& current);
// "kernel,pinned_ms,current_ms,delta_ms,speedup" and one line per kernel; empty cells where
// a time is missing.
std::string comparisonCsv(const std::vector<KernelComparison>& rows);

class RunComparisonModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column {
    KernelColumn,
    PinnedColumn,
    CurrentColumn,
    DeltaColumn,
    SpeedupColumn,
    ColumnCount
  };
  enum Role { SortRole = Qt::UserRole + 1, KernelNameRole };

  explicit RunComparisonModel(QObject* parent = nullptr);
  void setRows(std::vector<KernelComparison> rows);
  const std::vector<KernelComparison>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  std::vector<KernelComparison> rows_;
};

} // namespace lathe::views
