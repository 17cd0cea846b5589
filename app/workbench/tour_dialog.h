#pragma once
// Help > Guided Tour: the window explained page by page for someone who has never used a
// compiler, then the four journeys (inspect the passes, tune a schedule, ship a model, learn
// how a model becomes machine code). Each page can bring its panel to the front. Not modal:
// the window stays usable while it is open.

#include <QDialog>
#include <QString>
#include <vector>

class QLabel;
class QPushButton;
class QTextBrowser;

namespace lathe::workbench {

class TourDialog : public QDialog {
  Q_OBJECT

public:
  // What a page points at: a dock of the window (MainWindow::Panel's value), or none (-1).
  struct Page {
    QString title;
    QString markdown;
    int panel = -1;
  };

  explicit TourDialog(QWidget* parent = nullptr);

  int pageCount() const { return static_cast<int>(pages_.size()); }
  int currentPage() const { return current_; }
  const Page& page(int index) const { return pages_[static_cast<std::size_t>(index)]; }
  void showPage(int index);
  void next();
  void previous();

signals:
  // The page's panel should come to the front (MainWindow::showPanel).
  void panelRequested(int panel);

private:
  std::vector<Page> pages_;
  int current_ = 0;
  QLabel* heading_;
  QLabel* position_;
  QTextBrowser* text_;
  QPushButton* previous_;
  QPushButton* next_;
};

} // namespace lathe::workbench
