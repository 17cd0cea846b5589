// The simplifier's entry points, vector constructors, calls, lets and statement rules.

#include "engine/loop_ir/simplify.h"

#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify_internal.h"
#include "engine/loop_ir/substitute.h"
#include "engine/support/diagnostics.h"

namespace lathe::loop {

namespace simplify_detail {

namespace {

// Values cheap enough to copy into every use: substituting them exposes more folding
// (ramp arithmetic in particular) and costs nothing at run time.
bool isCheapToCopy(const Expr& e) {
  if (isConst(e) || e.as<Var>())
    return true;
  if (const Broadcast* b = e.as<Broadcast>())
    return isCheapToCopy(b->value);
  if (const Ramp* r = e.as<Ramp>())
    return isCheapToCopy(r->base) && isConst(r->stride);
  return false;
}

// True when e reads no variable, memory or function: a constant expression, which folding
// leaves unfolded only when its value is undefined (a signed overflow, a division by zero).
bool isClosed(const Expr& e) {
  class Reads : public IRVisitor {
  public:
    bool found = false;

  protected:
    void visitVar(const Var*) override { found = true; }
    void visitLoad(const Load*) override { found = true; }
    void visitCall(const Call*) override { found = true; }
  } reads;
  reads.visit(e);
  return !reads.found;
}

} // namespace

Expr Simplifier::broadcast(const Expr& value, int lanes) {
  return Broadcast::make(value, lanes);
}

Expr Simplifier::ramp(const Expr& base, const Expr& stride, int lanes) {
  std::int64_t s = 0;
  if (constInt(stride, &s) && s == 0) // ramp(x, 0, n) -> broadcast(x, n)
    return broadcast(base, lanes);
  return Ramp::make(base, stride, lanes);
}

Expr Simplifier::mutateRamp(const Ramp* op) {
  Expr base = mutate(op->base);
  Expr stride = mutate(op->stride);
  if (base.sameAs(op->base) && stride.sameAs(op->stride) && !isConstValue(stride, 0))
    return op;
  return ramp(base, stride, op->lanes);
}

Expr Simplifier::mutateCall(const Call* op) {
  bool changed = false;
  std::vector<Expr> args = mutate(op->args, &changed);
  if (Expr folded = foldCall(op, args); folded.defined())
    return folded;
  if (!changed)
    return op;
  if (op->op == Intrinsic::Extern)
    return Call::makeExtern(op->type, op->name, std::move(args));
  return Call::make(op->op, std::move(args));
}

Expr Simplifier::mutateLet(const Let* op) {
  Expr value = mutate(op->value);
  if (isCheapToCopy(value))
    return mutate(substitute(op->body, op->name(), value));
  Expr body = mutate(op->body);
  if (!usesVar(body, op->name()))
    return body;
  if (value.sameAs(op->value) && body.sameAs(op->body))
    return op;
  return Let::make(op->var, std::move(value), std::move(body));
}

Stmt Simplifier::mutateLetStmt(const LetStmt* op) {
  Expr value = mutate(op->value);
  if (isCheapToCopy(value))
    return mutate(substitute(op->body, op->name(), value));
  Stmt body = mutate(op->body);
  if (!usesVar(body, op->name()))
    return body;
  if (value.sameAs(op->value) && body.sameAs(op->body))
    return op;
  return LetStmt::make(op->var, std::move(value), std::move(body));
}

Stmt Simplifier::mutateFor(const For* op) {
  Expr min = mutate(op->min);
  Expr extent = mutate(op->extent);
  // A trip count computed from constants that does not fold would wrap at run time.
  LATHE_CHECK(isConst(extent) || !isClosed(extent),
              "the extent of loop '" + op->name() +
                  "' overflows or divides by zero: " + toString(extent));
  std::int64_t trips = 0;
  if (constInt(extent, &trips) && trips <= 0)
    return noOp();
  if (constInt(extent, &trips) && trips == 1) // one iteration: the body at var = min
    return mutate(substitute(op->body, op->name(), min));
  Stmt body = mutate(op->body);
  if (isNoOp(body))
    return noOp();
  if (min.sameAs(op->min) && extent.sameAs(op->extent) && body.sameAs(op->body))
    return op;
  return For::make(op->var, std::move(min), std::move(extent), op->forKind, std::move(body));
}

Stmt Simplifier::mutateAllocate(const Allocate* op) {
  Buffer buffer = mutateBufferShape(op->buffer);
  Stmt body = mutate(op->body);
  if (isNoOp(body))
    return noOp();
  if (buffer.sameAs(op->buffer) && body.sameAs(op->body))
    return op;
  return Allocate::make(std::move(buffer), op->scope, std::move(body));
}

Stmt Simplifier::mutateBlock(const Block* op) {
  bool changed = false;
  std::vector<Stmt> kept;
  kept.reserve(op->stmts.size());
  for (const Stmt& s : op->stmts) {
    Stmt r = mutate(s);
    changed = changed || !r.sameAs(s);
    if (isNoOp(r))
      changed = true;
    else
      kept.push_back(std::move(r));
  }
  if (!changed)
    return op;
  return Block::make(std::move(kept));
}

Stmt Simplifier::mutateIfThenElse(const IfThenElse* op) {
  Expr condition = mutate(op->condition);
  if (isConstBool(condition, true))
    return mutate(op->thenCase);
  if (isConstBool(condition, false))
    return op->elseCase.defined() ? mutate(op->elseCase) : noOp();
  Stmt thenCase = mutate(op->thenCase);
  Stmt elseCase = mutate(op->elseCase);
  if (elseCase.defined() && isNoOp(elseCase))
    elseCase = Stmt();
  if (isNoOp(thenCase)) {
    if (!elseCase.defined())
      return noOp();
    return IfThenElse::make(notOf(condition), elseCase); // if (c) {} else {s} -> if (!c) {s}
  }
  if (condition.sameAs(op->condition) && thenCase.sameAs(op->thenCase) &&
      elseCase.sameAs(op->elseCase))
    return op;
  return IfThenElse::make(std::move(condition), std::move(thenCase), std::move(elseCase));
}

Stmt Simplifier::mutateEvaluate(const Evaluate* op) {
  Expr value = mutate(op->value);
  if (isConst(value)) // a constant has no effect: the canonical no-op
    return isNoOp(Stmt(op)) && equal(op->value, makeIndex(0)) ? Stmt(op) : noOp();
  return value.sameAs(op->value) ? Stmt(op) : Evaluate::make(std::move(value));
}

} // namespace simplify_detail

Expr simplify(const Expr& e) {
  return simplify_detail::Simplifier().mutate(e);
}

Stmt simplify(const Stmt& s) {
  return simplify_detail::Simplifier().mutate(s);
}

Kernel simplify(const Kernel& kernel) {
  Kernel result = kernel;
  result.body = simplify(kernel.body);
  return result;
}

} // namespace lathe::loop
