// parallel(loop): the loop's iterations are cut into contiguous chunks, one per thread of
// the pool. Refused inside another parallel loop (it would run serially there) and when
// requireIndependentIterations cannot show that iterations write disjoint elements.
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"

namespace lathe::schedule::detail {

using namespace lathe::loop;

Stmt parallel(const Stmt& body, const std::string& name) {
  const For& loop = findLoop(body, name);
  if (loop.forKind != ForKind::Serial)
    fail("'" + name + "' is already " + forKindName(loop.forKind));
  for (const For* outer : enclosingLoops(body, name))
    if (outer->forKind == ForKind::Parallel)
      fail("'" + name + "' is inside the parallel loop '" + outer->name() +
           "'; a nested parallel loop would run serially");
  requireIndependentIterations(loop, "parallel");
  return replaceLoop(body, name, [](const For& op) {
    return For::make(op.var, op.min, op.extent, ForKind::Parallel, op.body);
  });
}

} // namespace lathe::schedule::detail
