#include "engine/loop_ir/ir_visitor.h"

namespace lathe::loop {

void IRVisitor::visit(const Expr& e) {
  if (!e.defined())
    return;
  switch (e.kind()) {
#define LATHE_LOOP_DISPATCH(name)                                                                  \
  case ExprKind::name:                                                                             \
    return visit##name(static_cast<const name*>(e.get()));
    LATHE_LOOP_EXPR_NODES(LATHE_LOOP_DISPATCH)
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined())
    return;
  switch (s.kind()) {
#undef LATHE_LOOP_DISPATCH
#define LATHE_LOOP_DISPATCH(name)                                                                  \
  case StmtKind::name:                                                                             \
    return visit##name(static_cast<const name*>(s.get()));
    LATHE_LOOP_STMT_NODES(LATHE_LOOP_DISPATCH)
#undef LATHE_LOOP_DISPATCH
  }
}

void IRVisitor::visitIntImm(const IntImm*) {}
void IRVisitor::visitFloatImm(const FloatImm*) {}
void IRVisitor::visitVar(const Var*) {}

void IRVisitor::visitBinary(const BinaryExprNode* op) {
  visit(op->a);
  visit(op->b);
}

void IRVisitor::visitAdd(const Add* op) {
  visitBinary(op);
}
void IRVisitor::visitSub(const Sub* op) {
  visitBinary(op);
}
void IRVisitor::visitMul(const Mul* op) {
  visitBinary(op);
}
void IRVisitor::visitDiv(const Div* op) {
  visitBinary(op);
}
void IRVisitor::visitMod(const Mod* op) {
  visitBinary(op);
}
void IRVisitor::visitFloorDiv(const FloorDiv* op) {
  visitBinary(op);
}
void IRVisitor::visitFloorMod(const FloorMod* op) {
  visitBinary(op);
}
void IRVisitor::visitMin(const Min* op) {
  visitBinary(op);
}
void IRVisitor::visitMax(const Max* op) {
  visitBinary(op);
}
void IRVisitor::visitEQ(const EQ* op) {
  visitBinary(op);
}
void IRVisitor::visitNE(const NE* op) {
  visitBinary(op);
}
void IRVisitor::visitLT(const LT* op) {
  visitBinary(op);
}
void IRVisitor::visitLE(const LE* op) {
  visitBinary(op);
}
void IRVisitor::visitGT(const GT* op) {
  visitBinary(op);
}
void IRVisitor::visitGE(const GE* op) {
  visitBinary(op);
}
void IRVisitor::visitAnd(const And* op) {
  visitBinary(op);
}
void IRVisitor::visitOr(const Or* op) {
  visitBinary(op);
}

void IRVisitor::visitNot(const Not* op) {
  visit(op->a);
}

void IRVisitor::visitSelect(const Select* op) {
  visit(op->condition);
  visit(op->trueValue);
  visit(op->falseValue);
}

void IRVisitor::visitCast(const Cast* op) {
  visit(op->value);
}
void IRVisitor::visitLoad(const Load* op) {
  visit(op->index);
}

void IRVisitor::visitRamp(const Ramp* op) {
  visit(op->base);
  visit(op->stride);
}

void IRVisitor::visitBroadcast(const Broadcast* op) {
  visit(op->value);
}

void IRVisitor::visitCall(const Call* op) {
  for (const Expr& arg : op->args)
    visit(arg);
}

void IRVisitor::visitLet(const Let* op) {
  visit(op->value);
  visit(op->body);
}

void IRVisitor::visitFor(const For* op) {
  visit(op->min);
  visit(op->extent);
  visit(op->body);
}

void IRVisitor::visitStore(const Store* op) {
  visit(op->index);
  visit(op->value);
}

void IRVisitor::visitAllocate(const Allocate* op) {
  for (const Expr& e : op->buffer.shape())
    visit(e);
  for (const Expr& e : op->buffer.strides())
    visit(e);
  visit(op->body);
}

void IRVisitor::visitBlock(const Block* op) {
  for (const Stmt& s : op->stmts)
    visit(s);
}

void IRVisitor::visitIfThenElse(const IfThenElse* op) {
  visit(op->condition);
  visit(op->thenCase);
  visit(op->elseCase);
}

void IRVisitor::visitLetStmt(const LetStmt* op) {
  visit(op->value);
  visit(op->body);
}

void IRVisitor::visitEvaluate(const Evaluate* op) {
  visit(op->value);
}

void IRVisitor::visitBarrier(const Barrier*) {}

} // namespace lathe::loop
