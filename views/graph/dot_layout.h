#pragma once
// The one place that calls Graphviz. Graphviz keeps global state and is not thread-safe even
// with one context per thread, so a DotLayouter must only ever be used from one thread, and
// only one may exist at a time (LayoutEngine makes sure of both).

#include "views/graph/graph_layout.h"

struct GVC_s;

namespace lathe::views {

class DotLayouter {
public:
  // Above this many nodes, crossing minimisation and network simplex are capped so the layout
  // time stays bounded (a few seconds for thousands of nodes) at some cost in edge crossings.
  static constexpr int kBoundedFrom = 400;

  DotLayouter();
  ~DotLayouter();
  DotLayouter(const DotLayouter&) = delete;
  DotLayouter& operator=(const DotLayouter&) = delete;

  // Top-to-bottom `dot` layout. Never throws; failures come back in LayoutResult::error.
  LayoutResult layout(const LayoutInput& input);

private:
  GVC_s* gvc_;
};

} // namespace lathe::views
