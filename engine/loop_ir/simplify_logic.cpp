// Simplifier rules for comparisons, logic, select and casts.

#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/simplify_internal.h"

namespace lathe::loop::simplify_detail {

namespace {

// The comparison that is true exactly when `kind` is false; for floats only EQ <-> NE,
// since every ordered comparison with NaN is false.
ExprKind negateComparison(ExprKind kind) {
  switch (kind) {
  case ExprKind::EQ:
    return ExprKind::NE;
  case ExprKind::NE:
    return ExprKind::EQ;
  case ExprKind::LT:
    return ExprKind::GE;
  case ExprKind::LE:
    return ExprKind::GT;
  case ExprKind::GT:
    return ExprKind::LE;
  default:
    return ExprKind::LT;
  }
}

} // namespace

bool isConstBool(const Expr& e, bool value) {
  if (const Broadcast* b = e.as<Broadcast>())
    return isConstBool(b->value, value);
  const IntImm* imm = e.as<IntImm>();
  return imm && imm->type.isBool() && (imm->value != 0) == value;
}

Expr Simplifier::rewriteCompare(ExprKind kind, const Expr& a, const Expr& b) {
  const int lanes = a.type().lanes();
  if (a.type().isIntOrUInt() && equal(a, b)) // never for floats: NaN != NaN
    return makeBool(kind == ExprKind::EQ || kind == ExprKind::LE || kind == ExprKind::GE, lanes);
  if (!a.type().isInt())
    return {};
  // (x + c1) < c2 -> x < c2 - c1: exact because signed overflow is undefined.
  const Add* aa = a.as<Add>();
  if (aa && isConst(aa->b) && isConst(b))
    if (Expr c = foldBinary(ExprKind::Sub, b, aa->b); c.defined())
      return binary(kind, aa->a, c);
  // x + c1 < y + c2 -> x < y + (c2 - c1): keeps constants on one side.
  const Add* ab = b.as<Add>();
  if (aa && ab && isConst(aa->b) && isConst(ab->b))
    if (Expr c = foldBinary(ExprKind::Sub, ab->b, aa->b); c.defined())
      return binary(kind, aa->a, add(ab->a, c));
  return {};
}

Expr Simplifier::rewriteLogical(ExprKind kind, const Expr& a, const Expr& b) {
  const bool isAnd = kind == ExprKind::And;
  // Constants are on the right by now: x && true -> x, x && false -> false, dually for ||.
  if (isConstBool(b, isAnd))
    return a;
  if (isConstBool(b, !isAnd))
    return b;
  if (equal(a, b))
    return a;
  return {};
}

Expr Simplifier::notOf(const Expr& a) {
  Expr r = rewriteNot(a);
  return r.defined() ? r : Not::make(a);
}

Expr Simplifier::rewriteNot(const Expr& a) {
  if (isConstBool(a, true) || isConstBool(a, false))
    return makeBool(isConstBool(a, false), a.type().lanes());
  if (const Not* inner = a.as<Not>())
    return inner->a;
  if (const Broadcast* b = a.as<Broadcast>())
    return broadcast(notOf(b->value), b->lanes);
  if (isComparisonKind(a.kind())) {
    const auto* cmp = static_cast<const BinaryExprNode*>(a.get());
    const bool equality = a.kind() == ExprKind::EQ || a.kind() == ExprKind::NE;
    if (equality || !cmp->a.type().isFloat())
      return binary(negateComparison(a.kind()), cmp->a, cmp->b);
  }
  return {};
}

Expr Simplifier::mutateNot(const Not* op) {
  Expr a = mutate(op->a);
  if (Expr r = rewriteNot(a); r.defined())
    return r;
  return a.sameAs(op->a) ? Expr(op) : Not::make(std::move(a));
}

Expr Simplifier::rewriteSelect(const Expr& c, const Expr& t, const Expr& f) {
  if (isConstBool(c, true))
    return t;
  if (isConstBool(c, false))
    return f;
  if (equal(t, f))
    return t;
  if (const Not* n = c.as<Not>()) // select(!c, t, f) -> select(c, f, t)
    return Select::make(n->a, f, t);
  return {};
}

Expr Simplifier::mutateSelect(const Select* op) {
  Expr c = mutate(op->condition);
  Expr t = mutate(op->trueValue);
  Expr f = mutate(op->falseValue);
  if (Expr r = rewriteSelect(c, t, f); r.defined())
    return r;
  if (c.sameAs(op->condition) && t.sameAs(op->trueValue) && f.sameAs(op->falseValue))
    return op;
  return Select::make(std::move(c), std::move(t), std::move(f));
}

Expr Simplifier::rewriteCast(Type type, const Expr& value) {
  if (value.type() == type)
    return value;
  if (Expr folded = foldCast(type, value); folded.defined())
    return folded;
  if (const Broadcast* b = value.as<Broadcast>()) { // cast(broadcast(v)) -> broadcast(cast(v))
    Expr scalar = rewriteCast(type.element(), b->value);
    return broadcast(scalar.defined() ? scalar : Cast::make(type.element(), b->value), b->lanes);
  }
  return {};
}

Expr Simplifier::mutateCast(const Cast* op) {
  Expr value = mutate(op->value);
  if (Expr r = rewriteCast(op->type, value); r.defined())
    return r;
  return value.sameAs(op->value) ? Expr(op) : Cast::make(op->type, std::move(value));
}

} // namespace lathe::loop::simplify_detail
