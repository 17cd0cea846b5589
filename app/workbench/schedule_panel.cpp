#include "app/workbench/schedule_panel.h"

#include "app/workbench/explanation_popup.h"
#include "views/code/code_editor.h"
#include "views/common/code_view.h"
#include "views/diff/ir_diff_view.h"

#include <QFile>
#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QShortcut>
#include <QSplitter>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextStream>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace lathe::workbench {

namespace {

QString milliseconds(double ms) {
  return ms >= 10 ? QString::number(ms, 'f', 1) + QStringLiteral(" ms")
                  : QString::number(ms, 'f', 3) + QStringLiteral(" ms");
}

// "c (64) · y (16) · x (16 from 1)": the loops of a kernel's loop IR, in order, with their
// extents (and first values other than 0).
QString loopList(const std::string& loopIr) {
  static const QRegularExpression loop(QStringLiteral(R"(for \(([^,]+), ([^,]+), ([^)]+)\))"));
  QStringList loops;
  auto it = loop.globalMatch(QString::fromStdString(loopIr));
  while (it.hasNext()) {
    const auto m = it.next();
    const QString extent = m.captured(2) == QStringLiteral("0")
                               ? m.captured(3)
                               : m.captured(3) + QStringLiteral(" from ") + m.captured(2);
    loops << m.captured(1) + QStringLiteral(" (") + extent + QStringLiteral(")");
  }
  return loops.join(QStringLiteral(" · "));
}

} // namespace

SchedulePanel::SchedulePanel(QWidget* parent)
    : QWidget(parent), header_(new QLabel(this)), loops_(new QLabel(this)),
      strategy_(new QLabel(this)), editor_(new views::CodeEditor(this)),
      applyButton_(new QPushButton(tr("Apply"), this)),
      undoButton_(new QPushButton(tr("Undo"), this)),
      defaultButton_(new QPushButton(tr("Default"), this)),
      keepButton_(new QPushButton(tr("Keep for compile"), this)),
      saveButton_(new QPushButton(tr("Save set…"), this)),
      loadButton_(new QPushButton(tr("Load set…"), this)), keptLabel_(new QLabel(this)),
      result_(new QLabel(this)), tabs_(new QTabWidget(this)), diff_(new views::IrDiffView(this)),
      assembly_(views::createCodeView(this, views::CodeLanguage::Assembly)),
      previewTimer_(new QTimer(this)) {
  // Typing pauses for a moment: the loop IR and assembly follow the steps, untimed.
  previewTimer_->setSingleShot(true);
  previewTimer_->setInterval(600);
  connect(previewTimer_, &QTimer::timeout, this, &SchedulePanel::preview);
  header_->setObjectName(QStringLiteral("scheduleKernel"));
  header_->setTextFormat(Qt::PlainText);
  QFont bold = header_->font();
  bold.setBold(true);
  header_->setFont(bold);
  loops_->setObjectName(QStringLiteral("scheduleLoops"));
  loops_->setWordWrap(true);
  loops_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  loops_->setForegroundRole(QPalette::PlaceholderText);
  strategy_->setObjectName(QStringLiteral("scheduleStrategy"));
  strategy_->setWordWrap(true);
  strategy_->setTextFormat(Qt::PlainText);
  strategy_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  strategy_->setForegroundRole(QPalette::PlaceholderText);

  editor_->setObjectName(QStringLiteral("scheduleSteps"));
  editor_->setReadOnly(false);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  editor_->setFont(mono);
  editor_->setPlaceholderText(
      tr("One step per line, e.g.\nsplit(x, 8)\nvectorize(x.i)\n"
         "parallel(c)\n\nPrimitives: split, tile, reorder, fuse,\n"
         "vectorize, unroll, parallel, cache_write,\ncompute_inline, compute_at, pack"));
  connect(editor_, &QPlainTextEdit::textChanged, this, [this] {
    markFailedLine(0);
    updateButtons();
    if (editor_->hasFocus())
      previewTimer_->start();
  });

  applyButton_->setObjectName(QStringLiteral("scheduleApply"));
  applyButton_->setToolTip(tr("Replay the steps on the nest as lowered, compile the kernel "
                              "alone and time it against the default (Ctrl+Return)"));
  undoButton_->setToolTip(tr("Back to the steps applied before the last Apply"));
  defaultButton_->setToolTip(tr("Back to the default steps (the kernel's default trace; none "
                                "for a kernel whose nest as lowered is its default)"));
  keepButton_->setObjectName(QStringLiteral("scheduleKeep"));
  defaultButton_->setObjectName(QStringLiteral("scheduleDefault"));
  keepButton_->setToolTip(tr("Use these steps for this kernel in the next Compile"));
  saveButton_->setToolTip(tr("Write the kept schedules to a file for lathe compile --schedule"));
  loadButton_->setToolTip(tr("Read kept schedules from a schedule file (text or JSON)"));
  connect(applyButton_, &QPushButton::clicked, this, &SchedulePanel::apply);
  connect(undoButton_, &QPushButton::clicked, this, &SchedulePanel::undo);
  connect(defaultButton_, &QPushButton::clicked, this, [this] { setSteps(defaultTrace_); });
  connect(keepButton_, &QPushButton::clicked, this, &SchedulePanel::keep);
  connect(saveButton_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save schedule set"), QString(),
                                                      tr("Schedules (*.txt *.schedule)"));
    QString error;
    if (!path.isEmpty() && !saveKept(path, &error))
      result_->setText(error);
  });
  connect(loadButton_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load schedule set"), QString(),
                                                      tr("Schedules (*.txt *.schedule *.json)"));
    QString error;
    if (!path.isEmpty() && !loadKept(path, &error))
      result_->setText(error);
  });
  auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), editor_);
  connect(shortcut, &QShortcut::activated, this, &SchedulePanel::apply);

  keptLabel_->setObjectName(QStringLiteral("scheduleKept"));
  keptLabel_->setWordWrap(true);
  keptLabel_->setForegroundRole(QPalette::PlaceholderText);
  result_->setObjectName(QStringLiteral("scheduleResult"));
  result_->setWordWrap(true);
  result_->setTextFormat(Qt::PlainText);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  diff_->setPlaceholderText(tr("Apply a schedule to see its loop IR next to the default's"));
  tabs_->addTab(diff_, tr("Loop IR: default → scheduled"));
  tabs_->addTab(assembly_, tr("Assembly"));

  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addWidget(header_);
  leftLayout->addWidget(loops_);
  leftLayout->addWidget(strategy_);
  leftLayout->addWidget(editor_, 1);
  auto* row1 = new QHBoxLayout;
  row1->addWidget(applyButton_);
  row1->addWidget(undoButton_);
  row1->addWidget(defaultButton_);
  row1->addStretch(1);
  auto* why = new QToolButton(this);
  why->setObjectName(QStringLiteral("scheduleExplain"));
  why->setText(tr("Why?"));
  why->setToolTip(tr("What the step on the cursor's line does, why and what it costs (on an "
                     "empty line: what a schedule is)"));
  why->setAutoRaise(true);
  connect(why, &QToolButton::clicked, this, [this] { explainStepAtCursor(); });
  row1->addWidget(why);
  auto* row2 = new QHBoxLayout;
  row2->addWidget(keepButton_);
  row2->addWidget(saveButton_);
  row2->addWidget(loadButton_);
  row2->addStretch(1);
  leftLayout->addLayout(row1);
  leftLayout->addLayout(row2);
  leftLayout->addWidget(keptLabel_);

  auto* right = new QWidget(this);
  auto* rightLayout = new QVBoxLayout(right);
  rightLayout->setContentsMargins(0, 0, 0, 0);
  rightLayout->addWidget(result_);
  rightLayout->addWidget(tabs_, 1);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(left);
  splitter->addWidget(right);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);
  reset();
}

void SchedulePanel::reset() {
  kept_.clear();
  history_.clear();
  lastMs_.clear();
  setKernel({}, {});
  updateKeptLabel();
}

void SchedulePanel::setKernel(const std::string& kernel, const std::string& loopIr,
                              const std::string& strategy, const std::string& defaultTrace) {
  kernel_ = kernel;
  defaultTrace_ = QString::fromStdString(defaultTrace);
  header_->setText(kernel.empty() ? tr("No kernel selected")
                                  : tr("Kernel %1").arg(QString::fromStdString(kernel)));
  loops_->setText(kernel.empty() ? tr("Compile the model, then pick a kernel in Code.")
                                 : tr("Loops: %1").arg(loopList(loopIr)));
  strategy_->setText(strategy.empty() ? QString()
                                      : tr("Default: %1")
                                            .arg(QString::fromStdString(strategy).trimmed().replace(
                                                QLatin1Char('\n'), QStringLiteral("; "))));
  strategy_->setVisible(!strategy.empty());
  const auto kept = kept_.find(kernel);
  setSteps(kept == kept_.end() ? defaultTrace_ : QString::fromStdString(kept->second));
  result_->clear();
  diff_->clear();
  assembly_->clear();
  updateButtons();
}

void SchedulePanel::setAvailable(bool available, const QString& why) {
  available_ = available;
  applyButton_->setToolTip(
      available ? tr("Replay the steps on the nest as lowered, compile the kernel alone and "
                     "time it against the default (Ctrl+Return)")
                : why);
  updateButtons();
}

void SchedulePanel::stopTrying(const QString& why) {
  trying_ = false;
  result_->setText(why);
  updateButtons();
}

void SchedulePanel::setTrying(bool trying, bool timed) {
  trying_ = trying;
  if (trying)
    result_->setText((timed ? tr("Compiling and timing %1…") : tr("Compiling %1…"))
                         .arg(QString::fromStdString(kernel_)));
  updateButtons();
}

QString SchedulePanel::steps() const {
  return editor_->toPlainText();
}

void SchedulePanel::setSteps(const QString& steps) {
  editor_->setPlainText(steps);
  previewTimer_->stop(); // only typing previews
}

void SchedulePanel::apply() {
  if (kernel_.empty() || !available_ || trying_)
    return;
  auto& past = history_[kernel_];
  if (past.empty() || past.back() != steps())
    past.push_back(steps());
  previewTimer_->stop();
  emit applyRequested(QString::fromStdString(kernel_), steps(), true);
}

void SchedulePanel::preview() {
  if (kernel_.empty() || !available_ || trying_)
    return;
  emit applyRequested(QString::fromStdString(kernel_), steps(), false);
}

void SchedulePanel::undo() {
  auto& past = history_[kernel_];
  // The last entry is what was applied last; undo goes to the one before it.
  if (!past.empty() && past.back() == steps())
    past.pop_back();
  setSteps(past.empty() ? defaultTrace_ : past.back());
  updateButtons();
}

void SchedulePanel::keep() {
  if (kernel_.empty())
    return;
  // The default steps need not be kept: the next compile replays them anyway.
  if (steps().trimmed().isEmpty() || steps().trimmed() == defaultTrace_.trimmed())
    kept_.erase(kernel_);
  else
    kept_[kernel_] = steps().toStdString();
  updateKeptLabel();
  emit keptChanged();
}

void SchedulePanel::showResult(const QString& steps, const api::KernelScheduleResult& result) {
  trying_ = false;
  updateButtons();
  if (!result.ok()) {
    const api::Failure failure =
        result.failure ? *result.failure : api::Failure{"internal", "no result", {}, {}, {}, {}};
    result_->setText(tr("Refused: %1").arg(QString::fromStdString(failure.message)));
    if (steps == this->steps())
      markFailedLine(result.failedLine);
    return;
  }
  const api::KernelScheduleReport& r = *result.report;
  const auto speed = [](double before, double after) {
    const double ratio = before / after;
    return ratio >= 1 ? tr("%1× faster").arg(ratio, 0, 'f', 2)
                      : tr("%1× slower").arg(1 / ratio, 0, 'f', 2);
  };
  QString timing;
  if (r.medianMs > 0 && r.defaultMedianMs > 0) {
    timing = tr("default %1 → scheduled %2: %3")
                 .arg(milliseconds(r.defaultMedianMs), milliseconds(r.medianMs),
                      speed(r.defaultMedianMs, r.medianMs));
    const auto last = lastMs_.find(r.kernel);
    if (last != lastMs_.end())
      timing += tr("; previous Apply %1: %2")
                    .arg(milliseconds(last->second), speed(last->second, r.medianMs));
    lastMs_[r.kernel] = r.medianMs;
  } else {
    timing = tr("preview, not timed (Apply compiles and times it)");
  }
  const int stepCount = static_cast<int>(std::count(r.trace.begin(), r.trace.end(), '\n'));
  result_->setText(tr("%1 (%2 steps; median of timed calls on random activations)")
                       .arg(timing.isEmpty() ? tr("compiled") : timing)
                       .arg(stepCount));
  diff_->setTexts(r.defaultLoopIr, r.loopIr);
  assembly_->setPlainText(QString::fromStdString(r.assembly));
}

std::string SchedulePanel::keptScheduleText() const {
  return api::formatScheduleSet({kept_.begin(), kept_.end()});
}

bool SchedulePanel::saveKept(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
    *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  file.write(QByteArray::fromStdString(keptScheduleText()));
  return true;
}

bool SchedulePanel::loadKept(const QString& path, QString* error) {
  return setKept(api::readScheduleSet(path.toStdString()), error);
}

bool SchedulePanel::setKeptText(const std::string& text, QString* error) {
  return setKept(api::parseScheduleSet(text), error);
}

bool SchedulePanel::setKept(const api::ScheduleSetFile& file, QString* error) {
  if (!file.ok()) {
    *error = QString::fromStdString(file.failure->message);
    return false;
  }
  kept_.clear();
  for (const auto& [kernel, steps] : file.kernels)
    kept_[kernel] = steps;
  const auto current = kept_.find(kernel_);
  setSteps(current == kept_.end() ? defaultTrace_ : QString::fromStdString(current->second));
  updateKeptLabel();
  emit keptChanged();
  return true;
}

bool SchedulePanel::explainStepAtCursor() {
  // The primitive's name starts the line: "split(x, 8)".
  const QString line = editor_->textCursor().block().text().trimmed();
  const QString name = line.left(line.indexOf(QLatin1Char('('))).trimmed();
  if (!popup_)
    popup_ = new ExplanationPopup(this);
  if (!name.isEmpty() && popup_->explain(name.toStdString(), "primitive"))
    return true;
  return popup_->explain("schedule", "stage");
}

void SchedulePanel::updateButtons() {
  const bool haveKernel = !kernel_.empty();
  applyButton_->setEnabled(haveKernel && available_ && !trying_);
  const auto past = history_.find(kernel_);
  undoButton_->setEnabled(haveKernel && past != history_.end() && !past->second.empty());
  defaultButton_->setEnabled(haveKernel && steps() != defaultTrace_);
  keepButton_->setEnabled(haveKernel);
  saveButton_->setEnabled(!kept_.empty());
  editor_->setReadOnly(!haveKernel);
}

void SchedulePanel::updateKeptLabel() {
  if (kept_.empty()) {
    keptLabel_->setText(tr("No schedules kept: Compile uses the defaults."));
  } else {
    QStringList names;
    for (const auto& [kernel, steps] : kept_)
      names << QString::fromStdString(kernel);
    keptLabel_->setText(tr("Kept for the next Compile: %1").arg(names.join(QStringLiteral(", "))));
  }
  updateButtons();
}

void SchedulePanel::markFailedLine(int line) {
  std::vector<views::LineMark> marks;
  if (line > 0) {
    marks.resize(static_cast<std::size_t>(line));
    marks.back().line = QColor(220, 60, 60, 70);
  }
  editor_->setLineMarks(std::move(marks));
}

} // namespace lathe::workbench
