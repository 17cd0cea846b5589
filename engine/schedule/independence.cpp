// requireIndependentIterations: may the iterations of a loop run in any order, or at once?
//
// Each buffer the loop writes (and does not allocate itself) is checked on its own. Variables
// from outside the loop must enter its store indices as plain sums with the same stride in
// every store of the buffer, so that fixing them at 0 shifts every written element alike.
// Then, when the loop and the loops around the stores have constant bounds and the
// iteration space is small (at most kMaxPoints elements written), every written element is
// enumerated, honouring the guards around the stores: exact. Otherwise the stores must move
// by one constant stride along the loop that exceeds the span one iteration covers
// (interval bounds of the index). A buffer the loop both reads and writes must be read at
// an index it is written at, in the same iteration.
#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/support/checked_int.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

constexpr std::int64_t kMaxPoints = std::int64_t{1} << 20;

class FreeVars : public IRVisitor {
public:
  std::set<std::string> names;

protected:
  void visitVar(const Var* op) override { names.insert(op->name); }
};

std::set<std::string> freeVars(const Expr& e) {
  FreeVars v;
  v.visit(e);
  return std::move(v.names);
}

// `e` with every largest subexpression that reads only variables from outside the loop
// (fixed while it runs) replaced by a symbol, the same symbol for the same text.
Expr abstractOutside(const Expr& e, const std::set<std::string>& inside,
                     std::map<std::string, Expr>& symbols) {
  const std::set<std::string> vars = freeVars(e);
  if (vars.empty())
    return e;
  bool outside = true;
  for (const std::string& v : vars)
    outside = outside && !inside.count(v);
  if (outside && e.type() == indexType()) {
    const std::string text = toString(e);
    auto it = symbols.find(text);
    if (it == symbols.end())
      it =
          symbols.emplace(text, Var::make(indexType(), "outside#" + std::to_string(symbols.size())))
              .first;
    return it->second;
  }
  auto recurse = [&](const Expr& x) { return abstractOutside(x, inside, symbols); };
  if (isBinaryKind(e.kind())) {
    const auto* op = static_cast<const BinaryExprNode*>(e.get());
    return makeBinary(e.kind(), recurse(op->a), recurse(op->b));
  }
  if (const auto* r = e.as<Ramp>())
    return Ramp::make(recurse(r->base), recurse(r->stride), r->lanes);
  if (const auto* b = e.as<Broadcast>())
    return Broadcast::make(recurse(b->value), b->lanes);
  return e;
}

struct Interval {
  std::int64_t lo, hi;
};

// Lane `lane` of an integer index expression under `env`; nothing for what it cannot
// evaluate (loads, calls, unknown variables).
std::optional<std::int64_t> evaluate(const Expr& e, const std::map<std::string, std::int64_t>& env,
                                     int lane) {
  switch (e.kind()) {
  case ExprKind::IntImm:
    return e.as<IntImm>()->value;
  case ExprKind::Var: {
    auto it = env.find(e.as<Var>()->name);
    return it == env.end() ? std::nullopt : std::optional(it->second);
  }
  case ExprKind::Ramp: {
    const auto* r = e.as<Ramp>();
    auto base = evaluate(r->base, env, 0), stride = evaluate(r->stride, env, 0);
    if (!base || !stride)
      return std::nullopt;
    const std::optional<std::int64_t> step = checkedMul(*stride, lane);
    return step ? checkedAdd(*base, *step) : std::nullopt;
  }
  case ExprKind::Broadcast:
    return evaluate(e.as<Broadcast>()->value, env, 0);
  case ExprKind::Cast:
    return e.type().isIntOrUInt() || e.type().isBool() ? evaluate(e.as<Cast>()->value, env, lane)
                                                       : std::nullopt;
  case ExprKind::Not: {
    auto a = evaluate(e.as<Not>()->a, env, lane);
    return a ? std::optional<std::int64_t>(!*a) : std::nullopt;
  }
  case ExprKind::Select: {
    const auto* s = e.as<Select>();
    auto c = evaluate(s->condition, env, s->condition.type().isScalar() ? 0 : lane);
    if (!c)
      return std::nullopt;
    return evaluate(*c ? s->trueValue : s->falseValue, env, lane);
  }
  default:
    break;
  }
  if (!isBinaryKind(e.kind()))
    return std::nullopt;
  const auto* op = static_cast<const BinaryExprNode*>(e.get());
  auto a = evaluate(op->a, env, lane), b = evaluate(op->b, env, lane);
  if (!a || !b)
    return std::nullopt;
  const std::int64_t x = *a, y = *b;
  switch (e.kind()) {
  case ExprKind::Add:
    return checkedAdd(x, y);
  case ExprKind::Sub:
    return checkedSub(x, y);
  case ExprKind::Mul:
    return checkedMul(x, y);
  case ExprKind::Div:
  case ExprKind::Mod:
  case ExprKind::FloorDiv:
  case ExprKind::FloorMod: {
    if (y == 0 || (x == std::numeric_limits<std::int64_t>::min() && y == -1))
      return std::nullopt;
    std::int64_t q = x / y, r = x % y;
    if ((e.kind() == ExprKind::FloorDiv || e.kind() == ExprKind::FloorMod) && r != 0 &&
        ((r < 0) != (y < 0))) {
      q -= 1;
      r += y;
    }
    return e.kind() == ExprKind::Div || e.kind() == ExprKind::FloorDiv ? q : r;
  }
  case ExprKind::Min:
    return std::min(x, y);
  case ExprKind::Max:
    return std::max(x, y);
  case ExprKind::EQ:
    return x == y;
  case ExprKind::NE:
    return x != y;
  case ExprKind::LT:
    return x < y;
  case ExprKind::LE:
    return x <= y;
  case ExprKind::GT:
    return x > y;
  case ExprKind::GE:
    return x >= y;
  case ExprKind::And:
    return x && y;
  case ExprKind::Or:
    return x || y;
  default:
    return std::nullopt;
  }
}

// Bounds of an index expression whose variables have the given constant ranges; nothing
// when some part cannot be bounded.
std::optional<Interval> bounds(const Expr& e, const std::map<std::string, Interval>& vars) {
  auto both = [&](const BinaryExprNode* op) -> std::optional<std::pair<Interval, Interval>> {
    auto a = bounds(op->a, vars), b = bounds(op->b, vars);
    if (!a || !b)
      return std::nullopt;
    return std::pair{*a, *b};
  };
  switch (e.kind()) {
  case ExprKind::IntImm: {
    const std::int64_t v = e.as<IntImm>()->value;
    return Interval{v, v};
  }
  case ExprKind::Var: {
    auto it = vars.find(e.as<Var>()->name);
    if (it == vars.end())
      return std::nullopt;
    return it->second;
  }
  case ExprKind::Add:
  case ExprKind::Sub:
  case ExprKind::Mul:
  case ExprKind::Min:
  case ExprKind::Max: {
    auto ab = both(static_cast<const BinaryExprNode*>(e.get()));
    if (!ab)
      return std::nullopt;
    auto [a, b] = *ab;
    // Ends that would overflow int64 leave the expression unbounded.
    auto interval = [](std::optional<std::int64_t> lo,
                       std::optional<std::int64_t> hi) -> std::optional<Interval> {
      return lo && hi ? std::optional(Interval{*lo, *hi}) : std::nullopt;
    };
    switch (e.kind()) {
    case ExprKind::Add:
      return interval(checkedAdd(a.lo, b.lo), checkedAdd(a.hi, b.hi));
    case ExprKind::Sub:
      return interval(checkedSub(a.lo, b.hi), checkedSub(a.hi, b.lo));
    case ExprKind::Min:
      return Interval{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    case ExprKind::Max:
      return Interval{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    default: {
      std::int64_t c[4];
      int n = 0;
      for (std::int64_t x : {a.lo, a.hi})
        for (std::int64_t y : {b.lo, b.hi}) {
          const std::optional<std::int64_t> p = checkedMul(x, y);
          if (!p)
            return std::nullopt;
          c[n++] = *p;
        }
      return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    }
  }
  case ExprKind::Div:
  case ExprKind::FloorDiv:
  case ExprKind::Mod:
  case ExprKind::FloorMod: {
    auto ab = both(static_cast<const BinaryExprNode*>(e.get()));
    if (!ab || ab->second.lo != ab->second.hi || ab->second.lo <= 0 || ab->first.lo < 0)
      return std::nullopt; // only non-negative values by a positive constant
    auto [a, b] = *ab;
    if (e.kind() == ExprKind::Div || e.kind() == ExprKind::FloorDiv)
      return Interval{a.lo / b.lo, a.hi / b.lo};
    if (a.hi - a.lo >= b.lo - 1 || a.lo % b.lo > a.hi % b.lo) // a.lo >= 0: no overflow
      return Interval{0, b.lo - 1};
    return Interval{a.lo % b.lo, a.hi % b.lo};
  }
  case ExprKind::Ramp: {
    const auto* r = e.as<Ramp>();
    auto base = bounds(r->base, vars), stride = bounds(r->stride, vars);
    if (!base || !stride || stride->lo != stride->hi)
      return std::nullopt;
    const std::optional<std::int64_t> last = checkedMul(stride->lo, r->lanes - 1);
    if (!last)
      return std::nullopt;
    const std::optional<std::int64_t> lo = checkedAdd(base->lo, std::min<std::int64_t>(0, *last));
    const std::optional<std::int64_t> hi = checkedAdd(base->hi, std::max<std::int64_t>(0, *last));
    return lo && hi ? std::optional(Interval{*lo, *hi}) : std::nullopt;
  }
  case ExprKind::Broadcast:
    return bounds(e.as<Broadcast>()->value, vars);
  default:
    return std::nullopt;
  }
}

struct ConstRange {
  std::int64_t min, extent;
};

std::optional<ConstRange> constRange(const For& f) {
  auto min = asConstInt(simplify(f.min)), extent = asConstInt(simplify(f.extent));
  // The last value, min + extent - 1, must be an int64 too.
  if (!min || !extent || !checkedAdd(*min, std::max<std::int64_t>(*extent, 0)))
    return std::nullopt;
  return ConstRange{*min, std::max<std::int64_t>(*extent, 0)};
}

// The stores of one buffer, with variables from outside the loop fixed at 0.
struct BufferStores {
  std::vector<const Access*> stores;
  std::vector<Expr> abstracted; // outside subexpressions as symbols
  std::vector<Expr> indices;    // ... and those symbols at 0
  std::vector<std::vector<Expr>> guards;
};

// Every element each iteration writes, enumerated; false when the space is too large or
// not constant (the caller falls back to bounds), throws on a conflict.
bool enumerateWrites(const For& loop, const BufferStores& b,
                     const std::function<void(const Access&, const std::string&)>& cannot) {
  const std::optional<ConstRange> outer = constRange(loop);
  if (!outer)
    return false;
  // Counted with checked products: a count that overflows is too large to enumerate.
  std::int64_t points = 0;
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    std::optional<std::int64_t> n = checkedMul(outer->extent, b.indices[s].type().lanes());
    for (const For* f : b.stores[s]->loops) {
      const auto r = constRange(*f);
      if (!r || !n || *n > kMaxPoints)
        return false;
      n = checkedMul(*n, std::max<std::int64_t>(r->extent, 1));
    }
    if (!n || *n > kMaxPoints)
      return false;
    points += *n;
    if (points > kMaxPoints)
      return false;
  }
  std::unordered_map<std::int64_t, std::int64_t> writer; // element -> iteration
  writer.reserve(static_cast<std::size_t>(points));
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    const Access& a = *b.stores[s];
    std::map<std::string, std::int64_t> env;
    bool ok = true;
    std::function<void(std::size_t)> walk = [&](std::size_t depth) {
      if (!ok)
        return;
      if (depth < a.loops.size()) {
        const ConstRange r = *constRange(*a.loops[depth]);
        for (std::int64_t v = r.min; v < r.min + r.extent && ok; ++v) {
          env[a.loops[depth]->name()] = v;
          walk(depth + 1);
        }
        return;
      }
      for (const Expr& g : b.guards[s]) {
        const auto holds = evaluate(g, env, 0);
        if (!holds) {
          ok = false;
          return;
        }
        if (!*holds)
          return;
      }
      const std::int64_t iteration = env.at(loop.name());
      for (int lane = 0; lane < b.indices[s].type().lanes(); ++lane) {
        const auto element = evaluate(b.indices[s], env, lane);
        if (!element) {
          ok = false;
          return;
        }
        const auto [it, inserted] = writer.emplace(*element, iteration);
        if (!inserted && it->second != iteration)
          cannot(a, "iterations " + std::to_string(it->second) + " and " +
                        std::to_string(iteration) + " both write element " +
                        std::to_string(*element) + " of " + a.buffer.name());
      }
    };
    for (std::int64_t v = outer->min; v < outer->min + outer->extent && ok; ++v) {
      env[loop.name()] = v;
      walk(0);
    }
    if (!ok)
      return false;
  }
  return true;
}

// The fallback: one constant stride along the loop, larger than what an iteration spans.
void boundWrites(const For& loop, const BufferStores& b,
                 const std::function<void(const Access&, const std::string&)>& cannot) {
  const std::string& var = loop.name();
  std::optional<std::int64_t> stride;
  std::optional<Interval> span;
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    const Access& a = *b.stores[s];
    const auto c = strideAlong(b.indices[s], var);
    if (!c)
      cannot(a, "the element written does not move by a constant stride along '" + var + "'");
    if (stride && *c != *stride)
      cannot(a,
             "the stores of " + a.buffer.name() + " move by different strides along '" + var + "'");
    stride = c;
    std::map<std::string, Interval> ranges;
    for (const For* f : a.loops)
      if (const auto r = constRange(*f); r && r->extent > 0)
        ranges[f->name()] = {r->min, r->min + r->extent - 1};
    const auto within = bounds(simplify(substitute(b.indices[s], var, makeIndex(0))), ranges);
    if (!within)
      cannot(a, "the elements one iteration writes cannot be bounded");
    span =
        span ? Interval{std::min(span->lo, within->lo), std::max(span->hi, within->hi)} : *within;
  }
  if (*stride == 0)
    cannot(*b.stores[0], "every iteration writes the same element of " +
                             b.stores[0]->buffer.name() + " (a reduction along '" + var + "')");
  const std::optional<std::int64_t> width = checkedSub(span->hi, span->lo);
  if (!width || *stride == std::numeric_limits<std::int64_t>::min() || *width >= std::abs(*stride))
    cannot(*b.stores[0], "iterations write overlapping elements of " + b.stores[0]->buffer.name());
}

} // namespace

void requireIndependentIterations(const For& loop, const char* primitive) {
  const std::string& var = loop.name();
  const std::vector<Access> accesses = accessesOf(loop.body);
  auto cannot = [&](const Access& a, const std::string& why) {
    fail(std::string(primitive) + "(" + var + ") is not safe: " + why + " (" + a.buffer.name() +
         "[" + toString(a.index) + "])");
  };
  std::set<std::string> inside = boundNames(loop.body);
  inside.insert(var);
  std::map<std::string, BufferStores> byBuffer;
  std::map<std::string, Expr> symbols;
  for (const Access& original : accesses) {
    if (!original.isStore)
      continue;
    Access a = original;
    a.index = abstractOutside(a.index, inside, symbols);
    if (const auto c = strideAlong(a.index, var); c && *c == 0)
      cannot(a, "every iteration writes the same element of " + a.buffer.name() +
                    " (a reduction along '" + var + "')");
    // Variables from outside: fixed at 0 where they enter as plain sums.
    std::map<std::string, Expr> zeros;
    for (const std::string& name : freeVars(a.index))
      if (!inside.count(name)) {
        if (!strideAlong(a.index, name))
          cannot(a, "'" + name + "' enters the index in a way whose span cannot be bounded");
        zeros[name] = makeIndex(0);
      }
    BufferStores& b = byBuffer[a.buffer.name()];
    b.stores.push_back(&original);
    b.abstracted.push_back(a.index);
    b.indices.push_back(zeros.empty() ? a.index : simplify(substitute(a.index, zeros)));
    // Guards that read outside variables are dropped: more points, still a sound check.
    std::vector<Expr> guards;
    for (const Expr& g : a.guards) {
      bool local = true;
      for (const std::string& name : freeVars(g))
        local = local && inside.count(name);
      if (local)
        guards.push_back(g);
    }
    b.guards.push_back(std::move(guards));
  }
  for (auto& [name, b] : byBuffer) {
    // Outside variables must shift every store of the buffer alike.
    for (std::size_t s = 1; s < b.stores.size(); ++s) {
      std::set<std::string> vars = freeVars(b.abstracted[s]);
      vars.merge(freeVars(b.abstracted[0]));
      for (const std::string& v : vars)
        if (!inside.count(v) && strideAlong(b.abstracted[s], v) != strideAlong(b.abstracted[0], v))
          cannot(*b.stores[s], "the stores of " + name + " move differently along '" + v + "'");
    }
    if (!enumerateWrites(loop, b, cannot))
      boundWrites(loop, b, cannot);
  }
  for (const Access& a : accesses) {
    if (a.isStore)
      continue;
    // Read where this iteration writes: the same index under the same conditions (the
    // enumeration above counted only the writes its guards allow).
    auto sameGuards = [](const Access& x, const Access& y) {
      if (x.guards.size() != y.guards.size())
        return false;
      for (std::size_t g = 0; g < x.guards.size(); ++g)
        if (!equal(simplify(x.guards[g]), simplify(y.guards[g])))
          return false;
      return true;
    };
    bool written = false, matched = false;
    for (const Access& s : accesses)
      if (s.isStore && s.buffer.name() == a.buffer.name()) {
        written = true;
        matched = matched || (equal(simplify(s.index), simplify(a.index)) && sameGuards(s, a));
      }
    if (written && !matched)
      cannot(a, "it reads elements of " + a.buffer.name() +
                    " that other iterations may write (no write at the same index under the "
                    "same conditions)");
  }
}

} // namespace lathe::schedule::detail
