#pragma once
// The "Tune" dock: searches schedules for the open model's kernels on this machine (the
// engine's tuner, as a worker job), with a live convergence plot of the model's estimated
// latency against trials and a table of kernels: default and best time, speed-up, trials.
// Pause holds the search after the candidate in flight (Resume goes on); Stop ends it,
// keeping every record; Start again with the same records file resumes it. A kernel's row
// opens its best trace in Schedule. Compare… puts another records file beside this one.

#include "engine/api/session.h"

#include <QWidget>
#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QStandardItemModel;
class QSplitter;
class QTableView;

namespace lathe::views {
class ConvergencePlot;
} // namespace lathe::views

namespace lathe::workbench {

class TunePanel : public QWidget {
  Q_OBJECT

public:
  explicit TunePanel(QWidget* parent = nullptr);

  // What Start asks for (records path, trials, threads, strategy; target is the window's).
  api::TuneOptions options() const;
  void setRecordsPath(const QString& path);
  QString recordsPath() const;
  void setTrials(int trials);
  void setThreads(int threads);

  void setCanTune(bool canTune, const QString& why = {});
  void setTuning(bool tuning);
  bool isTuning() const { return tuning_; }
  bool isPaused() const { return paused_; }
  // Pause or resume the search in flight (what the Pause button does).
  void setPaused(bool paused);
  // The comparison of the records file in use with `other` in a window of its own (nullptr,
  // and the reason in the status line, when one cannot be read).
  class RecordsCompareDialog* compareWith(const QString& other);
  // A round finished (the worker's progress, on the GUI thread).
  void addProgress(const api::TuneProgressSummary& progress);
  // The search ended (stopped or done): the table of workloads.
  void showReport(std::shared_ptr<const api::TuneReport> report);
  void showFailure(const QString& message);
  // A new model: nothing of the last one's search applies.
  void reset();
  const std::shared_ptr<const api::TuneReport>& report() const { return report_; }
  views::ConvergencePlot* plot() const { return plot_; }
  QTableView* table() const { return table_; }
  QString statusText() const;

signals:
  void startRequested();
  void stopRequested();
  void pauseRequested(bool paused);
  // A row: the kernel (its first, when several share the workload) and its best trace.
  void kernelActivated(const QString& kernel, const QString& trace);

protected:
  // Docked along the bottom the panel is wide and short: plot and table side by side;
  // floating or docked at a side, one above the other.
  void resizeEvent(QResizeEvent* event) override;

private:
  void chooseRecords();
  void updateButtons();

  QLineEdit* records_;
  QSpinBox* trials_;
  QSpinBox* threads_;
  QComboBox* strategy_;
  QPushButton* start_;
  QPushButton* stop_;
  QPushButton* pause_;
  QPushButton* compare_;
  QLabel* status_;
  views::ConvergencePlot* plot_;
  QTableView* table_;
  QSplitter* splitter_;
  QStandardItemModel* model_;
  std::shared_ptr<const api::TuneReport> report_;
  bool canTune_ = false, tuning_ = false, paused_ = false;
};

} // namespace lathe::workbench
