#pragma once
// Read-only code pane: line-number gutter, syntax highlighting, find bar (Ctrl+F), and
// optional per-line tints (used by the side-by-side diff).

#include "views/code/syntax_highlighters.h"

#include <QColor>
#include <QPlainTextEdit>
#include <vector>

namespace lathe::views {

class FindBar;
class RuleHighlighter;

// A tint behind one line, and optionally a stronger one behind columns [spanFrom, spanTo).
// A filler line (a diff row that exists only on the other side) is also hatched.
struct LineMark {
  QColor line;
  QColor span;
  int spanFrom = 0, spanTo = 0;
  bool filler = false;
};

class CodeEditor : public QPlainTextEdit {
  Q_OBJECT

public:
  explicit CodeEditor(QWidget* parent = nullptr);

  void setLanguage(CodeLanguage language);
  CodeLanguage language() const { return language_; }
  const RuleHighlighter* highlighter() const { return highlighter_; }

  // What the gutter prints for each line; a value <= 0 leaves that line blank. Empty (the
  // default) numbers lines 1, 2, 3, ...
  void setLineNumbers(std::vector<int> numbers);
  // Tints per line (index = line); lines past the end or with an invalid colour get none.
  void setLineMarks(std::vector<LineMark> marks);
  const std::vector<LineMark>& lineMarks() const { return marks_; }
  int gutterWidth() const;
  QWidget* gutter() const { return gutter_; }

  FindBar* findBar() const { return findBar_; }
  void showFindBar(); // also what Ctrl+F does while the pane has focus
  void hideFindBar();
  // Searches case-insensitively and selects the first match at or after the cursor.
  void find(const QString& text);
  void findNext();
  void findPrevious();
  int matchCount() const { return static_cast<int>(matches_.size()); }
  int currentMatch() const { return current_; } // -1 when none is selected

protected:
  bool event(QEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void changeEvent(QEvent* event) override;

private:
  friend class LineNumberGutter;
  void paintGutter(QPaintEvent* event);
  void updateMargins();
  void layoutChildren();
  void selectMatch(int index);
  void updateMatchSelections();
  void refreshFind();

  CodeLanguage language_ = CodeLanguage::Plain;
  RuleHighlighter* highlighter_ = nullptr;
  QWidget* gutter_;
  FindBar* findBar_;
  std::vector<int> lineNumbers_;
  std::vector<LineMark> marks_;
  QString findText_;
  std::vector<int> matches_; // character positions in the document
  int current_ = -1;
  bool restyling_ = false; // formats are being replaced; the text is unchanged
};

} // namespace lathe::views
