#include "app/workbench/explanation_popup.h"

#include "engine/api/explain.h"

#include <QTextBrowser>
#include <QVBoxLayout>

namespace lathe::workbench {

ExplanationPopup::ExplanationPopup(QWidget* parent)
    : QDialog(parent), browser_(new QTextBrowser(this)) {
  setObjectName(QStringLiteral("explanationPopup"));
  browser_->setObjectName(QStringLiteral("explanationText"));
  browser_->setOpenExternalLinks(false);
  browser_->setFrameShape(QFrame::NoFrame);
  // Code spans hold formulas whose spaces do not break: wrap inside them rather than clip.
  browser_->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  browser_->document()->setDocumentMargin(12);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(browser_);
  resize(560, 380);
}

bool ExplanationPopup::explain(const std::string& name, const std::string& kind) {
  const api::Explanation* e = api::findExplanation(name, kind);
  if (!e)
    return false;
  const QString title = QString::fromStdString(e->title());
  setWindowTitle(e->kind == "pass"        ? tr("Graph pass %1").arg(QString::fromStdString(name))
                 : e->kind == "primitive" ? tr("Schedule step %1").arg(QString::fromStdString(name))
                                          : tr("Stage: %1").arg(QString::fromStdString(name)));
  browser_->setMarkdown(QString::fromStdString(e->text) +
                        tr("\n\n*Also: `lathe explain %1`.*").arg(QString::fromStdString(name)));
  browser_->setToolTip(title);
  show();
  raise();
  return true;
}

QString ExplanationPopup::text() const {
  return browser_->toPlainText();
}

} // namespace lathe::workbench
