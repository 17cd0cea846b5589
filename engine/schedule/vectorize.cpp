// vectorize(loop): the loop, which must be innermost and of constant extent L, is replaced
// by its body computed on L-lane vectors: the loop variable becomes ramp(min, 1, L), scalar
// operands next to vector ones are broadcast, and loads and stores take vector indices
// (contiguous when the index moves by 1 along the loop, gathers and scatters otherwise).
// Refused, with the reason: a loop inside it, an allocation, a condition that varies along
// it (a split tail: pick a factor that divides the extent), an extern call on vectors, and
// whatever requireIndependentIterations refuses (reductions, overlapping writes).
#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"

#include <algorithm>
#include <map>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

constexpr std::int64_t kMaxLanes = 64;

class Vectorizer : public IRMutator {
public:
  Vectorizer(const std::string& loop, Expr ramp) : loop_(loop) { vars_[loop] = std::move(ramp); }

protected:
  static Expr widen(const Expr& e, int lanes) {
    return e.type().lanes() == lanes ? e : Broadcast::make(e, lanes);
  }

  Expr mutateVar(const Var* op) override {
    auto it = vars_.find(op->name);
    return it == vars_.end() ? Expr(op) : it->second;
  }
  Expr mutateBinary(const BinaryExprNode* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.sameAs(op->a) && b.sameAs(op->b))
      return op;
    const int lanes = std::max(a.type().lanes(), b.type().lanes());
    return makeBinary(op->kind, widen(a, lanes), widen(b, lanes));
  }
  Expr mutateNot(const Not* op) override { return Not::make(mutate(op->a)); }
  Expr mutateSelect(const Select* op) override {
    Expr c = mutate(op->condition), t = mutate(op->trueValue), f = mutate(op->falseValue);
    const int lanes = std::max({c.type().lanes(), t.type().lanes(), f.type().lanes()});
    if (c.type().isScalar() && t.type().lanes() == f.type().lanes())
      return Select::make(c, t, f); // a scalar condition picks whole vectors
    return Select::make(widen(c, lanes), widen(t, lanes), widen(f, lanes));
  }
  Expr mutateCast(const Cast* op) override {
    Expr v = mutate(op->value);
    return Cast::make(op->type.withLanes(v.type().lanes()), v);
  }
  Expr mutateRamp(const Ramp* op) override {
    if (mutate(op->base).type().isVector() || mutate(op->stride).type().isVector())
      fail("vectorize(" + loop_ + ") meets a ramp that already varies along it");
    return op;
  }
  Expr mutateBroadcast(const Broadcast* op) override {
    if (mutate(op->value).type().isVector())
      fail("vectorize(" + loop_ + ") meets a broadcast of a value that varies along it");
    return op;
  }
  Expr mutateCall(const Call* op) override {
    bool changed = false;
    std::vector<Expr> args = mutate(op->args, &changed);
    if (!changed)
      return op;
    if (op->op == Intrinsic::Extern)
      fail("vectorize(" + loop_ + ") meets the extern call @" + op->name + ", which takes scalars");
    int lanes = 1;
    for (const Expr& a : args)
      lanes = std::max(lanes, a.type().lanes());
    for (Expr& a : args)
      a = widen(a, lanes);
    return Call::make(op->op, std::move(args));
  }
  Expr mutateLet(const Let* op) override {
    Expr value = mutate(op->value);
    Expr var = rebind(op->name(), op->var, value);
    Expr body = mutate(op->body);
    vars_.erase(op->name());
    return Let::make(var, value, body);
  }

  Stmt mutateFor(const For* op) override {
    fail("vectorize(" + loop_ + ") needs an innermost loop; '" + op->name() + "' is inside it");
  }
  Stmt mutateAllocate(const Allocate* op) override {
    fail("vectorize(" + loop_ + ") cannot vectorize the allocation of " + op->buffer.name() +
         " inside it");
  }
  Stmt mutateIfThenElse(const IfThenElse* op) override {
    if (mutate(op->condition).type().isVector())
      fail("vectorize(" + loop_ +
           ") meets a condition that varies along it (a split whose "
           "factor does not divide the extent leaves one; pick a factor that divides it)");
    return IRMutator::mutateIfThenElse(op);
  }
  Stmt mutateStore(const Store* op) override {
    Expr index = mutate(op->index), value = mutate(op->value);
    const int lanes = index.type().lanes();
    if (value.type().lanes() > lanes)
      fail("vectorize(" + loop_ + ") would store a vector into the one element " +
           op->buffer.name() + "[" + toString(op->index) + "]");
    return Store::make(op->buffer, index, widen(value, lanes));
  }
  Stmt mutateLetStmt(const LetStmt* op) override {
    Expr value = mutate(op->value);
    Expr var = rebind(op->name(), op->var, value);
    Stmt body = mutate(op->body);
    vars_.erase(op->name());
    return LetStmt::make(var, value, body);
  }
  Stmt mutateEvaluate(const Evaluate* op) override {
    if (mutate(op->value).type().isVector())
      fail("vectorize(" + loop_ + ") meets an evaluated call that varies along it");
    return op;
  }

private:
  // A let whose value became a vector binds a vector variable of the same name.
  Expr rebind(const std::string& name, const Expr& var, const Expr& value) {
    if (value.type() == var.type())
      return var;
    Expr vec = Var::make(value.type(), name);
    vars_[name] = vec;
    return vec;
  }

  std::string loop_;
  std::map<std::string, Expr> vars_;
};

} // namespace

Stmt vectorize(const Stmt& body, const std::string& name) {
  const For& loop = findLoop(body, name);
  const std::int64_t lanes = constantExtent(loop, "vectorize");
  if (lanes < 2 || lanes > kMaxLanes)
    fail("vectorize needs an extent from 2 to " + std::to_string(kMaxLanes) + "; '" + name +
         "' has " + std::to_string(lanes) + " (split it first)");
  if (loop.forKind == ForKind::Parallel)
    fail("'" + name + "' is parallel; vectorize an inner loop");
  requireIndependentIterations(loop, "vectorize");
  return replaceLoop(body, name, [&](const For& op) {
    Vectorizer vectorizer(name, Ramp::make(op.min, makeIndex(1), static_cast<int>(lanes)));
    return vectorizer.mutate(op.body);
  });
}

} // namespace lathe::schedule::detail
