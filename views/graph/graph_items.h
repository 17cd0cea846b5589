#pragma once
// The items of the graph scene: a node (op, graph input/output, collapsed group), an edge with
// its arrowhead and shape label, and the frame of a fused group.

#include "views/graph/visible_graph.h"

#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QPainterPath>
#include <vector>

namespace lathe::views {

// Colours and fonts of one scene, derived from the widget's palette so dark themes work.
struct GraphStyle {
  QColor background, text, mutedText, edge, selection, highlight;
  QFont titleFont, bodyFont, edgeFont, clusterFont;
  static GraphStyle fromPalette(const QPalette& palette, const QFont& base);
};

// The size a node needs for its text, in scene units.
QSizeF nodeSize(const VisibleNode& node, const GraphStyle& style);

class NodeItem : public QGraphicsItem {
public:
  // Item data key holding the index into VisibleGraph::nodes.
  static constexpr int kVisibleIndexKey = 0;

  NodeItem(const VisibleNode& node, int visibleIndex, const QRectF& rect, const GraphStyle* style);

  const VisibleNode& node() const { return node_; }
  void setHighlighted(bool highlighted);
  bool isHighlighted() const { return highlighted_; }
  // The heat map: `t` in [0, 1] (scaled to the hottest node) picks the fill, `share` of the run
  // time goes in the tooltip; a negative `t` turns it off, back to the category colour.
  void setHeat(double t, double share);
  bool hasHeat() const { return heat_ >= 0; }
  double heat() const { return heat_; }
  // What an op or group is filled with: its heat colour while the heat map is on, else the
  // colour of its category.
  QColor fillColor() const;

  QRectF boundingRect() const override;
  QPainterPath shape() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

protected:
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

private:
  void paintOp(QPainter* painter, bool detailed) const;
  void paintTensor(QPainter* painter, bool detailed) const;

  VisibleNode node_;
  QRectF rect_; // centred on the item's position
  const GraphStyle* style_;
  QString toolTip_; // without the heat map's line
  bool highlighted_ = false;
  double heat_ = -1;
};

class EdgeItem : public QGraphicsItem {
public:
  EdgeItem(const std::vector<QPointF>& spline, bool hasArrow, QPointF arrowTip, QString label,
           bool hasLabel, QPointF labelCenter, const GraphStyle* style,
           VisibleEdge::Kind kind = VisibleEdge::Kind::Data);

  VisibleEdge::Kind kind() const { return kind_; }

  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
  QPainterPath path_;
  QPolygonF arrow_;
  QString label_;
  QRectF labelRect_;
  QRectF bounds_;
  const GraphStyle* style_;
  VisibleEdge::Kind kind_;
};

// The frame of a fused group, or of a subgraph of an expanded If/Loop/Scan node.
class ClusterItem : public QGraphicsItem {
public:
  ClusterItem(int group, const QRectF& rect, QString label, QColor tint, const GraphStyle* style,
              int owner = -1);

  int group() const { return group_; } // -1 for a subgraph
  int owner() const { return owner_; } // a subgraph's If/Loop/Scan node, else -1
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
  int group_;
  int owner_;
  QRectF rect_;
  QString label_;
  QColor tint_;
  const GraphStyle* style_;
};

} // namespace lathe::views
