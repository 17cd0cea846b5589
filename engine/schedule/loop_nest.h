#pragma once
// Internal to engine/schedule: finding loops by name, replacing them, and the questions the
// primitives' legality checks ask of a loop body.

#include "engine/loop_ir/ir.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lathe::schedule::detail {

using loop::Expr;
using loop::Stmt;

[[noreturn]] void fail(const std::string& reason);

// The loop whose variable is `name`; throws "there is no loop 'name'" when none.
const loop::For& findLoop(const Stmt& body, const std::string& name);
// The body with the loop `name` replaced by rewrite(loop) (which must exist).
Stmt replaceLoop(const Stmt& body, const std::string& name,
                 const std::function<Stmt(const loop::For&)>& rewrite);
// Every name bound in the body: loop variables, lets, allocated buffers.
std::set<std::string> boundNames(const Stmt& body);
// Throws when `name` is already bound in the body (a derived name would clash).
void requireFreshName(const Stmt& body, const std::string& name);
// The loops enclosing `name`, outermost first (not including it).
std::vector<const loop::For*> enclosingLoops(const Stmt& body, const std::string& name);

// The constant extent of a loop, or a failure naming the primitive that needed it.
std::int64_t constantExtent(const loop::For& loop, const char* primitive);

// Inclusive constant ranges of loop variables, by name.
using VarRanges = std::map<std::string, std::pair<std::int64_t, std::int64_t>>;
// The least and greatest values of a signed integer expression while the variables in
// `ranges` run over them (value_range.cpp); an end is nothing when it cannot be bounded
// (another variable, a load, a step that would overflow int64).
struct ValueRange {
  std::optional<std::int64_t> lo, hi;
};
ValueRange constantRange(const Expr& e, const VarRanges& ranges);
// The most iterations `loop` (in `body`) can run: its constant extent, or the greatest value
// its extent takes while the loops around it run; nothing when that has no bound.
std::optional<std::int64_t> maxExtent(const Stmt& body, const loop::For& loop);

struct Access {
  loop::Buffer buffer;
  Expr index;
  bool isStore;
  std::vector<const loop::For*> loops; // the loops inside `s` around it, outermost first
  std::vector<Expr> guards;            // conditions that hold where it runs
};
// Loads and stores in `s`, in order, with let-bound variables replaced by their values;
// buffers allocated inside `s` are left out.
std::vector<Access> accessesOf(const Stmt& s);

// When idx(var + 1) - idx(var) simplifies to a constant, that constant (the stride of the
// index along the loop variable); nothing otherwise.
std::optional<std::int64_t> strideAlong(const Expr& index, const std::string& var);

// Bounds [lo, hi] of an index expression while the variables in `ranges` run over their
// (inclusive) constant ranges and every other variable keeps its value: expressions in the
// other variables. Nothing when some part of `e` cannot be bounded.
std::optional<std::pair<Expr, Expr>>
symbolicBounds(const Expr& e,
               const std::map<std::string, std::pair<std::int64_t, std::int64_t>>& ranges);

// Checks that distinct iterations of `loop` write disjoint elements and read no element
// another iteration writes, as parallel and vectorize need: every store index must move by
// a constant stride along the loop larger than the span the inner loops cover, and a buffer
// both read and written must be read at the indices it is written at.
// `shownAs` names the loop in the refusal when it is not the loop's own name (fuse checks
// the inner loop on behalf of the fused one).
void requireIndependentIterations(const loop::For& loop, const char* primitive,
                                  const std::string& shownAs = {});

// `s` with the loads and stores of `from` at `index` (structurally equal; every index when
// `index` is undefined) reading and writing to[toIndex] instead.
Stmt redirectAccesses(const Stmt& s, const loop::Buffer& from, const Expr& index,
                      const loop::Buffer& to, const Expr& toIndex);

} // namespace lathe::schedule::detail
