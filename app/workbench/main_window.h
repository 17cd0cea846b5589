#pragma once
// The workbench window: model tree on the left; properties, passes and IR on the right; a
// log dock; loading with progress and Cancel in the status bar; compiling for the host with
// its kernels in a "Kernels" tab.

#include "engine/api/session.h"

#include <QMainWindow>
#include <memory>

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QToolButton;

namespace lathe::workbench {

class KernelsPanel;
class ModelBrowser;
class ModelCompiler;
class ModelLoader;
class PassesPanel;
class PropertiesPanel;
class RecentFiles;

class MainWindow : public QMainWindow {
  Q_OBJECT

public:
  enum class Panel { Properties, Passes, Ir, Kernels };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts loading `path` in the background; modelLoaded() or loadFailed() follows. The
  // model shown now stays until the new one has loaded.
  void openFile(const QString& path);
  // Restores the saved geometry and layout; from then on the window records its layout (on
  // close) and recent files in QSettings. Screenshot runs skip it: they want the default
  // layout and must leave the user's settings alone.
  void restoreSettings();

  // The model on display (nullptr before the first successful load) and its file.
  const std::shared_ptr<const api::ModelReport>& report() const { return report_; }
  QString currentFile() const { return currentFile_; }
  bool isLoading() const;

  // Compiles the model on display for this machine in the background; compiled() or
  // compileFailed() follows unless another model is shown first. False if there is no model
  // or it is being compiled already.
  bool compile();
  bool isCompiling() const;
  // The kernels of the model on display; nullptr until it has been compiled.
  const std::shared_ptr<const api::CompileReport>& compileReport() const;
  // Index into compileReport()->kernels; shows the Kernels tab.
  bool selectKernel(int kernel);

  // Index into report()->final.nodes; false if there is no such node.
  bool selectNode(int node);
  // Index into report()->passes; shows the Passes tab.
  bool selectPass(int pass);
  void showPanel(Panel panel);

signals:
  void modelLoaded();
  void loadFailed(const QString& message);
  void compiled();
  void compileFailed(const QString& message);

protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

private:
  void createActions();
  void createCentralArea();
  void createLogDock();
  void createStatusBar();
  void chooseFile();
  void reload();
  void cancelLoad();
  void showModel(const QString& path, std::shared_ptr<const api::ModelReport> report,
                 std::shared_ptr<api::Session> session);
  void showFailure(const QString& path, const api::Failure& failure);
  void showKernels(const std::shared_ptr<const api::ModelReport>& model,
                   std::shared_ptr<const api::CompileReport> report);
  void showCompileFailure(const std::shared_ptr<const api::ModelReport>& model,
                          const api::Failure& failure);
  void showErrorDialog(const QString& objectName, const QString& title, const QString& text,
                       const QString& message);
  void setCompiling(bool compiling);
  void syncKernelToNode();
  void setLoading(const QString& path);
  void clearLoading();
  enum class LogLevel { Info, Warning, Error };
  void log(const QString& line, LogLevel level = LogLevel::Info);
  void saveLayout() const;

  ModelLoader* loader_;
  ModelCompiler* compiler_;
  // The Session that opened report_: compile() needs it. Used by one worker at a time.
  std::shared_ptr<api::Session> session_;
  int selectedNode_ = -1; // in report_->final.nodes
  RecentFiles* recentFiles_ = nullptr;
  std::shared_ptr<const api::ModelReport> report_;
  QString currentFile_;
  bool persistSettings_ = false;

  QAction* openAction_ = nullptr;
  QAction* reloadAction_ = nullptr;
  QAction* quitAction_ = nullptr;
  QAction* findAction_ = nullptr;
  QAction* compileAction_ = nullptr;

  QStackedWidget* centralStack_ = nullptr;
  QSplitter* splitter_ = nullptr;
  ModelBrowser* browser_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  PropertiesPanel* properties_ = nullptr;
  PassesPanel* passes_ = nullptr;
  KernelsPanel* kernels_ = nullptr;
  QPlainTextEdit* irView_ = nullptr;
  QWidget* irPage_ = nullptr; // irView_ with the margins the other tabs have
  QPlainTextEdit* logView_ = nullptr;
  QLabel* modelInfo_ = nullptr;
  QLabel* loadStage_ = nullptr;
  QProgressBar* loadProgress_ = nullptr;
  QToolButton* cancelButton_ = nullptr;
  QLabel* compileStage_ = nullptr;
  QProgressBar* compileProgress_ = nullptr; // busy indicator: a compile reports no progress
};

} // namespace lathe::workbench
