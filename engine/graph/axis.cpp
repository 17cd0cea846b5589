#include "engine/graph/axis.h"

#include "engine/support/diagnostics.h"

#include <string>

namespace lathe::graph {

std::int64_t normalizeAxis(const Node& node, std::int64_t axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw Error(ErrorKind::Invalid,
                "axis " + std::to_string(axis) + " is out of range for rank " +
                    std::to_string(rank),
                {{}, node.name, node.opType()});
  return axis < 0 ? axis + rank : axis;
}

} // namespace lathe::graph
