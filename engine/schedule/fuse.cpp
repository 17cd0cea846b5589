// fuse(outer, inner): two loops, the inner the whole body of the outer, become one loop
// outer.inner.fused over extent(outer) * extent(inner), with outer = f / extent(inner) and
// inner = f % extent(inner) (plus their minimums). It keeps the outer loop's kind. Refused
// when that product could overflow int64 (or an extent has no bound to check it with).
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/support/checked_int.h"

#include <algorithm>

namespace lathe::schedule::detail {

using namespace lathe::loop;

Stmt fuse(const Stmt& body, const std::string& outerName, const std::string& innerName) {
  const For& outer = findLoop(body, outerName);
  const For* inner = outer.body.as<For>();
  if (!inner || inner->name() != innerName)
    fail("fuse needs '" + innerName + "' to be the whole body of '" + outerName + "'");
  if (usesVar(inner->min, outerName) || usesVar(inner->extent, outerName))
    fail("the bounds of '" + innerName + "' depend on '" + outerName + "'");
  if (inner->forKind != ForKind::Serial)
    fail("'" + innerName + "' is " + forKindName(inner->forKind) +
         "; only a serial inner loop "
         "can be fused into its outer one");
  if (outer.forKind == ForKind::Unrolled)
    fail("'" + outerName + "' is unrolled; fuse first, then unroll");
  // The fused loop runs extent(outer) * extent(inner) times: that must fit in an int64.
  const std::optional<std::int64_t> outerMost = maxExtent(body, outer);
  const std::optional<std::int64_t> innerMost = maxExtent(body, *inner);
  if (!outerMost || !innerMost)
    fail("the fused extent cannot be checked: '" + (outerMost ? innerName : outerName) + "' runs " +
         toString((outerMost ? inner : &outer)->extent) +
         " times, which has no bound over the loops around it");
  if (!checkedMul(std::max<std::int64_t>(*outerMost, 0), std::max<std::int64_t>(*innerMost, 0)))
    fail("the fused loop would run " + std::to_string(*outerMost) + " * " +
         std::to_string(*innerMost) + " times, more than an int64 counts");
  const std::string fusedName = outerName + "." + innerName + ".fused";
  requireFreshName(body, fusedName);
  Stmt result = replaceLoop(body, outerName, [&](const For& op) {
    const For& in = *op.body.as<For>();
    Expr fused = Var::make(indexType(), fusedName);
    Stmt inside = substitute(in.body, {{op.name(), simplify(op.min + fused / in.extent)},
                                       {in.name(), simplify(in.min + fused % in.extent)}});
    // Two empty ranges must not multiply into a non-empty one.
    const Expr zero = makeIndex(0);
    return For::make(fused, zero, simplify(max(op.extent, zero) * max(in.extent, zero)), op.forKind,
                     inside);
  });
  // A parallel outer loop's iterations were checked independent when it was made parallel;
  // the fused ones are too when, in one outer iteration, the inner loop's iterations are
  // (threads now split inside one outer iteration). That is checked on the inner loop, whose
  // variable enters the indices as a plain sum, not through the fused loop's / and %.
  if (outer.forKind == ForKind::Parallel)
    requireIndependentIterations(*inner, "parallel", fusedName);
  return result;
}

} // namespace lathe::schedule::detail
