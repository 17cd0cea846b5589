#include "app/workbench/main_window.h"

#include "app/workbench/kernels_panel.h"
#include "app/workbench/model_browser.h"
#include "app/workbench/model_compiler.h"
#include "app/workbench/model_loader.h"
#include "app/workbench/passes_panel.h"
#include "app/workbench/placeholder_label.h"
#include "app/workbench/properties_panel.h"
#include "app/workbench/recent_files.h"
#include "views/common/code_view.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTextDocument>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace lathe::workbench {
namespace {

constexpr int kLayoutVersion = 1;
const QString kModelFilter = QStringLiteral("ONNX models (*.onnx);;All files (*)");

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// The first local .onnx file among dropped URLs, or an empty string.
QString droppedModel(const QMimeData* mime) {
  if (!mime || !mime->hasUrls())
    return {};
  for (const QUrl& url : mime->urls()) {
    const QString path = url.toLocalFile(); // empty for non-file URLs
    if (QFileInfo(path).suffix().toLower() == QLatin1String("onnx"))
      return path;
  }
  return {};
}

QString ms(double milliseconds) {
  return QString::number(milliseconds, 'f', 2) + " ms";
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), loader_(new ModelLoader(this)), compiler_(new ModelCompiler(this)) {
  setWindowTitle(tr("Lathe"));
  setAcceptDrops(true);
  createCentralArea();
  createLogDock();
  createStatusBar();
  createActions();
  resize(1400, 900);

  connect(loader_, &ModelLoader::progressChanged, this, [this](int percent, const QString& stage) {
    loadProgress_->setValue(percent);
    if (!stage.isEmpty())
      loadStage_->setText(tr("%1: %2").arg(QFileInfo(loader_->loadingPath()).fileName(), stage));
  });
  connect(loader_, &ModelLoader::loaded, this, &MainWindow::showModel);
  connect(loader_, &ModelLoader::failed, this, &MainWindow::showFailure);
  connect(loader_, &ModelLoader::cancelled, this, [this](const QString& path) {
    clearLoading();
    log(tr("Cancelled opening %1").arg(QDir::toNativeSeparators(path)));
  });
  connect(compiler_, &ModelCompiler::compiled, this, &MainWindow::showKernels);
  connect(compiler_, &ModelCompiler::failed, this, &MainWindow::showCompileFailure);
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions() {
  QStyle* s = style();
  openAction_ = new QAction(s->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open\u2026"), this);
  openAction_->setShortcut(QKeySequence::Open);
  openAction_->setStatusTip(tr("Open an ONNX model"));
  connect(openAction_, &QAction::triggered, this, &MainWindow::chooseFile);

  reloadAction_ = new QAction(s->standardIcon(QStyle::SP_BrowserReload), tr("&Reload"), this);
  reloadAction_->setShortcut(QKeySequence::Refresh);
  reloadAction_->setStatusTip(tr("Open the current model again"));
  reloadAction_->setEnabled(false);
  connect(reloadAction_, &QAction::triggered, this, &MainWindow::reload);

  quitAction_ = new QAction(tr("&Quit"), this);
  quitAction_->setShortcut(QKeySequence::Quit);
  quitAction_->setMenuRole(QAction::QuitRole);
  connect(quitAction_, &QAction::triggered, this, &QWidget::close);

  findAction_ = new QAction(tr("&Find in Model\u2026"), this);
  findAction_->setShortcut(QKeySequence::Find);
  connect(findAction_, &QAction::triggered, browser_, &ModelBrowser::focusSearch);

  compileAction_ = new QAction(s->standardIcon(QStyle::SP_MediaPlay), tr("&Compile"), this);
  compileAction_->setObjectName(QStringLiteral("compileAction"));
  compileAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
  compileAction_->setToolTip(
      tr("Compile the model for this machine (%1)")
          .arg(compileAction_->shortcut().toString(QKeySequence::NativeText)));
  compileAction_->setStatusTip(tr("Compile the model for this machine and show its kernels"));
  compileAction_->setEnabled(false);
  connect(compileAction_, &QAction::triggered, this, &MainWindow::compile);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openAction_);
  QMenu* recent = file->addMenu(tr("Open &Recent"));
  recent->setObjectName(QStringLiteral("recentFilesMenu"));
  recentFiles_ = new RecentFiles(recent, this);
  connect(recentFiles_, &RecentFiles::openRequested, this, &MainWindow::openFile);
  file->addAction(reloadAction_);
  file->addSeparator();
  file->addAction(quitAction_);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(findAction_);

  QMenu* build = menuBar()->addMenu(tr("&Build"));
  build->addAction(compileAction_);

  QToolBar* toolbar = addToolBar(tr("Main"));
  toolbar->setObjectName(QStringLiteral("mainToolBar"));
  toolbar->setMovable(false);
  toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  toolbar->addAction(openAction_);
  if (auto* openButton = qobject_cast<QToolButton*>(toolbar->widgetForAction(openAction_))) {
    openButton->setMenu(recent); // the arrow next to Open lists recent files
    openButton->setPopupMode(QToolButton::MenuButtonPopup);
  }
  toolbar->addAction(reloadAction_);
  toolbar->addSeparator();
  toolbar->addAction(compileAction_);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(toolbar->toggleViewAction());
  view->addAction(findChild<QDockWidget*>(QStringLiteral("logDock"))->toggleViewAction());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Lathe"), this, [this] {
    QMessageBox::about(this, tr("About Lathe"),
                       tr("<b>Lathe %1</b><p>A workbench for an ML compiler: open an ONNX model "
                          "and see its graph, its passes and the IR after each.</p>")
                           .arg(QApplication::applicationVersion()));
  });
}

void MainWindow::createCentralArea() {
  browser_ = new ModelBrowser(this);
  browser_->setMinimumWidth(320);
  properties_ = new PropertiesPanel(this);
  passes_ = new PassesPanel(this);
  kernels_ = new KernelsPanel(this);
  kernels_->setObjectName(QStringLiteral("kernelsPanel"));
  irView_ = views::createCodeView(this);
  irView_->setObjectName(QStringLiteral("irView"));
  irView_->setPlaceholderText(tr("The IR after the last pass appears here."));
  irPage_ = new QWidget(this);
  auto* irLayout = new QVBoxLayout(irPage_);
  irLayout->setContentsMargins(6, 6, 6, 6);
  irLayout->addWidget(irView_);

  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("panelTabs"));
  tabs_->setDocumentMode(true);
  tabs_->addTab(properties_, tr("Properties"));
  tabs_->addTab(passes_, tr("Passes"));
  tabs_->addTab(irPage_, tr("IR"));
  tabs_->addTab(kernels_, tr("Kernels"));
  tabs_->setMinimumWidth(400);

  splitter_ = new QSplitter(Qt::Horizontal, this);
  splitter_->setObjectName(QStringLiteral("mainSplitter"));
  splitter_->setChildrenCollapsible(false);
  splitter_->addWidget(browser_);
  splitter_->addWidget(tabs_);
  splitter_->setStretchFactor(0, 2);
  splitter_->setStretchFactor(1, 3);
  splitter_->setSizes({640, 760});

  connect(browser_, &ModelBrowser::nodeSelected, this, [this](int node) {
    selectedNode_ = node;
    properties_->setNode(
        report_ ? std::shared_ptr<const api::GraphSnapshot>(report_, &report_->final) : nullptr,
        node);
    // With the Kernels tab in front, a node selects its kernel there; otherwise the node's
    // properties come to the front.
    if (tabs_->currentWidget() == kernels_)
      syncKernelToNode();
    else if (node >= 0)
      showPanel(Panel::Properties);
  });
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (tabs_->currentWidget() == kernels_)
      syncKernelToNode();
  });

  auto* welcome = createPlaceholderLabel(
      tr("<h2>No model open</h2>"
         "<p>Open an ONNX model with <b>File \u2192 Open</b> (%1), pick one from "
         "<b>File \u2192 Open Recent</b>, or drop a <tt>.onnx</tt> file on this window.</p>")
          .arg(QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText)),
      this);
  welcome->setTextFormat(Qt::RichText);

  // The splitter sits in a frame with a margin so the panels do not touch the window edge.
  auto* work = new QWidget(this);
  auto* workLayout = new QVBoxLayout(work);
  workLayout->setContentsMargins(6, 6, 6, 0);
  workLayout->addWidget(splitter_);

  centralStack_ = new QStackedWidget(this);
  centralStack_->addWidget(welcome);
  centralStack_->addWidget(work);
  setCentralWidget(centralStack_);
}

void MainWindow::createLogDock() {
  logView_ = views::createCodeView(this);
  logView_->setObjectName(QStringLiteral("logView"));
  logView_->setMaximumBlockCount(5000);
  logView_->setFocusPolicy(Qt::ClickFocus); // a log is read, not typed into: skip it on Tab
  auto* dock = new QDockWidget(tr("Log"), this);
  dock->setObjectName(QStringLiteral("logDock"));
  dock->setWidget(logView_);
  addDockWidget(Qt::BottomDockWidgetArea, dock);
  resizeDocks({dock}, {130}, Qt::Vertical);
}

void MainWindow::createStatusBar() {
  modelInfo_ = new QLabel(tr("No model"), this);
  modelInfo_->setObjectName(QStringLiteral("modelInfo"));
  loadStage_ = new QLabel(this);
  loadProgress_ = new QProgressBar(this);
  loadProgress_->setObjectName(QStringLiteral("loadProgress"));
  loadProgress_->setRange(0, 100);
  loadProgress_->setFixedWidth(180);
  cancelButton_ = new QToolButton(this);
  cancelButton_->setObjectName(QStringLiteral("cancelLoad"));
  cancelButton_->setText(tr("Cancel"));
  cancelButton_->setToolTip(tr("Stop opening the model"));
  cancelButton_->setAutoRaise(true);
  connect(cancelButton_, &QToolButton::clicked, this, &MainWindow::cancelLoad);

  compileStage_ = new QLabel(this);
  compileStage_->setObjectName(QStringLiteral("compileStage"));
  compileProgress_ = new QProgressBar(this);
  compileProgress_->setObjectName(QStringLiteral("compileProgress"));
  compileProgress_->setRange(0, 0); // busy
  compileProgress_->setTextVisible(false);
  compileProgress_->setFixedWidth(120);

  statusBar()->addWidget(modelInfo_, 1);
  statusBar()->addPermanentWidget(compileStage_);
  statusBar()->addPermanentWidget(compileProgress_);
  statusBar()->addPermanentWidget(loadStage_);
  statusBar()->addPermanentWidget(loadProgress_);
  statusBar()->addPermanentWidget(cancelButton_);
  clearLoading();
  compileStage_->hide();
  compileProgress_->hide();
}

void MainWindow::restoreSettings() {
  persistSettings_ = true;
  QSettings settings;
  settings.beginGroup(QStringLiteral("mainWindow"));
  restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("state")).toByteArray(), kLayoutVersion);
  splitter_->restoreState(settings.value(QStringLiteral("splitter")).toByteArray());
  passes_->splitter()->restoreState(settings.value(QStringLiteral("passesSplitter")).toByteArray());
  kernels_->splitter()->restoreState(
      settings.value(QStringLiteral("kernelsSplitter")).toByteArray());
}

void MainWindow::saveLayout() const {
  QSettings settings;
  settings.beginGroup(QStringLiteral("mainWindow"));
  settings.setValue(QStringLiteral("geometry"), saveGeometry());
  settings.setValue(QStringLiteral("state"), saveState(kLayoutVersion));
  settings.setValue(QStringLiteral("splitter"), splitter_->saveState());
  settings.setValue(QStringLiteral("passesSplitter"), passes_->splitter()->saveState());
  settings.setValue(QStringLiteral("kernelsSplitter"), kernels_->splitter()->saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (persistSettings_)
    saveLayout();
  loader_->cancel();
  compiler_->drop();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedModel(event->mimeData()).isEmpty())
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = droppedModel(event->mimeData());
  if (path.isEmpty())
    return;
  event->acceptProposedAction();
  openFile(path);
}

void MainWindow::chooseFile() {
  QSettings settings;
  const QString startDir = currentFile_.isEmpty()
                               ? settings.value(QStringLiteral("lastOpenDir")).toString()
                               : QFileInfo(currentFile_).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Model"), startDir, kModelFilter);
  if (path.isEmpty())
    return;
  settings.setValue(QStringLiteral("lastOpenDir"), QFileInfo(path).absolutePath());
  openFile(path);
}

void MainWindow::reload() {
  if (!currentFile_.isEmpty())
    openFile(currentFile_);
}

void MainWindow::openFile(const QString& path) {
  if (path.isEmpty())
    return;
  const QString absolute = QFileInfo(path).absoluteFilePath();
  log(tr("Opening %1").arg(QDir::toNativeSeparators(absolute)));
  loader_->load(absolute);
  setLoading(absolute);
}

bool MainWindow::isLoading() const {
  return loader_->isLoading();
}

void MainWindow::cancelLoad() {
  loader_->cancel();
}

void MainWindow::setLoading(const QString& path) {
  loadStage_->setText(tr("Opening %1\u2026").arg(QFileInfo(path).fileName()));
  loadProgress_->setValue(0);
  loadStage_->show();
  loadProgress_->show();
  cancelButton_->show();
}

void MainWindow::clearLoading() {
  loadStage_->hide();
  loadProgress_->hide();
  cancelButton_->hide();
}

void MainWindow::showModel(const QString& path, std::shared_ptr<const api::ModelReport> report,
                           std::shared_ptr<api::Session> session) {
  clearLoading();
  // A compile of the previous model is of no use any more.
  compiler_->drop();
  setCompiling(false);
  report_ = std::move(report);
  session_ = std::move(session);
  selectedNode_ = -1;
  currentFile_ = path;
  const api::ModelReport& r = *report_;
  const QString fileName = QFileInfo(path).fileName();

  // Aliasing pointers: the panels share the report instead of copying graphs and IR.
  browser_->setSnapshot(std::shared_ptr<const api::GraphSnapshot>(report_, &r.final));
  properties_->setNode(nullptr, -1);
  passes_->setPasses(std::shared_ptr<const std::vector<api::PassRecord>>(report_, &r.passes));
  irView_->setPlainText(qs(r.final.irText));
  kernels_->setReport(nullptr);
  centralStack_->setCurrentIndex(1);

  setWindowTitle(tr("Lathe \u2014 %1").arg(fileName));
  const QString name = r.final.name.empty() ? QFileInfo(path).completeBaseName() : qs(r.final.name);
  QString info = tr("%1 \u00b7 opset %2 \u00b7 %3 nodes")
                     .arg(name)
                     .arg(r.final.opset)
                     .arg(r.final.nodes.size());
  if (r.imported.nodes.size() != r.final.nodes.size())
    info += tr(" (%1 imported)").arg(r.imported.nodes.size());
  info += tr(" \u00b7 import %1 + pipeline %2")
              .arg(ms(r.importMilliseconds), ms(r.pipelineMilliseconds));
  modelInfo_->setText(info);
  modelInfo_->setToolTip(QDir::toNativeSeparators(path));

  reloadAction_->setEnabled(true);
  compileAction_->setEnabled(session_ != nullptr);
  if (persistSettings_)
    recentFiles_->add(path);
  log(tr("Opened %1: %2 nodes after %3 passes; import %4, pipeline %5")
          .arg(fileName)
          .arg(r.final.nodes.size())
          .arg(r.passes.size())
          .arg(ms(r.importMilliseconds), ms(r.pipelineMilliseconds)));
  for (const std::string& warning : r.warnings)
    log(tr("warning: %1").arg(qs(warning)), LogLevel::Warning);
  emit modelLoaded();
}

void MainWindow::showFailure(const QString& path, const api::Failure& failure) {
  clearLoading();
  const QString message = failure.message.empty()
                              ? tr("%1: could not be opened (%2)").arg(path, qs(failure.kind))
                              : qs(failure.message);
  log(tr("error: %1").arg(message), LogLevel::Error);
  showErrorDialog(QStringLiteral("loadErrorDialog"), tr("Cannot Open Model"),
                  tr("Lathe could not open %1.").arg(QFileInfo(path).fileName()), message);
  emit loadFailed(message);
}

void MainWindow::showErrorDialog(const QString& objectName, const QString& title,
                                 const QString& text, const QString& message) {
  auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  box->setObjectName(objectName);
  box->setTextFormat(Qt::PlainText);
  // Escaped: messages quote names from the model, and "<...>" must not turn into markup.
  box->setInformativeText(Qt::convertFromPlainText(message, Qt::WhiteSpaceNormal));
  box->setAttribute(Qt::WA_DeleteOnClose);
  // Messages start with a long path; the default width wraps them into a narrow column.
  box->setStyleSheet(QStringLiteral("QLabel#qt_msgbox_informativelabel { min-width: 34em; }"));
  // open(), not exec(): a nested event loop here would deliver the next load's result while
  // this one is still on screen, and would block tests and scripted runs.
  box->open();
}

bool MainWindow::compile() {
  if (!report_ || !session_ || compiler_->isCompiling())
    return false;
  if (!compiler_->compile(session_, report_))
    return false;
  log(tr("Compiling %1 for this machine").arg(QFileInfo(currentFile_).fileName()));
  setCompiling(true);
  return true;
}

bool MainWindow::isCompiling() const {
  return compiler_->isCompiling();
}

const std::shared_ptr<const api::CompileReport>& MainWindow::compileReport() const {
  return kernels_->report();
}

void MainWindow::setCompiling(bool compiling) {
  if (compiling)
    compileStage_->setText(tr("Compiling %1\u2026").arg(QFileInfo(currentFile_).fileName()));
  compileStage_->setVisible(compiling);
  compileProgress_->setVisible(compiling);
  compileAction_->setEnabled(!compiling && session_ != nullptr);
  kernels_->setCompiling(compiling);
}

void MainWindow::showKernels(const std::shared_ptr<const api::ModelReport>& model,
                             std::shared_ptr<const api::CompileReport> report) {
  if (model != report_)
    return; // another model is on display now
  setCompiling(false);
  const api::CompileReport& r = *report;
  kernels_->setReport(std::move(report));
  log(tr("Compiled %1 for %2: %3 kernels; lowering %4, code generation %5; intermediate "
         "memory %6 KiB")
          .arg(QFileInfo(currentFile_).fileName(), qs(r.target))
          .arg(r.kernels.size())
          .arg(ms(r.lowerMilliseconds), ms(r.codegenMilliseconds),
               QString::number(r.arenaBytes / 1024.0, 'f', 1)));
  if (tabs_->currentWidget() == kernels_)
    syncKernelToNode();
  emit compiled();
}

void MainWindow::showCompileFailure(const std::shared_ptr<const api::ModelReport>& model,
                                    const api::Failure& failure) {
  if (model != report_)
    return;
  setCompiling(false);
  const QString fileName = QFileInfo(currentFile_).fileName();
  const QString message = failure.message.empty()
                              ? tr("%1: could not be compiled (%2)").arg(fileName, qs(failure.kind))
                              : qs(failure.message);
  log(tr("error: %1").arg(message), LogLevel::Error);
  showErrorDialog(QStringLiteral("compileErrorDialog"), tr("Cannot Compile Model"),
                  tr("Lathe could not compile %1.").arg(fileName), message);
  emit compileFailed(message);
}

bool MainWindow::selectKernel(int kernel) {
  showPanel(Panel::Kernels);
  return kernels_->selectKernel(kernel);
}

void MainWindow::syncKernelToNode() {
  if (!report_ || selectedNode_ < 0 ||
      selectedNode_ >= static_cast<int>(report_->final.nodes.size()))
    return;
  kernels_->selectKernelForNode(report_->final.nodes[selectedNode_].name);
}

bool MainWindow::selectNode(int node) {
  return browser_->selectNode(node);
}

bool MainWindow::selectPass(int pass) {
  showPanel(Panel::Passes);
  return passes_->selectPass(pass);
}

void MainWindow::showPanel(Panel panel) {
  switch (panel) {
  case Panel::Properties:
    tabs_->setCurrentWidget(properties_);
    return;
  case Panel::Passes:
    tabs_->setCurrentWidget(passes_);
    return;
  case Panel::Ir:
    tabs_->setCurrentWidget(irPage_);
    return;
  case Panel::Kernels:
    tabs_->setCurrentWidget(kernels_);
    return;
  }
}

void MainWindow::log(const QString& line, LogLevel level) {
  const QString text =
      QStringLiteral("%1  %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), line);
  if (level == LogLevel::Info) {
    logView_->appendPlainText(text);
    return;
  }
  // Mid-tone red and amber read on light and dark backgrounds alike.
  const QColor color =
      level == LogLevel::Error ? QColor(0xd0, 0x3b, 0x3b) : QColor(0xc0, 0x80, 0x00);
  logView_->appendHtml(QStringLiteral("<span style=\"color:%1; white-space:pre\">%2</span>")
                           .arg(color.name(), text.toHtmlEscaped()));
}

} // namespace lathe::workbench
