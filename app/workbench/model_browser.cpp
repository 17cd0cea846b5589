#include "app/workbench/model_browser.h"

#include "views/common/padded_item_delegate.h"
#include "views/models/model_tree_model.h"
#include "views/models/model_tree_proxy.h"

#include <QAction>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>

namespace lathe::workbench {
namespace {

// Beyond this many nodes, fused kernels start collapsed so the tree stays scannable.
constexpr int kExpandKernelsUpTo = 300;

} // namespace

using views::ModelTreeModel;

ModelBrowser::ModelBrowser(QWidget* parent)
    : QWidget(parent), caption_(new QLabel(this)), search_(new QLineEdit(this)),
      tree_(new QTreeView(this)), model_(new ModelTreeModel(this)),
      proxy_(new views::ModelTreeProxy(this)) {
  caption_->setObjectName(QStringLiteral("modelTreeCaption"));
  caption_->setWordWrap(true);
  caption_->setContentsMargins(4, 2, 4, 0);
  caption_->hide();
  search_->setObjectName(QStringLiteral("modelFilter"));
  search_->setPlaceholderText(tr("Search names, ops, shapes\u2026"));
  search_->setClearButtonEnabled(true);
  connect(search_, &QLineEdit::textChanged, this, &ModelBrowser::applySearch);

  proxy_->setSourceModel(model_);
  tree_->setObjectName(QStringLiteral("modelTree"));
  tree_->setModel(proxy_);
  tree_->setItemDelegate(new views::PaddedItemDelegate(tree_));
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
  tree_->setSelectionMode(QAbstractItemView::SingleSelection);
  tree_->setAllColumnsShowFocus(true);
  tree_->setTextElideMode(Qt::ElideMiddle); // node names are paths: keep both ends
  tree_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  // Start in the graph's own order; a click on a header sorts.
  tree_->header()->setSortIndicator(-1, Qt::AscendingOrder);
  tree_->setSortingEnabled(true);
  tree_->header()->setStretchLastSection(true);
  tree_->header()->setSectionResizeMode(QHeaderView::Interactive);
  tree_->header()->resizeSection(ModelTreeModel::NameColumn, 230);
  tree_->header()->resizeSection(ModelTreeModel::TypeColumn, 140);
  tree_->header()->resizeSection(ModelTreeModel::ShapeColumn, 150);

  connect(tree_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            const QVariant node = current.data(ModelTreeModel::NodeIndexRole);
            emit nodeSelected(node.isValid() ? node.toInt() : -1);
          });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(caption_);
  layout->addWidget(search_);
  layout->addWidget(tree_, 1);
}

void ModelBrowser::setSnapshot(std::shared_ptr<const api::GraphSnapshot> snapshot,
                               const QString& caption) {
  caption_->setText(caption);
  caption_->setVisible(!caption.isEmpty());
  if (snapshot == model_->snapshot())
    return; // the same graph: keep the rows, their expansion and the current one
  model_->setSnapshot(std::move(snapshot));
  if (search_->text().trimmed().isEmpty())
    expandDefault();
  else
    tree_->expandAll();
  fitColumns();
}

const std::shared_ptr<const api::GraphSnapshot>& ModelBrowser::snapshot() const {
  return model_->snapshot();
}

void ModelBrowser::clearSearch() {
  search_->clear();
}

void ModelBrowser::fitColumns() {
  // Fit names, ops and shapes, within limits: ONNX node names can be paths of any length,
  // and Details (the last column) should keep some room.
  const auto fit = [this](int column, int minWidth, int maxWidth) {
    tree_->resizeColumnToContents(column);
    tree_->setColumnWidth(column, std::clamp(tree_->columnWidth(column), minWidth, maxWidth));
  };
  fit(ModelTreeModel::NameColumn, 180, 320);
  fit(ModelTreeModel::TypeColumn, 80, 170);
  fit(ModelTreeModel::ShapeColumn, 80, 170);
}

void ModelBrowser::expandDefault() {
  const auto& snapshot = model_->snapshot();
  if (!snapshot)
    return;
  if (static_cast<int>(snapshot->nodes.size()) <= kExpandKernelsUpTo) {
    tree_->expandAll();
    return;
  }
  tree_->collapseAll();
  for (int row = 0; row < proxy_->rowCount(); ++row)
    tree_->expand(proxy_->index(row, 0));
}

void ModelBrowser::applySearch(const QString& text) {
  proxy_->setSearchText(text);
  if (text.trimmed().isEmpty())
    expandDefault();
  else
    tree_->expandAll(); // show every match, however deep
  const QModelIndex current = tree_->currentIndex();
  if (current.isValid())
    tree_->scrollTo(current);
}

bool ModelBrowser::selectNode(int node, bool clearSearchIfHidden) {
  QModelIndex source = model_->indexForNode(node);
  if (!source.isValid())
    return false;
  QModelIndex index = proxy_->mapFromSource(source);
  if (!index.isValid()) {
    if (!clearSearchIfHidden)
      return false;
    search_->clear();
    index = proxy_->mapFromSource(source);
  }
  tree_->setCurrentIndex(index);
  tree_->scrollTo(index);
  return index.isValid();
}

void ModelBrowser::focusSearch() {
  search_->setFocus(Qt::ShortcutFocusReason);
  search_->selectAll();
}

} // namespace lathe::workbench
