#pragma once
// IRMutator: rewrites an Expr/Stmt tree bottom-up. Every hook mutates the node's children by
// default and rebuilds the node (through make(), so types are re-checked) only when a child
// changed; otherwise it returns the very same handle, so unchanged subtrees are shared and
// `result.sameAs(input)` tells a pass whether it changed anything.
//
// Like IRVisitor, bound variables are not mutated, a Load keeps its buffer, and an Allocate
// mutates its buffer's shape and strides (making a new Buffer of the same name if they change).

#include "engine/loop_ir/ir.h"

#include <vector>

namespace lathe::loop {

class IRMutator {
public:
  virtual ~IRMutator() = default;

  // Dispatch on the node kind; an undefined handle comes back undefined.
  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);
  // Mutates every element; `changed` is set when any element changed.
  std::vector<Expr> mutate(const std::vector<Expr>& exprs, bool* changed);

protected:
  virtual Expr mutateIntImm(const IntImm* op);
  virtual Expr mutateFloatImm(const FloatImm* op);
  virtual Expr mutateVar(const Var* op);
  virtual Expr mutateAdd(const Add* op);
  virtual Expr mutateSub(const Sub* op);
  virtual Expr mutateMul(const Mul* op);
  virtual Expr mutateDiv(const Div* op);
  virtual Expr mutateMod(const Mod* op);
  virtual Expr mutateFloorDiv(const FloorDiv* op);
  virtual Expr mutateFloorMod(const FloorMod* op);
  virtual Expr mutateMin(const Min* op);
  virtual Expr mutateMax(const Max* op);
  virtual Expr mutateEQ(const EQ* op);
  virtual Expr mutateNE(const NE* op);
  virtual Expr mutateLT(const LT* op);
  virtual Expr mutateLE(const LE* op);
  virtual Expr mutateGT(const GT* op);
  virtual Expr mutateGE(const GE* op);
  virtual Expr mutateAnd(const And* op);
  virtual Expr mutateOr(const Or* op);
  virtual Expr mutateNot(const Not* op);
  virtual Expr mutateSelect(const Select* op);
  virtual Expr mutateCast(const Cast* op);
  virtual Expr mutateLoad(const Load* op);
  virtual Expr mutateRamp(const Ramp* op);
  virtual Expr mutateBroadcast(const Broadcast* op);
  virtual Expr mutateCall(const Call* op);
  virtual Expr mutateLet(const Let* op);

  virtual Stmt mutateFor(const For* op);
  virtual Stmt mutateStore(const Store* op);
  virtual Stmt mutateAllocate(const Allocate* op);
  virtual Stmt mutateBlock(const Block* op);
  virtual Stmt mutateIfThenElse(const IfThenElse* op);
  virtual Stmt mutateLetStmt(const LetStmt* op);
  virtual Stmt mutateEvaluate(const Evaluate* op);
  virtual Stmt mutateBarrier(const Barrier* op);

  // Shared default of the binary hooks (Add .. Or): mutates a and b, rebuilds a node of the
  // same kind. Override it to treat every binary node alike.
  virtual Expr mutateBinary(const BinaryExprNode* op);
  // Mutates an Allocate buffer's shape and strides; the same Buffer when they are unchanged.
  Buffer mutateBufferShape(const Buffer& buffer);
};

} // namespace lathe::loop
