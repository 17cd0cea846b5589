// The workbench window offscreen, on the engine's real output for the generated models:
// load, select, search, fail, cancel, supersede, drop. No test waits on a modal dialog.

#include "app/workbench/main_window.h"
#include "views/models/model_tree_model.h"
#include "views/models/node_properties_model.h"
#include "views/models/pass_list_model.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTreeView>
#include <QUrl>
#include <functional>
#include <memory>

using lathe::views::ModelTreeModel;
using lathe::views::PassListModel;
using lathe::workbench::MainWindow;

namespace {

const QString kModelDir = QStringLiteral(LATHE_MODEL_DIR);
const QString kSample = kModelDir + QStringLiteral("/sample_cnn.onnx");
const QString kTruncated = kModelDir + QStringLiteral("/bad/truncated.onnx");
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
  void selectingPassShowsItsIr();
  void searchFiltersTree();
  void badModelShowsErrorAndKeepsOldModel();
  void newerLoadSupersedesOlder();
  void cancelKeepsOldModel();
  void acceptsDroppedOnnxFiles();
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

  const QAbstractItemModel* tree = widget<QTreeView>("modelTree")->model();
  QCOMPARE(tree->rowCount(), 4);
  QCOMPARE(tree->index(2, 0).data().toString(),
           QStringLiteral("Nodes (%1)").arg(report->final.nodes.size()));
  QCOMPARE(widget<QPlainTextEdit>("irView")->toPlainText(),
           QString::fromStdString(report->final.irText));
  QVERIFY(widget<QPlainTextEdit>("logView")->toPlainText().contains(
      QStringLiteral("Opened sample_cnn.onnx")));
  QCOMPARE(QSettings().value(QStringLiteral("recentFiles")).toStringList().value(0),
           QFileInfo(kSample).absoluteFilePath());
}

void TestWorkbench::selectingNodeShowsItsProperties() {
  QVERIFY(window_->report());
  auto* tree = widget<QTreeView>("modelTree");
  const QModelIndex conv = findIndex(tree->model(), [](const QModelIndex& index) {
    return index.data(ModelTreeModel::NodeIndexRole).toInt() >= 0 &&
           index.siblingAtColumn(ModelTreeModel::TypeColumn).data().toString() ==
               QLatin1String("Conv");
  });
  QVERIFY(conv.isValid());
  const int node = conv.data(ModelTreeModel::NodeIndexRole).toInt();

  window_->showPanel(MainWindow::Panel::Ir);
  tree->setCurrentIndex(conv); // as a click would
  auto* tabs = widget<QTabWidget>("panelTabs");
  QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("Properties"));

  const QAbstractItemModel* properties = widget<QAbstractItemView>("propertiesView")->model();
  QCOMPARE(propertyValue(properties, QStringLiteral("Op")), QStringLiteral("Conv"));
  QCOMPARE(propertyValue(properties, QStringLiteral("Name")),
           QString::fromStdString(window_->report()->final.nodes[node].name));
  QVERIFY(widget<QAbstractItemView>("propertiesView")->isVisible());

  QVERIFY(window_->selectNode(0));
  QCOMPARE(tree->currentIndex().data(ModelTreeModel::NodeIndexRole).toInt(), 0);
  QCOMPARE(propertyValue(properties, QStringLiteral("Op")),
           QString::fromStdString(window_->report()->final.nodes[0].opType));
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

void TestWorkbench::cleanupTestCase() {
  window_->close();
  window_.reset();
  QVERIFY(QSettings().contains(QStringLiteral("mainWindow/geometry")));
  QVERIFY(QSettings().contains(QStringLiteral("mainWindow/state")));
}

QTEST_MAIN(TestWorkbench)
#include "tst_workbench.moc"
