// constantRange and maxExtent: the least and greatest values an index expression (a loop's
// extent) can take, in int64 arithmetic that refuses to overflow. The primitives check their
// numeric arguments against them: a split factor above the most iterations a loop can run
// would leave an inner loop spinning through guarded, empty iterations.
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/simplify.h"
#include "engine/schedule/loop_nest.h"
#include "engine/support/checked_int.h"

#include <algorithm>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

using Bound = std::optional<std::int64_t>;

// f(a, b) when both are known.
template <typename F>
Bound both(const Bound& a, const Bound& b, F f) {
  return a && b ? Bound(f(*a, *b)) : std::nullopt;
}

Bound add(const Bound& a, const Bound& b) {
  return a && b ? checkedAdd(*a, *b) : std::nullopt;
}

Bound sub(const Bound& a, const Bound& b) {
  return a && b ? checkedSub(*a, *b) : std::nullopt;
}

// The smaller (or larger) of two bounds when either is known: min(a, b) <= a and <= b.
Bound eitherMin(const Bound& a, const Bound& b) {
  return a && b ? std::min(*a, *b) : a ? a : b;
}

Bound eitherMax(const Bound& a, const Bound& b) {
  return a && b ? std::max(*a, *b) : a ? a : b;
}

// Every product of an end of `a` with an end of `b`; the least and greatest of them.
ValueRange product(const ValueRange& a, const ValueRange& b) {
  if (!a.lo || !a.hi || !b.lo || !b.hi)
    return {};
  std::vector<std::int64_t> ends;
  for (std::int64_t x : {*a.lo, *a.hi})
    for (std::int64_t y : {*b.lo, *b.hi}) {
      const Bound p = checkedMul(x, y);
      if (!p)
        return {};
      ends.push_back(*p);
    }
  return {*std::min_element(ends.begin(), ends.end()), *std::max_element(ends.begin(), ends.end())};
}

// a / c rounded down (FloorDiv) or toward zero (Div), c > 0: both grow with a.
Bound divide(const Bound& a, std::int64_t c, bool floor) {
  if (!a)
    return std::nullopt;
  const std::int64_t q = *a / c;
  return floor && *a % c != 0 && *a < 0 ? q - 1 : q;
}

} // namespace

ValueRange constantRange(const Expr& e, const VarRanges& ranges) {
  if (!e.type().isInt())
    return {};
  if (const auto* imm = e.as<IntImm>())
    return {imm->value, imm->value};
  if (const auto* v = e.as<Var>()) {
    auto it = ranges.find(v->name);
    return it == ranges.end() ? ValueRange{} : ValueRange{it->second.first, it->second.second};
  }
  if (const auto* b = e.as<Broadcast>())
    return constantRange(b->value, ranges);
  if (const auto* s = e.as<Select>()) {
    const ValueRange t = constantRange(s->trueValue, ranges);
    const ValueRange f = constantRange(s->falseValue, ranges);
    return {both(t.lo, f.lo, [](auto x, auto y) { return std::min(x, y); }),
            both(t.hi, f.hi, [](auto x, auto y) { return std::max(x, y); })};
  }
  if (!isBinaryKind(e.kind()))
    return {};
  const auto* op = static_cast<const BinaryExprNode*>(e.get());
  const ValueRange a = constantRange(op->a, ranges), b = constantRange(op->b, ranges);
  const std::optional<std::int64_t> divisor = asConstInt(op->b);
  switch (e.kind()) {
  case ExprKind::Add:
    return {add(a.lo, b.lo), add(a.hi, b.hi)};
  case ExprKind::Sub:
    return {sub(a.lo, b.hi), sub(a.hi, b.lo)};
  case ExprKind::Mul:
    return product(a, b);
  case ExprKind::Min:
    return {both(a.lo, b.lo, [](auto x, auto y) { return std::min(x, y); }), eitherMin(a.hi, b.hi)};
  case ExprKind::Max:
    return {eitherMax(a.lo, b.lo), both(a.hi, b.hi, [](auto x, auto y) { return std::max(x, y); })};
  case ExprKind::Div:
  case ExprKind::FloorDiv:
    if (!divisor || *divisor <= 0)
      return {};
    return {divide(a.lo, *divisor, e.kind() == ExprKind::FloorDiv),
            divide(a.hi, *divisor, e.kind() == ExprKind::FloorDiv)};
  case ExprKind::FloorMod:
    if (!divisor || *divisor <= 0)
      return {};
    return {0, *divisor - 1};
  case ExprKind::Mod: // the sign of the dividend
    if (!divisor || *divisor <= 0)
      return {};
    return {a.lo && *a.lo >= 0 ? 0 : 1 - *divisor, *divisor - 1};
  default:
    return {};
  }
}

std::optional<std::int64_t> maxExtent(const Stmt& body, const For& loop) {
  // The loops around it, outermost first: each variable's range from its bounds, which may
  // depend on the loops outside it.
  VarRanges ranges;
  for (const For* f : enclosingLoops(body, loop.name())) {
    const ValueRange min = constantRange(simplify(f->min), ranges);
    const ValueRange extent = constantRange(simplify(f->extent), ranges);
    if (!min.lo || !min.hi || !extent.hi || *extent.hi < 1)
      continue;
    if (const auto last = checkedAdd(*min.hi, *extent.hi - 1))
      ranges[f->name()] = {*min.lo, *last};
  }
  return constantRange(simplify(loop.extent), ranges).hi;
}

} // namespace lathe::schedule::detail
