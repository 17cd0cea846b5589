#pragma once
// The "Properties" tab: everything the snapshot knows about the selected node, and for its
// constant inputs (weights) their statistics and a value histogram, computed on a worker.

#include "engine/api/session.h"

#include <QWidget>
#include <map>
#include <memory>
#include <string>
#include <vector>

class QScrollArea;
class QSplitter;
class QStackedWidget;
class QTreeView;
class QVBoxLayout;

namespace lathe::views {
class NodePropertiesModel;
class WeightStatsView;
} // namespace lathe::views

namespace lathe::workbench {

class SessionWorker;

class PropertiesPanel : public QWidget {
  Q_OBJECT

public:
  explicit PropertiesPanel(QWidget* parent = nullptr);

  // The Session that opened the model on display: weight statistics come from it, as jobs
  // of `worker` (tag "stats": a newer selection's job replaces an older one). A null
  // session (the default) shows weights without statistics.
  void setSession(SessionWorker* worker, std::shared_ptr<api::Session> session);
  // node -1 (or a null graph) shows a hint instead of an empty table.
  void setNode(std::shared_ptr<const api::GraphSnapshot> graph, int node);

  // For tests and screenshots: one view per constant input of the node on display.
  std::vector<views::WeightStatsView*> weightViews() const;
  bool statsPending() const { return pendingJob_ != 0; }

signals:
  void weightStatsReady(); // the statistics of the node on display arrived

protected:
  void showEvent(QShowEvent* event) override;

private:
  using StatsResults = std::vector<std::pair<std::string, std::optional<api::ConstantStats>>>;
  void spanSectionRows();
  void showWeights();
  void applyStats(const StatsResults& results);
  void fitWeightsPane();

  QStackedWidget* stack_;
  QSplitter* splitter_;
  QTreeView* view_;
  QScrollArea* weightsArea_;
  QVBoxLayout* weightsLayout_;
  views::NodePropertiesModel* model_;
  std::shared_ptr<const api::GraphSnapshot> graph_;
  int node_ = -1;
  int weightCount_ = 0; // weight views on display
  SessionWorker* worker_ = nullptr;
  std::shared_ptr<api::Session> session_;
  // Statistics already computed for this session, by constant name.
  std::map<std::string, std::optional<api::ConstantStats>> cache_;
  std::uint64_t lastJob_ = 0;
  std::uint64_t pendingJob_ = 0; // 0: nothing in flight for the node on display
};

} // namespace lathe::workbench
