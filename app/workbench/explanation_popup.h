#pragma once
// A small window with one explanation (engine/api/explain.h): what a pass, a schedule
// primitive or a compile stage is for. Not modal: it stays open beside the panel that
// opened it and follows what is explained next.

#include <QDialog>
#include <string>

class QTextBrowser;

namespace lathe::workbench {

class ExplanationPopup : public QDialog {
  Q_OBJECT

public:
  explicit ExplanationPopup(QWidget* parent = nullptr);

  // Shows the explanation of `name` (of `kind` when given); false (and nothing shown) if there
  // is none.
  bool explain(const std::string& name, const std::string& kind = {});
  QString text() const;

private:
  QTextBrowser* browser_;
};

} // namespace lathe::workbench
