#pragma once
// Internal to the MainWindow sources: how they spell strings and times.

#include <QString>
#include <string>

namespace lathe::workbench {

// The version of the dock layout QMainWindow::saveState writes (in QSettings and sessions);
// raised when docks are added or renamed, so that an older layout is not half-applied.
// 2: the graph became the central widget and every panel a dock. 3: the Schedule dock.
inline constexpr int kLayoutVersion = 3;

inline QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

inline QString ms(double milliseconds) {
  return QString::number(milliseconds, 'f', 2) + QStringLiteral(" ms");
}

} // namespace lathe::workbench
