#pragma once
// Which nodes a pass touched, from the snapshots before and after it: for highlighting
// the graph view.

#include "engine/api/session.h"

#include <vector>

namespace lathe::views {

struct NodeChanges {
  std::vector<int> changed; // indices into after.nodes, ascending: new nodes or changed IR
  int removed = 0;          // nodes of `before` with no counterpart in `after`
};

// Nodes are matched by their output value names (a pass that rewrites a node keeps the
// names its users read); a matched node changed when its IR line differs or it moved into
// or out of a fused kernel (the IR line does not show grouping).
NodeChanges changedNodes(const api::GraphSnapshot& before, const api::GraphSnapshot& after);

} // namespace lathe::views
