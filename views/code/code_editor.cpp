#include "views/code/code_editor.h"

#include "views/code/code_colors.h"
#include "views/code/find_bar.h"

#include <QApplication>
#include <QFontDatabase>
#include <QKeyEvent>
#include <QLineEdit>
#include <QPainter>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextLayout>
#include <algorithm>

namespace lathe::views {

// The gutter is a child of the editor (not of its viewport) drawn by the editor, so it
// scrolls with the text vertically but not horizontally.
class LineNumberGutter : public QWidget {
public:
  explicit LineNumberGutter(CodeEditor* editor) : QWidget(editor), editor_(editor) {
    setObjectName(QStringLiteral("lineNumberGutter"));
  }

protected:
  void paintEvent(QPaintEvent* event) override { editor_->paintGutter(event); }

private:
  CodeEditor* editor_;
};

namespace {

// Highlighting every match of a one-letter search in a large listing would make painting
// slow; beyond this many, only the count and the current match are shown.
constexpr int kMaxHighlightedMatches = 5000;
constexpr int kGutterPadding = 6;

} // namespace

CodeEditor::CodeEditor(QWidget* parent)
    : QPlainTextEdit(parent), gutter_(new LineNumberGutter(this)), findBar_(new FindBar(this)) {
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  font.setStyleHint(QFont::Monospace); // in case the platform has no fixed-font setting
  setFont(font);
  setTabStopDistance(2 * fontMetrics().horizontalAdvance(QLatin1Char(' ')));
  document()->setDocumentMargin(4);
  // IR can be large; the undo stack of a read-only view is pure waste.
  setUndoRedoEnabled(false);

  findBar_->hide();
  connect(findBar_, &FindBar::textChanged, this, &CodeEditor::find);
  connect(findBar_, &FindBar::nextRequested, this, &CodeEditor::findNext);
  connect(findBar_, &FindBar::previousRequested, this, &CodeEditor::findPrevious);
  connect(findBar_, &FindBar::closeRequested, this, &CodeEditor::hideFindBar);

  connect(this, &QPlainTextEdit::blockCountChanged, this, &CodeEditor::updateMargins);
  connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& rect, int dy) {
    if (dy != 0)
      gutter_->scroll(0, dy);
    else
      gutter_->update(0, rect.y(), gutter_->width(), rect.height());
  });
  connect(document(), &QTextDocument::contentsChanged, this, &CodeEditor::refreshFind);
  updateMargins();
}

void CodeEditor::setLanguage(CodeLanguage language) {
  if (language == language_ && (highlighter_ || language == CodeLanguage::Plain))
    return;
  language_ = language;
  // Dropping and applying formats makes the document report a change; it is not new text,
  // so refreshFind() must not search again for it. Highlighting now, not on the next event
  // loop pass as QSyntaxHighlighter would, keeps that inside this guard.
  restyling_ = true;
  delete highlighter_;
  highlighter_ = nullptr;
  if (language != CodeLanguage::Plain) {
    highlighter_ = new RuleHighlighter(document(), language, palette());
    highlighter_->rehighlight();
  }
  restyling_ = false;
}

void CodeEditor::setLineNumbers(std::vector<int> numbers) {
  lineNumbers_ = std::move(numbers);
  updateMargins();
  gutter_->update();
}

void CodeEditor::setLineMarks(std::vector<LineMark> marks) {
  marks_ = std::move(marks);
  viewport()->update();
}

int CodeEditor::gutterWidth() const {
  int largest = std::max(1, blockCount());
  if (!lineNumbers_.empty())
    largest = std::max(1, *std::max_element(lineNumbers_.begin(), lineNumbers_.end()));
  int digits = 1;
  for (; largest >= 10; largest /= 10)
    ++digits;
  digits = std::max(digits, 2); // a short listing should not get a sliver of a gutter
  return 2 * kGutterPadding + digits * fontMetrics().horizontalAdvance(QLatin1Char('9'));
}

void CodeEditor::updateMargins() {
  const int bottom = findBar_->isVisible() ? findBar_->sizeHint().height() : 0;
  setViewportMargins(gutterWidth(), 0, 0, bottom);
  layoutChildren();
}

void CodeEditor::layoutChildren() {
  const QRect cr = contentsRect();
  const QRect vp = viewport()->geometry();
  gutter_->setGeometry(cr.left(), vp.top(), gutterWidth(), vp.height());
  if (findBar_->isVisible())
    findBar_->setGeometry(cr.left(), vp.bottom() + 1, vp.right() - cr.left() + 1,
                          findBar_->sizeHint().height());
}

void CodeEditor::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  layoutChildren();
}

void CodeEditor::changeEvent(QEvent* event) {
  QPlainTextEdit::changeEvent(event);
  if (event->type() == QEvent::PaletteChange && highlighter_) {
    // Colours were chosen for the old palette (light vs dark).
    const CodeLanguage language = language_;
    language_ = CodeLanguage::Plain;
    delete highlighter_;
    highlighter_ = nullptr;
    setLanguage(language);
  } else if (event->type() == QEvent::FontChange) {
    updateMargins();
  }
}

void CodeEditor::paintGutter(QPaintEvent* event) {
  const CodeColors colors = codeColors(palette());
  QPainter painter(gutter_);
  painter.fillRect(event->rect(), colors.gutterBackground);
  painter.setPen(colors.gutterText);
  painter.setFont(font());
  const int width = gutter_->width() - kGutterPadding;
  const int height = fontMetrics().height();
  const QPointF offset = contentOffset();
  for (QTextBlock block = firstVisibleBlock(); block.isValid(); block = block.next()) {
    const QRectF r = blockBoundingGeometry(block).translated(offset);
    if (r.top() > event->rect().bottom())
      break;
    if (!block.isVisible() || r.bottom() < event->rect().top())
      continue;
    const int line = block.blockNumber();
    const int number = lineNumbers_.empty()                           ? line + 1
                       : line < static_cast<int>(lineNumbers_.size()) ? lineNumbers_[line]
                                                                      : 0;
    if (number > 0)
      painter.drawText(0, static_cast<int>(r.top()), width, height, Qt::AlignRight,
                       QString::number(number));
  }
}

void CodeEditor::paintEvent(QPaintEvent* event) {
  if (!marks_.empty()) {
    // Under the text: QPlainTextEdit::paintEvent draws text and selections on top.
    QPainter painter(viewport());
    const QPointF offset = contentOffset();
    const int right = viewport()->width();
    const QColor hatch = codeColors(palette()).fillerHatch;
    for (QTextBlock block = firstVisibleBlock(); block.isValid(); block = block.next()) {
      const QRectF r = blockBoundingGeometry(block).translated(offset);
      if (r.top() > event->rect().bottom())
        break;
      const int line = block.blockNumber();
      if (line >= static_cast<int>(marks_.size()))
        break;
      const LineMark& mark = marks_[line];
      if (mark.line.isValid())
        painter.fillRect(QRectF(0, r.top(), right, r.height()), mark.line);
      if (mark.filler)
        painter.fillRect(QRectF(0, r.top(), right, r.height()), QBrush(hatch, Qt::BDiagPattern));
      if (mark.span.isValid() && mark.spanTo > mark.spanFrom && block.layout() &&
          block.layout()->lineCount() > 0) {
        const QTextLine textLine = block.layout()->lineAt(0);
        const qreal x0 = textLine.cursorToX(mark.spanFrom) + offset.x() + r.left();
        const qreal x1 = textLine.cursorToX(mark.spanTo) + offset.x() + r.left();
        painter.fillRect(QRectF(x0, r.top(), x1 - x0, r.height()), mark.span);
      }
    }
  }
  QPlainTextEdit::paintEvent(event);
}

bool CodeEditor::event(QEvent* event) {
  // Claim Ctrl+F before a window-wide "Find" action does while this pane has focus.
  if (event->type() == QEvent::ShortcutOverride &&
      static_cast<QKeyEvent*>(event)->matches(QKeySequence::Find)) {
    event->accept();
    return true;
  }
  return QPlainTextEdit::event(event);
}

void CodeEditor::keyPressEvent(QKeyEvent* event) {
  if (event->matches(QKeySequence::Find)) {
    showFindBar();
    return;
  }
  if (event->key() == Qt::Key_Escape && findBar_->isVisible()) {
    hideFindBar();
    return;
  }
  if (event->matches(QKeySequence::FindNext) && !findText_.isEmpty()) {
    findNext();
    return;
  }
  if (event->matches(QKeySequence::FindPrevious) && !findText_.isEmpty()) {
    findPrevious();
    return;
  }
  QPlainTextEdit::keyPressEvent(event);
}

void CodeEditor::showFindBar() {
  // Start from the selected text, as editors do, when it is a single line.
  const QString selected = textCursor().selectedText();
  if (!selected.isEmpty() && !selected.contains(QChar::ParagraphSeparator))
    findBar_->field()->setText(selected);
  findBar_->show();
  updateMargins();
  findBar_->field()->setFocus(Qt::ShortcutFocusReason);
  findBar_->field()->selectAll();
  find(findBar_->text());
}

void CodeEditor::hideFindBar() {
  const bool hadFocus = findBar_->isAncestorOf(QApplication::focusWidget());
  findBar_->hide();
  findText_.clear();
  matches_.clear();
  current_ = -1;
  updateMatchSelections();
  updateMargins();
  if (hadFocus)
    setFocus(Qt::OtherFocusReason);
}

void CodeEditor::find(const QString& text) {
  findText_ = text;
  matches_.clear();
  current_ = -1;
  if (!text.isEmpty()) {
    const QString all = document()->toPlainText();
    for (qsizetype at = all.indexOf(text, 0, Qt::CaseInsensitive); at >= 0;
         at = all.indexOf(text, at + text.size(), Qt::CaseInsensitive))
      matches_.push_back(static_cast<int>(at));
  }
  if (!matches_.empty()) {
    // The first match at or after the start of the current selection.
    const int from = textCursor().selectionStart();
    const auto it = std::lower_bound(matches_.begin(), matches_.end(), from);
    selectMatch(it == matches_.end() ? 0 : static_cast<int>(it - matches_.begin()));
    return;
  }
  updateMatchSelections();
  findBar_->setMatches(-1, 0);
}

void CodeEditor::findNext() {
  if (!matches_.empty())
    selectMatch((current_ + 1) % matchCount());
}

void CodeEditor::findPrevious() {
  if (!matches_.empty())
    selectMatch((current_ - 1 + matchCount()) % matchCount());
}

void CodeEditor::selectMatch(int index) {
  current_ = index;
  QTextCursor cursor(document());
  cursor.setPosition(matches_[index]);
  cursor.setPosition(matches_[index] + static_cast<int>(findText_.size()), QTextCursor::KeepAnchor);
  setTextCursor(cursor);
  centerCursor();
  updateMatchSelections();
  findBar_->setMatches(current_, matchCount());
}

void CodeEditor::updateMatchSelections() {
  QList<QTextEdit::ExtraSelection> selections;
  if (!matches_.empty()) {
    const CodeColors colors = codeColors(palette());
    const auto add = [&](int at, const QColor& color) {
      QTextEdit::ExtraSelection s;
      s.cursor = QTextCursor(document());
      s.cursor.setPosition(at);
      s.cursor.setPosition(at + static_cast<int>(findText_.size()), QTextCursor::KeepAnchor);
      s.format.setBackground(color);
      selections.append(s);
    };
    if (matchCount() <= kMaxHighlightedMatches)
      for (int i = 0; i < matchCount(); ++i)
        if (i != current_)
          add(matches_[i], colors.findMatch);
    if (current_ >= 0)
      add(matches_[current_], colors.findCurrent);
  }
  setExtraSelections(selections);
}

void CodeEditor::refreshFind() {
  if (restyling_)
    return;
  // New text: positions are stale. Search again only while the bar is open.
  if (findBar_->isVisible() && !findText_.isEmpty())
    find(findText_);
  else if (!matches_.empty()) {
    matches_.clear();
    current_ = -1;
    setExtraSelections({});
  }
}

} // namespace lathe::views
