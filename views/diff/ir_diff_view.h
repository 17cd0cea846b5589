#pragma once
// Two code panes side by side, before and after, with the line diff between them: removed
// lines tinted red on the left, added ones green on the right, changed lines paired on
// one row, blank filler rows keeping both sides aligned, and scrolling kept in step.

#include "views/diff/line_diff.h"

#include <QWidget>
#include <string>

class QLabel;
class QToolButton;

namespace lathe::views {

class CodeEditor;

class IrDiffView : public QWidget {
  Q_OBJECT

public:
  explicit IrDiffView(QWidget* parent = nullptr);

  void setTexts(const std::string& before, const std::string& after);
  void clear();
  void setPlaceholderText(const QString& text);
  // The captions above the two sides ("Before" and "After" unless set).
  void setCaptions(const QString& before, const QString& after);

  const SideBySideDiff& diff() const { return diff_; }
  double diffMilliseconds() const { return diffMilliseconds_; } // of the last setTexts
  CodeEditor* before() const { return before_; }
  CodeEditor* after() const { return after_; }
  QString summaryText() const;
  int currentChange() const { return currentHunk_; } // -1 before the first jump
  int changeCount() const { return static_cast<int>(diff_.hunkStarts.size()); }

public slots:
  void nextChange();
  void previousChange();

protected:
  void changeEvent(QEvent* event) override;

private:
  void showChange(int hunk);
  void updateNavigation();

  QLabel* summary_;
  QLabel* beforeCaption_ = nullptr;
  QLabel* afterCaption_ = nullptr;
  QToolButton* previous_;
  QToolButton* next_;
  CodeEditor* before_;
  CodeEditor* after_;
  SideBySideDiff diff_;
  std::string beforeText_, afterText_; // to re-tint on a palette change
  double diffMilliseconds_ = 0;
  int currentHunk_ = -1;
};

} // namespace lathe::views
