#include "app/workbench/passes_panel.h"

#include "views/common/code_view.h"
#include "views/models/pass_list_model.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace lathe::workbench {

using views::PassListModel;

PassesPanel::PassesPanel(QWidget* parent)
    : QWidget(parent), hideUnchanged_(new QCheckBox(tr("Hide unchanged passes"), this)),
      summary_(new QLabel(this)), table_(new QTableView(this)), irTitle_(new QLabel(this)),
      irView_(views::createCodeView(this)), splitter_(new QSplitter(Qt::Vertical, this)),
      model_(new PassListModel(this)), proxy_(new QSortFilterProxyModel(this)) {
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

  table_->setObjectName(QStringLiteral("passList"));
  table_->setModel(proxy_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->setShowGrid(false);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->horizontalHeader()->setHighlightSections(false);
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
  irTitle_->setWordWrap(true);
  irView_->setObjectName(QStringLiteral("passIrView"));
  irView_->setPlaceholderText(tr("Select a pass to see the IR after it."));

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
  bottomLayout->addWidget(irTitle_);
  bottomLayout->addWidget(irView_, 1);

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

void PassesPanel::setPasses(std::shared_ptr<const std::vector<api::PassRecord>> passes) {
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

void PassesPanel::showPass(int pass) {
  const api::PassRecord* p = model_->pass(pass);
  if (!p) {
    irTitle_->setText(tr("IR after the selected pass"));
    irView_->clear();
    emit passSelected(-1);
    return;
  }
  QString title = tr("IR after <b>%1</b> \u00b7 %2 \u00b7 %3 ms")
                      .arg(QString::fromStdString(p->name).toHtmlEscaped(),
                           p->changed ? tr("changed the graph") : tr("no change"),
                           QString::number(p->milliseconds, 'f', 2));
  if (!p->description.empty())
    title += QStringLiteral(" \u2014 ") + QString::fromStdString(p->description).toHtmlEscaped();
  irTitle_->setText(title);
  irView_->setPlainText(QString::fromStdString(p->irAfter));
  emit passSelected(pass);
}

} // namespace lathe::workbench
