#pragma once
// IRVisitor: walks an Expr/Stmt tree; every hook visits the node's children by default, so a
// pass overrides only the nodes it cares about and calls the base hook to keep recursing.
//
// Bound variables (the `var` of Let, LetStmt and For) are definitions, not uses, and are not
// visited. A Load visits its index, not its buffer's shape; an Allocate visits its buffer's
// shape and strides (they may depend on outer loop variables), then its body.

#include "engine/loop_ir/ir.h"

namespace lathe::loop {

class IRVisitor {
public:
  virtual ~IRVisitor() = default;

  // Dispatch on the node kind; undefined handles are skipped.
  void visit(const Expr& e);
  void visit(const Stmt& s);

protected:
  virtual void visitIntImm(const IntImm* op);
  virtual void visitFloatImm(const FloatImm* op);
  virtual void visitVar(const Var* op);
  virtual void visitAdd(const Add* op);
  virtual void visitSub(const Sub* op);
  virtual void visitMul(const Mul* op);
  virtual void visitDiv(const Div* op);
  virtual void visitMod(const Mod* op);
  virtual void visitFloorDiv(const FloorDiv* op);
  virtual void visitFloorMod(const FloorMod* op);
  virtual void visitMin(const Min* op);
  virtual void visitMax(const Max* op);
  virtual void visitEQ(const EQ* op);
  virtual void visitNE(const NE* op);
  virtual void visitLT(const LT* op);
  virtual void visitLE(const LE* op);
  virtual void visitGT(const GT* op);
  virtual void visitGE(const GE* op);
  virtual void visitAnd(const And* op);
  virtual void visitOr(const Or* op);
  virtual void visitNot(const Not* op);
  virtual void visitSelect(const Select* op);
  virtual void visitCast(const Cast* op);
  virtual void visitLoad(const Load* op);
  virtual void visitRamp(const Ramp* op);
  virtual void visitBroadcast(const Broadcast* op);
  virtual void visitCall(const Call* op);
  virtual void visitLet(const Let* op);

  virtual void visitFor(const For* op);
  virtual void visitStore(const Store* op);
  virtual void visitAllocate(const Allocate* op);
  virtual void visitBlock(const Block* op);
  virtual void visitIfThenElse(const IfThenElse* op);
  virtual void visitLetStmt(const LetStmt* op);
  virtual void visitEvaluate(const Evaluate* op);
  virtual void visitBarrier(const Barrier* op);

  // Shared default for the binary nodes (Add .. Or): visits a, then b.
  virtual void visitBinary(const BinaryExprNode* op);
};

} // namespace lathe::loop
