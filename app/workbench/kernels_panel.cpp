#include "app/workbench/kernels_panel.h"

#include "app/workbench/placeholder_label.h"
#include "views/common/code_view.h"
#include "views/common/table_style.h"
#include "views/models/kernel_list_model.h"

#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextCursor>
#include <QVBoxLayout>
#include <algorithm>

namespace lathe::workbench {

using views::KernelListModel;

namespace {

// Plain digits, as the status bar and the Passes tab print them.
QString number(double value, int decimals) {
  return QString::number(value, 'f', decimals);
}

QString kib(std::uint64_t bytes) {
  return number(static_cast<double>(bytes) / 1024.0, 1);
}

} // namespace

KernelsPanel::KernelsPanel(QWidget* parent)
    : QWidget(parent), stack_(new QStackedWidget(this)),
      placeholder_(createPlaceholderLabel(QString(), this)), summary_(new QLabel(this)),
      stale_(new QLabel(this)), chunkNote_(new QLabel(this)), table_(new QTableView(this)),
      codeTabs_(new QTabWidget(this)),
      loopIr_(views::createCodeView(this, views::CodeLanguage::LatheIr)),
      llvmIr_(views::createCodeView(this, views::CodeLanguage::LlvmIr)),
      llvmIrOptimized_(views::createCodeView(this, views::CodeLanguage::LlvmIr)),
      assembly_(views::createCodeView(this, views::CodeLanguage::Assembly)),
      gpuLaunches_(new QTableWidget(this)), splitter_(new QSplitter(Qt::Horizontal, this)),
      model_(new KernelListModel(this)), proxy_(new QSortFilterProxyModel(this)) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(KernelListModel::SortRole);

  placeholder_->setObjectName(QStringLiteral("kernelsPlaceholder"));
  placeholder_->setTextFormat(Qt::RichText);
  summary_->setObjectName(QStringLiteral("kernelSummary"));
  summary_->setTextFormat(Qt::PlainText);
  summary_->setWordWrap(true); // one line where the tab is wide enough; never a minimum width
  summary_->setForegroundRole(QPalette::PlaceholderText);

  table_->setObjectName(QStringLiteral("kernelList"));
  table_->setModel(proxy_);
  views::styleListTable(table_, 8);
  table_->setTextElideMode(Qt::ElideRight);
  QHeaderView* header = table_->horizontalHeader();
  header->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  header->setSectionResizeMode(KernelListModel::KernelColumn, QHeaderView::ResizeToContents);
  header->setSectionResizeMode(KernelListModel::NodesColumn, QHeaderView::Stretch);
  header->setSectionResizeMode(KernelListModel::LinesColumn, QHeaderView::ResizeToContents);
  header->setSectionResizeMode(KernelListModel::CodeColumn, QHeaderView::ResizeToContents);
  header->setSectionResizeMode(KernelListModel::ScheduleColumn, QHeaderView::ResizeToContents);
  // Plan order first; a click on a header sorts.
  header->setSortIndicator(-1, Qt::AscendingOrder);
  table_->setSortingEnabled(true);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            showKernel(current.isValid() ? current.data(KernelListModel::KernelIndexRole).toInt()
                                         : -1);
          });

  const struct {
    QPlainTextEdit* view;
    const char* name;
    QString title;
  } panes[] = {{loopIr_, "kernelLoopIr", tr("Loop IR")},
               {llvmIr_, "kernelLlvmIr", tr("LLVM IR")},
               {llvmIrOptimized_, "kernelLlvmIrOptimized", tr("LLVM IR (optimised)")},
               {assembly_, "kernelAssembly", tr("Assembly")}};
  codeTabs_->setObjectName(QStringLiteral("kernelCodeTabs"));
  for (const auto& pane : panes) {
    pane.view->setObjectName(QString::fromLatin1(pane.name));
    pane.view->setPlaceholderText(tr("Select a kernel to see its code."));
    codeTabs_->addTab(pane.view, pane.title);
  }

  gpuLaunches_->setObjectName(QStringLiteral("kernelGpuLaunches"));
  gpuLaunches_->setColumnCount(8);
  gpuLaunches_->setHorizontalHeaderLabels({tr("Entry"), tr("Grid"), tr("Block"), tr("Registers"),
                                           tr("Shared B"), tr("Stack B"), tr("Spill stores B"),
                                           tr("Spill loads B")});
  gpuLaunches_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  gpuLaunches_->verticalHeader()->hide();
  gpuLaunches_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  gpuLaunches_->horizontalHeader()->setStretchLastSection(true);
  gpuLaunches_->setToolTip(tr("ptxas -v per entry function: registers per thread, static shared "
                              "memory, stack frame and register spills (amber rows spill to local "
                              "memory)"));

  connect(loopIr_, &QPlainTextEdit::cursorPositionChanged, this, &KernelsPanel::linkFromLoopIr);
  // And back, from each of the other panes.
  const struct {
    QPlainTextEdit* view;
    std::vector<int> api::KernelReport::* lines;
  } linked[] = {{assembly_, &api::KernelReport::assemblyLoopLines},
                {llvmIr_, &api::KernelReport::llvmIrLoopLines},
                {llvmIrOptimized_, &api::KernelReport::llvmIrOptimizedLoopLines}};
  for (const auto& pane : linked)
    connect(pane.view, &QPlainTextEdit::cursorPositionChanged, this,
            [this, view = pane.view, lines = pane.lines] {
              const api::KernelReport* k = model_->kernel(selected_);
              linkToLoopIr(view, k ? &(k->*lines) : nullptr);
            });

  splitter_->setObjectName(QStringLiteral("kernelsSplitter"));
  splitter_->setChildrenCollapsible(false);
  splitter_->addWidget(table_);
  splitter_->addWidget(codeTabs_);
  // The table needs room for kernel and node names, the code for its indentation.
  splitter_->setStretchFactor(0, 1);
  splitter_->setStretchFactor(1, 1);
  splitter_->setSizes({380, 420});

  auto* content = new QWidget(this);
  auto* contentLayout = new QVBoxLayout(content);
  contentLayout->setContentsMargins(0, 0, 0, 0);
  stale_->setObjectName(QStringLiteral("kernelsStale"));
  stale_->setWordWrap(true);
  stale_->setTextFormat(Qt::PlainText);
  // The warning colours of the log: dark amber text on a pale amber band.
  stale_->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #7a5200; "
                                       "border: 1px solid #e0c46c; padding: 3px 6px; }"));
  stale_->hide();
  contentLayout->addWidget(stale_);
  contentLayout->addWidget(summary_);
  // What a chunk clicked on the profile's timeline ran (showParallelLoop).
  chunkNote_->setObjectName(QStringLiteral("kernelsChunkNote"));
  chunkNote_->setWordWrap(true);
  chunkNote_->setTextFormat(Qt::RichText);
  chunkNote_->hide();
  contentLayout->addWidget(chunkNote_);
  contentLayout->addWidget(splitter_, 1);

  stack_->addWidget(placeholder_);
  stack_->addWidget(content);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(stack_);
  setReport(nullptr);
}

const std::shared_ptr<const api::CompileReport>& KernelsPanel::report() const {
  return model_->report();
}

void KernelsPanel::setReport(std::shared_ptr<const api::CompileReport> report) {
  model_->setReport(std::move(report));
  const api::CompileReport* r = model_->report().get();
  if (r) {
    const QString kernels =
        r->kernels.size() == 1 ? tr("1 kernel") : tr("%1 kernels").arg(r->kernels.size());
    summary_->setText(tr("%1 for %2 \u00b7 lowering %3 ms \u00b7 code generation %4 ms \u00b7 "
                         "intermediate memory %5 KiB")
                          .arg(kernels, QString::fromStdString(r->target),
                               number(r->lowerMilliseconds, 2), number(r->codegenMilliseconds, 2),
                               kib(r->arenaBytes)));
    summary_->setToolTip(
        tr("Intermediate memory: %1 KiB with buffer reuse, %2 KiB without. Constants: %3 KiB.")
            .arg(kib(r->arenaBytes), kib(r->naiveArenaBytes), kib(r->constantBytes)));
  } else {
    summary_->clear();
    summary_->setToolTip(QString());
  }
  updatePlaceholder();
  showKernel(-1);
}

void KernelsPanel::setStale(const QString& note) {
  stale_->setText(note);
  stale_->setVisible(!note.isEmpty());
}

QString KernelsPanel::staleNote() const {
  return stale_->isHidden() ? QString() : stale_->text();
}

void KernelsPanel::setCompiling(bool compiling) {
  compiling_ = compiling;
  updatePlaceholder();
}

void KernelsPanel::updatePlaceholder() {
  if (model_->report()) {
    stack_->setCurrentIndex(1);
    return;
  }
  placeholder_->setText(
      compiling_ ? tr("Compiling\u2026")
                 : tr("<h3>Not compiled</h3><p>Compile the model for this machine with "
                      "<b>Build \u2192 Compile</b> (%1) to see its kernels, their loop IR, "
                      "LLVM IR and assembly.</p>")
                       .arg(QKeySequence(Qt::CTRL | Qt::Key_B).toString(QKeySequence::NativeText)));
  stack_->setCurrentIndex(0);
}

bool KernelsPanel::selectKernel(int kernel) {
  const QModelIndex index =
      proxy_->mapFromSource(model_->index(kernel, KernelListModel::KernelColumn));
  if (!index.isValid())
    return false;
  table_->setCurrentIndex(index);
  table_->scrollTo(index);
  return true;
}

bool KernelsPanel::selectKernelForNode(const std::string& node) {
  return selectKernel(model_->kernelForNode(node));
}

void KernelsPanel::showCode(Code code) {
  switch (code) {
  case Code::LoopIr:
    codeTabs_->setCurrentWidget(loopIr_);
    return;
  case Code::LlvmIr:
    codeTabs_->setCurrentWidget(llvmIr_);
    return;
  case Code::LlvmIrOptimized:
    codeTabs_->setCurrentWidget(llvmIrOptimized_);
    return;
  case Code::Assembly:
    codeTabs_->setCurrentWidget(assembly_);
    return;
  case Code::GpuLaunches:
    if (codeTabs_->indexOf(gpuLaunches_) >= 0)
      codeTabs_->setCurrentWidget(gpuLaunches_);
    return;
  }
}

void KernelsPanel::showKernel(int kernel) {
  const api::KernelReport* k = model_->kernel(kernel);
  selected_ = k ? kernel : -1;
  chunkNote_->hide(); // it spoke of the kernel shown before
  const auto set = [](QPlainTextEdit* view, const std::string& text) {
    view->setPlainText(QString::fromStdString(text));
  };
  // A scheduled kernel's IR starts with its trace, as `lathe compile --dump` writes it.
  std::string trace;
  if (k && !k->schedule.empty()) {
    trace = "# trace replayed on the nest as lowered:\n";
    for (std::size_t at = 0, end; at < k->schedule.size(); at = end + 1) {
      end = k->schedule.find('\n', at);
      if (end == std::string::npos)
        end = k->schedule.size();
      trace += "#   " + k->schedule.substr(at, end - at) + "\n";
    }
  }
  tracePrefixLines_ = static_cast<int>(std::count(trace.begin(), trace.end(), '\n'));
  set(loopIr_, k ? trace + k->loopIr : std::string());
  set(llvmIr_, k ? k->llvmIr : std::string());
  set(llvmIrOptimized_, k ? k->llvmIrOptimized : std::string());
  set(assembly_, k ? k->assembly : std::string());
  showGpuLaunches(k);
  emit kernelSelected(selected_);
}

void KernelsPanel::showGpuLaunches(const api::KernelReport* k) {
  const api::CompileReport* r = model_->report().get();
  const bool gpu = r && r->target.rfind("cuda", 0) == 0;
  codeTabs_->setTabText(codeTabs_->indexOf(assembly_), gpu ? tr("PTX") : tr("Assembly"));
  const int at = codeTabs_->indexOf(gpuLaunches_);
  if (gpu && at < 0)
    codeTabs_->addTab(gpuLaunches_, tr("Launches (ptxas)"));
  else if (!gpu && at >= 0)
    codeTabs_->removeTab(at);
  gpuLaunches_->setRowCount(0);
  if (!k)
    return;
  const auto dims = [](const std::int64_t(&d)[3]) {
    return QStringLiteral("%1×%2×%3").arg(d[0]).arg(d[1]).arg(d[2]);
  };
  const auto figure = [](int v) { return v < 0 ? QStringLiteral("–") : QString::number(v); };
  gpuLaunches_->setRowCount(static_cast<int>(k->gpuLaunches.size()));
  for (int row = 0; row < gpuLaunches_->rowCount(); ++row) {
    const api::GpuLaunchReport& g = k->gpuLaunches[static_cast<std::size_t>(row)];
    const QStringList cells{QString::fromStdString(g.name),
                            dims(g.grid),
                            dims(g.block),
                            figure(g.registers),
                            figure(g.sharedBytes),
                            figure(g.stackBytes),
                            figure(g.spillStores),
                            figure(g.spillLoads)};
    const bool spills = g.spillStores > 0 || g.spillLoads > 0;
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (c > 0)
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (spills) { // the log's warning colours
        item->setBackground(QColor(0xff, 0xf3, 0xcd));
        item->setForeground(QColor(0x7a, 0x52, 0x00));
      }
      gpuLaunches_->setItem(row, c, item);
    }
  }
}

namespace {

// A pale tint of the highlight colour on whole lines.
QList<QTextEdit::ExtraSelection> tinted(QPlainTextEdit* view, const std::vector<int>& lines) {
  QList<QTextEdit::ExtraSelection> selections;
  QColor tint = view->palette().highlight().color();
  tint.setAlpha(60);
  for (int line : lines) {
    const QTextBlock block = view->document()->findBlockByNumber(line - 1);
    if (!block.isValid())
      continue;
    QTextEdit::ExtraSelection selection;
    selection.cursor = QTextCursor(block);
    selection.format.setBackground(tint);
    selection.format.setProperty(QTextFormat::FullWidthSelection, true);
    selections << selection;
  }
  return selections;
}

// Scrolls `view` so that `line` is in sight without moving its cursor.
void reveal(QPlainTextEdit* view, int line) {
  // A plain text edit scrolls by lines: its scroll bar's value is the first line shown.
  QScrollBar* bar = view->verticalScrollBar();
  const int shown = std::max(1, view->viewport()->height() / view->fontMetrics().height());
  if (line - 1 < bar->value() || line - 1 >= bar->value() + shown)
    bar->setValue(std::max(0, line - 4));
}

} // namespace

void KernelsPanel::linkFromLoopIr() {
  const api::KernelReport* k = model_->kernel(selected_);
  const int line = loopIr_->textCursor().blockNumber() + 1 - tracePrefixLines_;
  // The lines of one pane made from loop IR line `line`.
  const auto madeFrom = [&](const std::vector<int>& lines) {
    std::vector<int> out;
    for (std::size_t i = 0; k && line > 0 && i < lines.size(); ++i)
      if (lines[i] == line)
        out.push_back(static_cast<int>(i) + 1);
    return out;
  };
  const auto tint = [](QPlainTextEdit* view, const std::vector<int>& lines) {
    view->setExtraSelections(tinted(view, lines));
    if (!lines.empty())
      reveal(view, lines.front());
  };
  linkedAssembly_ = k ? madeFrom(k->assemblyLoopLines) : std::vector<int>();
  tint(assembly_, linkedAssembly_);
  tint(llvmIr_, k ? madeFrom(k->llvmIrLoopLines) : std::vector<int>());
  tint(llvmIrOptimized_, k ? madeFrom(k->llvmIrOptimizedLoopLines) : std::vector<int>());
}

void KernelsPanel::linkToLoopIr(QPlainTextEdit* view, const std::vector<int>* lines) {
  const int line = view->textCursor().blockNumber(); // 0-based index into `lines`
  linkedLoop_ = lines && line >= 0 && line < static_cast<int>(lines->size()) &&
                        (*lines)[static_cast<std::size_t>(line)] > 0
                    ? (*lines)[static_cast<std::size_t>(line)] + tracePrefixLines_
                    : 0;
  loopIr_->setExtraSelections(linkedLoop_ ? tinted(loopIr_, {linkedLoop_})
                                          : QList<QTextEdit::ExtraSelection>());
  if (linkedLoop_)
    reveal(loopIr_, linkedLoop_);
}

bool KernelsPanel::showParallelLoop(std::int64_t iterations, std::int64_t first, std::int64_t end) {
  // The loop IR prints a parallel loop as `parallel for (NAME, LO, HI) {`.
  static const QRegularExpression parallelFor(
      QStringLiteral(R"(^\s*parallel for \(([^,]+), (-?\d+), (-?\d+)\))"));
  QTextBlock found;
  QString loop;
  for (QTextBlock b = loopIr_->document()->firstBlock(); b.isValid(); b = b.next()) {
    const QRegularExpressionMatch m = parallelFor.match(b.text());
    if (!m.hasMatch())
      continue;
    const bool same = m.captured(3).toLongLong() - m.captured(2).toLongLong() == iterations;
    if (!found.isValid() || same) {
      found = b;
      loop = m.captured(1);
    }
    if (same)
      break;
  }
  if (!found.isValid()) {
    chunkNote_->hide();
    return false;
  }
  showCode(Code::LoopIr);
  loopIr_->setTextCursor(QTextCursor(found)); // tints the LLVM IR and assembly made from it
  loopIr_->centerCursor();
  loopIr_->setExtraSelections(tinted(loopIr_, {found.blockNumber() + 1})); // and the loop
  chunkNote_->setText(tr("Timeline chunk: iterations %1\u2013%2 of the %3 of <tt>parallel for "
                         "%4</tt> (loop IR line %5); what it became is tinted in LLVM IR and "
                         "assembly")
                          .arg(first)
                          .arg(end - 1)
                          .arg(iterations)
                          .arg(loop.toHtmlEscaped())
                          .arg(found.blockNumber() + 1));
  chunkNote_->show();
  return true;
}

QString KernelsPanel::chunkNote() const {
  return chunkNote_->isHidden() ? QString() : chunkNote_->text();
}

} // namespace lathe::workbench
