#pragma once
// The "Numerics" dock: compares every node output of the open model with a reference (Lathe's
// interpreter or ONNX Runtime) on a worker thread, then lists the values with their errors,
// jumps to the first divergent one, and shows both sides' statistics for the selected value.
// The engine call cannot be interrupted: Cancel drops its result.

#include "engine/api/numerics_compare.h"

#include <QFutureWatcher>
#include <QWidget>
#include <atomic>
#include <map>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;

namespace lathe::views {
class NumericsModel;
class WeightStatsView;
} // namespace lathe::views

namespace lathe::workbench {

class NumericsPanel : public QWidget {
  Q_OBJECT

public:
  explicit NumericsPanel(QWidget* parent = nullptr);
  ~NumericsPanel() override;

  // Starts comparing with the picked reference; `options.reference` is filled here. False
  // while a comparison is in flight.
  bool compare(api::CompareOptions options);
  void cancel();
  bool isComparing() const { return current_ != nullptr; }
  void setCanCompare(bool canCompare);
  // nullptr clears the results (a new model).
  void showReport(std::shared_ptr<const api::CompareReport> report);
  const std::shared_ptr<const api::CompareReport>& report() const { return report_; }
  // "reference" or "onnxruntime".
  QString reference() const;
  bool isHeatMapOn() const;
  // Selects the row of values()[index] and shows its statistics; false if there is none.
  bool selectValue(int index);
  int selectedValue() const;

  views::NumericsModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QString summaryText() const;
  views::WeightStatsView* latheStats() const { return latheStats_; }
  views::WeightStatsView* referenceStats() const { return referenceStats_; }

signals:
  void compareRequested();
  void finished();
  void failed(const QString& message);
  // A row was selected: its producing node (ONNX name).
  void nodeActivated(const QString& node);
  void heatMapToggled(bool on);

private:
  void onFinished(QFutureWatcher<api::CompareResult>* watcher);
  void setBusy(bool busy);
  void showSelected();

  std::shared_ptr<const api::CompareReport> report_;
  std::vector<QFutureWatcher<api::CompareResult>*> watchers_; // dropped ones included
  // Each watcher's cancel flag (CompareOptions::cancel), shared with its worker.
  std::map<QFutureWatcher<api::CompareResult>*, std::shared_ptr<std::atomic<bool>>> cancelFlags_;
  QFutureWatcher<api::CompareResult>* current_ = nullptr;
  bool canCompare_ = false;

  QComboBox* reference_;
  QPushButton* compareButton_;
  QPushButton* cancelButton_;
  QProgressBar* busy_;
  QCheckBox* heatMap_;
  QLabel* summary_;
  QTableView* table_;
  views::NumericsModel* model_;
  views::WeightStatsView* latheStats_;
  views::WeightStatsView* referenceStats_;
};

} // namespace lathe::workbench
