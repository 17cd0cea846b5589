// Simplifier rules for arithmetic: + - * / % floordiv floormod min max, and the rules shared
// by every binary node (folding, operand order, broadcasts).

#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/simplify_internal.h"

#include <algorithm>
#include <cmath>

namespace lathe::loop::simplify_detail {

namespace {

bool isSigned(const Expr& e) {
  return e.type().isInt();
}

bool isConstInt(const Expr& e, std::int64_t value) {
  std::int64_t v = 0;
  return constInt(e, &v) && v == value;
}

// A positive integer constant.
bool positiveConst(const Expr& e, std::int64_t* value) {
  return constInt(e, value) && *value > 0;
}

// Float constant checks that tell +0.0 from -0.0.
bool isFloatConst(const Expr& e, double value, bool negative) {
  const std::optional<double> v = asConstFloat(e);
  return v && *v == value && std::signbit(*v) == negative;
}

// e == x * c with c a constant multiple of `divisor`; sets x and c / divisor.
bool isMultipleOf(const Expr& e, std::int64_t divisor, Expr* x, std::int64_t* quotient) {
  const Mul* m = e.as<Mul>();
  std::int64_t c = 0;
  if (!m || !constInt(m->b, &c) || c % divisor != 0)
    return false;
  *x = m->a;
  *quotient = c / divisor;
  return true;
}

} // namespace

bool isCommutative(ExprKind kind) {
  switch (kind) {
  case ExprKind::Add:
  case ExprKind::Mul:
  case ExprKind::Min:
  case ExprKind::Max:
  case ExprKind::EQ:
  case ExprKind::NE:
  case ExprKind::And:
  case ExprKind::Or:
    return true;
  default:
    return false;
  }
}

ExprKind flipComparison(ExprKind kind) {
  switch (kind) {
  case ExprKind::LT:
    return ExprKind::GT;
  case ExprKind::LE:
    return ExprKind::GE;
  case ExprKind::GT:
    return ExprKind::LT;
  case ExprKind::GE:
    return ExprKind::LE;
  default:
    return kind;
  }
}

bool constInt(const Expr& e, std::int64_t* value) {
  const std::optional<std::int64_t> v = asConstInt(e);
  if (v)
    *value = *v;
  return v.has_value();
}

Expr Simplifier::mutateBinary(const BinaryExprNode* op) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr r = rewriteBinary(op->kind, a, b); r.defined())
    return r;
  if (a.sameAs(op->a) && b.sameAs(op->b))
    return op;
  return makeBinary(op->kind, std::move(a), std::move(b));
}

Expr Simplifier::binary(ExprKind kind, const Expr& a, const Expr& b) {
  Expr r = rewriteBinary(kind, a, b);
  return r.defined() ? r : makeBinary(kind, a, b);
}

Expr Simplifier::rewriteBinary(ExprKind kind, const Expr& a, const Expr& b) {
  if (Expr folded = foldBinary(kind, a, b); folded.defined())
    return folded;
  if (isConst(a) && !isConst(b)) {
    if (isCommutative(kind))
      return binary(kind, b, a);
    if (isComparisonKind(kind))
      return binary(flipComparison(kind), b, a);
  }
  const Broadcast* ba = a.as<Broadcast>();
  const Broadcast* bb = b.as<Broadcast>();
  if (ba && bb)
    return broadcast(binary(kind, ba->value, bb->value), ba->lanes);
  switch (kind) {
  case ExprKind::Add:
    return rewriteAdd(a, b);
  case ExprKind::Sub:
    return rewriteSub(a, b);
  case ExprKind::Mul:
    return rewriteMul(a, b);
  case ExprKind::Div:
  case ExprKind::FloorDiv:
    return rewriteDiv(kind, a, b);
  case ExprKind::Mod:
  case ExprKind::FloorMod:
    return rewriteMod(kind, a, b);
  case ExprKind::Min:
  case ExprKind::Max:
    return rewriteMinMax(kind, a, b);
  case ExprKind::And:
  case ExprKind::Or:
    return rewriteLogical(kind, a, b);
  default:
    return rewriteCompare(kind, a, b);
  }
}

Expr Simplifier::rewriteAdd(const Expr& a, const Expr& b) {
  if (a.type().isFloat())
    return isFloatConst(b, 0.0, true) ? a : Expr(); // x + -0.0 == x; x + 0.0 is not
  const Ramp* ra = a.as<Ramp>();
  const Ramp* rb = b.as<Ramp>();
  const Broadcast* ba = a.as<Broadcast>();
  const Broadcast* bb = b.as<Broadcast>();
  if (ra && bb)
    return ramp(add(ra->base, bb->value), ra->stride, ra->lanes);
  if (ba && rb)
    return ramp(add(ba->value, rb->base), rb->stride, rb->lanes);
  if (ra && rb)
    return ramp(add(ra->base, rb->base), add(ra->stride, rb->stride), ra->lanes);
  if (isConstInt(b, 0))
    return a;
  // (x / c)*c + x % c -> x, for truncating and for floor division alike (fuse makes these).
  if (const Mul* m = a.as<Mul>(); m && isConst(m->b) && !isConstInt(m->b, 0)) {
    const bool truncating = m->a.as<Div>() && b.as<Mod>();
    const bool floor = m->a.as<FloorDiv>() && b.as<FloorMod>();
    if (truncating || floor) {
      const auto* q = static_cast<const BinaryExprNode*>(m->a.get());
      const auto* r = static_cast<const BinaryExprNode*>(b.get());
      if (equal(q->a, r->a) && equal(q->b, m->b) && equal(r->b, m->b))
        return r->a;
      // (x / (c1*c2))*c2 + (x / c1) % c2 -> x / c1 for positive c1, c2: the same with
      // x / c1 for x, once x / c1 / c2 was folded into one division.
      const auto c2 = asConstInt(m->b), c = asConstInt(q->b);
      if (r->a.kind() == m->a.kind() && equal(r->b, m->b) && c2 && *c2 > 0 && c && *c > 0) {
        const auto* inner = static_cast<const BinaryExprNode*>(r->a.get());
        const auto c1 = asConstInt(inner->b);
        std::int64_t product = 0;
        if (equal(inner->a, q->a) && c1 && *c1 > 0 && !__builtin_mul_overflow(*c1, *c2, &product) &&
            product == *c)
          return r->a;
      }
    }
  }

  // Integer sums: collect constants at the outside, cancel x - y + y.
  const Add* aa = a.as<Add>();
  const Sub* sa = a.as<Sub>();
  if (isConst(b)) {
    if (aa && isConst(aa->b)) // (x + c1) + c2 -> x + (c1 + c2)
      if (Expr c = foldBinary(ExprKind::Add, aa->b, b); c.defined())
        return add(aa->a, c);
    if (sa && isConst(sa->a)) // (c1 - x) + c2 -> (c1 + c2) - x
      if (Expr c = foldBinary(ExprKind::Add, sa->a, b); c.defined())
        return sub(c, sa->b);
    return {};
  }
  if (aa && isConst(aa->b)) // (x + c) + y -> (x + y) + c
    return add(add(aa->a, b), aa->b);
  const Add* ab = b.as<Add>();
  if (ab && isConst(ab->b)) // x + (y + c) -> (x + y) + c
    return add(add(a, ab->a), ab->b);
  if (sa && equal(sa->b, b)) // (x - y) + y -> x
    return sa->a;
  if (const Sub* sb = b.as<Sub>(); sb && equal(sb->b, a)) // y + (x - y) -> x
    return sb->a;
  return {};
}

Expr Simplifier::rewriteSub(const Expr& a, const Expr& b) {
  if (a.type().isFloat())
    return isFloatConst(b, 0.0, false) ? a : Expr(); // x - 0.0 == x, also for x = -0.0
  const Ramp* ra = a.as<Ramp>();
  const Ramp* rb = b.as<Ramp>();
  const Broadcast* ba = a.as<Broadcast>();
  const Broadcast* bb = b.as<Broadcast>();
  if (ra && bb)
    return ramp(sub(ra->base, bb->value), ra->stride, ra->lanes);
  if (ba && rb)
    return ramp(sub(ba->value, rb->base), sub(makeZero(rb->stride.type()), rb->stride), rb->lanes);
  if (ra && rb)
    return ramp(sub(ra->base, rb->base), sub(ra->stride, rb->stride), ra->lanes);
  if (isConstInt(b, 0))
    return a;
  if (equal(a, b))
    return makeZero(a.type());

  if (isConst(b) && isSigned(b)) // x - c -> x + -c, so that sums have one canonical form
    if (Expr negated = foldBinary(ExprKind::Sub, makeZero(b.type()), b); negated.defined())
      return add(a, negated);
  const Add* aa = a.as<Add>();
  const Add* ab = b.as<Add>();
  if (aa && equal(aa->b, b)) // (x + y) - y -> x
    return aa->a;
  if (aa && equal(aa->a, b)) // (x + y) - x -> y
    return aa->b;
  if (ab && equal(ab->a, a)) // x - (x + y) -> 0 - y
    return sub(makeZero(a.type()), ab->b);
  if (aa && isConst(aa->b)) // (x + c) - y -> (x - y) + c
    return add(sub(aa->a, b), aa->b);
  if (ab && isConst(ab->b)) // x - (y + c) -> (x - y) - c
    return sub(sub(a, ab->a), ab->b);
  if (const Sub* sb = b.as<Sub>(); sb && isConst(a) && isConst(sb->a)) // c1 - (c2 - x)
    if (Expr c = foldBinary(ExprKind::Sub, a, sb->a); c.defined())
      return add(sb->b, c);
  return {};
}

Expr Simplifier::rewriteMul(const Expr& a, const Expr& b) {
  if (a.type().isFloat())
    return isConstValue(b, 1.0) ? a : Expr(); // x * 1.0 == x; x * 0.0 is not 0 for inf, NaN
  const Ramp* ra = a.as<Ramp>();
  const Broadcast* bb = b.as<Broadcast>();
  if (ra && bb) // ramp(x, s) * c -> ramp(x*c, s*c)
    return ramp(mul(ra->base, bb->value), mul(ra->stride, bb->value), ra->lanes);
  if (a.as<Broadcast>() && b.as<Ramp>())
    return mul(b, a);
  if (isConstInt(b, 1))
    return a;
  if (isConstInt(b, 0))
    return b;

  const Mul* ma = a.as<Mul>();
  if (isConst(b)) {
    if (ma && isConst(ma->b)) // (x * c1) * c2 -> x * (c1 * c2)
      if (Expr c = foldBinary(ExprKind::Mul, ma->b, b); c.defined())
        return mul(ma->a, c);
    const Add* aa = a.as<Add>();
    if (aa && isConst(aa->b)) // (x + c1) * c2 -> x*c2 + c1*c2
      if (Expr c = foldBinary(ExprKind::Mul, aa->b, b); c.defined())
        return add(mul(aa->a, b), c);
    return {};
  }
  if (ma && isConst(ma->b)) // (x * c) * y -> (x * y) * c
    return mul(mul(ma->a, b), ma->b);
  if (const Mul* mb = b.as<Mul>(); mb && isConst(mb->b)) // x * (y * c) -> (x * y) * c
    return mul(mul(a, mb->a), mb->b);
  return {};
}

Expr Simplifier::rewriteDiv(ExprKind kind, const Expr& a, const Expr& b) {
  if (a.type().isFloat())
    return isConstValue(b, 1.0) ? a : Expr();
  if (isConstInt(b, 1))
    return a;
  std::int64_t d = 0;
  if (!isSigned(a) || !positiveConst(b, &d))
    return {};
  Expr x;
  std::int64_t q = 0;
  if (isMultipleOf(a, d, &x, &q)) // (x * (q*d)) / d -> x * q, for both roundings
    return mul(x, makeIntConst(a.type(), q));
  const auto* inner = a.kind() == kind ? static_cast<const BinaryExprNode*>(a.get()) : nullptr;
  std::int64_t c = 0;
  if (inner && positiveConst(inner->b, &c)) // (x / c) / d -> x / (c*d)
    if (Expr cd = foldBinary(ExprKind::Mul, inner->b, b); cd.defined())
      return binary(kind, inner->a, cd);
  if (kind != ExprKind::FloorDiv)
    return {};
  // Rounding down lets whole multiples of d leave the division:
  // floordiv(x*(q*d) + y, d) -> x*q + floordiv(y, d), floordiv(y + q*d, d) -> floordiv(y, d) + q.
  const Add* sum = a.as<Add>();
  if (!sum)
    return {};
  if (isMultipleOf(sum->a, d, &x, &q))
    return add(mul(x, makeIntConst(a.type(), q)), binary(kind, sum->b, b));
  if (isMultipleOf(sum->b, d, &x, &q))
    return add(binary(kind, sum->a, b), mul(x, makeIntConst(a.type(), q)));
  if (constInt(sum->b, &c) && c % d == 0)
    return add(binary(kind, sum->a, b), makeIntConst(a.type(), c / d));
  return {};
}

Expr Simplifier::rewriteMod(ExprKind kind, const Expr& a, const Expr& b) {
  if (a.type().isFloat())
    return {};
  if (isConstInt(b, 1))
    return makeZero(a.type());
  std::int64_t d = 0;
  if (!isSigned(a) || !positiveConst(b, &d))
    return {};
  Expr x;
  std::int64_t q = 0;
  if (isMultipleOf(a, d, &x, &q)) // (x * (q*d)) % d -> 0, for both roundings
    return makeZero(a.type());
  if (kind != ExprKind::FloorMod)
    return {};
  // floormod(x*(q*d) + y, d) -> floormod(y, d), and floormod(y + q*d, d) -> floormod(y, d).
  const Add* sum = a.as<Add>();
  if (!sum)
    return {};
  std::int64_t c = 0;
  if (isMultipleOf(sum->a, d, &x, &q))
    return binary(kind, sum->b, b);
  if (isMultipleOf(sum->b, d, &x, &q) || (constInt(sum->b, &c) && c % d == 0))
    return binary(kind, sum->a, b);
  return {};
}

Expr Simplifier::rewriteMinMax(ExprKind kind, const Expr& a, const Expr& b) {
  if (equal(a, b))
    return a;
  const bool isMin = kind == ExprKind::Min;
  const auto* inner = a.kind() == kind ? static_cast<const BinaryExprNode*>(a.get()) : nullptr;
  if (inner && isConst(inner->b) && isConst(b)) // min(min(x, c1), c2) -> min(x, min(c1, c2))
    if (Expr c = foldBinary(kind, inner->b, b); c.defined())
      return binary(kind, inner->a, c);
  if (!isSigned(a))
    return {};
  // Clamps that collapse: min(max(x, c1), c2) -> c2 when c1 >= c2 (and the mirror for max).
  const ExprKind other = isMin ? ExprKind::Max : ExprKind::Min;
  std::int64_t c1 = 0, c2 = 0;
  if (a.kind() == other && constInt(static_cast<const BinaryExprNode*>(a.get())->b, &c1) &&
      constInt(b, &c2) && (isMin ? c1 >= c2 : c1 <= c2))
    return b;
  // min(x + c1, x + c2) -> x + min(c1, c2), and min(x, x + c) with c of known sign.
  const Add* aa = a.as<Add>();
  const Add* ab = b.as<Add>();
  if (aa && ab && equal(aa->a, ab->a) && constInt(aa->b, &c1) && constInt(ab->b, &c2))
    return add(aa->a, makeIntConst(a.type(), isMin ? std::min(c1, c2) : std::max(c1, c2)));
  if (ab && equal(a, ab->a) && constInt(ab->b, &c2))
    return (c2 > 0) == isMin ? a : b;
  if (aa && equal(aa->a, b) && constInt(aa->b, &c1))
    return (c1 > 0) == isMin ? b : a;
  return {};
}

} // namespace lathe::loop::simplify_detail
