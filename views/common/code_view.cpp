#include "views/common/code_view.h"

#include <QFontDatabase>
#include <QTextDocument>

namespace lathe::views {

QPlainTextEdit* createCodeView(QWidget* parent) {
  auto* view = new QPlainTextEdit(parent);
  view->setReadOnly(true);
  view->setLineWrapMode(QPlainTextEdit::NoWrap);
  view->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  font.setStyleHint(QFont::Monospace); // in case the platform has no fixed-font setting
  view->setFont(font);
  view->setTabStopDistance(2 * view->fontMetrics().horizontalAdvance(QLatin1Char(' ')));
  view->document()->setDocumentMargin(6);
  // IR can be large; the undo stack of a read-only view is pure waste.
  view->setUndoRedoEnabled(false);
  return view;
}

} // namespace lathe::views
