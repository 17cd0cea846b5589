// split(loop, factor): `for (x, min, extent)` becomes
//   for (x.o, 0, ceil(extent / factor)) for (x.i, 0, factor) { x = min + x.o*factor + x.i }
// with the body guarded by `x.o*factor + x.i < extent` when factor does not divide a
// constant extent (or the extent is not constant). The outer loop keeps the loop's kind.
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"

namespace lathe::schedule::detail {

using namespace lathe::loop;

Stmt split(const Stmt& body, const std::string& name, std::int64_t factor) {
  if (factor < 1)
    fail("the factor must be at least 1, not " + std::to_string(factor));
  const For& loop = findLoop(body, name);
  if (loop.forKind == ForKind::Vectorized || loop.forKind == ForKind::Unrolled)
    fail("'" + name + "' is already " + forKindName(loop.forKind) + "; split it before marking it");
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
      outerExtent = makeIndex((*extent + factor - 1) / factor);
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
