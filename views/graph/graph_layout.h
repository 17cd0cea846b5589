#pragma once
// The input and output of one Graphviz layout as plain values, so a job can be copied to the
// layout thread and its result copied back. Coordinates are scene units (1 unit = 1 point at
// 100% zoom), y pointing down.

#include <QPointF>
#include <QRectF>
#include <string>
#include <vector>

namespace lathe::views {

struct LayoutInput {
  struct Node {
    double width = 0, height = 0;
  };
  struct Edge {
    int tail = -1, head = -1;
    std::string label; // empty: no label
  };
  struct Cluster {
    std::vector<int> nodes;
    std::string label;
    double labelWidth = 0; // as the view draws it, padding included; 0: trust Graphviz's guess
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Cluster> clusters;
  // Font sizes the view draws edge and cluster labels with, so Graphviz reserves room for them.
  double edgeLabelFontSize = 10;
  double clusterLabelFontSize = 11;
};

struct LayoutResult {
  struct Edge {
    // A cubic Bézier spline: start point, then three points (two controls, end) per segment.
    std::vector<QPointF> spline;
    bool hasArrow = false;
    QPointF arrowTip; // the spline ends at the arrow's base
    bool hasLabel = false;
    QPointF labelCenter;
  };
  struct Cluster {
    QRectF rect;
  };
  QRectF bounds;
  std::vector<QRectF> nodes; // by LayoutInput node index
  std::vector<Edge> edges;   // by LayoutInput edge index
  std::vector<Cluster> clusters;
  double milliseconds = 0; // spent in Graphviz
  bool bounded = false;    // the big-graph limits (nslimit, mclimit, ...) were applied
  std::string error;       // set when Graphviz failed; the rest is then empty
};

} // namespace lathe::views
