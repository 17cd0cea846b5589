#include "views/models/run_models.h"

#include "views/common/category_palette.h"

#include <QStringList>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

namespace lathe::views {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

constexpr int kRightAligned = Qt::AlignRight | Qt::AlignVCenter;

// Values of any magnitude in a narrow column: 4 significant digits, exponent when tiny/huge.
QString compact(double value) {
  const double magnitude = std::abs(value);
  if (value != 0 && (magnitude < 1e-3 || magnitude >= 1e6))
    return QString::number(value, 'e', 3);
  return QString::number(value, 'g', 4);
}

QString milliseconds(double ms) {
  return QString::number(ms, 'f', ms < 10 ? 3 : 2);
}

QString nodesText(const std::vector<std::string>& nodes) {
  QStringList names;
  for (const std::string& n : nodes)
    names << (n.empty() ? QStringLiteral("(unnamed)") : qs(n));
  return names.join(QStringLiteral(", "));
}

// Time per timed run: runs of different repeat counts compare.
std::map<std::string, double> perRunTimes(const api::RunReport& report) {
  std::map<std::string, double> times;
  const api::RunProfile& p = *report.profile;
  const double runs = std::max<double>(1, static_cast<double>(p.runsUs.size()));
  for (const api::KernelProfileRow& row : p.rows)
    times[row.kernel] += row.totalMs / runs;
  return times;
}

} // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const double position =
      std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + (values[above] - values[below]) * fraction;
}

// --- RunOutputsModel ---------------------------------------------------------------------

RunOutputsModel::RunOutputsModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunOutputsModel::setReport(std::shared_ptr<const api::RunReport> report) {
  beginResetModel();
  report_ = std::move(report);
  endResetModel();
}

QString RunOutputsModel::topText(const api::OutputSummary& output) {
  QStringList entries;
  for (const auto& [index, value] : output.top)
    entries << QStringLiteral("%1: %2").arg(index).arg(compact(value));
  return entries.join(QStringLiteral(", "));
}

int RunOutputsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !report_ ? 0 : static_cast<int>(report_->outputs.size());
}

int RunOutputsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunOutputsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const api::OutputSummary& o = report_->outputs[static_cast<std::size_t>(index.row())];
  if (role == Qt::TextAlignmentRole) {
    const int c = index.column();
    return c == MinColumn || c == MaxColumn || c == MeanColumn ? QVariant(kRightAligned)
                                                               : QVariant();
  }
  if (role == Qt::ToolTipRole && index.column() == TopColumn && !o.top.empty())
    return tr("Largest values as flat index: value");
  if (role != Qt::DisplayRole)
    return {};
  switch (index.column()) {
  case NameColumn:
    return qs(o.name);
  case ShapeColumn: {
    QStringList dims;
    for (std::int64_t d : o.shape)
      dims << QString::number(d);
    return QStringLiteral("%1[%2]").arg(qs(o.dtype), dims.join(QLatin1Char(',')));
  }
  case MinColumn:
    return compact(o.min);
  case MaxColumn:
    return compact(o.max);
  case MeanColumn:
    return compact(o.mean);
  case TopColumn:
    return topText(o);
  default:
    return {};
  }
}

QVariant RunOutputsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case NameColumn:
    return tr("Output");
  case ShapeColumn:
    return tr("Type");
  case MinColumn:
    return tr("Min");
  case MaxColumn:
    return tr("Max");
  case MeanColumn:
    return tr("Mean");
  case TopColumn:
    return tr("Top 5 (index: value)");
  default:
    return {};
  }
}

// --- KernelProfileModel ------------------------------------------------------------------

KernelProfileModel::KernelProfileModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelProfileModel::setReport(std::shared_ptr<const api::RunReport> report,
                                   QHash<QString, QString> categories) {
  beginResetModel();
  report_ = report && report->profile ? std::move(report) : nullptr;
  categories_ = std::move(categories);
  endResetModel();
}

const std::vector<api::KernelProfileRow>& KernelProfileModel::rows() const {
  return report_->profile->rows;
}

int KernelProfileModel::rowOfKernel(const QString& kernel) const {
  if (!report_)
    return -1;
  const std::string name = kernel.toStdString();
  for (std::size_t i = 0; i < rows().size(); ++i) {
    if (rows()[i].kernel == name)
      return static_cast<int>(i);
  }
  return -1;
}

int KernelProfileModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !report_ ? 0 : static_cast<int>(rows().size());
}

int KernelProfileModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelProfileModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const api::KernelProfileRow& r = rows()[static_cast<std::size_t>(index.row())];
  const int column = index.column();
  switch (role) {
  case Qt::DisplayRole:
    switch (column) {
    case KernelColumn:
      return qs(r.kernel);
    case NodesColumn:
      return nodesText(r.nodes);
    case CallsColumn:
      return QString::number(r.calls);
    case TotalColumn:
      return milliseconds(r.totalMs);
    case MeanColumn:
      return milliseconds(r.meanMs);
    case PercentColumn:
      return QString::number(r.percent, 'f', 1);
    case GflopsColumn:
      return r.gflops < 0 ? QStringLiteral("\u2014") : QString::number(r.gflops, 'f', 1);
    case PeakColumn:
      return r.percentOfPeak < 0 ? QStringLiteral("\u2014")
                                 : QString::number(r.percentOfPeak, 'f', 1);
    default:
      return {};
    }
  case Qt::TextAlignmentRole:
    return column >= CallsColumn ? QVariant(kRightAligned) : QVariant();
  case Qt::DecorationRole:
    if (column != KernelColumn)
      return {};
    return categoryIcon(categories_.value(qs(r.kernel), QStringLiteral("other")));
  case Qt::ToolTipRole:
    if (column == NodesColumn)
      return nodesText(r.nodes).replace(QStringLiteral(", "), QStringLiteral("\n"));
    if (column == KernelColumn)
      return categories_.value(qs(r.kernel), QStringLiteral("other"));
    if ((column == GflopsColumn || column == PeakColumn) && r.gflops < 0)
      return tr("Unknown: only Conv, ConvTranspose, MatMul and Gemm count FLOPs");
    return {};
  case SortRole:
    switch (column) {
    case KernelColumn:
      return qs(r.kernel);
    case NodesColumn:
      return nodesText(r.nodes);
    case CallsColumn:
      return static_cast<double>(r.calls);
    case TotalColumn:
      return r.totalMs;
    case MeanColumn:
      return r.meanMs;
    case PercentColumn:
      return r.percent;
    case GflopsColumn:
      return r.gflops;
    case PeakColumn:
      return r.percentOfPeak;
    default:
      return {};
    }
  case KernelNameRole:
    return qs(r.kernel);
  case NodeNamesRole: {
    QStringList names;
    for (const std::string& n : r.nodes)
      names << qs(n);
    return names;
  }
  default:
    return {};
  }
}

QVariant KernelProfileModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal)
    return {};
  if (role == Qt::TextAlignmentRole)
    return section >= CallsColumn ? QVariant(kRightAligned) : QVariant();
  if (role == Qt::ToolTipRole) {
    switch (section) {
    case TotalColumn:
      return tr("Time of all calls in all timed runs");
    case PercentColumn:
      return tr("Share of the time of all kernels");
    case PeakColumn:
      return tr("Of this machine's measured peak FLOP/s");
    default:
      return {};
    }
  }
  if (role != Qt::DisplayRole)
    return {};
  switch (section) {
  case KernelColumn:
    return tr("Kernel");
  case NodesColumn:
    return tr("ONNX nodes");
  case CallsColumn:
    return tr("Calls");
  case TotalColumn:
    return tr("Total (ms)");
  case MeanColumn:
    return tr("Mean (ms)");
  case PercentColumn:
    return tr("Time (%)");
  case GflopsColumn:
    return tr("GFLOP/s");
  case PeakColumn:
    return tr("Peak (%)");
  default:
    return {};
  }
}

// --- comparison --------------------------------------------------------------------------

std::vector<KernelComparison> compareKernels(const api::RunReport& pinned,
                                             const api::RunReport& current) {
  std::vector<KernelComparison> rows;
  if (!pinned.profile || !current.profile)
    return rows;
  std::map<std::string, double> before = perRunTimes(pinned);
  const std::map<std::string, double> after = perRunTimes(current);
  for (const auto& [kernel, ms] : after) {
    KernelComparison row;
    row.kernel = kernel;
    row.currentMs = ms;
    if (const auto it = before.find(kernel); it != before.end()) {
      row.pinnedMs = it->second;
      before.erase(it);
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.currentMs.value_or(0) > b.currentMs.value_or(0);
  });
  for (const auto& [kernel, ms] : before) { // only in the pinned run
    KernelComparison row;
    row.kernel = kernel;
    row.pinnedMs = ms;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string comparisonCsv(const std::vector<KernelComparison>& rows) {
  std::ostringstream out;
  out << "kernel,pinned_ms,current_ms,delta_ms,speedup\n";
  out << std::setprecision(6);
  for (const KernelComparison& row : rows) {
    // Kernel names are identifiers, but quote anyway so a comma cannot split a row.
    out << '"' << row.kernel << "\",";
    if (row.pinnedMs)
      out << *row.pinnedMs;
    out << ',';
    if (row.currentMs)
      out << *row.currentMs;
    out << ',';
    if (row.pinnedMs && row.currentMs)
      out << row.deltaMs() << ',' << row.speedup();
    else
      out << ',';
    out << '\n';
  }
  return out.str();
}

// --- RunComparisonModel ------------------------------------------------------------------

RunComparisonModel::RunComparisonModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunComparisonModel::setRows(std::vector<KernelComparison> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int RunComparisonModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RunComparisonModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunComparisonModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const KernelComparison& r = rows_[static_cast<std::size_t>(index.row())];
  const bool both = r.pinnedMs && r.currentMs;
  const QString none = QStringLiteral("\u2014");
  switch (role) {
  case Qt::DisplayRole:
    switch (index.column()) {
    case KernelColumn:
      return qs(r.kernel);
    case PinnedColumn:
      return r.pinnedMs ? milliseconds(*r.pinnedMs) : none;
    case CurrentColumn:
      return r.currentMs ? milliseconds(*r.currentMs) : none;
    case DeltaColumn:
      return both ? QString::asprintf("%+.3f", r.deltaMs()) : none;
    case SpeedupColumn:
      return both && r.speedup() > 0 ? QString::asprintf("%.2f\u00d7", r.speedup()) : none;
    default:
      return {};
    }
  case Qt::TextAlignmentRole:
    return index.column() == KernelColumn ? QVariant() : QVariant(kRightAligned);
  case Qt::ForegroundRole:
    // Faster in green, slower in red, within 3 % neutral (timer noise).
    if (index.column() != SpeedupColumn && index.column() != DeltaColumn)
      return {};
    if (!both || std::abs(r.speedup() - 1) < 0.03)
      return {};
    return r.speedup() > 1 ? QColor(0x2e, 0x9d, 0x4f) : QColor(0xd0, 0x3b, 0x3b);
  case SortRole:
    switch (index.column()) {
    case KernelColumn:
      return qs(r.kernel);
    case PinnedColumn:
      return r.pinnedMs.value_or(-1);
    case CurrentColumn:
      return r.currentMs.value_or(-1);
    case DeltaColumn:
      return r.deltaMs();
    case SpeedupColumn:
      return r.speedup();
    default:
      return {};
    }
  case KernelNameRole:
    return qs(r.kernel);
  default:
    return {};
  }
}

QVariant RunComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal)
    return {};
  if (role == Qt::TextAlignmentRole)
    return section == KernelColumn ? QVariant() : QVariant(kRightAligned);
  if (role == Qt::ToolTipRole && section == SpeedupColumn)
    return tr("Pinned time / current time: above 1\u00d7 the current run is faster");
  if (role != Qt::DisplayRole)
    return {};
  switch (section) {
  case KernelColumn:
    return tr("Kernel");
  case PinnedColumn:
    return tr("Pinned (ms/run)");
  case CurrentColumn:
    return tr("Current (ms/run)");
  case DeltaColumn:
    return tr("\u0394 (ms)");
  case SpeedupColumn:
    return tr("Speed-up");
  default:
    return {};
  }
}

} // namespace lathe::views
