#pragma once
// The arithmetic simplifier: constant folding, identities, canonical forms and dead loops.
//
// Exact by construction: every rewrite preserves the value of the IR under the semantics in
// ir.h. Integer rules use that Int overflow is undefined (UInt wraps, so fewer rules apply
// to it); float rules never change rounding: constants fold in the type's own precision,
// x*1.0, x/1.0, x-0.0 and x+(-0.0) become x, but x+0.0 (wrong for x = -0.0), x*0.0 (NaN,
// infinities) and reassociation stay as written.
//
// Canonical forms it produces: constants on the right of commutative operators and of
// comparisons (`3 < x` -> `x > 3`), constants collected at the outside of integer sums and
// products (`(x + 2) + y + 3` -> `(x + y) + 5`), `x - c` as `x + -c` for signed integers,
// (c1 + x)*c2 distributed, ramp/broadcast arithmetic folded into one Ramp. For statements:
// loops with a constant extent <= 0 and empty bodies vanish, a loop with extent 1 becomes its
// body with the loop variable replaced by the minimum, constant conditions pick a branch,
// blocks drop no-ops, and lets of constants or variables are substituted. A loop whose extent
// is computed from constants but does not fold (its arithmetic overflows) is an internal
// error rather than a trip count that wraps at run time.

#include "engine/loop_ir/ir.h"

namespace lathe::loop {

Expr simplify(const Expr& e);
Stmt simplify(const Stmt& s);
// The kernel with its body simplified.
Kernel simplify(const Kernel& kernel);

} // namespace lathe::loop
