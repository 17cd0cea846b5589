#pragma once
// A profiled run: a one-line summary, the timeline per thread, and the kernels by time as a
// bar chart and a sortable table. Clicking a bar, a row or a timeline bar emits
// kernelActivated.

#include "engine/api/session.h"

#include <QHash>
#include <QWidget>
#include <memory>
#include <vector>

class QCustomPlot;
class QLabel;
class QSortFilterProxyModel;
class QSplitter;
class QStackedWidget;
class QTableView;
class QToolButton;

namespace lathe::views {

class KernelProfileModel;
class TimelineView;

// Kernel name -> op category of the nodes it computes (its anchor: the first node that is
// not elementwise), looked up by node name in `graph`.
QHash<QString, QString> kernelCategories(const api::RunProfile& profile,
                                         const api::GraphSnapshot* graph);

// Each node of `graph`'s share of the time of all kernels, by node index, for the graph's heat
// map: a kernel's whole time goes to its anchor node (the first of its nodes that is not
// elementwise, else its first), the op that gives the kernel its kind, found by name. Nodes no
// kernel anchors get 0; all 0 when the profile has no time.
std::vector<double> nodeTimeShares(const api::RunProfile& profile, const api::GraphSnapshot& graph);

class ProfileView : public QWidget {
  Q_OBJECT

public:
  explicit ProfileView(QWidget* parent = nullptr);

  // `graph` gives the op categories (colours); either may be nullptr. A report without a
  // profile shows how to get one.
  void setReport(std::shared_ptr<const api::RunReport> report,
                 std::shared_ptr<const api::GraphSnapshot> graph);
  const std::shared_ptr<const api::RunReport>& report() const { return report_; }
  // Selects the kernel's row and bars without emitting kernelActivated; false if not shown.
  bool selectKernel(const QString& kernel);
  QString selectedKernel() const { return selected_; }
  // The "Heat map" toggle: colour the graph by each node's share of the run time.
  bool isHeatMapOn() const;
  void setHeatMapOn(bool on); // emits heatMapToggled when it changes
  QToolButton* heatMapButton() const { return heatMap_; }

  KernelProfileModel* kernelModel() const { return model_; }
  QTableView* table() const { return table_; }
  TimelineView* timeline() const { return timeline_; }
  QCustomPlot* barChart() const { return chart_; }
  int chartBarCount() const;
  QString summaryText() const;
  // Wide enough for a readable timeline when its dock first appears.
  QSize sizeHint() const override { return {760, 320}; }

signals:
  void kernelActivated(const QString& kernel, const QStringList& nodes);
  // After kernelActivated, when a chunk of the timeline was clicked: its kernel ran
  // iterations [first, end) of a parallel loop of `iterations`.
  void parallelChunkActivated(const QString& kernel, qint64 first, qint64 end, qint64 iterations);
  void heatMapToggled(bool on);

protected:
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  void rebuildChart();
  void activate(const QString& kernel);
  void applyPalette();

  std::shared_ptr<const api::RunReport> report_;
  QHash<QString, QString> categories_;
  QString selected_;
  QStackedWidget* stack_;
  QLabel* placeholder_;
  QLabel* summary_;
  QToolButton* heatMap_;
  TimelineView* timeline_;
  QCustomPlot* chart_;
  QTableView* table_;
  KernelProfileModel* model_;
  QSortFilterProxyModel* proxy_;
  QSplitter* splitter_;
};

} // namespace lathe::views
