#include "engine/loop_ir/ir_mutator.h"

namespace lathe::loop {

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined())
    return e;
  switch (e.kind()) {
#define LATHE_LOOP_DISPATCH(name)                                                                  \
  case ExprKind::name:                                                                             \
    return mutate##name(static_cast<const name*>(e.get()));
    LATHE_LOOP_EXPR_NODES(LATHE_LOOP_DISPATCH)
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined())
    return s;
  switch (s.kind()) {
#undef LATHE_LOOP_DISPATCH
#define LATHE_LOOP_DISPATCH(name)                                                                  \
  case StmtKind::name:                                                                             \
    return mutate##name(static_cast<const name*>(s.get()));
    LATHE_LOOP_STMT_NODES(LATHE_LOOP_DISPATCH)
#undef LATHE_LOOP_DISPATCH
  }
  return s;
}

std::vector<Expr> IRMutator::mutate(const std::vector<Expr>& exprs, bool* changed) {
  std::vector<Expr> out;
  out.reserve(exprs.size());
  for (const Expr& e : exprs) {
    out.push_back(mutate(e));
    if (!out.back().sameAs(e))
      *changed = true;
  }
  return out;
}

Expr IRMutator::mutateIntImm(const IntImm* op) {
  return op;
}
Expr IRMutator::mutateFloatImm(const FloatImm* op) {
  return op;
}
Expr IRMutator::mutateVar(const Var* op) {
  return op;
}

Expr IRMutator::mutateBinary(const BinaryExprNode* op) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (a.sameAs(op->a) && b.sameAs(op->b))
    return op;
  return makeBinary(op->kind, std::move(a), std::move(b));
}

Expr IRMutator::mutateAdd(const Add* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateSub(const Sub* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateMul(const Mul* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateDiv(const Div* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateMod(const Mod* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateFloorDiv(const FloorDiv* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateFloorMod(const FloorMod* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateMin(const Min* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateMax(const Max* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateEQ(const EQ* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateNE(const NE* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateLT(const LT* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateLE(const LE* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateGT(const GT* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateGE(const GE* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateAnd(const And* op) {
  return mutateBinary(op);
}
Expr IRMutator::mutateOr(const Or* op) {
  return mutateBinary(op);
}

Expr IRMutator::mutateNot(const Not* op) {
  Expr a = mutate(op->a);
  if (a.sameAs(op->a))
    return op;
  return Not::make(std::move(a));
}

Expr IRMutator::mutateSelect(const Select* op) {
  Expr c = mutate(op->condition);
  Expr t = mutate(op->trueValue);
  Expr f = mutate(op->falseValue);
  if (c.sameAs(op->condition) && t.sameAs(op->trueValue) && f.sameAs(op->falseValue))
    return op;
  return Select::make(std::move(c), std::move(t), std::move(f));
}

Expr IRMutator::mutateCast(const Cast* op) {
  Expr value = mutate(op->value);
  if (value.sameAs(op->value))
    return op;
  return Cast::make(op->type, std::move(value));
}

Expr IRMutator::mutateLoad(const Load* op) {
  Expr index = mutate(op->index);
  if (index.sameAs(op->index))
    return op;
  return Load::make(op->buffer, std::move(index));
}

Expr IRMutator::mutateRamp(const Ramp* op) {
  Expr base = mutate(op->base);
  Expr stride = mutate(op->stride);
  if (base.sameAs(op->base) && stride.sameAs(op->stride))
    return op;
  return Ramp::make(std::move(base), std::move(stride), op->lanes);
}

Expr IRMutator::mutateBroadcast(const Broadcast* op) {
  Expr value = mutate(op->value);
  if (value.sameAs(op->value))
    return op;
  return Broadcast::make(std::move(value), op->lanes);
}

Expr IRMutator::mutateCall(const Call* op) {
  bool changed = false;
  std::vector<Expr> args = mutate(op->args, &changed);
  if (!changed)
    return op;
  if (op->op == Intrinsic::Extern)
    return Call::makeExtern(op->type, op->name, std::move(args));
  return Call::make(op->op, std::move(args));
}

Expr IRMutator::mutateLet(const Let* op) {
  Expr value = mutate(op->value);
  Expr body = mutate(op->body);
  if (value.sameAs(op->value) && body.sameAs(op->body))
    return op;
  return Let::make(op->var, std::move(value), std::move(body));
}

Stmt IRMutator::mutateFor(const For* op) {
  Expr min = mutate(op->min);
  Expr extent = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (min.sameAs(op->min) && extent.sameAs(op->extent) && body.sameAs(op->body))
    return op;
  return For::make(op->var, std::move(min), std::move(extent), op->forKind, std::move(body));
}

Stmt IRMutator::mutateStore(const Store* op) {
  Expr index = mutate(op->index);
  Expr value = mutate(op->value);
  if (index.sameAs(op->index) && value.sameAs(op->value))
    return op;
  return Store::make(op->buffer, std::move(index), std::move(value));
}

Buffer IRMutator::mutateBufferShape(const Buffer& buffer) {
  bool changed = false;
  std::vector<Expr> shape = mutate(buffer.shape(), &changed);
  std::vector<Expr> strides = mutate(buffer.strides(), &changed);
  if (!changed)
    return buffer;
  return Buffer::make(buffer.name(), buffer.elementType(), std::move(shape), std::move(strides));
}

Stmt IRMutator::mutateAllocate(const Allocate* op) {
  Buffer buffer = mutateBufferShape(op->buffer);
  Stmt body = mutate(op->body);
  if (buffer.sameAs(op->buffer) && body.sameAs(op->body))
    return op;
  return Allocate::make(std::move(buffer), op->scope, std::move(body));
}

Stmt IRMutator::mutateBlock(const Block* op) {
  bool changed = false;
  std::vector<Stmt> stmts;
  stmts.reserve(op->stmts.size());
  for (const Stmt& s : op->stmts) {
    stmts.push_back(mutate(s));
    if (!stmts.back().sameAs(s))
      changed = true;
  }
  if (!changed)
    return op;
  return Block::make(std::move(stmts));
}

Stmt IRMutator::mutateIfThenElse(const IfThenElse* op) {
  Expr condition = mutate(op->condition);
  Stmt thenCase = mutate(op->thenCase);
  Stmt elseCase = mutate(op->elseCase);
  if (condition.sameAs(op->condition) && thenCase.sameAs(op->thenCase) &&
      elseCase.sameAs(op->elseCase))
    return op;
  return IfThenElse::make(std::move(condition), std::move(thenCase), std::move(elseCase));
}

Stmt IRMutator::mutateLetStmt(const LetStmt* op) {
  Expr value = mutate(op->value);
  Stmt body = mutate(op->body);
  if (value.sameAs(op->value) && body.sameAs(op->body))
    return op;
  return LetStmt::make(op->var, std::move(value), std::move(body));
}

Stmt IRMutator::mutateEvaluate(const Evaluate* op) {
  Expr value = mutate(op->value);
  if (value.sameAs(op->value))
    return op;
  return Evaluate::make(std::move(value));
}

Stmt IRMutator::mutateBarrier(const Barrier* op) {
  return op;
}

} // namespace lathe::loop
