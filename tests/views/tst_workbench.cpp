// The workbench window offscreen, on the engine's real output for the generated models:
// load, select, search, fail, cancel, supersede, drop. No test waits on a modal dialog.

#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "app/workbench/run_panel.h"
#include "views/graph/graph_canvas.h"
#include "views/graph/graph_view.h"
#include "views/models/kernel_list_model.h"
#include "views/models/model_tree_model.h"
#include "views/models/node_properties_model.h"
#include "views/models/pass_list_model.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>
#include <QUrl>
#include <functional>
#include <map>
#include <memory>

using lathe::views::GraphView;
using lathe::views::KernelListModel;
using lathe::views::ModelTreeModel;
using lathe::views::PassListModel;
using lathe::workbench::MainWindow;

namespace {

const QString kModelDir = QStringLiteral(LATHE_MODEL_DIR);
const QString kSample = kModelDir + QStringLiteral("/sample_cnn.onnx");
const QString kTruncated = kModelDir + QStringLiteral("/bad/truncated.onnx");
// Opens, but cannot be compiled: its batch dimension is symbolic.
const QString kSymbolic = kModelDir + QStringLiteral("/symbolic_batch.onnx");
const QString kUnknownOp = kModelDir + QStringLiteral("/bad/unknown_op.onnx");
constexpr int kLoadTimeoutMs = 60000;

// Depth-first search of a (proxy) model for the first index satisfying `match`.
QModelIndex findIndex(const QAbstractItemModel* model,
                      const std::function<bool(const QModelIndex&)>& match,
                      const QModelIndex& parent = {}) {
  for (int row = 0; row < model->rowCount(parent); ++row) {
    const QModelIndex index = model->index(row, 0, parent);
    if (match(index))
      return index;
    const QModelIndex below = findIndex(model, match, index);
    if (below.isValid())
      return below;
  }
  return {};
}

int countRows(const QAbstractItemModel* model, const QModelIndex& parent = {}) {
  int rows = model->rowCount(parent);
  for (int row = 0; row < model->rowCount(parent); ++row)
    rows += countRows(model, model->index(row, 0, parent));
  return rows;
}

QString propertyValue(const QAbstractItemModel* model, const QString& property) {
  for (int row = 0; row < model->rowCount(); ++row) {
    if (model->index(row, 0).data().toString() == property)
      return model->index(row, 1).data().toString();
  }
  return {};
}

} // namespace

class TestWorkbench : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void startsWithoutModel();
  void opensSampleModel();
  void selectingNodeShowsItsProperties();
  void clickingGraphNodeSelectsItEverywhere();
  void selectingPassShowsItsIr();
  void searchFiltersTree();
  void compileShowsKernels();
  void selectingNodeSelectsItsKernel();
  void compileFailureShowsError();
  void openingAnotherModelDropsCompile();
  void badModelShowsErrorAndKeepsOldModel();
  void newerLoadSupersedesOlder();
  void cancelKeepsOldModel();
  void targetPickerOffersHostAndCrossTargets();
  void cancelledCompileIsDropped();
  void anotherTargetMarksTheCodeStaleAndRecompiles();
  void acceptsDroppedOnnxFiles();
  void opensTfliteAndAsksTorchScriptShapes();
  void unknownOpIsShownNotCompiled();
  void shortcutsAreUnique();
  void perModelStateStaysWithItsModel();
  void cleanupTestCase();

private:
  template <typename T>
  T* widget(const char* name) {
    T* w = window_->findChild<T*>(QString::fromLatin1(name));
    if (!w)
      qFatal("no widget named %s", name);
    return w;
  }

  QTemporaryDir settingsDir_;
  std::unique_ptr<MainWindow> window_;
};

void TestWorkbench::initTestCase() {
  QVERIFY(QFileInfo::exists(kSample));
  QVERIFY(QFileInfo::exists(kTruncated));
  // Keep the user's settings out of it: recent files and layout go to a scratch folder.
  QVERIFY(settingsDir_.isValid());
  QCoreApplication::setOrganizationName(QStringLiteral("Lathe"));
  QCoreApplication::setApplicationName(QStringLiteral("WorkbenchTest"));
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir_.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir_.path());
  QSettings().clear();

  window_ = std::make_unique<MainWindow>();
  window_->restoreSettings();
  window_->show();
  QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
}

void TestWorkbench::startsWithoutModel() {
  QCOMPARE(window_->windowTitle(), QStringLiteral("Lathe"));
  QVERIFY(!window_->report());
  QCOMPARE(widget<QTreeView>("modelTree")->model()->rowCount(), 0);
  QVERIFY(!widget<QMenu>("recentFilesMenu")->menuAction()->isEnabled());
  if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty())
    QVERIFY(window_->grab().save(shots + QStringLiteral("/no_model_open.png")));
}

void TestWorkbench::opensSampleModel() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  QSignalSpy failed(window_.get(), &MainWindow::loadFailed);
  QSignalSpy progress(widget<QProgressBar>("loadProgress"), &QProgressBar::valueChanged);
  window_->openFile(kSample);
  QVERIFY(window_->isLoading());
  QVERIFY(widget<QWidget>("loadProgress")->isVisible());
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QCOMPARE(failed.count(), 0);
  QVERIFY(!widget<QWidget>("loadProgress")->isVisible());
  // The engine's progress reached the bar before the result did.
  QVERIFY(progress.count() >= 2);
  QCOMPARE(progress.last().at(0).toInt(), 100);

  const auto& report = window_->report();
  QVERIFY(report);
  QVERIFY(!report->final.nodes.empty());
  QCOMPARE(window_->windowTitle(), QStringLiteral("Lathe \u2014 sample_cnn.onnx"));
  QVERIFY(widget<QLabel>("modelInfo")
              ->text()
              .contains(QStringLiteral("%1 nodes").arg(report->final.nodes.size())));

  // The tree lists the graph the view draws: the model as authored first.
  const QAbstractItemModel* tree = widget<QTreeView>("modelTree")->model();
  QCOMPARE(tree->rowCount(), 4);
  QCOMPARE(tree->index(2, 0).data().toString(),
           QStringLiteral("Nodes (%1)").arg(report->imported.nodes.size()));
  QVERIFY(widget<QLabel>("modelTreeCaption")->text().contains(QStringLiteral("As authored")));
  QCOMPARE(widget<QPlainTextEdit>("irView")->toPlainText(),
           QString::fromStdString(report->final.irText));
  QVERIFY(widget<QPlainTextEdit>("logView")->toPlainText().contains(
      QStringLiteral("Opened sample_cnn.onnx")));
  QCOMPARE(QSettings().value(QStringLiteral("recentFiles")).toStringList().value(0),
           QFileInfo(kSample).absoluteFilePath());

  // The graph is the central widget, laid out in the background: the model as its file has
  // it first, then (a click on the banner) the optimised graph the tree lists.
  GraphView* graph = window_->graphView();
  QCOMPARE(window_->centralWidget()->isAncestorOf(graph), true);
  QCOMPARE(window_->graphPass(), MainWindow::kAuthoredGraph);
  QCOMPARE(graph->snapshot().get(), &report->imported);
  QVERIFY(widget<QLabel>("graphBanner")->isVisible());
  QTRY_VERIFY_WITH_TIMEOUT(!graph->isLayingOut(), kLoadTimeoutMs);
  QVERIFY(graph->isVisible());
  for (int n = 0; n < static_cast<int>(report->imported.nodes.size()); ++n)
    QVERIFY(graph->itemForNode(n));
  emit widget<QLabel>("graphBanner")->linkActivated(QStringLiteral("final"));
  QCOMPARE(graph->snapshot().get(), &report->final);
  QCOMPARE(tree->index(2, 0).data().toString(),
           QStringLiteral("Nodes (%1)").arg(report->final.nodes.size()));
  QVERIFY(widget<QLabel>("modelTreeCaption")->text().contains(QStringLiteral("Optimised")));
  QTRY_VERIFY_WITH_TIMEOUT(!graph->isLayingOut(), kLoadTimeoutMs);
  for (int n = 0; n < static_cast<int>(report->final.nodes.size()); ++n)
    QVERIFY(graph->itemForNode(n));
}

void TestWorkbench::selectingNodeShowsItsProperties() {
  QVERIFY(window_->report());
  auto* tree = widget<QTreeView>("modelTree");
  const QModelIndex conv = findIndex(tree->model(), [](const QModelIndex& index) {
    return index.data(ModelTreeModel::NodeIndexRole).toInt() >= 0 &&
           index.siblingAtColumn(ModelTreeModel::TypeColumn)
               .data()
               .toString()
               .startsWith(QLatin1String("Conv")); // Conv, or its blocked ConvNCHWc
  });
  QVERIFY(conv.isValid());
  const int node = conv.data(ModelTreeModel::NodeIndexRole).toInt();

  window_->showPanel(MainWindow::Panel::Ir);
  tree->setCurrentIndex(conv); // as a click would
  QVERIFY(widget<QDockWidget>("propertiesDock")->isVisible());
  QCOMPARE(window_->graphView()->selectedNode(), node);
  QVERIFY(window_->graphView()->itemForNode(node)->isSelected());

  const QAbstractItemModel* properties = widget<QAbstractItemView>("propertiesView")->model();
  QCOMPARE(propertyValue(properties, QStringLiteral("Op")),
           QString::fromStdString(window_->report()->final.nodes[node].opType));
  QCOMPARE(propertyValue(properties, QStringLiteral("Name")),
           QString::fromStdString(window_->report()->final.nodes[node].name));
  QVERIFY(widget<QAbstractItemView>("propertiesView")->isVisible());

  QVERIFY(window_->selectNode(0));
  QCOMPARE(tree->currentIndex().data(ModelTreeModel::NodeIndexRole).toInt(), 0);
  QCOMPARE(propertyValue(properties, QStringLiteral("Op")),
           QString::fromStdString(window_->report()->final.nodes[0].opType));
  QCOMPARE(window_->graphView()->selectedNode(), 0);
}

void TestWorkbench::clickingGraphNodeSelectsItEverywhere() {
  const auto& graph = window_->report()->final;
  GraphView* view = window_->graphView();
  QTRY_VERIFY_WITH_TIMEOUT(!view->isLayingOut(), kLoadTimeoutMs);
  const int node = static_cast<int>(graph.nodes.size()) - 1;
  auto* item = view->itemForNode(node);
  QVERIFY(item);
  view->canvas()->centerOn(item);
  QTest::mouseClick(view->canvas()->viewport(), Qt::LeftButton, {},
                    view->canvas()->mapFromScene(item->scenePos()));
  QVERIFY(item->isSelected());
  QCOMPARE(
      widget<QTreeView>("modelTree")->currentIndex().data(ModelTreeModel::NodeIndexRole).toInt(),
      node);
  const QAbstractItemModel* properties = widget<QAbstractItemView>("propertiesView")->model();
  QCOMPARE(propertyValue(properties, QStringLiteral("Name")),
           QString::fromStdString(graph.nodes[node].name));

  // Ctrl+F goes to the graph's search box; a search selects the match everywhere.
  widget<QAction>("findAction")->trigger();
  QVERIFY(widget<QLineEdit>("graphSearch")->hasFocus());
  view->setSearchText(QString::fromStdString(graph.nodes[0].name));
  QCOMPARE(view->selectedNode(), 0);
  QCOMPARE(
      widget<QTreeView>("modelTree")->currentIndex().data(ModelTreeModel::NodeIndexRole).toInt(),
      0);
  view->setSearchText(QString());
}

void TestWorkbench::selectingPassShowsItsIr() {
  const auto& report = window_->report();
  QVERIFY(report);
  QVERIFY(!report->passes.empty());
  auto* list = widget<QAbstractItemView>("passList");
  QCOMPARE(list->model()->rowCount(), static_cast<int>(report->passes.size()));
  const QModelIndex changed = findIndex(list->model(), [](const QModelIndex& index) {
    return index.data(PassListModel::ChangedRole).toBool();
  });
  QVERIFY2(changed.isValid(), "the pipeline changed nothing in sample_cnn");
  const int pass = changed.data(PassListModel::PassIndexRole).toInt();

  window_->showPanel(MainWindow::Panel::Passes);
  list->setCurrentIndex(changed);
  const auto& record = report->passes[pass];
  QCOMPARE(widget<QPlainTextEdit>("passIrView")->toPlainText(),
           QString::fromStdString(record.irAfter));
  QVERIFY(widget<QLabel>("passIrTitle")->text().contains(QString::fromStdString(record.name)));
  // The graph shows the graph after that pass, until "Show final graph".
  QCOMPARE(window_->graphPass(), pass);
  QCOMPARE(window_->graphView()->snapshot(), record.graphAfter);
  auto* banner = widget<QLabel>("graphBanner");
  QVERIFY(banner->isVisible());
  QVERIFY(banner->text().contains(QString::fromStdString(record.name)));
  QTRY_VERIFY_WITH_TIMEOUT(!window_->graphView()->isLayingOut(), kLoadTimeoutMs);
  QVERIFY(window_->graphView()->highlightedItemCount() > 0); // what the pass changed
  emit banner->linkActivated(QStringLiteral("final"));
  QCOMPARE(window_->graphPass(), -1);
  QCOMPARE(window_->graphView()->snapshot().get(), &report->final);
  QVERIFY(!banner->isVisible());

  // Hiding unchanged passes keeps the selected (changed) one.
  auto* hide = widget<QAbstractButton>("hideUnchangedPasses");
  hide->setChecked(true);
  int changedCount = 0;
  for (const auto& p : report->passes)
    changedCount += p.changed ? 1 : 0;
  QCOMPARE(list->model()->rowCount(), changedCount);
  hide->setChecked(false);
  QCOMPARE(list->model()->rowCount(), static_cast<int>(report->passes.size()));

  QVERIFY(window_->selectPass(0));
  QCOMPARE(widget<QPlainTextEdit>("passIrView")->toPlainText(),
           QString::fromStdString(report->passes[0].irAfter));
  QCOMPARE(window_->graphPass(), 0);
  window_->showFinalGraph();
}

void TestWorkbench::searchFiltersTree() {
  auto* tree = widget<QTreeView>("modelTree");
  auto* search = widget<QLineEdit>("modelFilter");
  const int allRows = countRows(tree->model());
  search->setText(QStringLiteral("conv"));
  const int convRows = countRows(tree->model());
  QVERIFY(convRows > 0);
  QVERIFY(convRows < allRows);
  search->setText(QStringLiteral("zzz-no-such-node"));
  QCOMPARE(tree->model()->rowCount(), 0);
  search->clear();
  QCOMPARE(countRows(tree->model()), allRows);
}

void TestWorkbench::compileShowsKernels() {
  QVERIFY(window_->report());
  QVERIFY(!window_->compileReport());
  auto* action = window_->findChild<QAction*>(QStringLiteral("compileAction"));
  QVERIFY(action);
  QVERIFY(action->isEnabled());
  QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_B));

  window_->showPanel(MainWindow::Panel::Kernels);
  QVERIFY(widget<QLabel>("kernelsPlaceholder")->isVisible());
  QSignalSpy compiled(window_.get(), &MainWindow::compiled);
  QSignalSpy failed(window_.get(), &MainWindow::compileFailed);
  action->trigger();
  QVERIFY(window_->isCompiling());
  QVERIFY(!action->isEnabled()); // one compile at a time per model
  QVERIFY(widget<QProgressBar>("compileProgress")->isVisible());
  QCOMPARE(widget<QProgressBar>("compileProgress")->maximum(), 0); // busy indicator
  QVERIFY(compiled.wait(kLoadTimeoutMs));
  QCOMPARE(failed.count(), 0);
  QVERIFY(!window_->isCompiling());
  QVERIFY(action->isEnabled());
  QVERIFY(!widget<QWidget>("compileProgress")->isVisible());

  const auto& report = window_->compileReport();
  QVERIFY(report);
  QVERIFY(!report->kernels.empty());
  auto* list = widget<QAbstractItemView>("kernelList");
  QVERIFY(list->isVisible());
  QCOMPARE(list->model()->rowCount(), static_cast<int>(report->kernels.size()));
  QVERIFY(widget<QLabel>("kernelSummary")
              ->text()
              .contains(QStringLiteral("%1 kernel").arg(report->kernels.size())));
  QVERIFY(widget<QPlainTextEdit>("logView")->toPlainText().contains(
      QStringLiteral("Compiled sample_cnn.onnx")));

  // A fused kernel (more than one node), clicked in the table.
  const QModelIndex fused = findIndex(list->model(), [](const QModelIndex& index) {
    return index.data(KernelListModel::NodeCountRole).toInt() > 1;
  });
  QVERIFY2(fused.isValid(), "sample_cnn compiled to no fused kernel");
  list->setCurrentIndex(fused);
  const auto& kernel = report->kernels[fused.data(KernelListModel::KernelIndexRole).toInt()];
  const QString loopIr = widget<QPlainTextEdit>("kernelLoopIr")->toPlainText();
  QVERIFY(loopIr.contains(QStringLiteral("kernel ")));
  // The loop IR, after the trace that made it when the kernel has one.
  QVERIFY(loopIr.endsWith(QString::fromStdString(kernel.loopIr)));
  QCOMPARE(loopIr.startsWith(QStringLiteral("# trace")), !kernel.schedule.empty());
  QVERIFY(!widget<QPlainTextEdit>("kernelAssembly")->toPlainText().trimmed().isEmpty());
  QVERIFY(!widget<QPlainTextEdit>("kernelLlvmIr")->toPlainText().isEmpty());
  QVERIFY(!widget<QPlainTextEdit>("kernelLlvmIrOptimized")->toPlainText().isEmpty());
  QCOMPARE(fused.siblingAtColumn(KernelListModel::LinesColumn).data().toInt(),
           KernelListModel::lineCount(kernel.loopIr));
}

void TestWorkbench::selectingNodeSelectsItsKernel() {
  const auto& report = window_->compileReport();
  QVERIFY(report);
  const auto& graph = window_->report()->final;
  auto* tree = widget<QTreeView>("modelTree");
  auto* list = widget<QAbstractItemView>("kernelList");
  const auto treeIndexOf = [&](const std::string& name) {
    return findIndex(tree->model(), [&](const QModelIndex& index) {
      const int node = index.data(ModelTreeModel::NodeIndexRole).toInt();
      return node >= 0 && node < static_cast<int>(graph.nodes.size()) &&
             graph.nodes[node].name == name;
    });
  };
  // The last named node of the last kernel that has one: not the kernel selected now.
  int kernel = -1;
  QModelIndex nodeIndex;
  for (int k = static_cast<int>(report->kernels.size()) - 1; k >= 0 && kernel < 0; --k) {
    for (auto it = report->kernels[k].nodes.rbegin(); it != report->kernels[k].nodes.rend(); ++it) {
      nodeIndex = it->empty() ? QModelIndex() : treeIndexOf(*it);
      if (nodeIndex.isValid()) {
        kernel = k;
        break;
      }
    }
  }
  QVERIFY2(kernel > 0, "no named node of a later kernel is in the model tree");

  window_->showPanel(MainWindow::Panel::Kernels);
  tree->setCurrentIndex(nodeIndex); // as a click would
  QVERIFY(widget<QDockWidget>("codeDock")->isVisible());
  QCOMPARE(list->currentIndex().data(KernelListModel::KernelIndexRole).toInt(), kernel);
  // Its loop IR, after its trace when it has one (as `lathe compile --dump` writes them).
  const QString shown = widget<QPlainTextEdit>("kernelLoopIr")->toPlainText();
  QVERIFY(shown.endsWith(QString::fromStdString(report->kernels[kernel].loopIr)));
  QCOMPARE(shown.startsWith("# trace replayed on the nest as lowered:\n"),
           !report->kernels[kernel].schedule.empty());
  // The kernel's nodes are outlined in the graph.
  const int node = nodeIndex.data(ModelTreeModel::NodeIndexRole).toInt();
  QTRY_VERIFY_WITH_TIMEOUT(!window_->graphView()->isLayingOut(), kLoadTimeoutMs);
  QVERIFY(window_->graphView()->itemForNode(node)->isHighlighted());

  // Selecting a kernel outlines its nodes; selecting the node again brings its kernel back.
  QVERIFY(window_->selectKernel(0));
  QVERIFY(!window_->graphView()->itemForNode(node)->isHighlighted());
  window_->showPanel(MainWindow::Panel::Ir);
  tree->setCurrentIndex(QModelIndex());
  tree->setCurrentIndex(nodeIndex);
  QCOMPARE(list->currentIndex().data(KernelListModel::KernelIndexRole).toInt(), kernel);
  window_->showPanel(MainWindow::Panel::Kernels);
  QCOMPARE(list->currentIndex().data(KernelListModel::KernelIndexRole).toInt(), kernel);
}

void TestWorkbench::compileFailureShowsError() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  // Symbolic input dims not given yet: compile does not start; it asks for them.
  window_->openFile(kSymbolic);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QVERIFY(!window_->compileReport()); // a new model starts uncompiled
  QVERIFY(widget<QLabel>("kernelsPlaceholder")->isVisible());
  QSignalSpy compiled(window_.get(), &MainWindow::compiled);
  QSignalSpy failed(window_.get(), &MainWindow::compileFailed);
  QVERIFY(!window_->compile());
  QVERIFY(!window_->isCompiling());
  QVERIFY(widget<QPlainTextEdit>("logView")->toPlainText().contains(
      QStringLiteral("give a number for N in 'x'")));
  QVERIFY(!window_->findChild<QMessageBox*>(QStringLiteral("compileErrorDialog")));

  // A compile that fails: a dialog with the engine's message.
  window_->openFile(kUnknownOp);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QVERIFY(window_->compile());
  QVERIFY(failed.wait(kLoadTimeoutMs));
  QCOMPARE(compiled.count(), 0);
  const QString message = failed.at(0).at(0).toString();
  QVERIFY(message.contains(QStringLiteral("FancyNewOp")));

  auto* box = window_->findChild<QMessageBox*>(QStringLiteral("compileErrorDialog"));
  QVERIFY(box);
  QTRY_VERIFY(box->isVisible());
  QCOMPARE(box->icon(), QMessageBox::Critical);
  // The message quotes a shape with '"', which the dialog need not escape: compare as text.
  QTextDocument informative;
  informative.setHtml(box->informativeText());
  QCOMPARE(informative.toPlainText().simplified(), message.simplified());
  QVERIFY(box->text().contains(QStringLiteral("unknown_op.onnx")));
  QVERIFY(widget<QPlainTextEdit>("logView")->toPlainText().contains(message));
  QVERIFY(!window_->compileReport());
  QVERIFY(!window_->isCompiling());
  QVERIFY(!widget<QWidget>("compileProgress")->isVisible());
  box->accept();
  QTRY_VERIFY(!window_->findChild<QMessageBox*>(QStringLiteral("compileErrorDialog")));
}

void TestWorkbench::openingAnotherModelDropsCompile() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  window_->openFile(kSample);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QVERIFY(window_->compile());
  QVERIFY(!window_->compile()); // already compiling this model
  window_->openFile(kSample);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  // Whenever the first compile ends, its kernels belong to a model no longer on display.
  QVERIFY(!window_->isCompiling());
  QTest::qWait(2000);
  QVERIFY(!window_->compileReport());
  QVERIFY(!widget<QWidget>("compileProgress")->isVisible());
  QVERIFY(!window_->findChild<QMessageBox*>(QStringLiteral("compileErrorDialog")));
}

void TestWorkbench::badModelShowsErrorAndKeepsOldModel() {
  const auto before = window_->report();
  QVERIFY(before);
  const int nodeRows = countRows(widget<QTreeView>("modelTree")->model());

  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  QSignalSpy failed(window_.get(), &MainWindow::loadFailed);
  window_->openFile(kTruncated);
  QVERIFY(failed.wait(kLoadTimeoutMs));
  QCOMPARE(loaded.count(), 0);
  const QString message = failed.at(0).at(0).toString();
  QVERIFY(!message.isEmpty());

  // The dialog is window-modal and open, not exec'd, so the test keeps running.
  auto* box = window_->findChild<QMessageBox*>(QStringLiteral("loadErrorDialog"));
  QVERIFY(box);
  QTRY_VERIFY(box->isVisible());
  QCOMPARE(box->icon(), QMessageBox::Critical);
  QVERIFY(box->informativeText().contains(message.toHtmlEscaped()));
  QVERIFY(box->text().contains(QStringLiteral("truncated.onnx")));
  QVERIFY(widget<QPlainTextEdit>("logView")->toPlainText().contains(message));

  QCOMPARE(window_->report(), before);
  QCOMPARE(window_->windowTitle(), QStringLiteral("Lathe \u2014 sample_cnn.onnx"));
  QCOMPARE(countRows(widget<QTreeView>("modelTree")->model()), nodeRows);
  QVERIFY(!widget<QWidget>("loadProgress")->isVisible());

  box->accept();
  QTRY_VERIFY(!window_->findChild<QMessageBox*>(QStringLiteral("loadErrorDialog")));
}

void TestWorkbench::newerLoadSupersedesOlder() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  QSignalSpy failed(window_.get(), &MainWindow::loadFailed);
  window_->openFile(kTruncated);
  window_->openFile(kSample); // the truncated model's failure is stale and must not show
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QTest::qWait(200);
  QCOMPARE(failed.count(), 0);
  QCOMPARE(loaded.count(), 1);
  QVERIFY(!window_->findChild<QMessageBox*>(QStringLiteral("loadErrorDialog")));
}

void TestWorkbench::cancelKeepsOldModel() {
  const auto before = window_->report();
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  window_->openFile(kSample);
  auto* cancel = widget<QToolButton>("cancelLoad");
  QVERIFY(cancel->isVisible());
  cancel->click();
  QVERIFY(!window_->isLoading());
  QVERIFY(!cancel->isVisible());
  QTest::qWait(300); // a result that arrives now is stale
  QCOMPARE(loaded.count(), 0);
  QCOMPARE(window_->report(), before);
  QVERIFY(widget<QPlainTextEdit>("logView")->toPlainText().contains(QStringLiteral("Cancelled")));
}

// What was typed for one model (searches, the input file) is kept by Reload but not carried
// into the next model opened.
void TestWorkbench::perModelStateStaysWithItsModel() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  window_->openFile(kSample);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  auto* treeSearch = window_->findChild<QLineEdit*>(QStringLiteral("modelFilter"));
  auto* graphSearch = widget<QLineEdit>("graphSearch");
  auto* npz = widget<QLineEdit>("runNpzPath");
  QVERIFY(treeSearch);
  treeSearch->setText(QStringLiteral("relu"));
  graphSearch->setText(QStringLiteral("conv"));
  window_->runPanel()->setInputsNpz(QStringLiteral("/tmp/inputs_for_sample.npz"));
  window_->openFile(kSample); // what Reload does: the same file again
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QCOMPARE(treeSearch->text(), QStringLiteral("relu"));
  QCOMPARE(graphSearch->text(), QStringLiteral("conv"));
  QCOMPARE(npz->text(), QStringLiteral("/tmp/inputs_for_sample.npz"));
  window_->openFile(kSymbolic);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QVERIFY(treeSearch->text().isEmpty());
  QVERIFY(graphSearch->text().isEmpty());
  QVERIFY(npz->text().isEmpty());
  QCOMPARE(window_->runPanel()->settings().fill, std::string("random"));
}

// Every key sequence of the window's actions (and each of an action's alternatives) does one
// thing: two actions on one key make Qt ignore the key for both.
void TestWorkbench::shortcutsAreUnique() {
  std::map<QString, QString> owner;
  int shortcuts = 0;
  for (QAction* action : window_->findChildren<QAction*>()) {
    for (const QKeySequence& key : action->shortcuts()) {
      if (key.isEmpty())
        continue;
      ++shortcuts;
      const QString text = key.toString(QKeySequence::PortableText);
      const QString name = action->text().isEmpty() ? action->objectName() : action->text();
      const auto [it, fresh] = owner.emplace(text, name);
      QVERIFY2(
          fresh,
          qPrintable(
              QStringLiteral("%1 is bound to both '%2' and '%3'").arg(text, it->second, name)));
    }
  }
  QVERIFY(shortcuts >= 6);
  QVERIFY(owner.count(QStringLiteral("F5")));
}

void TestWorkbench::targetPickerOffersHostAndCrossTargets() {
  auto* picker = widget<QComboBox>("targetPicker");
  QVERIFY(picker->count() >= 3);
  QCOMPARE(picker->itemData(0).toString(), QStringLiteral("llvm"));
  QCOMPARE(window_->target(), QStringLiteral("llvm"));
  const auto* model = qobject_cast<const QStandardItemModel*>(picker->model());
  QVERIFY(model);
  int cross = 0;
  for (int row = 0; row < picker->count(); ++row) {
    const QString text = picker->itemData(row).toString();
    // Every target can be picked: a CPU's code is shown and Run uses an emulator; a GPU's
    // PTX is shown, and its tooltip says that running needs a CUDA driver.
    const bool gpu = text.startsWith(QStringLiteral("cuda"));
    QVERIFY(model->item(row)->isEnabled());
    if (gpu)
      QVERIFY(model->item(row)->toolTip().contains(QStringLiteral("CUDA driver")));
    if (text.contains(QStringLiteral("-mtriple")) && !gpu) {
      QVERIFY(model->item(row)->toolTip().contains(QStringLiteral("emulator")));
      ++cross;
    }
  }
  QVERIFY(cross >= 4);
  QVERIFY(!window_->setTarget(QStringLiteral("cuda -arch=sm_75x")));
  QVERIFY(!window_->setTarget(QStringLiteral("no such target")));
  QCOMPARE(window_->target(), QStringLiteral("llvm"));
}

void TestWorkbench::cancelledCompileIsDropped() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  window_->openFile(kSample);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QSignalSpy compiled(window_.get(), &MainWindow::compiled);
  QVERIFY(window_->compile());
  auto* cancel = widget<QToolButton>("cancelCompile");
  QVERIFY(cancel->isVisible());
  cancel->click();
  QVERIFY(!window_->isCompiling());
  QVERIFY(!cancel->isVisible());
  QVERIFY(!widget<QWidget>("compileProgress")->isVisible());
  QVERIFY(widget<QPlainTextEdit>("logView")->toPlainText().contains(
      QStringLiteral("Cancelled compiling")));
  // The engine finishes the cancelled compile; only then may the Session compile again. Its
  // result never shows.
  QVERIFY(window_->setTarget(QStringLiteral("llvm -mcpu=x86-64-v3")));
  bool started = false; // QTRY_VERIFY evaluates its expression once more at the end
  QTRY_VERIFY_WITH_TIMEOUT(started || (started = window_->compile()), kLoadTimeoutMs);
  QCOMPARE(compiled.count(), 0);
  QVERIFY(!window_->compileReport());
  QVERIFY(compiled.wait(kLoadTimeoutMs));
  QVERIFY(window_->compileReport());
  QVERIFY(QString::fromStdString(window_->compileReport()->target)
              .contains(QStringLiteral("x86-64-v3")));
  QVERIFY(window_->setTarget(QStringLiteral("llvm")));
}

// Picking another target after a compile: the code on display says it is for the old one,
// Schedule refuses it, and a compile for the new target starts and clears the mark.
void TestWorkbench::anotherTargetMarksTheCodeStaleAndRecompiles() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  window_->openFile(kSample);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QSignalSpy compiled(window_.get(), &MainWindow::compiled);
  QVERIFY(window_->compile());
  QVERIFY(compiled.wait(kLoadTimeoutMs));
  auto* kernels = window_->findChild<lathe::workbench::KernelsPanel*>();
  QVERIFY(kernels);
  QVERIFY(kernels->staleNote().isEmpty());
  if (!window_->setTarget(QStringLiteral("llvm -mcpu=x86-64-v3")))
    QSKIP("this CPU cannot run x86-64-v3 code");
  QVERIFY2(kernels->staleNote().contains(QStringLiteral("not for the target picked now")),
           qPrintable(kernels->staleNote()));
  // LATHE_SCREENSHOT_DIR=DIR keeps a picture of the Code panel with its warning.
  if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty()) {
    window_->showPanel(MainWindow::Panel::Kernels);
    QVERIFY(window_->grab().save(shots + QStringLiteral("/stale_code.png")));
  }
  QVERIFY(window_->isCompiling()); // started by the change
  QVERIFY(compiled.wait(kLoadTimeoutMs));
  QCOMPARE(QString::fromStdString(window_->compileReport()->target),
           QStringLiteral("llvm -mcpu=x86-64-v3"));
  QVERIFY2(kernels->staleNote().isEmpty(), qPrintable(kernels->staleNote()));
  QVERIFY(window_->setTarget(QStringLiteral("llvm")));
  QVERIFY(!kernels->staleNote().isEmpty());
  QVERIFY(compiled.wait(kLoadTimeoutMs));
  QVERIFY(kernels->staleNote().isEmpty());
}

// A model with an op Lathe does not know opens (the graph, its properties and passes) like
// any other; compiling says which node blocks it.
void TestWorkbench::unknownOpIsShownNotCompiled() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  window_->openFile(kUnknownOp);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QVERIFY(window_->report());
  QCOMPARE(window_->report()->final.nodes.size(), std::size_t{1});
  QCOMPARE(QString::fromStdString(window_->report()->final.nodes[0].opType),
           QStringLiteral("FancyNewOp"));
  QTRY_VERIFY_WITH_TIMEOUT(window_->graphView()->itemForNode(0), kLoadTimeoutMs); // laid out
  QVERIFY(window_->selectNode(0));
  QSignalSpy failed(window_.get(), &MainWindow::compileFailed);
  QVERIFY(window_->compile());
  QVERIFY(failed.wait(kLoadTimeoutMs));
  const QString message = failed.at(0).at(0).toString();
  QVERIFY2(message.contains(QStringLiteral("'fancy' (FancyNewOp)")) &&
               message.contains(QStringLiteral("looked at but not compiled")),
           qPrintable(message));
  for (auto* box : window_->findChildren<QMessageBox*>())
    box->accept();
  QTRY_VERIFY(window_->findChildren<QMessageBox*>().isEmpty());
  QVERIFY(window_->report()); // still on display
}

void TestWorkbench::acceptsDroppedOnnxFiles() {
  const auto dragEnter = [this](const QString& path) {
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    QDragEnterEvent event(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window_.get(), &event);
    return event.isAccepted();
  };
  QVERIFY(dragEnter(kSample));
  QVERIFY(!dragEnter(kModelDir + QStringLiteral("/notes.txt")));

  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(kSample)});
  QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &drop);
  QVERIFY(window_->isLoading());
  QVERIFY(loaded.wait(kLoadTimeoutMs));
}

// Answers the next input-shapes prompt with `text` (rejects it when `text` is empty), then
// reports whether one came.
static void answerShapesPrompt(QWidget* window, const QString& text, bool* asked) {
  QTimer::singleShot(50, window, [window, text, asked] {
    auto* dialog = window->findChild<QInputDialog*>();
    if (!dialog) {
      answerShapesPrompt(window, text, asked);
      return;
    }
    *asked = true;
    if (text.isEmpty()) {
      dialog->reject();
      return;
    }
    dialog->setTextValue(text);
    if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty())
      dialog->grab().save(shots + QStringLiteral("/torchscript_shapes_prompt.png"));
    dialog->accept();
  });
}

void TestWorkbench::opensTfliteAndAsksTorchScriptShapes() {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  window_->openFile(kModelDir + QStringLiteral("/tflite/tfl_cnn.tflite"));
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  QCOMPARE(QString::fromStdString(window_->report()->imported.inputs.at(0).name),
           QStringLiteral("image"));
#ifdef LATHE_HAVE_TORCHSCRIPT
  const QString archive = kModelDir + QStringLiteral("/torchscript/ts_resnet.pt");
  // Cancelling the prompt opens nothing.
  bool asked = false;
  answerShapesPrompt(window_.get(), QString(), &asked);
  window_->openFile(archive);
  QVERIFY(asked);
  QVERIFY(!window_->isLoading());
  // With shapes, the archive opens with them.
  asked = false;
  answerShapesPrompt(window_.get(), QStringLiteral("x:[1,3,32,32]"), &asked);
  window_->openFile(archive);
  QVERIFY(asked);
  QVERIFY(loaded.wait(kLoadTimeoutMs));
  const auto& input = window_->report()->imported.inputs.at(0);
  QCOMPARE(QString::fromStdString(input.name), QStringLiteral("x"));
  QCOMPARE(QString::fromStdString(input.typeText), QStringLiteral("f32[1,3,32,32]"));
  // As authored: the archive's aten calls, one node each.
  const auto& authored = window_->report()->authored;
  QVERIFY(authored);
  QCOMPARE(QString::fromStdString(authored->nodes.at(0).opType),
           QStringLiteral("aten::_convolution"));
  window_->findChild<QAction*>(QStringLiteral("authoredGraphAction"))->trigger();
  QCOMPARE(window_->graphView()->snapshot().get(), authored.get());
  QTRY_VERIFY_WITH_TIMEOUT(!window_->graphView()->isLayingOut(), kLoadTimeoutMs);
  if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty())
    QVERIFY(window_->grab().save(shots + QStringLiteral("/torchscript_as_authored.png")));
  window_->showFinalGraph();
#endif
}

void TestWorkbench::cleanupTestCase() {
  window_->close();
  window_.reset();
  QVERIFY(QSettings().contains(QStringLiteral("mainWindow/geometry")));
  QVERIFY(QSettings().contains(QStringLiteral("mainWindow/state")));
}

QTEST_MAIN(TestWorkbench)
#include "tst_workbench.moc"
