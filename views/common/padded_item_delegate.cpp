#include "views/common/padded_item_delegate.h"

namespace lathe::views {

PaddedItemDelegate::PaddedItemDelegate(QObject* parent, int verticalPadding)
    : QStyledItemDelegate(parent), verticalPadding_(verticalPadding) {}

QSize PaddedItemDelegate::sizeHint(const QStyleOptionViewItem& option,
                                   const QModelIndex& index) const {
  return QStyledItemDelegate::sizeHint(option, index) + QSize(0, 2 * verticalPadding_);
}

} // namespace lathe::views
