#include "views/code/find_bar.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QStyle>
#include <QToolButton>

namespace lathe::views {

FindBar::FindBar(QWidget* parent)
    : QWidget(parent), field_(new QLineEdit(this)), previous_(new QToolButton(this)),
      next_(new QToolButton(this)), count_(new QLabel(this)), close_(new QToolButton(this)) {
  setObjectName(QStringLiteral("findBar"));
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Window);

  field_->setObjectName(QStringLiteral("findField"));
  field_->setPlaceholderText(tr("Find"));
  field_->setClearButtonEnabled(true);
  field_->installEventFilter(this);
  connect(field_, &QLineEdit::textChanged, this, &FindBar::textChanged);
  connect(field_, &QLineEdit::returnPressed, this, &FindBar::nextRequested);

  const auto setUp = [this](QToolButton* button, const char* name, QStyle::StandardPixmap icon,
                            const QString& tip) {
    button->setObjectName(QString::fromLatin1(name));
    button->setIcon(style()->standardIcon(icon));
    button->setToolTip(tip);
    button->setAutoRaise(true);
  };
  setUp(previous_, "findPrevious", QStyle::SP_ArrowUp, tr("Previous match (Shift+Enter)"));
  setUp(next_, "findNext", QStyle::SP_ArrowDown, tr("Next match (Enter)"));
  setUp(close_, "findClose", QStyle::SP_TitleBarCloseButton, tr("Close (Esc)"));
  connect(previous_, &QToolButton::clicked, this, &FindBar::previousRequested);
  connect(next_, &QToolButton::clicked, this, &FindBar::nextRequested);
  connect(close_, &QToolButton::clicked, this, &FindBar::closeRequested);

  count_->setObjectName(QStringLiteral("findCount"));
  count_->setForegroundRole(QPalette::PlaceholderText);
  // Room for "999 of 9999" so the bar does not jump while typing.
  count_->setMinimumWidth(count_->fontMetrics().horizontalAdvance(tr("9999 of 99999")));

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  layout->setSpacing(2);
  layout->addWidget(field_, 1);
  layout->addWidget(previous_);
  layout->addWidget(next_);
  layout->addSpacing(6);
  layout->addWidget(count_);
  layout->addWidget(close_);
  setMatches(-1, 0);
}

QString FindBar::text() const {
  return field_->text();
}

QString FindBar::countText() const {
  return count_->text();
}

void FindBar::setMatches(int current, int total) {
  if (field_->text().isEmpty())
    count_->clear();
  else if (total == 0)
    count_->setText(tr("No matches"));
  else if (current < 0)
    count_->setText(total == 1 ? tr("1 match") : tr("%1 matches").arg(total));
  else
    count_->setText(tr("%1 of %2").arg(current + 1).arg(total));
  previous_->setEnabled(total > 0);
  next_->setEnabled(total > 0);
}

bool FindBar::eventFilter(QObject* watched, QEvent* event) {
  if (watched == field_ && event->type() == QEvent::KeyPress) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Escape) {
      emit closeRequested();
      return true;
    }
    if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) &&
        (key->modifiers() & Qt::ShiftModifier)) {
      emit previousRequested();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

} // namespace lathe::views
