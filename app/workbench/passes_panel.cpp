#include "app/workbench/passes_panel.h"

#include "app/workbench/explanation_popup.h"
#include "engine/api/explain.h"
#include "views/common/code_view.h"
#include "views/common/table_style.h"
#include "views/diff/ir_diff_view.h"
#include "views/models/pass_list_model.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace lathe::workbench {

using views::PassListModel;

PassesPanel::PassesPanel(QWidget* parent)
    : QWidget(parent), hideUnchanged_(new QCheckBox(tr("Hide unchanged passes"), this)),
      summary_(new QLabel(this)), table_(new QTableView(this)),
      showDiff_(new QCheckBox(tr("Side by side diff"), this)), irTitle_(new QLabel(this)),
      description_(new QLabel(this)), irStack_(new QStackedWidget(this)),
      diff_(new views::IrDiffView(this)),
      irView_(views::createCodeView(this, views::CodeLanguage::LatheIr)),
      splitter_(new QSplitter(Qt::Vertical, this)), model_(new PassListModel(this)),
      proxy_(new QSortFilterProxyModel(this)) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(PassListModel::SortRole);
  proxy_->setFilterRole(PassListModel::ChangedRole);
  proxy_->setFilterKeyColumn(PassListModel::PassColumn);

  hideUnchanged_->setObjectName(QStringLiteral("hideUnchangedPasses"));
  connect(hideUnchanged_, &QCheckBox::toggled, this, [this](bool hide) {
    // ChangedRole is a bool, which the proxy's filter sees as "true"/"false".
    proxy_->setFilterFixedString(hide ? QStringLiteral("true") : QString());
  });
  summary_->setForegroundRole(QPalette::PlaceholderText);
  // Its full text when there is room, but no minimum width: an explicit minimum replaces
  // the text width (Ignored would let the layout give it none at all).
  summary_->setMinimumWidth(1);

  table_->setObjectName(QStringLiteral("passList"));
  table_->setModel(proxy_);
  views::styleListTable(table_, 8);
  table_->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  table_->horizontalHeader()->setSectionResizeMode(PassListModel::PassColumn, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(PassListModel::TimeColumn,
                                                   QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(PassListModel::ChangedColumn,
                                                   QHeaderView::ResizeToContents);
  // Pipeline order first; a click on a header sorts.
  table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  table_->setSortingEnabled(true);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            showPass(current.isValid() ? current.data(PassListModel::PassIndexRole).toInt() : -1);
          });

  irTitle_->setObjectName(QStringLiteral("passIrTitle"));
  irTitle_->setTextFormat(Qt::RichText);
  // Elided by its width, never a minimum: docks tabbed with this panel must be able to
  // narrow (the Profile dock shares the bottom area).
  irTitle_->setMinimumWidth(1);
  explain_ = new QToolButton(this);
  explain_->setObjectName(QStringLiteral("explainPass"));
  explain_->setText(tr("Why?"));
  explain_->setToolTip(tr("What this pass is for, what it changes and what it saves"));
  explain_->setAutoRaise(true);
  explain_->setEnabled(false);
  connect(explain_, &QToolButton::clicked, this, [this] { explainPass(); });
  description_->setObjectName(QStringLiteral("passDescription"));
  description_->setWordWrap(true);
  description_->setForegroundRole(QPalette::PlaceholderText);
  irView_->setObjectName(QStringLiteral("passIrView"));
  irView_->setPlaceholderText(tr("Select a pass to see the IR after it."));
  diff_->setObjectName(QStringLiteral("passDiffView"));
  diff_->setPlaceholderText(tr("Select a pass to see what it changed."));
  irStack_->addWidget(diff_);
  irStack_->addWidget(irView_);
  showDiff_->setObjectName(QStringLiteral("showPassDiff"));
  showDiff_->setToolTip(tr("IR before and after the pass with the changes highlighted, or "
                           "the IR after it alone"));
  showDiff_->setChecked(true);
  connect(showDiff_, &QCheckBox::toggled, this, [this](bool diff) {
    irStack_->setCurrentWidget(diff ? static_cast<QWidget*>(diff_) : irView_);
    showIr(shown_); // the diff is computed only while it is on display
  });

  auto* top = new QWidget(this);
  auto* topLayout = new QVBoxLayout(top);
  topLayout->setContentsMargins(0, 0, 0, 0);
  auto* options = new QHBoxLayout;
  options->addWidget(hideUnchanged_);
  options->addStretch(1);
  options->addWidget(summary_);
  topLayout->addLayout(options);
  topLayout->addWidget(table_, 1);

  auto* bottom = new QWidget(this);
  auto* bottomLayout = new QVBoxLayout(bottom);
  bottomLayout->setContentsMargins(0, 4, 0, 0);
  auto* titleRow = new QHBoxLayout;
  titleRow->addWidget(irTitle_, 1);
  titleRow->addWidget(explain_);
  titleRow->addWidget(showDiff_);
  bottomLayout->addLayout(titleRow);
  bottomLayout->addWidget(description_);
  bottomLayout->addWidget(irStack_, 1);

  splitter_->setObjectName(QStringLiteral("passesSplitter"));
  splitter_->setChildrenCollapsible(false);
  splitter_->addWidget(top);
  splitter_->addWidget(bottom);
  splitter_->setStretchFactor(0, 2);
  splitter_->setStretchFactor(1, 3);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(splitter_);
  showPass(-1);
}

// A short dock keeps its rows for the IR: the description is then only the title's tooltip.
void PassesPanel::updateDescription() {
  description_->setVisible(!description_->text().isEmpty() && height() >= 360);
}

void PassesPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  updateDescription();
  // In a wide, short dock the list goes beside the diff, which needs the height more than
  // the width; in a tall one it goes above.
  const Qt::Orientation wanted = width() > 2 * height() ? Qt::Horizontal : Qt::Vertical;
  if (splitter_->orientation() == wanted)
    return;
  splitter_->setOrientation(wanted);
  const int list = wanted == Qt::Horizontal ? std::min(width() / 3, 380) : height() * 2 / 5;
  const int total = wanted == Qt::Horizontal ? width() : height();
  splitter_->setSizes({list, total - list});
}

void PassesPanel::setPasses(std::shared_ptr<const std::vector<api::PassRecord>> passes,
                            std::shared_ptr<const api::GraphSnapshot> imported) {
  imported_ = std::move(imported);
  model_->setPasses(std::move(passes));
  updateSummary();
  showPass(-1);
}

void PassesPanel::updateSummary() {
  int changed = 0;
  double total = 0;
  for (int row = 0; row < model_->rowCount(); ++row) {
    const api::PassRecord* p = model_->pass(row);
    changed += p->changed ? 1 : 0;
    total += p->milliseconds;
  }
  summary_->setText(model_->rowCount() == 0 ? tr("The pipeline did not run.")
                                            : tr("%1 passes, %2 changed, %3 ms in total")
                                                  .arg(model_->rowCount())
                                                  .arg(changed)
                                                  .arg(QString::number(total, 'f', 2)));
}

bool PassesPanel::selectPass(int pass) {
  const QModelIndex index = proxy_->mapFromSource(model_->index(pass, PassListModel::PassColumn));
  if (!index.isValid())
    return false;
  table_->setCurrentIndex(index);
  table_->scrollTo(index);
  return true;
}

void PassesPanel::setShowDiff(bool diff) {
  showDiff_->setChecked(diff);
}

views::NodeChanges PassesPanel::nodeChanges(int pass) const {
  const api::PassRecord* p = model_->pass(pass);
  if (!p || !p->graphAfter)
    return {};
  const api::PassRecord* previous = model_->pass(pass - 1);
  const api::GraphSnapshot* before =
      previous ? previous->graphAfter.get() : (pass == 0 ? imported_.get() : nullptr);
  if (!before)
    return {};
  return views::changedNodes(*before, *p->graphAfter);
}

bool PassesPanel::explainPass() {
  const api::PassRecord* p = model_->pass(shown_);
  if (!p)
    return false;
  if (!popup_)
    popup_ = new ExplanationPopup(this);
  return popup_->explain(p->name, "pass");
}

void PassesPanel::showPass(int pass) {
  const api::PassRecord* p = model_->pass(pass);
  shown_ = p ? pass : -1;
  if (!p) {
    irTitle_->setText(tr("IR before and after the selected pass"));
    description_->clear();
  } else {
    QString title = tr("<b>%1</b> \u00b7 %2 \u00b7 %3 ms")
                        .arg(QString::fromStdString(p->name).toHtmlEscaped(),
                             p->changed ? tr("changed the graph") : tr("no change"),
                             QString::number(p->milliseconds, 'f', 2));
    const views::NodeChanges nodes = nodeChanges(pass);
    if (!nodes.changed.empty() || nodes.removed > 0)
      title += tr(" \u00b7 %1 nodes new or changed, %2 removed")
                   .arg(nodes.changed.size())
                   .arg(nodes.removed);
    irTitle_->setText(title);
    description_->setText(QString::fromStdString(p->description));
  }
  explain_->setEnabled(p && api::findExplanation(p->name, "pass"));
  if (p && popup_ && popup_->isVisible())
    popup_->explain(p->name, "pass"); // an open explanation follows the selection
  irTitle_->setToolTip(description_->text());
  updateDescription();
  showIr(shown_);
  emit passSelected(shown_);
}

// The IR of the pass on display, in the view that is on display: the diff is computed
// only while it is visible. irView_ always holds the IR after the pass.
void PassesPanel::showIr(int pass) {
  const api::PassRecord* p = model_->pass(pass);
  if (!p) {
    irView_->clear();
    diff_->clear();
    return;
  }
  irView_->setPlainText(QString::fromStdString(p->irAfter));
  if (showDiff_->isChecked())
    diff_->setTexts(p->irBefore, p->irAfter);
  else
    diff_->clear();
}

} // namespace lathe::workbench
