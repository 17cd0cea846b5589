#include "views/models/kernel_list_model.h"

#include <QLocale>
#include <QStringList>
#include <algorithm>

namespace lathe::views {
namespace {

QString joinedNodes(const api::KernelReport& k) {
  QStringList names;
  names.reserve(static_cast<qsizetype>(k.nodes.size()));
  for (const std::string& n : k.nodes)
    names << (n.empty() ? QStringLiteral("(unnamed)") : QString::fromStdString(n));
  return names.join(QStringLiteral(", "));
}

} // namespace

KernelListModel::KernelListModel(QObject* parent) : QAbstractTableModel(parent) {}

int KernelListModel::lineCount(const std::string& text) {
  if (text.empty())
    return 0;
  const auto newlines = std::count(text.begin(), text.end(), '\n');
  return static_cast<int>(newlines) + (text.back() == '\n' ? 0 : 1);
}

void KernelListModel::setReport(std::shared_ptr<const api::CompileReport> report) {
  beginResetModel();
  report_ = std::move(report);
  lines_.clear();
  if (report_) {
    lines_.reserve(report_->kernels.size());
    for (const api::KernelReport& k : report_->kernels)
      lines_.push_back(lineCount(k.loopIr));
  }
  endResetModel();
}

const api::KernelReport* KernelListModel::kernel(int row) const {
  if (!report_ || row < 0 || row >= static_cast<int>(report_->kernels.size()))
    return nullptr;
  return &report_->kernels[row];
}

int KernelListModel::kernelForNode(const std::string& node) const {
  if (!report_ || node.empty())
    return -1;
  for (int k = 0; k < static_cast<int>(report_->kernels.size()); ++k) {
    const auto& nodes = report_->kernels[k].nodes;
    if (std::find(nodes.begin(), nodes.end(), node) != nodes.end())
      return k;
  }
  return -1;
}

int KernelListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !report_ ? 0 : static_cast<int>(report_->kernels.size());
}

QString KernelListModel::scheduleSummary(const api::KernelReport& kernel) {
  if (kernel.tunedTrials > 0)
    return tr("tuned (%n trial(s))", nullptr, kernel.tunedTrials);
  const auto steps = std::count(kernel.schedule.begin(), kernel.schedule.end(), '\n');
  return steps == 0 ? tr("default") : tr("%n step(s)", nullptr, static_cast<int>(steps));
}

int KernelListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString KernelListModel::codeSize(std::uint64_t bytes) {
  if (bytes == 0)
    return {};
  if (bytes < 10 * 1024)
    return tr("%1 B").arg(QLocale().toString(static_cast<qulonglong>(bytes)));
  return tr("%1 KiB").arg(QString::number(static_cast<double>(bytes) / 1024.0, 'f', 1));
}

QVariant KernelListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const api::KernelReport& k = report_->kernels[index.row()];
  switch (role) {
  case Qt::DisplayRole:
    switch (index.column()) {
    case KernelColumn:
      return QString::fromStdString(k.name);
    case NodesColumn:
      return joinedNodes(k);
    case LinesColumn:
      return lines_[index.row()];
    case CodeColumn:
      return codeSize(k.codeBytes);
    case ScheduleColumn:
      return scheduleSummary(k);
    }
    return {};
  case Qt::ToolTipRole:
    if (index.column() == CodeColumn && k.codeBytes)
      return tr("%1 bytes of machine code for %2")
          .arg(QLocale().toString(static_cast<qulonglong>(k.codeBytes)),
               QString::fromStdString(report_->target));
    if (index.column() == NodesColumn && !k.nodes.empty())
      return joinedNodes(k).replace(QStringLiteral(", "), QStringLiteral("\n"));
    if (index.column() == ScheduleColumn && !k.schedule.empty())
      return QString::fromStdString(k.schedule).trimmed();
    return {};
  case Qt::TextAlignmentRole:
    if (index.column() == LinesColumn || index.column() == CodeColumn)
      return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  case SortRole:
    switch (index.column()) {
    case KernelColumn:
      return index.row();
    case NodesColumn:
      return joinedNodes(k);
    case LinesColumn:
      return lines_[index.row()];
    case CodeColumn:
      return static_cast<qulonglong>(k.codeBytes);
    case ScheduleColumn:
      return scheduleSummary(k);
    }
    return {};
  case KernelIndexRole:
    return index.row();
  case NodeCountRole:
    return static_cast<int>(k.nodes.size());
  default:
    return {};
  }
}

QVariant KernelListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal)
    return {};
  if (role == Qt::TextAlignmentRole && (section == LinesColumn || section == CodeColumn))
    return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && section == LinesColumn)
    return tr("Lines of loop IR");
  if (role == Qt::ToolTipRole && section == CodeColumn)
    return tr("Bytes of machine code of the kernel's functions for the target");
  if (role != Qt::DisplayRole)
    return {};
  switch (section) {
  case KernelColumn:
    return tr("Kernel");
  case NodesColumn:
    return tr("ONNX nodes");
  case LinesColumn:
    return tr("Lines");
  case CodeColumn:
    return tr("Code");
  case ScheduleColumn:
    return tr("Schedule");
  default:
    return {};
  }
}

} // namespace lathe::views
