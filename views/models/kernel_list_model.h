#pragma once
// A compiled model's kernels as a table: name, the ONNX nodes each computes, the size of
// its loop IR and of its machine code for the target.

#include "engine/api/session.h"

#include <QAbstractTableModel>
#include <memory>
#include <string>
#include <vector>

namespace lathe::views {

class KernelListModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { KernelColumn, NodesColumn, LinesColumn, CodeColumn, ScheduleColumn, ColumnCount };
  enum Role {
    // What a QSortFilterProxyModel should sort by: position in the plan for the Kernel
    // column, the node list as text, the loop-IR line count and code bytes as numbers.
    SortRole = Qt::UserRole + 1,
    KernelIndexRole, // int: index into CompileReport::kernels
    NodeCountRole,   // int: how many ONNX nodes the kernel computes
  };

  explicit KernelListModel(QObject* parent = nullptr);

  // Shared rather than copied: kernels carry their code. nullptr clears.
  void setReport(std::shared_ptr<const api::CompileReport> report);
  const std::shared_ptr<const api::CompileReport>& report() const { return report_; }
  // nullptr when `row` is out of range.
  const api::KernelReport* kernel(int row) const;
  // The first kernel that computes the ONNX node named `node`, or -1 (also for "").
  int kernelForNode(const std::string& node) const;
  // Lines in the kernel's loop IR (a trailing newline does not start another line).
  static int lineCount(const std::string& text);
  // "default", "3 steps" for a kernel compiled with a schedule, or "tuned (12 trials)" for
  // one whose schedule came from tuning records.
  static QString scheduleSummary(const api::KernelReport& kernel);
  // "1,234 B" or "12.3 KiB"; "" when the size is not known.
  static QString codeSize(std::uint64_t bytes);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  std::shared_ptr<const api::CompileReport> report_;
  std::vector<int> lines_; // loop-IR lines per kernel, counted once
};

} // namespace lathe::views
