#pragma once
// Cells of the Tune dock's tables: times as µs or ms, right-aligned read-only items.
#include <QStandardItem>
#include <QString>

namespace lathe::workbench {

// "20.7 µs", "1.25 ms"; a dash for no time.
inline QString tuneMsText(double ms) {
  if (ms <= 0)
    return QStringLiteral("\u2013");
  return ms < 1 ? QStringLiteral("%1 \u00b5s").arg(ms * 1000, 0, 'f', 1)
                : QStringLiteral("%1 ms").arg(ms, 0, 'f', 2);
}

inline QStandardItem* tuneCell(const QString& text,
                               Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
  auto* item = new QStandardItem(text);
  item->setTextAlignment(align);
  item->setEditable(false);
  return item;
}

} // namespace lathe::workbench
