#include "views/graph/dot_layout.h"

#include <algorithm>
#include <chrono>
#include <gvc.h>
#include <string>

namespace lathe::views {
namespace {

constexpr double kPointsPerInch = 72.0;

// cgraph predates const: it takes char* but does not write through it.
char* cs(const char* text) {
  return const_cast<char*>(text);
}

std::string number(double value) {
  return std::to_string(value);
}

// Graphviz sizes a cluster's label from its own font-width table, which guesses narrower than
// the bold font the view draws with. A larger font size for the cluster makes its guess (about
// half an em per character) cover the width the view measured, so the label is not cut off.
double labelFontSize(const LayoutInput::Cluster& cluster, double base) {
  std::size_t characters = 0;
  for (const char c : cluster.label)
    characters += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0; // UTF-8 code points
  if (cluster.labelWidth <= 0 || characters == 0)
    return base;
  return std::max(base, cluster.labelWidth / (0.5 * static_cast<double>(characters)));
}

// Declares a graph-wide attribute with its default, for fast per-object agxset later.
Agsym_t* declare(Agraph_t* g, int kind, const char* name, const std::string& value) {
  return agattr(g, kind, cs(name), cs(value.c_str()));
}

void set(void* object, Agsym_t* attribute, const std::string& value) {
  agxset(object, attribute, cs(value.c_str()));
}

} // namespace

DotLayouter::DotLayouter() : gvc_(gvContext()) {}

DotLayouter::~DotLayouter() {
  gvFreeContext(gvc_);
}

LayoutResult DotLayouter::layout(const LayoutInput& input) {
  LayoutResult result;
  const auto start = std::chrono::steady_clock::now();
  Agraph_t* g = agopen(cs("lathe"), Agdirected, nullptr);

  declare(g, AGRAPH, "rankdir", "TB");
  declare(g, AGRAPH, "nodesep", "0.35");
  declare(g, AGRAPH, "ranksep", "0.3");
  declare(g, AGRAPH, "splines", "spline");
  declare(g, AGRAPH, "labeljust", "l");
  declare(g, AGRAPH, "fontname", "Helvetica");
  Agsym_t* graphFontSize = declare(g, AGRAPH, "fontsize", number(input.clusterLabelFontSize));
  Agsym_t* graphLabel = declare(g, AGRAPH, "label", "");
  result.bounded = static_cast<int>(input.nodes.size()) >= kBoundedFrom;
  if (result.bounded) {
    // Fewer network-simplex and crossing-minimisation iterations: the quality loss is small on
    // the long, narrow graphs of networks, the time saved is most of the layout.
    declare(g, AGRAPH, "nslimit", "2");
    declare(g, AGRAPH, "nslimit1", "2");
    declare(g, AGRAPH, "mclimit", "0.3");
    declare(g, AGRAPH, "searchsize", "20");
    declare(g, AGRAPH, "remincross", "false");
    // Edge labels are not ranks of their own here (see below): leave room for them.
    declare(g, AGRAPH, "ranksep", "0.5");
  }
  declare(g, AGNODE, "shape", "box");
  declare(g, AGNODE, "fixedsize", "true");
  declare(g, AGNODE, "label", "");
  Agsym_t* width = declare(g, AGNODE, "width", "1");
  Agsym_t* height = declare(g, AGNODE, "height", "0.5");
  declare(g, AGEDGE, "fontname", "Helvetica");
  declare(g, AGEDGE, "fontsize", number(input.edgeLabelFontSize));
  declare(g, AGEDGE, "arrowsize", "0.7");
  Agsym_t* edgeLabel = declare(g, AGEDGE, "label", "");

  std::vector<Agnode_t*> nodes;
  nodes.reserve(input.nodes.size());
  for (std::size_t i = 0; i < input.nodes.size(); ++i) {
    const std::string name = "n" + std::to_string(i);
    Agnode_t* n = agnode(g, cs(name.c_str()), 1);
    set(n, width, number(input.nodes[i].width / kPointsPerInch));
    set(n, height, number(input.nodes[i].height / kPointsPerInch));
    nodes.push_back(n);
  }
  std::vector<Agraph_t*> clusters;
  for (std::size_t c = 0; c < input.clusters.size(); ++c) {
    // The "cluster" prefix is what makes dot draw a subgraph as a box around its nodes.
    const std::string name = "cluster_" + std::to_string(c);
    Agraph_t* sub = agsubg(g, cs(name.c_str()), 1);
    set(sub, graphLabel, input.clusters[c].label);
    set(sub, graphFontSize, number(labelFontSize(input.clusters[c], input.clusterLabelFontSize)));
    for (const int node : input.clusters[c].nodes)
      agsubnode(sub, nodes[node], 1);
    clusters.push_back(sub);
  }
  std::vector<Agedge_t*> edges;
  edges.reserve(input.edges.size());
  for (const LayoutInput::Edge& edge : input.edges) {
    Agedge_t* e = agedge(g, nodes[edge.tail], nodes[edge.head], nullptr, 1);
    // A dot edge label is a virtual node on an extra rank: on big graphs that doubles the
    // layout time, so there the view places labels on the finished splines instead.
    if (!edge.label.empty() && !result.bounded)
      set(e, edgeLabel, edge.label);
    edges.push_back(e);
  }

  if (gvLayout(gvc_, g, "dot") != 0) {
    agclose(g);
    result.error = "Graphviz could not lay out the graph";
    return result;
  }

  // Graphviz's y axis points up; the scene's points down, with the origin at the top left.
  const boxf bb = GD_bb(g);
  const auto map = [&bb](pointf p) { return QPointF(p.x - bb.LL.x, bb.UR.y - p.y); };
  const auto mapBox = [&map](boxf box) { return QRectF(map(box.LL), map(box.UR)).normalized(); };
  result.bounds = QRectF(0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);
  for (Agnode_t* n : nodes) {
    const double w = ND_width(n) * kPointsPerInch, h = ND_height(n) * kPointsPerInch;
    const QPointF center = map(ND_coord(n));
    result.nodes.emplace_back(center.x() - w / 2, center.y() - h / 2, w, h);
  }
  for (Agedge_t* e : edges) {
    LayoutResult::Edge out;
    if (const splines* spl = ED_spl(e)) {
      for (int i = 0; i < spl->size; ++i) {
        const bezier& bz = spl->list[i];
        for (int j = 0; j < bz.size; ++j)
          out.spline.push_back(map(bz.list[j]));
        if (bz.eflag) {
          out.hasArrow = true;
          out.arrowTip = map(bz.ep);
        }
      }
    }
    if (const textlabel_t* label = ED_label(e); label && label->set) {
      out.hasLabel = true;
      out.labelCenter = map(label->pos);
    }
    result.edges.push_back(std::move(out));
  }
  for (Agraph_t* sub : clusters)
    result.clusters.push_back({mapBox(GD_bb(sub))});

  gvFreeLayout(gvc_, g);
  agclose(g);
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace lathe::views
