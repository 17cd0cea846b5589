#pragma once
// The small find bar under a code pane: a search field, previous/next, the match count,
// and a close button. It only edits and reports; CodeEditor does the searching.

#include <QWidget>

class QLabel;
class QLineEdit;
class QToolButton;

namespace lathe::views {

class FindBar : public QWidget {
  Q_OBJECT

public:
  explicit FindBar(QWidget* parent = nullptr);

  QLineEdit* field() const { return field_; }
  QString text() const;
  // current: 0-based index of the selected match, -1 for none.
  void setMatches(int current, int total);
  QString countText() const;

signals:
  void textChanged(const QString& text);
  void nextRequested();
  void previousRequested();
  void closeRequested();

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  QLineEdit* field_;
  QToolButton* previous_;
  QToolButton* next_;
  QLabel* count_;
  QToolButton* close_;
};

} // namespace lathe::views
