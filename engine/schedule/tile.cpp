// tile(y, x, fy, fx): split(y, fy), split(x, fx), reorder(y.o, x.o, y.i, x.i). The two
// loops must be one directly inside the other (y outside).
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"

namespace lathe::schedule::detail {

Stmt tile(const Stmt& body, const std::string& y, const std::string& x, std::int64_t fy,
          std::int64_t fx) {
  bool inside = false;
  for (const loop::For* loop : enclosingLoops(body, x))
    inside = inside || loop->name() == y;
  if (!inside)
    fail("tile needs '" + x + "' inside '" + y + "'");
  Stmt s = split(body, y, fy);
  s = split(s, x, fx);
  return reorder(s, {y + ".o", x + ".o", y + ".i", x + ".i"});
}

} // namespace lathe::schedule::detail
