#pragma once
// The workbench window: the laid-out graph in the middle; the model tree, properties,
// passes, code (kernels), IR, log, run and profile in dockable panels around it; loading,
// compiling and running with progress and Cancel.

#include "engine/api/session.h"
#include "engine/api/session_file.h"

#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QStackedWidget;
class QToolButton;

namespace lathe::views {
class GraphView;
class ProfileView;
} // namespace lathe::views

namespace lathe::workbench {

class KernelsPanel;
class ModelBrowser;
class NumericsPanel;
class PassesPanel;
class PropertiesPanel;
class RecentFiles;
class RunPanel;
class SchedulePanel;
class SessionWorker;
class TunePanel;
class WorkbenchDocument;
struct Opened;
class ExportDialog;
class TourDialog;
class StepThroughDialog;
struct ExportOutcome;
struct RunOutcome;
struct RunSettings;

class MainWindow : public QMainWindow {
  Q_OBJECT

public:
  enum class Panel {
    Model,
    Properties,
    Passes,
    Ir,
    Kernels,
    Schedule,
    Log,
    Run,
    Profile,
    Numerics,
    Tune
  };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts loading `path` in the background; modelLoaded() or loadFailed() follows. The
  // model shown now stays until the new one has loaded.
  void openFile(const QString& path);
  // Restores the saved geometry and layout; from then on the window records its layout (on
  // close) and recent files in QSettings. Screenshot runs skip it: they want the default
  // layout and must leave the user's settings alone.
  void restoreSettings();

  // What is open, compiled, run and selected (workbench_document.h).
  WorkbenchDocument* document() const { return doc_; }
  // The model on display (nullptr before the first successful load) and its file.
  const std::shared_ptr<const api::ModelReport>& report() const;
  QString currentFile() const;
  bool isLoading() const;

  // Compiles the model on display for the target picked in the toolbar (the host by default)
  // in the background; compiled() or compileFailed() follows unless another model is shown
  // first or the compile is cancelled. False if there is no model or it is being compiled
  // already.
  bool compile();
  // Stops waiting for the compile in flight; its result is dropped when it arrives.
  void cancelCompile();
  // The target string compile() uses; false if `target` is not offered or cannot run here.
  QString target() const;
  bool setTarget(const QString& target);
  bool isCompiling() const;
  // The kernels of the model on display; nullptr until it has been compiled.
  const std::shared_ptr<const api::CompileReport>& compileReport() const;
  // Index into compileReport()->kernels; shows the Code panel and outlines the kernel's nodes
  // in the graph.
  bool selectKernel(int kernel);

  // Index into report()->final.nodes; selects it in the tree, the graph and Properties (the
  // node of its name in the graph shown, else in the final graph, which is then shown), and
  // its kernel in Code. False if there is no such node.
  bool selectNode(int node);
  // Index into report()->passes; shows the Passes panel and the graph after that pass.
  bool selectPass(int pass);
  // Shows the final graph again after selectPass() or showAuthoredGraph().
  void showFinalGraph();
  // Shows the model as the ONNX file has it, before any pass (selections follow by node name).
  void showAuthoredGraph();
  // What the graph view shows: the final graph, the model as authored, or a pass's graph.
  static constexpr int kFinalGraph = -1, kAuthoredGraph = -2;
  // The pass whose graph the graph view shows, or kFinalGraph / kAuthoredGraph.
  int graphPass() const { return graphPass_; }
  views::GraphView* graphView() const { return graph_; }
  void showPanel(Panel panel);
  // Help > Guided Tour (F1): the tour window, created on first use; it raises the panels it
  // describes.
  TourDialog* showTour();
  // Build > Step Through Compilation (Ctrl+T): node `node` of the final graph (-1: the
  // selected one, else the first) from the ONNX file to assembly, with explanations; the
  // window follows a compile that finishes while it is open.
  StepThroughDialog* showStepThrough(int node = -1);

  // Runs the model on display with the Run panel's settings in the background (compiling it
  // first if it has not been, or if the panel asks for other threads); runFinished() or
  // runFailed() follows. Waits for a compile in flight. False if there is no model or a run
  // is in flight already.
  bool run();
  // Stops waiting for the run in flight (an unprofiled one stops at its next timed run).
  void cancelRun();
  bool isRunning() const;
  // The last finished run of the model on display; nullptr before the first.
  const std::shared_ptr<const api::RunReport>& runReport() const;
  RunPanel* runPanel() const { return runPanel_; }
  SchedulePanel* schedulePanel() const { return schedulePanel_; }
  // Tries the Schedule panel's steps on its kernel in the background, timed against the
  // default or (timed = false) only compiled for the IR and assembly; scheduleTried()
  // follows. False if there is no host compile or the Session is busy.
  bool trySchedule(bool timed = true);
  views::ProfileView* profileView() const { return profileView_; }
  // Compares every node output of the model on display with the Numerics panel's reference in
  // the background (the Run panel's input file, else seeded random inputs); `referenceModel`
  // makes the reference run another model file. The panel's finished() or failed() follows.
  // False if there is no model file or a comparison is in flight.
  bool compareNumerics(const QString& referenceModel = {});
  NumericsPanel* numericsPanel() const { return numericsPanel_; }
  // Searches schedules for the model on display with the Tune panel's settings, as a worker
  // job; tuneFinished() or tuneFailed() follows. False if there is no model, no records
  // file, or a search is in flight.
  bool tune();
  // Ends the search after the candidate in flight; its records and report are kept.
  void stopTuning();
  bool isTuning() const;
  TunePanel* tunePanel() const { return tunePanel_; }
  // File > Export…: opens the Export dialog (or raises the open one) for the model on
  // display, its target preselected from the toolbar; nullptr without a model.
  ExportDialog* showExportDialog();
  ExportDialog* exportDialog() const;
  // File > Save Session / Open Session (.lathe, engine/api/session_file.h): the model, its
  // inputs and shapes, target, kept schedules, tuning records, pinned run and layout. Both
  // work on the worker (the model file is hashed); sessionSaved(), or sessionOpened() once
  // the model has loaded and the rest is restored, or sessionFailed() follows. False when
  // there is nothing to save or a session job is in flight.
  bool saveSession(const QString& path);
  bool openSession(const QString& path);

signals:
  void modelLoaded();
  void loadFailed(const QString& message);
  void compiled();
  void compileFailed(const QString& message);
  void runFinished();
  void runFailed(const QString& message);
  void scheduleTried();
  void tuneFinished();
  void tuneFailed(const QString& message);
  void exportFinished();
  void sessionSaved(const QString& path);
  // `modelChange`: empty, or what changed in the model file since the session was saved.
  void sessionOpened(const QString& modelChange);
  void sessionFailed(const QString& message);

protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

private:
  void createActions();
  void createToolBar(QMenu* recent);
  void createCentralArea();
  void createDocks();
  enum class Scroll { Never, WhenSmall };
  QDockWidget* addPanel(QWidget* panel, const QString& title, const QString& name,
                        Qt::DockWidgetArea area, Scroll scroll = Scroll::Never);
  void createStatusBar();
  void onTreeNodeSelected(int node);
  void onGraphNodeSelected(int node);
  void applyNodeSelection(int node); // node of the shown graph, in every panel but the tree
  void highlightKernel(int kernel);
  void showGraphAfterPass(int pass);
  // The snapshot the graph view shows (final, authored or a pass's); null without a model.
  std::shared_ptr<const api::GraphSnapshot> shownGraph() const;
  void listShownGraph();
  void createGraphViewActions(QMenu* view);
  void chooseFile();
  void reload();
  // Opens the model again when the target moved between CPU and GPU and the graph depends
  // on it; true when it did (the compile follows the open).
  bool reopenForTargetFamily();
  void cancelLoad();
  void finishOpen(const QString& path, const Opened& opened);
  void showModel(const QString& path, std::shared_ptr<const api::ModelReport> report,
                 std::shared_ptr<api::Session> session);
  void showFailure(const QString& path, const api::Failure& failure);
  // `threads`: what the code was compiled for (0: one per core).
  void showKernels(const std::shared_ptr<const api::ModelReport>& model,
                   std::shared_ptr<const api::CompileReport> report, int threads = 0);
  void showCompileFailure(const std::shared_ptr<const api::ModelReport>& model,
                          const api::Failure& failure);
  void showErrorDialog(const QString& objectName, const QString& title, const QString& text,
                       const QString& message);
  void setCompiling(bool compiling);
  void syncKernelToNode();
  void createRunDocks();
  void createTuneDock();
  void finishTune(const std::shared_ptr<const api::ModelReport>& model,
                  const api::TuneResult& result, const QString& records);
  void openTunedKernel(const QString& kernel, const QString& trace);
  void finishCompile(const std::shared_ptr<const api::ModelReport>& model,
                     const api::CompileResult& result);
  void finishRun(const std::shared_ptr<const api::ModelReport>& model, const RunSettings& settings,
                 const RunOutcome& outcome);
  void finishTry(const std::shared_ptr<const api::ModelReport>& model, const QString& steps,
                 const api::KernelScheduleResult& result);
  void finishExport(const QPointer<ExportDialog>& dialog, const ExportOutcome& outcome);
  void createSessionActions(QMenu* file);
  void applyPendingSession(const QString& modelPath);
  void updateRunAvailability();
  void updateScheduleAvailability();
  // The Code panel's code is for another target than the picked one: say so.
  void markStaleCode();
  void showScheduleKernel(int kernel);
  void showRunReport(const std::shared_ptr<const api::ModelReport>& model,
                     std::shared_ptr<const api::RunReport> report);
  void showRunFailure(const std::shared_ptr<const api::ModelReport>& model,
                      const api::Failure& failure);
  void selectProfiledKernel(const QString& kernel, const QStringList& nodes);
  void applyHeatMap();
  void selectNodeByName(const QString& name);
  void setLoading(const QString& path);
  void clearLoading();
  enum class LogLevel { Info, Warning, Error };
  void log(const QString& line, LogLevel level = LogLevel::Info);
  void saveLayout() const;

  // Runs every engine job, one after another (session_worker.h).
  SessionWorker* worker_;
  WorkbenchDocument* doc_;
  QString loadingPath_; // the file the current open job opens
  // Input shapes typed for models that record none (TorchScript), by path: offered again on
  // reload.
  QHash<QString, QString> inputShapesAsked_;
  std::optional<std::map<std::string, std::vector<std::int64_t>>>
  askInputShapes(const QString& path);
  RecentFiles* recentFiles_ = nullptr;
  bool persistSettings_ = false;
  bool layoutRestored_ = false; // restoreSettings() found a saved layout of this version

  QAction* openAction_ = nullptr;
  QAction* reloadAction_ = nullptr;
  QAction* quitAction_ = nullptr;
  QAction* findAction_ = nullptr;
  QAction* findInModelAction_ = nullptr;
  QAction* compileAction_ = nullptr;
  QAction* runAction_ = nullptr;
  QAction* exportAction_ = nullptr;
  QAction* saveSessionAction_ = nullptr;
  TourDialog* tour_ = nullptr;
  StepThroughDialog* stepThrough_ = nullptr;
  int stepThroughNode_ = -1;
  RecentFiles* recentSessions_ = nullptr;
  // A session being opened: restored once its model has loaded.
  std::shared_ptr<const api::WorkbenchSession> pendingSession_;
  QString pendingSessionChange_;
  QPointer<ExportDialog> exportDialog_;
  QComboBox* targetPicker_ = nullptr;
  bool recompileForTarget_ = false; // the target changed while a compile ran
  // The open model went through the pipeline for a GPU target (no CPU layout passes); a
  // change between CPU and GPU targets opens it again (reopenForTargetFamily).
  bool openedForGpu_ = false;
  bool recompileAfterOpen_ = false; // compile once the model opened again

  QStackedWidget* centralStack_ = nullptr;
  views::GraphView* graph_ = nullptr;
  QLabel* graphBanner_ = nullptr; // "showing the graph after pass X — Show final graph"
  int graphPass_ = kFinalGraph;
  bool listingGraph_ = false; // the tree is being given another graph
  QAction* authoredGraphAction_ = nullptr;
  QAction* finalGraphAction_ = nullptr;
  ModelBrowser* browser_ = nullptr;
  QDockWidget* modelDock_ = nullptr;
  QDockWidget* propertiesDock_ = nullptr;
  QDockWidget* passesDock_ = nullptr;
  QDockWidget* codeDock_ = nullptr;
  QDockWidget* irDock_ = nullptr;
  QDockWidget* logDock_ = nullptr;
  QDockWidget* runDock_ = nullptr;
  QDockWidget* profileDock_ = nullptr;
  QDockWidget* scheduleDock_ = nullptr;
  SchedulePanel* schedulePanel_ = nullptr;
  RunPanel* runPanel_ = nullptr;
  views::ProfileView* profileView_ = nullptr;
  QDockWidget* numericsDock_ = nullptr;
  NumericsPanel* numericsPanel_ = nullptr;
  QDockWidget* tuneDock_ = nullptr;
  TunePanel* tunePanel_ = nullptr;
  std::shared_ptr<std::atomic<bool>> tuneStop_;  // Stop: the search in flight ends
  std::shared_ptr<std::atomic<bool>> tunePause_; // Pause: the search in flight waits
  PropertiesPanel* properties_ = nullptr;
  PassesPanel* passes_ = nullptr;
  KernelsPanel* kernels_ = nullptr;
  QPlainTextEdit* irView_ = nullptr;
  QPlainTextEdit* logView_ = nullptr;
  QLabel* modelInfo_ = nullptr;
  QLabel* loadStage_ = nullptr;
  QProgressBar* loadProgress_ = nullptr;
  QToolButton* cancelButton_ = nullptr;
  QLabel* compileStage_ = nullptr;
  QProgressBar* compileProgress_ = nullptr; // busy indicator: a compile reports no progress
  QToolButton* cancelCompileButton_ = nullptr;
};

} // namespace lathe::workbench
