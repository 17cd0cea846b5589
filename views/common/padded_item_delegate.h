#pragma once
// Item delegate that adds vertical padding: the default rows of the Fusion style are too
// tight for reading long lists of names and shapes.

#include <QStyledItemDelegate>

namespace lathe::views {

class PaddedItemDelegate : public QStyledItemDelegate {
  Q_OBJECT

public:
  explicit PaddedItemDelegate(QObject* parent = nullptr, int verticalPadding = 3);

  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
  int verticalPadding_;
};

} // namespace lathe::views
