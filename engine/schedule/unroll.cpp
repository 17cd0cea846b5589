// unroll(loop): marks a loop of constant extent (at most 256 iterations) to be unrolled in
// full; code generation copies the body once per iteration.
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"

namespace lathe::schedule::detail {

using namespace lathe::loop;

Stmt unroll(const Stmt& body, const std::string& name) {
  constexpr std::int64_t kMaxUnroll = 256;
  const For& loop = findLoop(body, name);
  const std::int64_t extent = constantExtent(loop, "unroll");
  if (extent > kMaxUnroll)
    fail("unroll allows at most " + std::to_string(kMaxUnroll) + " iterations; '" + name +
         "' has " + std::to_string(extent) + " (split it first)");
  if (loop.forKind == ForKind::Parallel)
    fail("'" + name + "' is parallel; unroll an inner loop");
  return replaceLoop(body, name, [](const For& op) {
    return For::make(op.var, op.min, op.extent, ForKind::Unrolled, op.body);
  });
}

} // namespace lathe::schedule::detail
