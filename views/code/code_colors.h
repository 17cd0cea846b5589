#pragma once
// Colours for code panes, picked for the current palette so that light and dark themes
// both stay readable.

#include <QColor>
#include <QPalette>

namespace lathe::views {

struct CodeColors {
  QColor keyword, type, number, string, comment, value, symbol, op, label;
  QColor removedLine, removedSpan, addedLine, addedSpan, fillerLine, fillerHatch;
  QColor findMatch, findCurrent;
  QColor gutterText, gutterBackground;
};

// True when the palette's text background is dark.
bool isDarkPalette(const QPalette& palette);
CodeColors codeColors(const QPalette& palette);

} // namespace lathe::views
