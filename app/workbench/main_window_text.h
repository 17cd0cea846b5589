#pragma once
// Internal to the MainWindow sources: how they spell strings and times.

#include <QString>
#include <string>

namespace lathe::workbench {

inline QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

inline QString ms(double milliseconds) {
  return QString::number(milliseconds, 'f', 2) + QStringLiteral(" ms");
}

} // namespace lathe::workbench
