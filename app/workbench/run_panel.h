#pragma once
// The "Run" dock: inputs, threads, repeats and Profile; Run with progress and Cancel; then
// the outputs (top-5 for classifiers), the latency distribution, and, with a run pinned, the
// per-kernel comparison of the next run with it.

#include "app/workbench/engine_jobs.h"
#include "engine/api/session.h"

#include <QWidget>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;
class QToolButton;

namespace lathe::views {
class LatencyPlot;
class RunComparisonModel;
class RunOutputsModel;
} // namespace lathe::views

namespace lathe::workbench {

class InputShapesTable;

class RunPanel : public QWidget {
  Q_OBJECT

public:
  explicit RunPanel(QWidget* parent = nullptr);

  // What the controls ask for (compileThreads and target are the caller's business).
  RunSettings settings() const;
  // 0: one per core.
  int threads() const;
  void setThreads(int threads);
  void setRepeat(int repeat);
  void setProfile(bool profile);
  // "random", "zeros" or "ones"; or an .npz file with setInputsNpz.
  void setFill(const QString& fill);
  void setInputsNpz(const QString& path);
  // Random inputs and no input file: what a different model starts with.
  void resetInputs();

  // The open model's inputs for the shape table (none: no model).
  void setModelInputs(const std::vector<api::TensorSummary>& inputs);
  // Whether the model has inputs with symbolic dims: each run compiles for its shapes.
  bool hasSymbolicInputs() const;
  // Why the inputs' shapes do not allow a run (a symbolic dim not given, a file whose
  // arrays do not fit); empty when they do. Run stays disabled meanwhile.
  QString shapeProblem() const;
  InputShapesTable* shapesTable() const { return shapes_; }

  // Whether Run is offered (a model is open and no compile holds the Session).
  void setCanRun(bool canRun);
  void setRunning(bool running);
  // percent -1: a busy indicator.
  void setProgress(int percent, const QString& stage);

  // Shows a finished run; compares it with the pinned one if there is one. nullptr clears
  // the results (a new model), and the pinned run with them.
  void showReport(std::shared_ptr<const api::RunReport> report);
  const std::shared_ptr<const api::RunReport>& report() const { return report_; }
  // Keeps the run on display as the baseline of the next ones; false if there is none.
  bool pin();
  void unpin();
  // A pinned run from elsewhere (a saved session) as the baseline; nullptr unpins.
  void setPinned(std::shared_ptr<const api::RunReport> run);
  const std::shared_ptr<const api::RunReport>& pinned() const { return pinned_; }
  // Writes the comparison table as CSV; false (and a message in the panel) on failure.
  bool exportComparison(const QString& path);

  views::RunOutputsModel* outputsModel() const { return outputs_; }
  views::RunComparisonModel* comparisonModel() const { return comparison_; }
  views::LatencyPlot* latencyPlot() const { return latency_; }
  QString statsText() const;
  void showComparison();

signals:
  void runRequested();
  void shapesChanged();
  void cancelRequested();

private:
  void chooseNpz();
  void chooseExportFile();
  void updateComparison();
  void updateButtons();

  std::shared_ptr<const api::RunReport> report_, pinned_;
  bool canRun_ = false, running_ = false;

  QComboBox* inputs_;
  QLineEdit* npzPath_;
  InputShapesTable* shapes_;
  QToolButton* browseNpz_;
  QSpinBox* threads_;
  QSpinBox* repeat_;
  QCheckBox* profile_;
  QPushButton* runButton_;
  QPushButton* cancelButton_;
  QProgressBar* progress_;
  QLabel* stage_;
  QTabWidget* tabs_;
  QLabel* stats_;
  QLabel* top_; // top-5 classes of each classifier-like output
  QTableView* outputsTable_;
  views::RunOutputsModel* outputs_;
  views::LatencyPlot* latency_;
  QPushButton* pinButton_;
  QPushButton* exportButton_;
  QLabel* compareSummary_;
  QTableView* comparisonTable_;
  views::RunComparisonModel* comparison_;
};

} // namespace lathe::workbench
