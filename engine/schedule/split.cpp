// split(loop, factor): `for (x, min, extent)` becomes
//   for (x.o, 0, ceil(extent / factor)) for (x.i, 0, factor) { x = min + x.o*factor + x.i }
// with the body guarded by `x.o*factor + x.i < extent` when factor does not divide a
// constant extent (or the extent is not constant). The outer loop keeps the loop's kind.
// The factor may not exceed the most iterations the loop can run (its constant extent, or a
// bound of its extent over the loops around it): a larger one only adds guarded, empty
// iterations (a factor of 10^12 on 64 iterations spins 10^12 times) and, near 2^63, makes
// ceil(extent / factor) overflow.
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/support/checked_int.h"

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

void checkFactor(const Stmt& body, const For& loop, std::int64_t factor) {
  const std::string& name = loop.name();
  const std::optional<std::int64_t> constant = asConstInt(simplify(loop.extent));
  const std::optional<std::int64_t> most = constant ? constant : maxExtent(body, loop);
  if (!most)
    fail("the factor cannot be checked: '" + name + "' runs " + toString(loop.extent) +
         " times, which has no bound over the loops around it");
  const std::string extent = constant ? std::to_string(*most) : "at most " + std::to_string(*most);
  if (*most < 1)
    fail("'" + name + "' runs no iterations (extent " + extent + "); there is nothing to split");
  if (factor > *most)
    fail("the factor " + std::to_string(factor) + " is larger than the extent of '" + name + "' (" +
         extent + "); use a factor from 1 to " + std::to_string(*most) +
         " (a larger one only adds empty iterations)");
  // ceil(extent / factor) is computed as floor((extent + factor - 1) / factor) at run time.
  if (!constant && !checkedAdd(*most, factor - 1))
    fail("the extent of '" + name + "' (" + extent + ") plus the factor " + std::to_string(factor) +
         " overflows int64");
}

} // namespace

Stmt split(const Stmt& body, const std::string& name, std::int64_t factor) {
  if (factor < 1)
    fail("the factor must be at least 1, not " + std::to_string(factor));
  const For& loop = findLoop(body, name);
  if (loop.forKind == ForKind::Vectorized || loop.forKind == ForKind::Unrolled)
    fail("'" + name + "' is already " + forKindName(loop.forKind) + "; split it before marking it");
  checkFactor(body, loop, factor);
  const std::string outerName = name + ".o", innerName = name + ".i";
  requireFreshName(body, outerName);
  requireFreshName(body, innerName);
  return replaceLoop(body, name, [&](const For& op) {
    Expr outer = Var::make(indexType(), outerName), inner = Var::make(indexType(), innerName);
    Expr f = makeIndex(factor);
    Expr offset = outer * f + inner;
    Stmt inside = substitute(op.body, name, simplify(op.min + offset));
    const std::optional<std::int64_t> extent = asConstInt(simplify(op.extent));
    Expr outerExtent;
    if (extent) {
      // ceil(extent / factor) without forming extent + factor - 1.
      outerExtent = makeIndex(*extent / factor + (*extent % factor != 0 ? 1 : 0));
      if (*extent % factor != 0)
        inside = IfThenElse::make(offset < op.extent, inside);
    } else {
      outerExtent = simplify(floorDiv(op.extent + makeIndex(factor - 1), f));
      inside = IfThenElse::make(offset < op.extent, inside);
    }
    return For::make(outer, makeIndex(0), outerExtent, op.forKind,
                     For::make(inner, makeIndex(0), f, ForKind::Serial, inside));
  });
}

} // namespace lathe::schedule::detail
