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
// an index it is written at, in the same iteration, within the span of elements that
// iteration alone writes, or apart from every element the loop writes.
#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_mutator.h"
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
#include <numeric>
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
// not constant (the caller falls back to bounds), throws on a conflict. A guard is tested as
// soon as the loops it reads are set, so the copies partition makes count only the
// iterations that run them; at most kMaxPoints elements are visited.
bool enumerateWrites(const For& loop, const BufferStores& b,
                     const std::function<void(const Access&, const std::string&)>& cannot) {
  const std::optional<ConstRange> outer = constRange(loop);
  if (!outer)
    return false;
  // A quick refusal before any work: the points with no guard pruned, far above the cap.
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    std::optional<std::int64_t> n = checkedMul(outer->extent, b.indices[s].type().lanes());
    for (const For* f : b.stores[s]->loops) {
      const auto r = constRange(*f);
      if (!r || !n)
        return false;
      n = checkedMul(*n, std::max<std::int64_t>(r->extent, 1));
    }
    if (!n || *n > 4 * kMaxPoints)
      return false;
  }
  std::unordered_map<std::int64_t, std::int64_t> writer; // element -> iteration
  std::int64_t points = 0;
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    const Access& a = *b.stores[s];
    // Guards by the depth at which the loops they read are all set (0: the loop's own).
    std::vector<std::vector<const Expr*>> guardsAt(a.loops.size() + 1);
    for (const Expr& g : b.guards[s]) {
      std::size_t depth = 0;
      const std::set<std::string> vars = freeVars(g);
      for (std::size_t d = 0; d < a.loops.size(); ++d)
        if (vars.count(a.loops[d]->name()))
          depth = d + 1;
      guardsAt[depth].push_back(&g);
    }
    std::map<std::string, std::int64_t> env;
    bool ok = true;
    // False when a guard fails (or cannot be evaluated: ok is then cleared).
    const auto guardsHold = [&](std::size_t depth) {
      for (const Expr* g : guardsAt[depth]) {
        const auto holds = evaluate(*g, env, 0);
        if (!holds)
          ok = false;
        if (!holds || !*holds)
          return false;
      }
      return true;
    };
    std::function<void(std::size_t)> walk = [&](std::size_t depth) {
      if (!ok)
        return;
      if (depth < a.loops.size()) {
        const ConstRange r = *constRange(*a.loops[depth]);
        for (std::int64_t v = r.min; v < r.min + r.extent && ok; ++v) {
          env[a.loops[depth]->name()] = v;
          if (guardsHold(depth + 1))
            walk(depth + 1);
        }
        return;
      }
      const std::int64_t iteration = env.at(loop.name());
      points += b.indices[s].type().lanes();
      if (points > kMaxPoints) {
        ok = false;
        return;
      }
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
      if (guardsHold(0))
        walk(0);
    }
    if (!ok)
      return false;
  }
  return true;
}

// The index of a store as base + lane * laneStride (lanes 1 for a scalar store).
struct LaneForm {
  Expr base;
  std::int64_t laneStride = 0;
  int lanes = 1;
};
// A vector index that is a sum of broadcasts and ramps (the order the vectorizer and the
// simplifier left them in): its scalar base and one lane stride.
bool sumOfLanes(const Expr& e, Expr& base, std::int64_t& stride, int& lanes) {
  const auto addBase = [&](const Expr& v) { base = base.defined() ? base + v : v; };
  if (const Broadcast* b = e.as<Broadcast>()) {
    addBase(b->value);
    return true;
  }
  if (const Ramp* r = e.as<Ramp>()) {
    const std::optional<std::int64_t> k = asConstInt(simplify(r->stride));
    if (!k || !checkedAdd(stride, *k))
      return false;
    addBase(r->base);
    stride += *k;
    lanes = r->lanes;
    return true;
  }
  if (const Add* add = e.as<Add>())
    return sumOfLanes(add->a, base, stride, lanes) && sumOfLanes(add->b, base, stride, lanes);
  return false;
}

std::optional<LaneForm> laneForm(const Expr& index) {
  if (index.type().isScalar())
    return LaneForm{index, 0, 1};
  LaneForm form;
  if (!sumOfLanes(index, form.base, form.laneStride, form.lanes) || form.lanes == 1)
    return std::nullopt;
  form.base = simplify(form.base);
  return form;
}

// Narrows the range of the one variable of `ranges` that `cond` (or its negation) bounds,
// when it is `a*v + k OP 0` in that variable alone; leaves the ranges alone otherwise (a
// condition left out only makes the footprint larger).
void narrow(const Expr& cond, bool negated, VarRanges& ranges) {
  if (const Not* n = cond.as<Not>())
    return narrow(n->a, !negated, ranges);
  if (const And* a = cond.as<And>(); a && !negated) {
    narrow(a->a, false, ranges);
    narrow(a->b, false, ranges);
    return;
  }
  const BinaryExprNode* bin = nullptr;
  ExprKind kind = cond.kind();
  switch (kind) {
  case ExprKind::LT:
  case ExprKind::LE:
  case ExprKind::GT:
  case ExprKind::GE:
  case ExprKind::EQ:
    bin = static_cast<const BinaryExprNode*>(cond.get());
    break;
  default:
    return;
  }
  if (!bin->a.type().isScalar() || !bin->a.type().isIntOrUInt())
    return;
  if (negated) { // !(x < y) is x >= y, ...; a negated equality bounds nothing
    if (kind == ExprKind::EQ)
      return;
    kind = kind == ExprKind::LT   ? ExprKind::GE
           : kind == ExprKind::LE ? ExprKind::GT
           : kind == ExprKind::GT ? ExprKind::LE
                                  : ExprKind::LT;
  }
  const Expr d = simplify(bin->a - bin->b); // d OP 0
  std::string var;
  for (const std::string& name : freeVars(d)) {
    if (!ranges.count(name) || !var.empty())
      return;
    var = name;
  }
  if (var.empty())
    return;
  const std::optional<std::int64_t> a = strideAlong(d, var);
  const std::optional<std::int64_t> k = asConstInt(simplify(substitute(d, var, makeIndex(0))));
  if (!a || !k || *a == 0 || std::abs(*k) > (std::int64_t{1} << 40) ||
      std::abs(*a) > (std::int64_t{1} << 20))
    return;
  // a*v + k OP 0 as lo <= v <= hi.
  auto& [lo, hi] = ranges[var];
  const auto atMost = [&](std::int64_t c) { // a*v <= c
    if (*a > 0)
      hi = std::min(hi, floorDivide(c, *a));
    else
      lo = std::max(lo, ceilDivide(c, *a));
  };
  const auto atLeast = [&](std::int64_t c) { // a*v >= c
    if (*a > 0)
      lo = std::max(lo, ceilDivide(c, *a));
    else
      hi = std::min(hi, floorDivide(c, *a));
  };
  switch (kind) {
  case ExprKind::LT:
    atMost(-*k - 1);
    break;
  case ExprKind::LE:
    atMost(-*k);
    break;
  case ExprKind::GT:
    atLeast(-*k + 1);
    break;
  case ExprKind::GE:
    atLeast(-*k);
    break;
  default:
    atMost(-*k);
    atLeast(-*k);
    break;
  }
}

// An index's part outside the loops as its symbolic terms and a constant.
std::pair<Expr, std::int64_t> splitConstant(const Expr& e) {
  if (const auto k = asConstInt(e))
    return {makeIndex(0), *k};
  if (const Add* add = e.as<Add>())
    if (const auto k = asConstInt(add->b)) {
      auto [symbolic, constant] = splitConstant(add->a);
      if (const auto sum = checkedAdd(constant, *k))
        return {symbolic, *sum};
    }
  return {e, 0};
}

// Writes told apart by their digits, for stores affine in the loop and the loops inside it
// (constant positive strides, one common rest). Each store's index is
//   rest + U + S*v + L
// over the ranges its guards leave (a remainder copy of partition covers only the last
// block): v the loop's variable with stride S, L the terms of smaller stride, U those of
// larger. Over all stores, when L spans less than S and each larger stride exceeds the
// span of V = S*v + L and of the larger terms below it, equal indices have equal U (the
// digits argument), then equal V, then equal v: distinct iterations write distinct
// elements, however the inner strides interleave with the loop's (a channel loop inside a
// row loop of a blocked layout, a tile's remainder next to the full tiles).
bool digitWrites(const For& loop, const BufferStores& b) {
  const std::optional<ConstRange> outer = constRange(loop);
  if (!outer || outer->extent < 1)
    return false;
  const std::string& var = loop.name();
  // Stores whose rests differ by constants (the points of a transformed tile, the outputs of
  // one) get one more digit: the constant, as a multiple of the stride D the differences share.
  // Per store: its index's lane form, and what is left with every loop at 0 (the rest) as
  // symbolic terms and a constant.
  std::vector<LaneForm> forms;
  std::vector<Expr> rests;
  std::vector<std::int64_t> constants;
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    const std::optional<LaneForm> form = laneForm(b.indices[s]);
    if (!form)
      return false;
    std::map<std::string, Expr> zeros{{var, makeIndex(0)}};
    for (const For* f : b.stores[s]->loops)
      zeros[f->name()] = makeIndex(0);
    const auto [rest, constant] = splitConstant(simplify(substitute(form->base, zeros)));
    for (const auto& [name, zero] : zeros)
      if (usesVar(rest, name))
        return false;
    forms.push_back(*form);
    rests.push_back(rest);
    constants.push_back(constant);
  }
  const std::int64_t lowest =
      constants.empty() ? 0 : *std::min_element(constants.begin(), constants.end());
  std::int64_t D = 0;
  for (std::int64_t c : constants) {
    const std::optional<std::int64_t> d = checkedSub(c, lowest);
    if (!d)
      return false;
    D = std::gcd(D, *d);
  }
  using Span = std::pair<std::int64_t, std::int64_t>; // lo, hi
  const auto hullOf = [](std::optional<Span>& hull, const Span& s) {
    hull = hull ? Span{std::min(hull->first, s.first), std::max(hull->second, s.second)} : s;
  };
  std::optional<std::int64_t> S;
  std::optional<Span> lowHull, vHull;
  std::map<std::int64_t, std::optional<Span>> upper; // stride -> hull of its coefficient
  Expr common;
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    const LaneForm* form = &forms[s];
    VarRanges ranges{{var, {outer->min, outer->min + outer->extent - 1}}};
    for (const For* f : b.stores[s]->loops) {
      const std::optional<ConstRange> r = constRange(*f);
      if (!r || r->extent < 1)
        return false;
      ranges[f->name()] = {r->min, r->min + r->extent - 1};
    }
    for (const Expr& g : b.guards[s])
      narrow(g, false, ranges);
    std::map<std::int64_t, Span> terms; // stride -> range of its coefficient (summed)
    std::optional<Span> mine;           // the loop variable's range here
    std::optional<std::int64_t> myStride;
    for (const auto& [name, range] : ranges) {
      if (range.first > range.second)
        return false; // a store that never runs: leave it to the other checks
      const std::optional<std::int64_t> stride = strideAlong(form->base, name);
      if (!stride || *stride < 0)
        return false;
      if (name == var) {
        myStride = stride;
        mine = range;
      } else if (*stride > 0 && (range.first != 0 || range.second != 0)) {
        // (a loop of one iteration at 0, like the outer part of a split by the whole
        // extent, adds nothing)
        Span& t = terms[*stride];
        if (!checkedAdd(t.first, range.first) || !checkedAdd(t.second, range.second))
          return false;
        t = {t.first + range.first, t.second + range.second};
      }
    }
    if (form->lanes > 1) {
      if (form->laneStride <= 0)
        return false;
      Span& t = terms[form->laneStride];
      t.second += form->lanes - 1;
    }
    if (D > 0) {
      const std::int64_t digit = (constants[s] - lowest) / D;
      Span& t = terms[D];
      if (!checkedAdd(t.first, digit) || !checkedAdd(t.second, digit))
        return false;
      t = {t.first + digit, t.second + digit};
    }
    if (!myStride || *myStride == 0 || (S && *S != *myStride) || terms.count(*myStride))
      return false;
    S = myStride;
    if (common.defined() && !equal(rests[s], common))
      return false;
    common = rests[s];
    Span low{0, 0};
    for (const auto& [stride, t] : terms) {
      const std::optional<std::int64_t> lo = checkedMul(stride, t.first);
      const std::optional<std::int64_t> hi = checkedMul(stride, t.second);
      if (!lo || !hi)
        return false;
      if (stride > *S) {
        hullOf(upper[stride], t);
      } else {
        if (!checkedAdd(low.first, *lo) || !checkedAdd(low.second, *hi))
          return false;
        low = {low.first + *lo, low.second + *hi};
      }
    }
    const std::optional<std::int64_t> vLo = checkedMul(*S, mine->first);
    const std::optional<std::int64_t> vHi = checkedMul(*S, mine->second);
    if (!vLo || !vHi || !checkedAdd(*vLo, low.first) || !checkedAdd(*vHi, low.second))
      return false;
    hullOf(lowHull, low);
    hullOf(vHull, {*vLo + low.first, *vHi + low.second});
  }
  if (!S || !lowHull || !vHull)
    return false;
  const std::optional<std::int64_t> lowSpan = checkedSub(lowHull->second, lowHull->first);
  std::optional<std::int64_t> span = checkedSub(vHull->second, vHull->first);
  if (!lowSpan || *lowSpan >= *S || !span)
    return false;
  for (const auto& [stride, t] : upper) {
    if (stride <= *span)
      return false;
    const std::optional<std::int64_t> width = checkedMul(stride, t->second - t->first);
    span = width ? checkedAdd(*span, *width) : std::nullopt;
    if (!span)
      return false;
  }
  return true;
}

// The elements `index` (an access's index with outside variables at 0) covers in the
// iteration var = 0, over the loops inside around the access; nothing when unbounded.
std::optional<Interval> spanAtZero(const Access& a, const Expr& index, const std::string& var) {
  std::map<std::string, Interval> ranges;
  VarRanges outer; // the same, for constantRange
  for (const For* f : a.loops) {
    if (const auto r = constRange(*f); r && r->extent > 0) {
      ranges[f->name()] = {r->min, r->min + r->extent - 1};
    } else {
      // Bounds that vary with the loops around it (a pooling window's clipped rows): the
      // variable stays between the least min and the greatest min + extent - 1 over them.
      const ValueRange lo = constantRange(simplify(f->min), outer);
      const ValueRange hi = constantRange(simplify(f->min + f->extent - 1), outer);
      if (lo.lo && hi.hi && *lo.lo <= *hi.hi)
        ranges[f->name()] = {*lo.lo, *hi.hi};
    }
    if (const auto it = ranges.find(f->name()); it != ranges.end())
      outer[f->name()] = {it->second.lo, it->second.hi};
  }
  return bounds(simplify(substitute(index, var, makeIndex(0))), ranges);
}

// A read's index with the variables from outside the loop fixed at 0, as the stores'
// indices are; nothing when such a variable moves the read otherwise than the stores.
std::optional<Expr> readAtOutsideZero(const Expr& read, const BufferStores& b,
                                      const std::set<std::string>& inside) {
  std::map<std::string, Expr> zeros;
  for (const std::string& name : freeVars(read))
    if (!inside.count(name)) {
      const auto c = strideAlong(read, name);
      if (!c || c != strideAlong(b.abstracted[0], name))
        return std::nullopt;
      zeros[name] = makeIndex(0);
    }
  return zeros.empty() ? read : simplify(substitute(read, zeros));
}

// A read of a buffer the loop writes, at other indices than its stores: safe when every
// store and the read move by one constant stride S along the loop, the stores of one
// iteration span less than |S| elements and the read stays within that span. Then what an
// iteration reads lies in its own span, which no other iteration writes (a softmax row
// read back after it was written). `read` is the read's index with outside subexpressions
// as the stores' symbols.
bool readsOwnSpan(const For& loop, const Access& a, const Expr& read, const BufferStores& b,
                  const std::set<std::string>& inside) {
  const std::string& var = loop.name();
  const std::optional<Expr> at = readAtOutsideZero(read, b, inside);
  if (!at)
    return false;
  const Expr& index = *at;
  const std::optional<std::int64_t> stride = strideAlong(index, var);
  if (!stride || *stride == 0 || *stride == std::numeric_limits<std::int64_t>::min())
    return false;
  std::optional<Interval> span;
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    if (strideAlong(b.indices[s], var) != stride)
      return false;
    const auto within = spanAtZero(*b.stores[s], b.indices[s], var);
    if (!within)
      return false;
    span =
        span ? Interval{std::min(span->lo, within->lo), std::max(span->hi, within->hi)} : *within;
  }
  const std::optional<std::int64_t> width = span ? checkedSub(span->hi, span->lo) : std::nullopt;
  if (!width || *width >= std::abs(*stride))
    return false;
  const auto reads = spanAtZero(a, index, var);
  return reads && reads->lo >= span->lo && reads->hi <= span->hi;
}

// The elements `index` covers over every iteration of the loop: its span at var = 0, moved
// by its constant stride along var over the loop's range; nothing when unbounded.
std::optional<Interval> spanOverLoop(const For& loop, const Access& a, const Expr& index) {
  const std::optional<ConstRange> range = constRange(loop);
  const std::optional<std::int64_t> stride = strideAlong(index, loop.name());
  const std::optional<Interval> atZero = spanAtZero(a, index, loop.name());
  if (!range || range->extent < 1 || !stride || !atZero)
    return std::nullopt;
  const std::optional<std::int64_t> lastVar = checkedAdd(range->min, range->extent - 1);
  const std::optional<std::int64_t> first = checkedMul(*stride, range->min);
  const std::optional<std::int64_t> last = lastVar ? checkedMul(*stride, *lastVar) : std::nullopt;
  if (!first || !last)
    return std::nullopt;
  const std::optional<std::int64_t> lo = checkedAdd(atZero->lo, std::min(*first, *last));
  const std::optional<std::int64_t> hi = checkedAdd(atZero->hi, std::max(*first, *last));
  if (!lo || !hi)
    return std::nullopt;
  return Interval{*lo, *hi};
}

// A read of a buffer the loop writes, of elements no iteration writes: over the whole loop
// the read's elements lie apart from every store's (a tree step that combines the upper half
// of a buffer into its lower half). Outside variables must move the read as they move the
// stores, and are fixed at 0 in both.
bool readsApartFromWrites(const For& loop, const Access& a, const Expr& read, const BufferStores& b,
                          const std::set<std::string>& inside) {
  const std::optional<Expr> at = readAtOutsideZero(read, b, inside);
  if (!at)
    return false;
  const Expr& index = *at;
  const std::optional<Interval> reads = spanOverLoop(loop, a, index);
  if (!reads)
    return false;
  for (std::size_t s = 0; s < b.stores.size(); ++s) {
    const std::optional<Interval> writes = spanOverLoop(loop, *b.stores[s], b.indices[s]);
    if (!writes || !(writes->hi < reads->lo || writes->lo > reads->hi))
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
    const auto within = spanAtZero(a, b.indices[s], var);
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

// A loop that fuse made reads its variable v only as v / d and v % d, for one constant d.
// Then v's iterations are the pairs (v / d, v % d), and (for v >= 0) distinct v are distinct
// pairs: the loop's iterations write disjoint elements when, with q = v / d and r = v % d
// as loops of their own, distinct q do over all r and, q fixed, distinct r do. That is the
// digits argument applied to each part, which the quotient and remainder themselves defeat.
class FusedUses : public IRVisitor {
public:
  explicit FusedUses(const std::string& var) : var_(var) {}
  std::optional<std::int64_t> divisor;
  bool other = false; // v used bare, or divided by something else

protected:
  void visitDiv(const Div* op) override {
    if (!part(op->a, op->b))
      IRVisitor::visitDiv(op);
  }
  void visitMod(const Mod* op) override {
    if (!part(op->a, op->b))
      IRVisitor::visitMod(op);
  }
  void visitVar(const Var* op) override { other = other || op->name == var_; }

private:
  bool part(const Expr& a, const Expr& b) {
    const Var* v = a.as<Var>();
    const std::optional<std::int64_t> d = asConstInt(b);
    if (!v || v->name != var_ || !d)
      return false;
    other = other || *d < 2 || (divisor && *divisor != *d);
    divisor = *d;
    return true;
  }
  const std::string& var_;
};

class SplitFused : public IRMutator {
public:
  SplitFused(const std::string& var, Expr q, Expr r)
      : var_(var), q_(std::move(q)), r_(std::move(r)) {}

protected:
  Expr mutateDiv(const Div* op) override { return isVar(op->a) ? q_ : IRMutator::mutateDiv(op); }
  Expr mutateMod(const Mod* op) override { return isVar(op->a) ? r_ : IRMutator::mutateMod(op); }

private:
  bool isVar(const Expr& e) const {
    const Var* v = e.as<Var>();
    return v && v->name == var_;
  }
  const std::string& var_;
  Expr q_, r_;
};

} // namespace

void requireIndependentIterations(const For& loop, const char* primitive,
                                  const std::string& shownAs) {
  const std::string& var = loop.name();
  if (const std::optional<ConstRange> range = constRange(loop);
      range && range->min == 0 && range->extent > 1) {
    FusedUses uses(var);
    uses.visit(loop.body);
    if (uses.divisor && !uses.other) {
      const std::int64_t d = *uses.divisor;
      const Expr q = Var::make(indexType(), var + ".q"), r = Var::make(indexType(), var + ".r");
      const Stmt body = SplitFused(var, q, r).mutate(loop.body);
      const Stmt inner = For::make(r, makeIndex(0), makeIndex(d), ForKind::Serial, body);
      const Stmt outer = For::make(q, makeIndex(0), makeIndex((range->extent + d - 1) / d),
                                   ForKind::Serial, inner);
      const std::string& shown = shownAs.empty() ? var : shownAs;
      requireIndependentIterations(*outer.as<For>(), primitive, shown);
      requireIndependentIterations(*inner.as<For>(), primitive, shown);
      return;
    }
  }
  const std::vector<Access> accesses = accessesOf(loop.body);
  auto cannot = [&](const Access& a, const std::string& why) {
    fail(std::string(primitive) + "(" + (shownAs.empty() ? var : shownAs) +
         ") is not safe: " + why + " (" + a.buffer.name() + "[" + toString(a.index) + "])");
  };
  std::set<std::string> inside = boundNames(loop.body);
  inside.insert(var);
  std::map<std::string, BufferStores> byBuffer;
  std::map<std::string, Expr> symbols;
  for (const Access& original : accesses) {
    if (!original.isStore)
      continue;
    Access a = original;
    a.index = simplify(abstractOutside(a.index, inside, symbols));
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
    // The affine proof first (cheap), then element by element, then the plain bound.
    if (!digitWrites(loop, b) && !enumerateWrites(loop, b, cannot))
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
    if (!written || matched)
      continue;
    const Expr read = abstractOutside(a.index, inside, symbols);
    const BufferStores& stores = byBuffer.at(a.buffer.name());
    if (!readsOwnSpan(loop, a, read, stores, inside) &&
        !readsApartFromWrites(loop, a, read, stores, inside))
      cannot(a, "it reads elements of " + a.buffer.name() +
                    " that other iterations may write (no write at the same index under the "
                    "same conditions)");
  }
}

} // namespace lathe::schedule::detail
