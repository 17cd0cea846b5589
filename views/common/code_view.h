#pragma once
// Read-only monospace text pane for IR and other code listings.

#include <QPlainTextEdit>

namespace lathe::views {

// A QPlainTextEdit set up for code: read-only, fixed-pitch font, no wrapping, tab = 2 spaces.
QPlainTextEdit* createCodeView(QWidget* parent = nullptr);

} // namespace lathe::views
