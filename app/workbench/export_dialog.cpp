#include "app/workbench/export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace lathe::workbench {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QString bytes(std::uint64_t n) {
  if (n < 10 * 1024)
    return QObject::tr("%1 B").arg(QLocale().toString(static_cast<qulonglong>(n)));
  if (n < 10 * 1024 * 1024)
    return QObject::tr("%1 KiB").arg(QString::number(static_cast<double>(n) / 1024.0, 'f', 1));
  return QObject::tr("%1 MiB").arg(
      QString::number(static_cast<double>(n) / (1024.0 * 1024.0), 'f', 2));
}

// `text` without its -mcpu= option, then with `cpu` if one is given.
QString withCpu(QString text, const QString& cpu) {
  QStringList words = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
  words.erase(
      std::remove_if(words.begin(), words.end(),
                     [](const QString& w) { return w.startsWith(QLatin1String("-mcpu=")); }),
      words.end());
  if (!cpu.trimmed().isEmpty())
    words << QStringLiteral("-mcpu=") + cpu.trimmed();
  return words.join(QLatin1Char(' '));
}

QTableWidget* makeTable(QWidget* parent, const QStringList& headers, const char* name) {
  auto* table = new QTableWidget(0, static_cast<int>(headers.size()), parent);
  table->setObjectName(QString::fromLatin1(name));
  table->setHorizontalHeaderLabels(headers);
  table->verticalHeader()->hide();
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setAlternatingRowColors(true);
  table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  table->horizontalHeader()->setStretchLastSection(true);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  return table;
}

QTableWidgetItem* numberItem(std::uint64_t n) {
  auto* item = new QTableWidgetItem(bytes(n));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  item->setToolTip(QObject::tr("%1 bytes").arg(QLocale().toString(static_cast<qulonglong>(n))));
  return item;
}

} // namespace

ExportDialog::ExportDialog(const QString& modelPath, const QString& target, QWidget* parent)
    : QDialog(parent), modelPath_(modelPath), target_(new QComboBox(this)),
      cpu_(new QLineEdit(this)), folder_(new QLineEdit(this)), name_(new QLineEdit(this)),
      build_(new QCheckBox(tr("Build the example with the target's toolchain"), this)),
      writes_(new QLabel(this)), status_(new QLabel(this)), progress_(new QProgressBar(this)),
      summary_(new QLabel(this)),
      files_(makeTable(this, {tr("File"), tr("Size"), tr("What it is")}, "exportFiles")),
      kernels_(makeTable(this, {tr("Kernel"), tr("Code")}, "exportKernels")),
      buildResult_(new QLabel(this)), exportButton_(new QPushButton(tr("Export"), this)),
      cancelButton_(new QPushButton(tr("Cancel"), this)),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Close, this)) {
  setObjectName(QStringLiteral("exportDialog"));
  setWindowTitle(tr("Export %1").arg(QFileInfo(modelPath).fileName()));

  target_->setObjectName(QStringLiteral("exportTarget"));
  for (const api::TargetSummary& t : api::knownTargets()) {
    if (!t.unavailable.empty() || t.triple.empty() || t.triple.rfind("nvptx", 0) == 0)
      continue; // the C runtime runs CPU code only
    target_->addItem(qs(t.label), qs(t.text));
    target_->setItemData(target_->count() - 1, qs(t.cpu), Qt::UserRole + 1);
    target_->setItemData(target_->count() - 1,
                         tr("%1\n%2 (%3)").arg(qs(t.text), qs(t.triple), qs(t.description)),
                         Qt::ToolTipRole);
  }
  cpu_->setObjectName(QStringLiteral("exportCpu"));
  cpu_->setToolTip(tr("-mcpu: the CPU the code is tuned and limited to; empty keeps the "
                      "target's"));
  folder_->setObjectName(QStringLiteral("exportFolder"));
  folder_->setPlaceholderText(tr("A folder to write into (created if missing)"));
  const QFileInfo model(modelPath);
  folder_->setText(
      QDir(model.absolutePath()).filePath(model.completeBaseName() + QStringLiteral("_export")));
  auto* browse = new QToolButton(this);
  browse->setText(tr("Browse\u2026"));
  connect(browse, &QToolButton::clicked, this, &ExportDialog::chooseFolder);
  auto* folderRow = new QHBoxLayout;
  folderRow->addWidget(folder_, 1);
  folderRow->addWidget(browse);
  name_->setObjectName(QStringLiteral("exportName"));
  name_->setPlaceholderText(tr("from the file name"));
  name_->setToolTip(tr("The C identifier the model's symbols start with; two models in one "
                       "program need different names"));
  build_->setObjectName(QStringLiteral("exportBuild"));
  build_->setChecked(true);
  build_->setToolTip(tr("Runs make in the folder with the cross compiler (or clang for "
                        "WebAssembly), as the README says; skipped with a note when it is "
                        "not installed"));

  auto* form = new QFormLayout;
  form->addRow(tr("&Target:"), target_);
  form->addRow(tr("&CPU:"), cpu_);
  auto* folderLabel = new QLabel(tr("&Folder:"), this);
  folderLabel->setBuddy(folder_);
  form->addRow(folderLabel, folderRow);
  form->addRow(tr("C &name:"), name_);
  form->addRow(QString(), build_);

  writes_->setObjectName(QStringLiteral("exportWrites"));
  writes_->setWordWrap(true);
  writes_->setForegroundRole(QPalette::PlaceholderText);
  status_->setObjectName(QStringLiteral("exportStatus"));
  status_->setWordWrap(true);
  progress_->setRange(0, 0); // the engine reports stages, not percentages
  progress_->hide();
  summary_->setObjectName(QStringLiteral("exportSummary"));
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::RichText);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  buildResult_->setObjectName(QStringLiteral("exportBuildResult"));
  buildResult_->setWordWrap(true);
  buildResult_->setTextFormat(Qt::PlainText);
  buildResult_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  files_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  files_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  kernels_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  kernels_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  kernels_->horizontalHeader()->setStretchLastSection(false);
  auto* tables = new QHBoxLayout;
  tables->addWidget(files_, 3);
  tables->addWidget(kernels_, 2);

  exportButton_->setObjectName(QStringLiteral("exportButton"));
  exportButton_->setDefault(true);
  cancelButton_->setObjectName(QStringLiteral("exportCancel"));
  cancelButton_->hide();
  buttons_->addButton(exportButton_, QDialogButtonBox::ActionRole);
  buttons_->addButton(cancelButton_, QDialogButtonBox::ActionRole);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(exportButton_, &QPushButton::clicked, this, &ExportDialog::startExport);
  connect(cancelButton_, &QPushButton::clicked, this, &ExportDialog::cancelRequested);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(writes_);
  layout->addWidget(status_);
  layout->addWidget(progress_);
  layout->addWidget(summary_);
  layout->addLayout(tables, 1);
  layout->addWidget(buildResult_);
  layout->addWidget(buttons_);

  connect(target_, &QComboBox::currentIndexChanged, this, &ExportDialog::updateForm);
  connect(folder_, &QLineEdit::textChanged, this, &ExportDialog::updateForm);
  setTarget(target);
  files_->hide();
  kernels_->hide();
  summary_->hide();
  buildResult_->hide();
  resize(760, 560);
  updateForm();
}

void ExportDialog::setTarget(const QString& target) {
  cpu_->clear();
  int index = target_->findData(target);
  if (index < 0) {
    // Not listed as it is: the listed target of the same triple, with its -mcpu in the CPU
    // field.
    const QString base = withCpu(target, {});
    for (int i = 0; i < target_->count() && index < 0; ++i)
      if (withCpu(target_->itemData(i).toString(), {}) == base)
        index = i;
    for (const QString& word : target.split(QLatin1Char(' '), Qt::SkipEmptyParts))
      if (index >= 0 && word.startsWith(QLatin1String("-mcpu=")))
        cpu_->setText(word.mid(6));
  }
  if (index >= 0)
    target_->setCurrentIndex(index);
  updateForm();
}

void ExportDialog::setFolder(const QString& folder) {
  folder_->setText(folder);
}

void ExportDialog::setBuild(bool build) {
  build_->setChecked(build);
}

ExportRequest ExportDialog::request() const {
  ExportRequest r;
  const QString listed = target_->currentData().toString();
  r.target =
      (cpu_->text().trimmed().isEmpty() ? listed : withCpu(listed, cpu_->text())).toStdString();
  r.folder = folder_->text().trimmed().toStdString();
  r.name = name_->text().trimmed().toStdString();
  r.build = build_->isChecked();
  return r;
}

void ExportDialog::chooseFolder() {
  const QString folder =
      QFileDialog::getExistingDirectory(this, tr("Export Into"), folder_->text());
  if (!folder.isEmpty())
    folder_->setText(folder);
}

void ExportDialog::updateForm() {
  const QString cpu = target_->currentData(Qt::UserRole + 1).toString();
  cpu_->setPlaceholderText(cpu.isEmpty() ? tr("the target's default") : cpu);
  const QString text = target_->currentData().toString();
  const bool wasm = text.contains(QLatin1String("wasm32"));
  const bool bare = text.contains(QLatin1String("-none-")) || text.contains(QLatin1String("thumb"));
  writes_->setText(
      tr("Writes kernels.o and weights.o for this target, model.h and model.c (inputs, outputs, "
         "arena size), the C runtime's sources, %1, a Makefile and a README with the build "
         "command. Files of the same names in the folder are replaced.")
          .arg(wasm   ? tr("a Node loader (main.js) and its C entry")
               : bare ? tr("startup code, a linker script for an emulated board and a "
                           "semihosting main.c")
                      : tr("an example main.c that reads .npy inputs and prints the outputs")));
  exportButton_->setEnabled(!exporting_ && !folder_->text().trimmed().isEmpty() &&
                            target_->count() > 0);
}

bool ExportDialog::startExport() {
  if (exporting_ || request().folder.empty())
    return false;
  setExporting(true);
  status_->setText(tr("Exporting for %1\u2026").arg(target_->currentText()));
  files_->hide();
  kernels_->hide();
  summary_->hide();
  summary_->clear();
  buildResult_->hide();
  buildResult_->clear();
  emit exportRequested(request());
  return true;
}

void ExportDialog::setProgress(const QString& stage) {
  if (exporting_ && !stage.isEmpty())
    status_->setText(tr("Exporting for %1: %2\u2026").arg(target_->currentText(), stage));
}

void ExportDialog::setExporting(bool exporting) {
  exporting_ = exporting;
  progress_->setVisible(exporting);
  cancelButton_->setVisible(exporting);
  for (QWidget* w : std::initializer_list<QWidget*>{target_, cpu_, folder_, name_, build_})
    w->setEnabled(!exporting);
  updateForm();
}

void ExportDialog::showOutcome(const ExportOutcome& outcome) {
  setExporting(false);
  const api::CompileResult& c = outcome.compiled;
  if (!c.ok() || !c.report->exported) {
    const QString why = c.failure ? qs(c.failure->message) : tr("nothing was exported");
    status_->setText(c.failure && c.failure->kind == "cancelled"
                         ? tr("Export cancelled.")
                         : tr("<b>Export failed.</b> %1").arg(why.toHtmlEscaped()));
    status_->setTextFormat(Qt::RichText);
    return;
  }
  const api::ExportReport& e = *c.report->exported;
  status_->setTextFormat(Qt::RichText);
  status_->setText(
      tr("<b>Exported</b> %1 files into %2").arg(e.files.size()).arg(qs(e.folder).toHtmlEscaped()));
  QString summary = tr("%1 \u00b7 code %2 in %3 kernels \u00b7 weights %4 \u00b7 arena %5")
                        .arg(qs(e.triple).toHtmlEscaped(), bytes(e.codeBytes))
                        .arg(e.kernelCodeBytes.size())
                        .arg(bytes(e.weightBytes), bytes(e.arenaBytes));
  if (!e.board.empty()) {
    const std::uint64_t flash = e.codeBytes + e.weightBytes;
    const std::uint64_t ram = e.arenaBytes + e.scratchBytes + e.ioBytes + e.stackBytes;
    const bool fits = flash <= e.boardFlashBytes && ram <= e.boardRamBytes;
    summary +=
        tr("<br>Board %1: flash %2 of %3 (and the runtime), RAM %4 of %5 (arena, scratch %6, "
           "inputs and outputs %7, stack %8)%9")
            .arg(qs(e.board).toHtmlEscaped(), bytes(flash), bytes(e.boardFlashBytes), bytes(ram),
                 bytes(e.boardRamBytes), bytes(e.scratchBytes), bytes(e.ioBytes),
                 bytes(e.stackBytes))
            .arg(fits ? QString()
                      : tr(" \u2014 <span style='color:#b00020'><b>the example does not fit "
                           "this board</b></span>"));
  }
  summary += tr("<br>Build: <tt>%1</tt>").arg(qs(e.buildCommand).toHtmlEscaped());
  if (!e.runCommand.empty())
    summary += tr(" \u00b7 run: <tt>%1</tt>").arg(qs(e.runCommand).toHtmlEscaped());
  summary_->setText(summary);
  summary_->show();

  files_->setRowCount(static_cast<int>(e.files.size()));
  for (int row = 0; row < static_cast<int>(e.files.size()); ++row) {
    const api::ExportedFile& f = e.files[static_cast<std::size_t>(row)];
    files_->setItem(row, 0, new QTableWidgetItem(qs(f.name)));
    files_->setItem(row, 1, numberItem(f.bytes));
    auto* what = new QTableWidgetItem(qs(f.description));
    what->setToolTip(qs(f.description));
    files_->setItem(row, 2, what);
  }
  kernels_->setRowCount(static_cast<int>(e.kernelCodeBytes.size()));
  for (int row = 0; row < static_cast<int>(e.kernelCodeBytes.size()); ++row) {
    const auto& [name, size] = e.kernelCodeBytes[static_cast<std::size_t>(row)];
    kernels_->setItem(row, 0, new QTableWidgetItem(qs(name)));
    kernels_->setItem(row, 1, numberItem(size));
  }
  files_->show();
  kernels_->show();

  if (outcome.build) {
    const api::ExportBuild& b = *outcome.build;
    const bool ok = b.status == "built";
    const bool skipped = b.status == "skipped";
    buildResult_->setText((ok        ? tr("Built: %1")
                           : skipped ? tr("Not built: %1")
                                     : tr("Build failed: %1"))
                              .arg(qs(b.message)));
    buildResult_->setStyleSheet(
        ok        ? QStringLiteral("QLabel { color: #1b5e20; }")
        : skipped ? QStringLiteral("QLabel { background: #fff3cd; color: #7a5200; padding: 3px; }")
                  : QStringLiteral("QLabel { background: #fdecea; color: #8a1c1c; padding: 3px; "
                                   "font-family: monospace; }"));
    buildResult_->show();
  }
}

QString ExportDialog::resultText() const {
  QStringList parts{status_->text()};
  if (!summary_->text().isEmpty())
    parts << summary_->text();
  if (!buildResult_->isHidden())
    parts << buildResult_->text();
  return parts.join(QLatin1Char('\n'));
}

} // namespace lathe::workbench
