#include "engine/lowering/vector_epilogue.h"

#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/substitute.h"
#include "engine/lowering/window_helpers.h"

namespace lathe::lowering {
namespace {

Expr broadcastTo(const Expr& e, int lanes) {
  return e.type().isVector() ? e : loop::Broadcast::make(e, lanes);
}

// Replaces scalar variables by vectors and rebuilds every node above them at that width,
// broadcasting the operands that stay scalar. Sets `failed` on a node with no vector form.
class Widen : public loop::IRMutator {
public:
  Widen(std::map<std::string, Expr> replacements, int lanes)
      : replacements_(std::move(replacements)), lanes_(lanes) {}
  bool failed = false;

protected:
  Expr mutateVar(const loop::Var* op) override {
    auto it = replacements_.find(op->name);
    return it == replacements_.end() ? Expr(op) : it->second;
  }
  Expr mutateBinary(const loop::BinaryExprNode* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.sameAs(op->a) && b.sameAs(op->b))
      return op;
    if (a.type().lanes() != b.type().lanes()) {
      a = broadcastTo(a, lanes_);
      b = broadcastTo(b, lanes_);
    }
    return loop::makeBinary(op->kind, a, b);
  }
  Expr mutateSelect(const loop::Select* op) override {
    Expr c = mutate(op->condition), t = mutate(op->trueValue), f = mutate(op->falseValue);
    if (c.sameAs(op->condition) && t.sameAs(op->trueValue) && f.sameAs(op->falseValue))
      return op;
    return loop::Select::make(broadcastTo(c, lanes_), broadcastTo(t, lanes_),
                              broadcastTo(f, lanes_));
  }
  Expr mutateCast(const loop::Cast* op) override {
    Expr v = mutate(op->value);
    if (v.sameAs(op->value))
      return op;
    return loop::Cast::make(op->type.withLanes(v.type().lanes()), v);
  }
  Expr mutateCall(const loop::Call* op) override {
    bool changed = false;
    std::vector<Expr> args = mutate(op->args, &changed);
    if (!changed)
      return op;
    for (Expr& a : args)
      a = broadcastTo(a, lanes_);
    if (op->op != loop::Intrinsic::Extern)
      return loop::Call::make(op->op, args);
    if (op->name != loop::kBitcast) { // a library function has no vector form
      failed = true;
      return op;
    }
    return loop::Call::makeExtern(op->type.withLanes(lanes_), op->name, args);
  }
  Expr mutateLet(const loop::Let* op) override {
    const Expr value = mutate(op->value);
    if (value.type() == op->value.type()) {
      const Expr body = mutate(op->body);
      return value.sameAs(op->value) && body.sameAs(op->body)
                 ? Expr(op)
                 : loop::Let::make(op->var, value, body);
    }
    // The bound value became a vector: so does its variable, in the body.
    const Expr var = loop::Var::make(value.type(), op->name());
    auto it = replacements_.find(op->name());
    const Expr saved = it == replacements_.end() ? Expr() : it->second;
    replacements_[op->name()] = var;
    const Expr body = mutate(op->body);
    if (saved.defined())
      replacements_[op->name()] = saved;
    else
      replacements_.erase(op->name());
    return loop::Let::make(var, value, body);
  }
  Expr mutateRamp(const loop::Ramp* op) override {
    failed = true; // the scalar epilogue has none
    return op;
  }
  Expr mutateBroadcast(const loop::Broadcast* op) override {
    failed = true;
    return op;
  }

private:
  std::map<std::string, Expr> replacements_;
  int lanes_;
};

} // namespace

VectorEpilogue::VectorEpilogue(KernelBuilder& kb, const Epilogue& finish, graph::DType dtype,
                               std::size_t rank, int lanes) {
  const loop::Type t = loopType(dtype);
  const Expr scalarValue = freshScalar(kb, "ev", t);
  const Expr vectorValue = freshScalar(kb, "evv", t.withLanes(lanes));
  std::vector<Expr> index;
  for (std::size_t d = 0; d < rank; ++d)
    index.push_back(kb.freshVar("ei"));
  const Expr lastLane = index.back();
  const Expr scalar = finish(scalarValue, index);
  Widen widen(
      {{scalarValue.as<loop::Var>()->name, vectorValue},
       {lastLane.as<loop::Var>()->name, loop::Ramp::make(lastLane, loop::makeIndex(1), lanes)}},
      lanes);
  // The last index's own name stays free for the first lane (the ramp's base).
  const Expr wide = widen.mutate(scalar);
  if (widen.failed)
    return;
  widened_ = broadcastTo(wide, lanes);
  value_ = vectorValue.as<loop::Var>()->name;
  for (const Expr& i : index)
    index_.push_back(i.as<loop::Var>()->name);
}

Expr VectorEpilogue::operator()(const Expr& value, const std::vector<Expr>& outIndex) const {
  std::map<std::string, Expr> at{{value_, value}};
  for (std::size_t d = 0; d < index_.size(); ++d)
    at[index_[d]] = outIndex[d];
  return loop::substitute(widened_, at);
}

} // namespace lathe::lowering
