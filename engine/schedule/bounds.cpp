// symbolicBounds: the range an index expression covers while some loops run, as
// expressions in the variables that stay fixed (compute_at's region of a buffer).
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify.h"
#include "engine/schedule/loop_nest.h"
#include "engine/support/checked_int.h"

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

using Ranges = std::map<std::string, std::pair<std::int64_t, std::int64_t>>;
using Bounds = std::optional<std::pair<Expr, Expr>>;

class UsesAny : public IRVisitor {
public:
  explicit UsesAny(const Ranges& ranges) : ranges_(ranges) {}
  bool found = false;

protected:
  void visitVar(const Var* op) override { found = found || ranges_.count(op->name); }

private:
  const Ranges& ranges_;
};

bool varies(const Expr& e, const Ranges& ranges) {
  UsesAny u(ranges);
  u.visit(e);
  return u.found;
}

} // namespace

Bounds symbolicBounds(const Expr& e, const Ranges& ranges) {
  if (!varies(e, ranges))
    return std::pair{e, e};
  auto recurse = [&](const Expr& x) { return symbolicBounds(x, ranges); };
  if (const auto* v = e.as<Var>()) {
    const auto& [lo, hi] = ranges.at(v->name);
    return std::pair{makeIndex(lo), makeIndex(hi)};
  }
  if (const auto* r = e.as<Ramp>()) {
    const auto base = recurse(r->base);
    const auto stride = asConstInt(simplify(r->stride));
    if (!base || !stride)
      return std::nullopt;
    const std::optional<std::int64_t> last = checkedMul(*stride, r->lanes - 1);
    if (!last)
      return std::nullopt;
    return std::pair{simplify(base->first + makeIndex(std::min<std::int64_t>(*last, 0))),
                     simplify(base->second + makeIndex(std::max<std::int64_t>(*last, 0)))};
  }
  if (const auto* b = e.as<Broadcast>())
    return recurse(b->value);
  if (const auto* s = e.as<Select>()) {
    const auto t = recurse(s->trueValue), f = recurse(s->falseValue);
    if (!t || !f)
      return std::nullopt;
    return std::pair{simplify(min(t->first, f->first)), simplify(max(t->second, f->second))};
  }
  if (!isBinaryKind(e.kind()))
    return std::nullopt;
  const auto* op = static_cast<const BinaryExprNode*>(e.get());
  const auto a = recurse(op->a), b = recurse(op->b);
  if (!a || !b)
    return std::nullopt;
  const auto constant = asConstInt(simplify(op->b));
  switch (e.kind()) {
  case ExprKind::Add:
    return std::pair{simplify(a->first + b->first), simplify(a->second + b->second)};
  case ExprKind::Sub:
    return std::pair{simplify(a->first - b->second), simplify(a->second - b->first)};
  case ExprKind::Min:
    return std::pair{simplify(min(a->first, b->first)), simplify(min(a->second, b->second))};
  case ExprKind::Max:
    return std::pair{simplify(max(a->first, b->first)), simplify(max(a->second, b->second))};
  case ExprKind::Mul:
    if (constant && *constant >= 0)
      return std::pair{simplify(a->first * op->b), simplify(a->second * op->b)};
    if (constant)
      return std::pair{simplify(a->second * op->b), simplify(a->first * op->b)};
    if (const auto left = asConstInt(simplify(op->a)))
      return *left >= 0 ? std::pair{simplify(op->a * b->first), simplify(op->a * b->second)}
                        : std::pair{simplify(op->a * b->second), simplify(op->a * b->first)};
    return std::nullopt;
  case ExprKind::Div:
  case ExprKind::FloorDiv:
    if (!constant || *constant <= 0)
      return std::nullopt;
    return std::pair{simplify(makeBinary(e.kind(), a->first, op->b)),
                     simplify(makeBinary(e.kind(), a->second, op->b))};
  case ExprKind::Mod:
  case ExprKind::FloorMod:
    if (!constant || *constant <= 0)
      return std::nullopt;
    return std::pair{makeIndex(e.kind() == ExprKind::Mod ? 1 - *constant : 0),
                     makeIndex(*constant - 1)};
  default:
    return std::nullopt;
  }
}

} // namespace lathe::schedule::detail
