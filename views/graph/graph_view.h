#pragma once
// The model's graph, laid out by Graphviz on the layout thread: ops coloured by category,
// tensors labelled with their shapes, fused groups framed (and collapsible to one node), the
// subgraphs of If/Loop/Scan nodes (collapsed into the node until expanded), search by name or op
// type, zoom and pan. Indices are into the snapshot's nodes.

#include "engine/api/session.h"
#include "views/graph/graph_items.h"
#include "views/graph/visible_graph.h"

#include <QElapsedTimer>
#include <QWidget>
#include <memory>
#include <set>
#include <vector>

class QAction;
class QGraphicsScene;
class QLabel;
class QLineEdit;
class QToolButton;

namespace lathe::views {

class GraphCanvas;
class GraphMinimap;
class HeatLegend;
class LayoutEngine;
struct LayoutResult;

class GraphView : public QWidget {
  Q_OBJECT

public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Shows `snapshot` once it is laid out (a busy indicator covers the view meanwhile); a newer
  // call supersedes an older one. nullptr clears the view. Groups start expanded, except on
  // graphs of thousands of nodes.
  void setSnapshot(std::shared_ptr<const api::GraphSnapshot> snapshot);
  // Empties the find box (a different model: its names are not the last one's).
  void clearSearch();
  const std::shared_ptr<const api::GraphSnapshot>& snapshot() const { return snapshot_; }
  bool isLayingOut() const;

  // Selects and centres the node (its group's node when the group is collapsed); does not emit
  // nodeSelected. -1 clears the selection. False if there is no such node.
  bool selectNode(int node);
  int selectedNode() const { return selectedNode_; }
  // Draws these nodes with a distinct outline (e.g. the nodes a pass changed); replaces the last.
  void highlightNodes(std::vector<int> nodes);
  int highlightedItemCount() const;
  // Centres the node without selecting it, now or once the layout in flight is shown.
  void revealNode(int node);
  // The heat map: each node's share of the run time in [0, 1], by snapshot node index, fills
  // the nodes with heatColor() scaled to the hottest drawn node (a collapsed group sums its
  // nodes) and shows a legend. Empty turns it off; a new snapshot drops it.
  void setNodeHeat(std::vector<double> share);
  // The heat legend's title (empty: share of run time), for other measures in [0, 1].
  void setHeatTitle(const QString& title);
  const std::vector<double>& nodeHeat() const { return heat_; }
  bool isHeatMapOn() const { return !heat_.empty(); }

  void collapseGroup(int group);
  void expandGroup(int group);
  void setAllGroupsCollapsed(bool collapsed);
  bool isGroupCollapsed(int group) const { return collapsed_.count(group) != 0; }

  // An If/Loop/Scan node starts collapsed; expanded, its subgraphs are drawn as clusters.
  void expandNode(int node);
  void collapseNode(int node);
  bool isNodeExpanded(int node) const { return expanded_.count(node) != 0; }

  // Search over node names and op types (case-insensitive). findNext/findPrevious select and
  // centre the match and emit nodeSelected; they wrap around.
  void setSearchText(const QString& text);
  int matchCount() const { return static_cast<int>(matches_.size()); }
  int currentMatch() const { return currentMatch_; } // 0-based, -1 when none
  void findNext();
  void findPrevious();
  void focusSearch();

  // The whole graph as laid out now, as .svg or .png; false (and `error`) when it cannot be
  // written. The Save button of the view's bar asks for the file.
  bool saveImage(const QString& path, QString* error = nullptr);

  void fitToView();
  void zoomIn();
  void zoomOut();
  double zoom() const;
  // Fit (Ctrl+0), zoom in (Ctrl+=) and out (Ctrl+-); shortcuts work while the view has focus.
  QAction* fitAction() const { return fitAction_; }
  QAction* zoomInAction() const { return zoomInAction_; }
  QAction* zoomOutAction() const { return zoomOutAction_; }

  // For tests and tools: what the scene shows now.
  int nodeItemCount() const { return static_cast<int>(nodeItems_.size()); }
  // Of the last layout shown: the time Graphviz took, and whether big-graph limits applied.
  double graphvizMilliseconds() const { return graphvizMilliseconds_; }
  bool layoutWasBounded() const { return layoutBounded_; }
  int clusterItemCount() const;
  int edgeItemCount() const;
  NodeItem* itemForNode(int node) const;
  const VisibleGraph& visibleGraph() const { return shown_; }
  GraphCanvas* canvas() const { return canvas_; }
  GraphMinimap* minimap() const { return minimap_; }
  LayoutEngine* layoutEngine() const { return engine_; }

signals:
  // The user selected a node (click, search); -1 when the selection was cleared.
  void nodeSelected(int node);
  // The user selected node `node` of `subgraph`, a subgraph of snapshot node `owner`.
  void subgraphNodeSelected(std::shared_ptr<const lathe::api::GraphSnapshot> subgraph, int node,
                            int owner);
  // The scene shows a new layout; `milliseconds` from the request to the scene being built.
  void layoutFinished(double milliseconds);

protected:
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;

private:
  void requestLayout();
  void showLayout(quint64 job, const std::shared_ptr<const LayoutResult>& result);
  void buildScene(const LayoutResult& result);
  void setBusy(bool busy);
  void placeOverlay();
  void applySelection(bool center);
  void applyHighlights();
  void applyHeat();
  void onSceneSelectionChanged();
  void goToMatch(int match);
  void updateMatchLabel();
  void showInitialView();
  void toggleGroupAt(QGraphicsItem* item);
  void showContextMenu(QGraphicsItem* item, const QPoint& globalPos);
  int groupOfItem(QGraphicsItem* item) const;
  int ownerOfItem(QGraphicsItem* item) const;
  void focusOnNodeScope(int node);

  std::shared_ptr<const api::GraphSnapshot> snapshot_;
  std::set<int> collapsed_;
  std::set<int> expanded_; // snapshot nodes whose subgraphs are drawn
  VisibleGraph pending_;   // requested, being laid out
  VisibleGraph shown_;     // what the scene shows
  bool newSnapshot_ = false;
  const api::GraphSnapshot* sceneSnapshot_ = nullptr; // the snapshot the scene shows
  double graphvizMilliseconds_ = 0;
  bool layoutBounded_ = false;
  int focusGroup_ = -1; // a toggled group, centred again after the relayout
  int focusNode_ = -1;  // a toggled If/Loop/Scan node, likewise
  int revealNode_ = -1; // centred once the layout in flight is shown
  QElapsedTimer timer_;
  int selectedNode_ = -1;
  std::vector<int> highlighted_;
  std::vector<double> heat_; // by snapshot node; empty: category colours
  std::vector<int> matches_; // snapshot node indices
  int currentMatch_ = -1;
  bool selecting_ = false; // selection changes made by code, not the user

  GraphStyle style_;
  LayoutEngine* engine_;
  QGraphicsScene* scene_;
  GraphCanvas* canvas_;
  std::vector<NodeItem*> nodeItems_; // by VisibleGraph node index
  QLineEdit* search_;
  QToolButton* previous_;
  QToolButton* next_;
  QLabel* matchLabel_;
  QLabel* zoomLabel_;
  QWidget* overlay_;
  QLabel* overlayLabel_;
  QLabel* message_;
  HeatLegend* heatLegend_;
  GraphMinimap* minimap_;
  QAction* fitAction_;
  QAction* zoomInAction_;
  QAction* zoomOutAction_;
};

} // namespace lathe::views
