#include "views/common/table_style.h"

#include <QHeaderView>
#include <QTableView>

namespace lathe::views {

void styleListTable(QTableView* table, int rowPadding) {
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setAlternatingRowColors(true);
  table->setShowGrid(false);
  table->setWordWrap(false);
  table->verticalHeader()->hide();
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + rowPadding);
  table->horizontalHeader()->setHighlightSections(false);
}

} // namespace lathe::views
