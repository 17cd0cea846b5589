#pragma once
// The grey, centred hint an empty panel shows instead of a blank area.

#include <QLabel>

namespace lathe::workbench {

QLabel* createPlaceholderLabel(const QString& text, QWidget* parent = nullptr);

} // namespace lathe::workbench
