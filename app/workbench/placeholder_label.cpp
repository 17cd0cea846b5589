#include "app/workbench/placeholder_label.h"

#include <QPalette>

namespace lathe::workbench {

QLabel* createPlaceholderLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setAlignment(Qt::AlignCenter);
  label->setWordWrap(true);
  label->setMargin(24);
  label->setForegroundRole(QPalette::PlaceholderText);
  return label;
}

} // namespace lathe::workbench
