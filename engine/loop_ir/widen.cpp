#include "engine/loop_ir/widen.h"

#include "engine/loop_ir/ir_operators.h"

#include <algorithm>

namespace lathe::loop {

Expr VectorWidener::broadcastTo(const Expr& e, int lanes) {
  return e.type().lanes() == lanes ? e : Broadcast::make(e, lanes);
}

Expr VectorWidener::bind(const std::string& name, const Expr& var, const Expr& value) {
  if (value.type() == var.type())
    return var;
  auto it = vectors_.find(name);
  shadowed_[name].push_back(it == vectors_.end() ? Expr() : it->second);
  Expr vector = Var::make(value.type(), name);
  vectors_[name] = vector;
  return vector;
}

void VectorWidener::unbind(const std::string& name) {
  auto it = shadowed_.find(name);
  if (it == shadowed_.end() || it->second.empty())
    return;
  const Expr previous = it->second.back();
  it->second.pop_back();
  if (previous.defined())
    vectors_[name] = previous;
  else
    vectors_.erase(name);
}

Expr VectorWidener::mutateVar(const Var* op) {
  auto it = vectors_.find(op->name);
  return it == vectors_.end() ? Expr(op) : it->second;
}

Expr VectorWidener::mutateBinary(const BinaryExprNode* op) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.sameAs(op->a) && b.sameAs(op->b))
    return op;
  const int lanes = std::max(a.type().lanes(), b.type().lanes());
  return makeBinary(op->kind, broadcastTo(a, lanes), broadcastTo(b, lanes));
}

Expr VectorWidener::mutateNot(const Not* op) {
  Expr a = mutate(op->a);
  return a.sameAs(op->a) ? Expr(op) : Not::make(a);
}

Expr VectorWidener::mutateSelect(const Select* op) {
  Expr c = mutate(op->condition), t = mutate(op->trueValue), f = mutate(op->falseValue);
  if (c.sameAs(op->condition) && t.sameAs(op->trueValue) && f.sameAs(op->falseValue))
    return op;
  if (c.type().isScalar() && t.type().lanes() == f.type().lanes())
    return Select::make(c, t, f); // a scalar condition picks whole vectors
  const int lanes = std::max({c.type().lanes(), t.type().lanes(), f.type().lanes()});
  return Select::make(broadcastTo(c, lanes), broadcastTo(t, lanes), broadcastTo(f, lanes));
}

Expr VectorWidener::mutateCast(const Cast* op) {
  Expr v = mutate(op->value);
  return v.sameAs(op->value) ? Expr(op) : Cast::make(op->type.withLanes(v.type().lanes()), v);
}

Expr VectorWidener::mutateRamp(const Ramp* op) {
  if (mutate(op->base).type().isVector() || mutate(op->stride).type().isVector())
    refuse("a ramp whose base or stride became a vector");
  return op;
}

Expr VectorWidener::mutateBroadcast(const Broadcast* op) {
  if (mutate(op->value).type().isVector())
    refuse("a broadcast of a value that became a vector");
  return op;
}

Expr VectorWidener::mutateCall(const Call* op) {
  bool changed = false;
  std::vector<Expr> args = mutate(op->args, &changed);
  if (!changed)
    return op;
  int lanes = 1;
  for (const Expr& a : args)
    lanes = std::max(lanes, a.type().lanes());
  for (Expr& a : args)
    a = broadcastTo(a, lanes);
  if (op->op != Intrinsic::Extern)
    return Call::make(op->op, std::move(args));
  if (op->name != kBitcast) {
    refuse("the extern call @" + op->name + ", which takes scalars");
    return op;
  }
  return Call::makeExtern(op->type.withLanes(lanes), op->name, std::move(args));
}

Expr VectorWidener::mutateLet(const Let* op) {
  const Expr value = mutate(op->value);
  const Expr var = bind(op->name(), op->var, value);
  const Expr body = mutate(op->body);
  if (!var.sameAs(op->var))
    unbind(op->name());
  if (value.sameAs(op->value) && body.sameAs(op->body) && var.sameAs(op->var))
    return op;
  return Let::make(var, value, body);
}

} // namespace lathe::loop
