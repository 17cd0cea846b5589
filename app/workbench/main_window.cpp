#include "app/workbench/main_window.h"

#include "app/workbench/engine_jobs.h"
#include "app/workbench/export_dialog.h"
#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window_text.h"
#include "app/workbench/model_browser.h"
#include "app/workbench/numerics_panel.h"
#include "app/workbench/passes_panel.h"
#include "app/workbench/placeholder_label.h"
#include "app/workbench/properties_panel.h"
#include "app/workbench/recent_files.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/session_worker.h"
#include "app/workbench/step_through.h"
#include "app/workbench/tour_dialog.h"
#include "app/workbench/tune_panel.h"
#include "app/workbench/workbench_document.h"
#include "views/common/code_view.h"
#include "views/diff/changed_nodes.h"
#include "views/graph/graph_view.h"
#include "views/profile/profile_view.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QStyle>
#include <QTextDocument>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <set>
#include <utility>

namespace lathe::workbench {
namespace {

// The format is read from the file's contents; the filters only narrow the list.
const QString kModelFilter = QStringLiteral(
    "Models (*.onnx *.tflite *.pt *.pth);;ONNX models (*.onnx);;TFLite models (*.tflite);;"
    "TorchScript archives (*.pt *.pth);;All files (*)");

// The first local model file (.onnx, .tflite, .pt, .pth) among dropped URLs, or an empty
// string.
QString droppedModel(const QMimeData* mime) {
  if (!mime || !mime->hasUrls())
    return {};
  for (const QUrl& url : mime->urls()) {
    const QString path = url.toLocalFile(); // empty for non-file URLs
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("onnx") || suffix == QLatin1String("tflite") ||
        suffix == QLatin1String("pt") || suffix == QLatin1String("pth"))
      return path;
  }
  return {};
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), worker_(new SessionWorker(this)), doc_(new WorkbenchDocument(this)) {
  setWindowTitle(tr("Lathe"));
  setAcceptDrops(true);
  createCentralArea();
  createDocks();
  createStatusBar();
  createActions();
  // 1400x900, or what a smaller screen (1366x768 laptops) has free; the offscreen platform's
  // 800x600 screen is not a real one, and tests and screenshots size the window themselves.
  QSize size(1400, 900);
  if (const QScreen* screen = QGuiApplication::primaryScreen();
      screen && QGuiApplication::platformName() != QLatin1String("offscreen"))
    size = size.boundedTo(screen->availableGeometry().size());
  // The minimum size a first layout pass set (from the docks as added, before they were
  // tabified) would otherwise keep the window wider than this.
  layout()->activate();
  resize(size);
  // Dock sizes only stick once the window is laid out: on the first pass of the event loop,
  // unless restoreSettings() brought back the user's own layout.
  QTimer::singleShot(0, this, [this] {
    if (layoutRestored_)
      return;
    resizeDocks({modelDock_, propertiesDock_}, {280, 360}, Qt::Horizontal);
    // The bottom docks (diffs, code, profile) get about a third of the height: 276 pixels
    // in a 768-pixel window, 300 at most.
    resizeDocks({passesDock_}, {std::clamp(height() * 36 / 100, 230, 300)}, Qt::Vertical);
  });

  connect(worker_, &SessionWorker::progressChanged, this,
          [this](const QString& tag, int percent, const QString& stage) {
            if (tag == jobs::kOpen) {
              loadProgress_->setValue(percent);
              if (!stage.isEmpty())
                loadStage_->setText(tr("%1: %2").arg(QFileInfo(loadingPath_).fileName(), stage));
            } else if (tag == jobs::kCompile) {
              compileStage_->setText(
                  tr("Compiling %1: %2\u2026").arg(QFileInfo(doc_->path()).fileName(), stage));
            } else if (tag == jobs::kRun) {
              runPanel_->setProgress(percent, stage);
            } else if (tag == jobs::kExport && exportDialog_) {
              exportDialog_->setProgress(stage);
            }
          });
  connect(worker_, &SessionWorker::idle, this, &MainWindow::updateScheduleAvailability);
  // The panels that show the document's compile and run follow it.
  connect(doc_, &WorkbenchDocument::compileChanged, this, [this] {
    kernels_->setReport(doc_->compileReport());
    markStaleCode();
    updateScheduleAvailability();
  });
  // Another target: the code on display is for the old one until the compile this starts
  // (only when there was code to replace) has finished.
  connect(doc_, &WorkbenchDocument::targetChanged, this, [this] {
    markStaleCode();
    updateScheduleAvailability();
    if (reopenForTargetFamily())
      return;
    if (doc_->compileReport() && !isCompiling())
      compile();
    else if (isCompiling())
      recompileForTarget_ = true; // when the compile in flight ends (showKernels)
  });
  connect(doc_, &WorkbenchDocument::runChanged, this,
          [this] { runPanel_->showReport(doc_->runReport()); });
}

MainWindow::~MainWindow() {
  // A search has its own stop flag: the worker, deleted first among the children, waits for
  // the job in flight, which then ends after its candidate instead of after every trial.
  if (tuneStop_)
    tuneStop_->store(true);
}

void MainWindow::createActions() {
  QStyle* s = style();
  openAction_ = new QAction(s->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open\u2026"), this);
  openAction_->setShortcut(QKeySequence::Open);
  openAction_->setStatusTip(tr("Open an ONNX model"));
  connect(openAction_, &QAction::triggered, this, &MainWindow::chooseFile);

  reloadAction_ = new QAction(s->standardIcon(QStyle::SP_BrowserReload), tr("&Reload"), this);
  // Not QKeySequence::Refresh: on Linux that includes F5, which is Run's.
  reloadAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  reloadAction_->setStatusTip(tr("Open the current model again"));
  reloadAction_->setEnabled(false);
  connect(reloadAction_, &QAction::triggered, this, &MainWindow::reload);

  quitAction_ = new QAction(tr("&Quit"), this);
  quitAction_->setShortcut(QKeySequence::Quit);
  quitAction_->setMenuRole(QAction::QuitRole);
  connect(quitAction_, &QAction::triggered, this, &QWidget::close);

  findAction_ = new QAction(s->standardIcon(QStyle::SP_FileDialogContentsView),
                            tr("&Find in Graph\u2026"), this);
  findAction_->setObjectName(QStringLiteral("findAction"));
  findAction_->setShortcut(QKeySequence::Find);
  findAction_->setToolTip(tr("Find a node by name or op type (%1)")
                              .arg(findAction_->shortcut().toString(QKeySequence::NativeText)));
  connect(findAction_, &QAction::triggered, graph_, &views::GraphView::focusSearch);
  findInModelAction_ = new QAction(tr("Find in &Model Tree\u2026"), this);
  findInModelAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
  connect(findInModelAction_, &QAction::triggered, this, [this] {
    showPanel(Panel::Model);
    browser_->focusSearch();
  });

  compileAction_ = new QAction(s->standardIcon(QStyle::SP_MediaPlay), tr("&Compile"), this);
  compileAction_->setObjectName(QStringLiteral("compileAction"));
  compileAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
  compileAction_->setToolTip(
      tr("Compile the model for this machine (%1)")
          .arg(compileAction_->shortcut().toString(QKeySequence::NativeText)));
  compileAction_->setStatusTip(tr("Compile the model for this machine and show its kernels"));
  compileAction_->setEnabled(false);
  connect(compileAction_, &QAction::triggered, this, &MainWindow::compile);

  exportAction_ = new QAction(tr("&Export\u2026"), this);
  exportAction_->setObjectName(QStringLiteral("exportAction"));
  exportAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  exportAction_->setStatusTip(tr("Write the model for the standalone C runtime, for this machine "
                                 "or another (AArch64, RISC-V, Cortex-M, WebAssembly)"));
  exportAction_->setEnabled(false);
  connect(exportAction_, &QAction::triggered, this, &MainWindow::showExportDialog);

  runAction_ = new QAction(s->standardIcon(QStyle::SP_MediaSeekForward), tr("&Run"), this);
  runAction_->setObjectName(QStringLiteral("runAction"));
  runAction_->setShortcut(QKeySequence(Qt::Key_F5));
  runAction_->setToolTip(tr("Run the model with the Run panel's settings (%1)")
                             .arg(runAction_->shortcut().toString(QKeySequence::NativeText)));
  runAction_->setStatusTip(tr("Run the model (compiling it first if needed) and show the results"));
  runAction_->setEnabled(false);
  connect(runAction_, &QAction::triggered, this, [this] {
    showPanel(Panel::Run);
    run();
  });

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openAction_);
  QMenu* recent = file->addMenu(tr("Open &Recent"));
  recent->setObjectName(QStringLiteral("recentFilesMenu"));
  recentFiles_ = new RecentFiles(recent, this);
  connect(recentFiles_, &RecentFiles::openRequested, this, &MainWindow::openFile);
  file->addAction(reloadAction_);
  file->addSeparator();
  createSessionActions(file);
  file->addSeparator();
  file->addAction(exportAction_);
  file->addSeparator();
  file->addAction(quitAction_);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(findAction_);
  edit->addAction(findInModelAction_);

  QMenu* build = menuBar()->addMenu(tr("&Build"));
  build->addAction(compileAction_);
  build->addAction(runAction_);
  build->addSeparator();
  auto* stepThrough =
      build->addAction(tr("&Step Through Compilation\u2026"), this, [this] { showStepThrough(); });
  stepThrough->setObjectName(QStringLiteral("stepThroughAction"));
  stepThrough->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
  stepThrough->setStatusTip(tr("Follow the selected node from the ONNX file through each pass, "
                               "its kernel's loops, LLVM IR and assembly, with explanations"));

  createToolBar(recent);

  // The graph's zoom actions work from anywhere in the window, not only inside the view.
  for (QAction* action : {graph_->fitAction(), graph_->zoomInAction(), graph_->zoomOutAction()})
    action->setShortcutContext(Qt::WindowShortcut);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  createGraphViewActions(view);
  view->addAction(graph_->fitAction());
  view->addAction(graph_->zoomInAction());
  view->addAction(graph_->zoomOutAction());
  view->addSeparator();
  for (QDockWidget* dock : {modelDock_, propertiesDock_, passesDock_, codeDock_, scheduleDock_,
                            irDock_, logDock_, runDock_, profileDock_})
    view->addAction(dock->toggleViewAction());
  view->addAction(findChild<QToolBar*>(QStringLiteral("mainToolBar"))->toggleViewAction());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  auto* tour = help->addAction(tr("Guided &Tour\u2026"), this, [this] { showTour(); });
  tour->setObjectName(QStringLiteral("tourAction"));
  tour->setShortcut(QKeySequence::HelpContents);
  tour->setStatusTip(tr("The window explained page by page, and the four journeys through it"));
  help->addSeparator();
  help->addAction(tr("&About Lathe"), this, [this] {
    QMessageBox::about(this, tr("About Lathe"),
                       tr("<b>Lathe %1</b><p>A workbench for an ML compiler: open an ONNX model "
                          "and see its graph, its passes and the IR after each, and the code "
                          "its kernels compile to.</p>")
                           .arg(QApplication::applicationVersion()));
  });
}

void MainWindow::createToolBar(QMenu* recent) {
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

  targetPicker_ = new QComboBox(toolbar);
  targetPicker_->setObjectName(QStringLiteral("targetPicker"));
  targetPicker_->setToolTip(tr("Target to compile for"));
  targetPicker_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  auto* targets = new QStandardItemModel(targetPicker_);
  for (const api::TargetSummary& target : api::knownTargets()) {
    auto* item = new QStandardItem(qs(target.label));
    item->setData(qs(target.text), Qt::UserRole);
    item->setToolTip(QStringLiteral("%1\n%2").arg(qs(target.text), qs(target.description)));
    if (!target.unavailable.empty()) {
      // Listed so that the choice is visible, but this build cannot generate code for it.
      item->setEnabled(false);
      item->setToolTip(item->toolTip() + tr("\nNot available: %1").arg(qs(target.unavailable)));
    } else if (target.text.rfind("cuda", 0) == 0) {
      item->setToolTip(item->toolTip() +
                       tr("\nGPU code: Compile shows each kernel's PTX and ptxas's registers and "
                          "spills; Run needs an NVIDIA GPU and its CUDA driver."));
    } else if (!target.runsHere) {
      // Code for another machine: compiled here to be read; Run exports it and runs it
      // under the emulator (or Node), File > Export writes it for deployment.
      item->setToolTip(item->toolTip() +
                       tr("\nAnother machine's code: Compile shows it; Run builds the export "
                          "and runs it under an emulator or Node."));
    }
    targets->appendRow(item);
  }
  targetPicker_->setModel(targets);
  toolbar->addWidget(targetPicker_);
  const auto pickedTarget = [this] {
    const QString text = targetPicker_->currentData(Qt::UserRole).toString();
    doc_->setTarget(text.isEmpty() ? QStringLiteral("llvm") : text);
  };
  connect(targetPicker_, &QComboBox::currentIndexChanged, this, pickedTarget);
  pickedTarget();
  toolbar->addAction(compileAction_);
  toolbar->addAction(runAction_);
  toolbar->addSeparator();
  // Its own action: the graph's Fit action (Ctrl+0) keeps its shortcut and its place in the
  // graph's bar.
  QAction* fit = toolbar->addAction(style()->standardIcon(QStyle::SP_TitleBarNormalButton),
                                    tr("Fit Graph"), graph_, &views::GraphView::fitToView);
  fit->setToolTip(tr("Show the whole graph (%1)")
                      .arg(graph_->fitAction()->shortcut().toString(QKeySequence::NativeText)));
  toolbar->addAction(findAction_);
}

void MainWindow::createCentralArea() {
  graph_ = new views::GraphView(this);
  graphBanner_ = new QLabel(this);
  graphBanner_->setObjectName(QStringLiteral("graphBanner"));
  graphBanner_->setTextFormat(Qt::RichText);
  graphBanner_->setWordWrap(true); // a long pass name must not widen the window
  graphBanner_->setContentsMargins(8, 4, 8, 4);
  graphBanner_->setAutoFillBackground(true);
  graphBanner_->setBackgroundRole(QPalette::ToolTipBase);
  graphBanner_->setForegroundRole(QPalette::ToolTipText);
  graphBanner_->hide();
  connect(graphBanner_, &QLabel::linkActivated, this, [this](const QString& link) {
    if (link == QLatin1String("authored"))
      showAuthoredGraph();
    else
      showFinalGraph();
  });
  auto* graphPage = new QWidget(this);
  auto* graphLayout = new QVBoxLayout(graphPage);
  graphLayout->setContentsMargins(0, 0, 0, 0);
  graphLayout->setSpacing(0);
  graphLayout->addWidget(graphBanner_);
  graphLayout->addWidget(graph_, 1);
  connect(graph_, &views::GraphView::nodeSelected, this, &MainWindow::onGraphNodeSelected);
  // A node inside an If/Loop/Scan subgraph: its properties come from the subgraph's snapshot.
  connect(graph_, &views::GraphView::subgraphNodeSelected, this,
          [this](std::shared_ptr<const api::GraphSnapshot> subgraph, int node, int) {
            properties_->setNode(std::move(subgraph), node);
            showPanel(Panel::Properties);
          });
  connect(graph_, &views::GraphView::layoutFinished, this, [this](double milliseconds) {
    const auto& shown = graph_->snapshot();
    if (shown)
      log(tr("Laid out the graph (%1 nodes) in %2").arg(shown->nodes.size()).arg(ms(milliseconds)));
  });

  auto* welcome = createPlaceholderLabel(
      tr("<h2>No model open</h2>"
         "<p>Open an ONNX, TFLite or TorchScript model with <b>File \u2192 Open</b> (%1), "
         "pick one from <b>File \u2192 Open Recent</b>, or drop a <tt>.onnx</tt>, "
         "<tt>.tflite</tt> or <tt>.pt</tt> file on this window.</p>")
          .arg(QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText)),
      this);
  welcome->setTextFormat(Qt::RichText);

  centralStack_ = new QStackedWidget(this);
  centralStack_->addWidget(welcome);
  centralStack_->addWidget(graphPage);
  setCentralWidget(centralStack_);
}

QDockWidget* MainWindow::addPanel(QWidget* panel, const QString& title, const QString& name,
                                  Qt::DockWidgetArea area, Scroll scroll) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(name);
  if (scroll == Scroll::WhenSmall) {
    // A tall form: scrolls in a short dock instead of making the window taller than the
    // screen (the default layout must fit 1366x768).
    auto* area = new QScrollArea(dock);
    area->setObjectName(name + QStringLiteral("Scroll"));
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setWidget(panel);
    dock->setWidget(area);
  } else {
    dock->setWidget(panel);
  }
  addDockWidget(area, dock);
  return dock;
}

void MainWindow::createDocks() {
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  setTabPosition(Qt::AllDockWidgetAreas, QTabWidget::North);
  browser_ = new ModelBrowser(this);
  properties_ = new PropertiesPanel(this);
  passes_ = new PassesPanel(this);
  kernels_ = new KernelsPanel(this);
  kernels_->setObjectName(QStringLiteral("kernelsPanel"));
  irView_ = views::createCodeView(this, views::CodeLanguage::LatheIr);
  irView_->setObjectName(QStringLiteral("irView"));
  irView_->setPlaceholderText(tr("The IR after the last pass appears here."));
  logView_ = views::createCodeView(this);
  logView_->setObjectName(QStringLiteral("logView"));
  logView_->setMaximumBlockCount(5000);
  logView_->setFocusPolicy(Qt::ClickFocus); // a log is read, not typed into: skip it on Tab

  // Tree on the left, details on the right, the wide text panels under the graph.
  modelDock_ = addPanel(browser_, tr("Model"), QStringLiteral("modelDock"), Qt::LeftDockWidgetArea);
  propertiesDock_ = addPanel(properties_, tr("Properties"), QStringLiteral("propertiesDock"),
                             Qt::RightDockWidgetArea);
  passesDock_ =
      addPanel(passes_, tr("Passes"), QStringLiteral("passesDock"), Qt::BottomDockWidgetArea);
  codeDock_ = addPanel(kernels_, tr("Code"), QStringLiteral("codeDock"), Qt::BottomDockWidgetArea);
  schedulePanel_ = new SchedulePanel(this);
  schedulePanel_->setObjectName(QStringLiteral("schedulePanel"));
  scheduleDock_ = addPanel(schedulePanel_, tr("Schedule"), QStringLiteral("scheduleDock"),
                           Qt::BottomDockWidgetArea);
  irDock_ = addPanel(irView_, tr("IR"), QStringLiteral("irDock"), Qt::BottomDockWidgetArea);
  logDock_ = addPanel(logView_, tr("Log"), QStringLiteral("logDock"), Qt::BottomDockWidgetArea);
  createRunDocks(); // before the tabs: Profile splits off beside Passes, not into its tabs
  createTuneDock();
  tabifyDockWidget(passesDock_, codeDock_);
  tabifyDockWidget(codeDock_, scheduleDock_);
  tabifyDockWidget(scheduleDock_, irDock_);
  tabifyDockWidget(irDock_, logDock_);
  tabifyDockWidget(logDock_, numericsDock_);
  tabifyDockWidget(numericsDock_, tuneDock_);
  passesDock_->raise();

  connect(browser_, &ModelBrowser::nodeSelected, this, &MainWindow::onTreeNodeSelected);
  connect(kernels_, &KernelsPanel::kernelSelected, this, &MainWindow::highlightKernel);
  connect(kernels_, &KernelsPanel::kernelSelected, this, &MainWindow::showScheduleKernel);
  connect(schedulePanel_, &SchedulePanel::applyRequested, this,
          [this](const QString&, const QString&, bool timed) { trySchedule(timed); });
  connect(schedulePanel_, &SchedulePanel::keptChanged, this, [this] {
    doc_->setKeptSchedules(schedulePanel_->keptScheduleText());
    log(tr("Kept schedules for %n kernel(s); Compile applies them", nullptr,
           static_cast<int>(schedulePanel_->kept().size())));
  });
  connect(passes_, &PassesPanel::passSelected, this, &MainWindow::showGraphAfterPass);
  // Bringing Code to the front shows the kernel of the selected node.
  connect(codeDock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible)
      syncKernelToNode();
  });
}

void MainWindow::createStatusBar() {
  modelInfo_ = new QLabel(tr("No model"), this);
  modelInfo_->setObjectName(QStringLiteral("modelInfo"));
  // Its text (name, opset, counts, times) is as long as the model's name: it may be cut, but
  // never sets a minimum width for the window.
  modelInfo_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
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
  cancelCompileButton_ = new QToolButton(this);
  cancelCompileButton_->setObjectName(QStringLiteral("cancelCompile"));
  cancelCompileButton_->setText(tr("Cancel"));
  cancelCompileButton_->setToolTip(tr("Stop waiting for the compile"));
  cancelCompileButton_->setAutoRaise(true);
  connect(cancelCompileButton_, &QToolButton::clicked, this, &MainWindow::cancelCompile);

  statusBar()->addWidget(modelInfo_, 1);
  statusBar()->addPermanentWidget(compileStage_);
  statusBar()->addPermanentWidget(compileProgress_);
  statusBar()->addPermanentWidget(cancelCompileButton_);
  statusBar()->addPermanentWidget(loadStage_);
  statusBar()->addPermanentWidget(loadProgress_);
  statusBar()->addPermanentWidget(cancelButton_);
  clearLoading();
  compileStage_->hide();
  compileProgress_->hide();
  cancelCompileButton_->hide();
}

void MainWindow::restoreSettings() {
  persistSettings_ = true;
  QSettings settings;
  settings.beginGroup(QStringLiteral("mainWindow"));
  restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
  layoutRestored_ =
      restoreState(settings.value(QStringLiteral("state")).toByteArray(), kLayoutVersion);
  passes_->splitter()->restoreState(settings.value(QStringLiteral("passesSplitter")).toByteArray());
  kernels_->splitter()->restoreState(
      settings.value(QStringLiteral("kernelsSplitter")).toByteArray());
}

const std::shared_ptr<const api::ModelReport>& MainWindow::report() const {
  return doc_->model();
}

QString MainWindow::currentFile() const {
  return doc_->path();
}

void MainWindow::saveLayout() const {
  QSettings settings;
  settings.beginGroup(QStringLiteral("mainWindow"));
  settings.setValue(QStringLiteral("geometry"), saveGeometry());
  settings.setValue(QStringLiteral("state"), saveState(kLayoutVersion));
  settings.setValue(QStringLiteral("passesSplitter"), passes_->splitter()->saveState());
  settings.setValue(QStringLiteral("kernelsSplitter"), kernels_->splitter()->saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (persistSettings_)
    saveLayout();
  for (const QString& tag : {jobs::kOpen, jobs::kCompile, jobs::kRun, jobs::kSchedule, jobs::kTune})
    worker_->cancel(tag);
  if (tuneStop_)
    tuneStop_->store(true);
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
  const QString startDir = doc_->path().isEmpty()
                               ? settings.value(QStringLiteral("lastOpenDir")).toString()
                               : QFileInfo(doc_->path()).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Model"), startDir, kModelFilter);
  if (path.isEmpty())
    return;
  settings.setValue(QStringLiteral("lastOpenDir"), QFileInfo(path).absolutePath());
  openFile(path);
}

bool MainWindow::reopenForTargetFamily() {
  const bool gpu = api::isGpuTarget(doc_->target().toStdString());
  if (!doc_->model() || gpu == openedForGpu_ || isLoading())
    return false;
  // Towards a GPU only when a CPU layout pass changed the graph (else it is the same graph).
  if (gpu) {
    bool blocked = false;
    for (const api::PassRecord& p : doc_->model()->passes)
      blocked = blocked || ((p.name == "layout-nchwc" || p.name == "winograd-nchwc") && p.changed);
    if (!blocked) {
      openedForGpu_ = true;
      return false;
    }
  }
  log(gpu ? tr("Opening the model again for a GPU target: its Convs stay in NCHW, without the "
               "CPU's blocked layout (layout-nchwc, winograd-nchwc)")
          : tr("Opening the model again for a CPU target, with the CPU's blocked layout"));
  recompileAfterOpen_ = doc_->compileReport() != nullptr || isCompiling();
  recompileForTarget_ = false;
  cancelCompile(); // its code would be for the graph opened before
  reload();
  return true;
}

void MainWindow::reload() {
  if (!doc_->path().isEmpty())
    openFile(doc_->path());
}

void MainWindow::openFile(const QString& path) {
  if (path.isEmpty())
    return;
  const QString absolute = QFileInfo(path).absoluteFilePath();
  log(tr("Opening %1").arg(QDir::toNativeSeparators(absolute)));
  loadingPath_ = absolute;
  const std::string file = QFile::encodeName(absolute).toStdString();
  const bool forGpu = api::isGpuTarget(doc_->target().toStdString());
  std::map<std::string, std::vector<std::int64_t>> shapes;
  if (api::modelNeedsInputShapes(file)) {
    const std::optional<std::map<std::string, std::vector<std::int64_t>>> asked =
        askInputShapes(absolute);
    if (!asked) {
      log(tr("Did not open %1: it needs its input shapes").arg(QDir::toNativeSeparators(absolute)));
      return;
    }
    shapes = *asked;
  }
  worker_->post(
      jobs::kOpen,
      [this, absolute, file, forGpu,
       shapes](const SessionWorker::Context& context) -> SessionWorker::Deliver {
        Opened opened = openModelJob(file, forGpu, context, shapes);
        return [this, absolute, opened] { finishOpen(absolute, opened); };
      },
      [this, absolute, file](const std::string& error) -> SessionWorker::Deliver {
        return [this, absolute, opened = Opened{{nullptr, internalFailure(file, error)}, nullptr}] {
          finishOpen(absolute, opened);
        };
      });
  setLoading(absolute);
}

std::optional<std::map<std::string, std::vector<std::int64_t>>>
MainWindow::askInputShapes(const QString& path) {
  QString text = inputShapesAsked_.value(path);
  QString problem;
  for (;;) {
    bool ok = false;
    text = QInputDialog::getText(
        this, tr("Input shapes"),
        problem + tr("%1 is a TorchScript archive, which records no input shapes.\n"
                     "Give the shape of each input of its forward, e.g.  x:[1,3,224,224]")
                      .arg(QFileInfo(path).fileName()),
        QLineEdit::Normal, text, &ok);
    if (!ok)
      return std::nullopt;
    std::map<std::string, std::vector<std::int64_t>> shapes;
    static const QRegularExpression entry(QStringLiteral("([^\\s:]+)\\s*:\\s*\\[([^\\]]*)\\]"));
    QString rest = text;
    for (auto it = entry.globalMatch(text); it.hasNext();) {
      const QRegularExpressionMatch m = it.next();
      rest.replace(m.captured(0), QString());
      std::vector<std::int64_t> dims;
      bool valid = true;
      for (const QString& d : m.captured(2).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool isNumber = false;
        const qlonglong v = d.trimmed().toLongLong(&isNumber);
        valid = valid && isNumber && v >= 0;
        dims.push_back(v);
      }
      if (!valid) {
        shapes.clear();
        break;
      }
      shapes[m.captured(1).toStdString()] = dims;
    }
    if (!shapes.empty() && rest.trimmed().isEmpty()) {
      inputShapesAsked_[path] = text;
      return shapes;
    }
    problem = tr("Could not read \"%1\": write name:[d0,d1,...] for each input, separated by "
                 "spaces.\n\n")
                  .arg(text);
  }
}

bool MainWindow::isLoading() const {
  return worker_->isBusy(jobs::kOpen);
}

void MainWindow::cancelLoad() {
  if (!worker_->cancel(jobs::kOpen))
    return;
  clearLoading();
  log(tr("Cancelled opening %1").arg(QDir::toNativeSeparators(loadingPath_)));
}

void MainWindow::finishOpen(const QString& path, const Opened& opened) {
  if (opened.result.ok()) {
    openedForGpu_ = opened.forGpu;
    showModel(path, opened.result.report, opened.session);
    // Opened again for another family of targets: compile what was compiled before.
    if (std::exchange(recompileAfterOpen_, false) && doc_->session() && !isCompiling())
      compile();
    return;
  }
  recompileAfterOpen_ = false;
  const api::Failure& failure = *opened.result.failure;
  if (failure.kind == "cancelled") { // the engine gave up on its own
    clearLoading();
    log(tr("Cancelled opening %1").arg(QDir::toNativeSeparators(path)));
    return;
  }
  showFailure(path, failure);
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
  // A compile, run, schedule or search of the previous model is of no use any more.
  for (const QString& tag : {jobs::kCompile, jobs::kRun, jobs::kSchedule, jobs::kTune})
    worker_->cancel(tag);
  if (tuneStop_)
    tuneStop_->store(true);
  tunePanel_->reset();
  const bool otherModel = path != doc_->path(); // not a reload
  // Forgets the last model's compile, run and selection: the panels that show them follow.
  doc_->setModel(path, std::move(report), std::move(session));
  setCompiling(false);
  runPanel_->setRunning(false);
  if (otherModel) { // nothing typed for the last model applies
    runPanel_->resetInputs();
    browser_->clearSearch();
    graph_->clearSearch();
  }
  runPanel_->setModelInputs(doc_->model() ? doc_->model()->imported.inputs
                                          : std::vector<api::TensorSummary>());
  profileView_->setReport(nullptr, nullptr);
  numericsPanel_->cancel();
  numericsPanel_->showReport(nullptr);
  const api::ModelReport& r = *doc_->model();
  const QString fileName = QFileInfo(path).fileName();

  // Aliasing pointers: the panels share the report instead of copying graphs and IR.
  // The graph (and the tree, which lists the same graph) opens as the file has it; the banner
  // leads to the optimised graph, what compiles.
  showAuthoredGraph();
  properties_->setNode(nullptr, -1);
  passes_->setPasses(std::shared_ptr<const std::vector<api::PassRecord>>(doc_->model(), &r.passes),
                     std::shared_ptr<const api::GraphSnapshot>(doc_->model(), &r.imported));
  properties_->setSession(worker_, doc_->session());
  irView_->setPlainText(qs(r.final.irText));
  schedulePanel_->reset();
  updateScheduleAvailability();
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
  compileAction_->setEnabled(doc_->session() != nullptr);
  exportAction_->setEnabled(doc_->session() != nullptr);
  updateRunAvailability();
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
  applyPendingSession(path); // a session opened for this model
}

void MainWindow::showFailure(const QString& path, const api::Failure& failure) {
  clearLoading();
  const QString message = failure.message.empty()
                              ? tr("%1: could not be opened (%2)").arg(path, qs(failure.kind))
                              : qs(failure.message);
  log(tr("error: %1").arg(message), LogLevel::Error);
  showErrorDialog(QStringLiteral("loadErrorDialog"), tr("Cannot Open Model"),
                  tr("Lathe could not open %1.").arg(QFileInfo(path).fileName()), message);
  if (pendingSession_ && pendingSession_->model == QFile::encodeName(path).toStdString()) {
    pendingSession_.reset(); // nothing to restore it onto
    emit sessionFailed(message);
  }
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
  // One compile at a time; none while a run is current (it would change the code the run
  // shows as it finishes).
  if (!doc_->model() || !doc_->session() || worker_->isBusy(jobs::kCompile) ||
      worker_->isBusy(jobs::kRun) || worker_->isBusy(jobs::kTune))
    return false;
  // A model with symbolic input dims compiles for the shapes of the Run panel: those of its
  // input file, or those typed in its shape table. They must be given first.
  if (runPanel_->hasSymbolicInputs() && !runPanel_->shapeProblem().isEmpty()) {
    showPanel(Panel::Run);
    log(tr("%1 has inputs with symbolic dims; to compile it: %2")
            .arg(QFileInfo(doc_->path()).fileName(), runPanel_->shapeProblem()),
        LogLevel::Warning);
    return false;
  }
  // A Schedule preview or timing is of no use once the kernels change.
  if (worker_->cancel(jobs::kSchedule))
    schedulePanel_->stopTrying(tr("Stopped: the model is being compiled."));
  const QString targetText = target();
  doc_->setRunSettings(runPanel_->settings());
  const RunSettings& inputs = doc_->runSettings();
  api::CompileOptions options;
  options.target = targetText.toStdString();
  options.scheduleText = doc_->keptSchedules();
  options.tuningRecords = doc_->tuningRecords();
  options.inputsFile = inputs.inputsNpz; // specialises a model with symbolic input dims
  options.inputShapes = inputs.inputShapes;
  const auto model = doc_->model();
  worker_->post(
      jobs::kCompile,
      [this, session = doc_->session(), model,
       options](const SessionWorker::Context& context) -> SessionWorker::Deliver {
        api::CompileResult result = compileJob(*session, options, context);
        return [this, model, result] { finishCompile(model, result); };
      },
      [this, model](const std::string& error) -> SessionWorker::Deliver {
        return [this, model, failure = internalFailure(model->path, error)] {
          finishCompile(model, api::CompileResult{nullptr, failure});
        };
      });
  log(tr("Compiling %1 for %2").arg(QFileInfo(doc_->path()).fileName(), targetText));
  setCompiling(true);
  return true;
}

void MainWindow::finishCompile(const std::shared_ptr<const api::ModelReport>& model,
                               const api::CompileResult& result) {
  if (result.ok())
    showKernels(model, result.report);
  else
    showCompileFailure(model, *result.failure);
}

void MainWindow::cancelCompile() {
  // The engine stops at its next stage (code generation itself runs to its end); the
  // result is dropped.
  if (!worker_->cancel(jobs::kCompile))
    return;
  setCompiling(false);
  log(tr("Cancelled compiling %1").arg(QFileInfo(doc_->path()).fileName()));
}

QString MainWindow::target() const {
  return doc_->target();
}

bool MainWindow::setTarget(const QString& target) {
  const int index = targetPicker_->findData(target, Qt::UserRole);
  const auto* model = qobject_cast<const QStandardItemModel*>(targetPicker_->model());
  if (index < 0 || !model || !model->item(index)->isEnabled())
    return false;
  targetPicker_->setCurrentIndex(index);
  return true;
}

bool MainWindow::isCompiling() const {
  return worker_->isBusy(jobs::kCompile);
}

const std::shared_ptr<const api::CompileReport>& MainWindow::compileReport() const {
  return doc_->compileReport();
}

void MainWindow::setCompiling(bool compiling) {
  if (compiling)
    compileStage_->setText(tr("Compiling %1\u2026").arg(QFileInfo(doc_->path()).fileName()));
  compileStage_->setVisible(compiling);
  compileProgress_->setVisible(compiling);
  cancelCompileButton_->setVisible(compiling);
  compileAction_->setEnabled(!compiling && doc_->session() != nullptr);
  kernels_->setCompiling(compiling);
  updateRunAvailability();
  updateScheduleAvailability();
}

void MainWindow::showKernels(const std::shared_ptr<const api::ModelReport>& model,
                             std::shared_ptr<const api::CompileReport> report, int threads) {
  if (model != doc_->model())
    return; // another model is on display now
  setCompiling(false);
  const api::CompileReport& r = *report;
  doc_->setCompileReport(std::move(report), threads); // Code and Schedule follow
  log(tr("Compiled %1 for %2: %3 kernels; lowering %4, code generation %5; intermediate "
         "memory %6 KiB")
          .arg(QFileInfo(doc_->path()).fileName(), qs(r.target))
          .arg(r.kernels.size())
          .arg(ms(r.lowerMilliseconds), ms(r.codegenMilliseconds),
               QString::number(r.arenaBytes / 1024.0, 'f', 1)));
  syncKernelToNode();
  emit compiled();
  // The target was changed while this compile ran: compile again for the one picked now.
  if (std::exchange(recompileForTarget_, false) && !isCompiling())
    compile();
}

void MainWindow::showCompileFailure(const std::shared_ptr<const api::ModelReport>& model,
                                    const api::Failure& failure) {
  if (model != doc_->model())
    return;
  setCompiling(false);
  recompileForTarget_ = false;
  const QString fileName = QFileInfo(doc_->path()).fileName();
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
  if (!doc_->model() || doc_->selectedNode() < 0 ||
      doc_->selectedNode() >= static_cast<int>(doc_->model()->final.nodes.size()))
    return;
  kernels_->selectKernelForNode(doc_->model()->final.nodes[doc_->selectedNode()].name);
}

void MainWindow::highlightKernel(int kernel) {
  const auto& compiled = doc_->compileReport();
  if (graphPass_ == kAuthoredGraph && compiled && kernel >= 0 &&
      kernel < static_cast<int>(compiled->kernels.size())) {
    showFinalGraph(); // a kernel's nodes are the optimised graph's; it highlights them
    return;
  }
  if (!doc_->model() || graphPass_ != kFinalGraph || !compiled || kernel < 0 ||
      kernel >= static_cast<int>(compiled->kernels.size())) {
    if (graphPass_ == kFinalGraph)
      graph_->highlightNodes({});
    return;
  }
  const std::set<std::string> names(compiled->kernels[kernel].nodes.begin(),
                                    compiled->kernels[kernel].nodes.end());
  std::vector<int> nodes;
  for (int n = 0; n < static_cast<int>(doc_->model()->final.nodes.size()); ++n) {
    if (names.count(doc_->model()->final.nodes[n].name))
      nodes.push_back(n);
  }
  if (!nodes.empty())
    graph_->revealNode(nodes.front()); // the kernel's nodes on screen, wherever they are
  graph_->highlightNodes(std::move(nodes));
}

void MainWindow::showGraphAfterPass(int pass) {
  if (!doc_->model() || pass < 0 || pass >= static_cast<int>(doc_->model()->passes.size()))
    return;
  const api::PassRecord& record = doc_->model()->passes[pass];
  if (!record.graphAfter)
    return;
  graphPass_ = pass;
  if (QAction* checked = finalGraphAction_->actionGroup()->checkedAction())
    checked->setChecked(false); // neither final nor authored
  graph_->setSnapshot(record.graphAfter);
  listShownGraph();
  // Outline the nodes this pass made or changed (the same rule as the Passes panel's count).
  const views::NodeChanges changes = passes_->nodeChanges(pass);
  std::vector<int> changed = changes.changed;
  const int changedCount = static_cast<int>(changed.size());
  if (!changed.empty())
    graph_->revealNode(changed.front()); // open where the pass made its first change
  graph_->highlightNodes(std::move(changed));
  graphBanner_->setText(
      tr("Showing the graph after pass %1 \u00b7 <b>%2</b> (%3 nodes, %4 new or changed, "
         "outlined) \u2014 <a href=\"final\">Show final graph</a>")
          .arg(pass + 1)
          .arg(qs(record.name).toHtmlEscaped())
          .arg(record.graphAfter->nodes.size())
          .arg(changedCount)
          .append(changes.removed > 0 ? tr(" · %1 removed").arg(changes.removed) : QString()));
  graphBanner_->show();
}

void MainWindow::showFinalGraph() {
  if (!doc_->model())
    return;
  graphPass_ = kFinalGraph;
  graphBanner_->hide();
  finalGraphAction_->setChecked(true);
  graph_->setSnapshot(
      std::shared_ptr<const api::GraphSnapshot>(doc_->model(), &doc_->model()->final));
  listShownGraph();
  highlightKernel(kernels_->selectedKernel());
  applyHeatMap();
}

bool MainWindow::selectPass(int pass) {
  showPanel(Panel::Passes);
  return passes_->selectPass(pass);
}

StepThroughDialog* MainWindow::showStepThrough(int node) {
  const auto& model = doc_->model();
  if (!model || model->final.nodes.empty())
    return nullptr;
  if (node < 0)
    node = doc_->selectedNode() >= 0 ? doc_->selectedNode() : 0;
  if (node >= static_cast<int>(model->final.nodes.size()))
    return nullptr;
  if (!stepThrough_) {
    stepThrough_ = new StepThroughDialog(this);
    // Code compiled later continues the steps of the node on display.
    connect(this, &MainWindow::compiled, stepThrough_, [this] {
      if (stepThrough_->isVisible() && stepThroughNode_ >= 0)
        showStepThrough(stepThroughNode_);
    });
  }
  stepThroughNode_ = node;
  stepThrough_->setSteps(qs(model->final.nodes[static_cast<std::size_t>(node)].name),
                         compileStepsOf(*model, doc_->compileReport().get(), node));
  stepThrough_->show();
  stepThrough_->raise();
  return stepThrough_;
}

TourDialog* MainWindow::showTour() {
  if (!tour_) {
    tour_ = new TourDialog(this);
    connect(tour_, &TourDialog::panelRequested, this,
            [this](int panel) { showPanel(static_cast<Panel>(panel)); });
  }
  tour_->show();
  tour_->raise();
  return tour_;
}

void MainWindow::showPanel(Panel panel) {
  QDockWidget* dock = nullptr;
  switch (panel) {
  case Panel::Model:
    dock = modelDock_;
    break;
  case Panel::Properties:
    dock = propertiesDock_;
    break;
  case Panel::Passes:
    dock = passesDock_;
    break;
  case Panel::Ir:
    dock = irDock_;
    break;
  case Panel::Kernels:
    dock = codeDock_;
    break;
  case Panel::Schedule:
    dock = scheduleDock_;
    break;
  case Panel::Log:
    dock = logDock_;
    break;
  case Panel::Run:
    dock = runDock_;
    break;
  case Panel::Profile:
    dock = profileDock_;
    break;
  case Panel::Numerics:
    dock = numericsDock_;
    break;
  case Panel::Tune:
    dock = tuneDock_;
    break;
  }
  dock->show();
  dock->raise();
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
