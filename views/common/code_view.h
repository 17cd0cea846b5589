#pragma once
// Read-only monospace code pane for IR, assembly and other listings.

#include "views/code/code_editor.h"

namespace lathe::views {

// A CodeEditor (a QPlainTextEdit): read-only, fixed-pitch font, no wrapping, tab = 2
// spaces, line numbers, Ctrl+F find bar, and syntax highlighting for `language`.
CodeEditor* createCodeView(QWidget* parent = nullptr, CodeLanguage language = CodeLanguage::Plain);

} // namespace lathe::views
