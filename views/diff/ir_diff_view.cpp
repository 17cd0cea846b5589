#include "views/diff/ir_diff_view.h"

#include "views/code/code_colors.h"
#include "views/common/code_view.h"

#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QStyle>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>

namespace lathe::views {
namespace {

// Columns [from, to) of `a` that differ from `b` once their common prefix and suffix are
// set aside: enough to point the eye at what changed inside a paired line.
std::pair<int, int> changedSpan(const QString& a, const QString& b) {
  int prefix = 0;
  const int shorter = static_cast<int>(std::min(a.size(), b.size()));
  while (prefix < shorter && a[prefix] == b[prefix])
    ++prefix;
  int suffix = 0;
  while (suffix < shorter - prefix && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  return {prefix, static_cast<int>(a.size()) - suffix};
}

QWidget* captioned(const QString& caption, QWidget* content, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  auto* label = new QLabel(caption, box);
  label->setObjectName(QStringLiteral("diffCaption"));
  label->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(label);
  layout->addWidget(content, 1);
  return box;
}

} // namespace

IrDiffView::IrDiffView(QWidget* parent)
    : QWidget(parent), summary_(new QLabel(this)), previous_(new QToolButton(this)),
      next_(new QToolButton(this)), before_(createCodeView(this, CodeLanguage::LatheIr)),
      after_(createCodeView(this, CodeLanguage::LatheIr)) {
  summary_->setObjectName(QStringLiteral("diffSummary"));
  summary_->setMinimumWidth(1); // its text when there is room, no minimum width
  before_->setObjectName(QStringLiteral("diffBefore"));
  after_->setObjectName(QStringLiteral("diffAfter"));

  const auto setUp = [this](QToolButton* button, const char* name, QStyle::StandardPixmap icon,
                            const QString& text) {
    button->setObjectName(QString::fromLatin1(name));
    button->setIcon(style()->standardIcon(icon));
    button->setText(text);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button->setAutoRaise(true);
  };
  setUp(previous_, "previousChange", QStyle::SP_ArrowUp, tr("Previous change"));
  setUp(next_, "nextChange", QStyle::SP_ArrowDown, tr("Next change"));
  previous_->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
  next_->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));
  connect(previous_, &QToolButton::clicked, this, &IrDiffView::previousChange);
  connect(next_, &QToolButton::clicked, this, &IrDiffView::nextChange);

  // Both sides have the same number of rows and line height, so equal scroll values
  // mean equal rows.
  // Same viewport heights too: a scroll bar on one side only would shift the other's rows.
  before_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  after_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  for (auto [from, to] : {std::pair{before_, after_}, std::pair{after_, before_}}) {
    connect(from->verticalScrollBar(), &QScrollBar::valueChanged, to->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, to->horizontalScrollBar(),
            &QScrollBar::setValue);
  }

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(0, 0, 0, 0);
  bar->addWidget(summary_, 1);
  bar->addWidget(previous_);
  bar->addWidget(next_);

  auto* sides = new QSplitter(Qt::Horizontal, this);
  sides->setObjectName(QStringLiteral("diffSplitter"));
  sides->setChildrenCollapsible(false);
  QWidget* left = captioned(tr("Before"), before_, sides);
  QWidget* right = captioned(tr("After"), after_, sides);
  beforeCaption_ = left->findChild<QLabel*>(QStringLiteral("diffCaption"));
  afterCaption_ = right->findChild<QLabel*>(QStringLiteral("diffCaption"));
  sides->addWidget(left);
  sides->addWidget(right);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addLayout(bar);
  layout->addWidget(sides, 1);
  clear();
}

void IrDiffView::setPlaceholderText(const QString& text) {
  after_->setPlaceholderText(text);
}

void IrDiffView::setCaptions(const QString& before, const QString& after) {
  beforeCaption_->setText(before);
  afterCaption_->setText(after);
}

void IrDiffView::clear() {
  diff_ = {};
  beforeText_.clear();
  afterText_.clear();
  currentHunk_ = -1;
  for (CodeEditor* side : {before_, after_}) {
    side->setLineMarks({});
    side->setLineNumbers({});
    side->clear();
  }
  summary_->clear();
  updateNavigation();
}

void IrDiffView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  // The tints were picked for the old palette (light or dark).
  if (event->type() == QEvent::PaletteChange && !diff_.rows.empty()) {
    const std::string before = beforeText_, after = afterText_;
    setTexts(before, after);
  }
}

void IrDiffView::setTexts(const std::string& before, const std::string& after) {
  beforeText_ = before;
  afterText_ = after;
  QElapsedTimer timer;
  timer.start();
  const std::vector<std::string_view> a = splitLines(beforeText_), b = splitLines(afterText_);
  diff_ = sideBySide(diffLines(a, b), a, b);
  diffMilliseconds_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  currentHunk_ = -1;

  const CodeColors colors = codeColors(palette());
  QString left, right;
  left.reserve(static_cast<qsizetype>(before.size() + diff_.rows.size()));
  right.reserve(static_cast<qsizetype>(after.size() + diff_.rows.size()));
  std::vector<int> leftNumbers, rightNumbers;
  std::vector<LineMark> leftMarks, rightMarks;
  leftNumbers.reserve(diff_.rows.size());
  rightNumbers.reserve(diff_.rows.size());
  leftMarks.reserve(diff_.rows.size());
  rightMarks.reserve(diff_.rows.size());
  const auto line = [](std::string_view text) {
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
  };
  for (std::size_t i = 0; i < diff_.rows.size(); ++i) {
    const DiffRow& row = diff_.rows[i];
    if (i > 0) {
      left += QLatin1Char('\n');
      right += QLatin1Char('\n');
    }
    const QString l = row.left >= 0 ? line(a[row.left]) : QString();
    const QString r = row.right >= 0 ? line(b[row.right]) : QString();
    left += l;
    right += r;
    leftNumbers.push_back(row.left + 1);
    rightNumbers.push_back(row.right + 1);
    LineMark lm, rm;
    switch (row.kind) {
    case DiffRow::Kind::Same:
      break;
    case DiffRow::Kind::Removed:
      lm.line = colors.removedLine;
      rm.line = colors.fillerLine;
      rm.filler = true;
      break;
    case DiffRow::Kind::Added:
      lm.line = colors.fillerLine;
      lm.filler = true;
      rm.line = colors.addedLine;
      break;
    case DiffRow::Kind::Changed: {
      const auto [lFrom, lTo] = changedSpan(l, r);
      const auto [rFrom, rTo] = changedSpan(r, l);
      lm = {colors.removedLine, colors.removedSpan, lFrom, lTo};
      rm = {colors.addedLine, colors.addedSpan, rFrom, rTo};
      break;
    }
    }
    leftMarks.push_back(lm);
    rightMarks.push_back(rm);
  }
  before_->setPlainText(left);
  after_->setPlainText(right);
  before_->setLineNumbers(std::move(leftNumbers));
  after_->setLineNumbers(std::move(rightNumbers));
  before_->setLineMarks(std::move(leftMarks));
  after_->setLineMarks(std::move(rightMarks));

  const auto count = [](int n, const QString& one, const QString& many) {
    return n == 1 ? one : many.arg(n);
  };
  if (diff_.removed == 0 && diff_.added == 0)
    summary_->setText(tr("No changes \u00b7 %1")
                          .arg(count(static_cast<int>(b.size()), tr("1 line"), tr("%1 lines"))));
  else
    summary_->setText(tr("%1 removed, %2 added \u00b7 %3")
                          .arg(count(diff_.removed, tr("1 line"), tr("%1 lines")))
                          .arg(diff_.added)
                          .arg(count(changeCount(), tr("1 change"), tr("%1 changes"))));
  updateNavigation();
}

QString IrDiffView::summaryText() const {
  return summary_->text();
}

void IrDiffView::nextChange() {
  if (currentHunk_ + 1 < changeCount())
    showChange(currentHunk_ + 1);
}

void IrDiffView::previousChange() {
  if (currentHunk_ > 0)
    showChange(currentHunk_ - 1);
}

void IrDiffView::showChange(int hunk) {
  currentHunk_ = hunk;
  const int row = diff_.hunkStarts[hunk];
  // Put the change a third of the way down, with context above it, on both sides.
  CodeEditor* side = before_;
  QTextCursor cursor(side->document()->findBlockByNumber(row));
  side->setTextCursor(cursor);
  const int visible = side->viewport()->height() / std::max(1, side->fontMetrics().height());
  side->verticalScrollBar()->setValue(std::max(0, row - visible / 3));
  after_->setTextCursor(QTextCursor(after_->document()->findBlockByNumber(row)));
  after_->verticalScrollBar()->setValue(side->verticalScrollBar()->value());
  updateNavigation();
}

void IrDiffView::updateNavigation() {
  previous_->setEnabled(currentHunk_ > 0);
  next_->setEnabled(currentHunk_ + 1 < changeCount());
  const QString position = currentHunk_ >= 0
                               ? tr("change %1 of %2").arg(currentHunk_ + 1).arg(changeCount())
                               : QString();
  next_->setToolTip(position.isEmpty() ? tr("Next change (Alt+Down)") : position);
  previous_->setToolTip(position.isEmpty() ? tr("Previous change (Alt+Up)") : position);
}

} // namespace lathe::views
