#pragma once
// Shared by the simplifier's files (simplify*.cpp): constant folding and the Simplifier
// mutator, whose rules are split by concern: arithmetic, logic/casts, statements.

#include "engine/loop_ir/ir_mutator.h"

namespace lathe::loop::simplify_detail {

// Constant folding of constant operands (immediates or broadcasts of them). Each returns an
// undefined Expr when the result would not be exact or is undefined (integer division by
// zero, signed overflow, NaN in min/max, out-of-range float->int casts, f16 arithmetic).
Expr foldBinary(ExprKind kind, const Expr& a, const Expr& b);
Expr foldCast(Type type, const Expr& value);
Expr foldCall(const Call* call, const std::vector<Expr>& args);

// The simplifier. Each rule function takes already simplified operands and returns a
// simplified result; rewrite*() return an undefined Expr when no rule applies.
class Simplifier : public IRMutator {
public:
  Expr binary(ExprKind kind, const Expr& a, const Expr& b);
  Expr add(const Expr& a, const Expr& b) { return binary(ExprKind::Add, a, b); }
  Expr sub(const Expr& a, const Expr& b) { return binary(ExprKind::Sub, a, b); }
  Expr mul(const Expr& a, const Expr& b) { return binary(ExprKind::Mul, a, b); }
  Expr notOf(const Expr& a);
  Expr broadcast(const Expr& value, int lanes);
  Expr ramp(const Expr& base, const Expr& stride, int lanes);

protected:
  Expr mutateBinary(const BinaryExprNode* op) override;
  Expr mutateNot(const Not* op) override;
  Expr mutateSelect(const Select* op) override;
  Expr mutateCast(const Cast* op) override;
  Expr mutateRamp(const Ramp* op) override;
  Expr mutateCall(const Call* op) override;
  Expr mutateLet(const Let* op) override;

  Stmt mutateFor(const For* op) override;
  Stmt mutateAllocate(const Allocate* op) override;
  Stmt mutateBlock(const Block* op) override;
  Stmt mutateIfThenElse(const IfThenElse* op) override;
  Stmt mutateLetStmt(const LetStmt* op) override;
  Stmt mutateEvaluate(const Evaluate* op) override;

private:
  // Rules for every binary kind (folding, operand order, broadcasts), then per kind.
  Expr rewriteBinary(ExprKind kind, const Expr& a, const Expr& b);
  // simplify_arith.cpp
  Expr rewriteAdd(const Expr& a, const Expr& b);
  Expr rewriteSub(const Expr& a, const Expr& b);
  Expr rewriteMul(const Expr& a, const Expr& b);
  Expr rewriteDiv(ExprKind kind, const Expr& a, const Expr& b); // Div, FloorDiv
  Expr rewriteMod(ExprKind kind, const Expr& a, const Expr& b); // Mod, FloorMod
  Expr rewriteMinMax(ExprKind kind, const Expr& a, const Expr& b);
  // simplify_logic.cpp
  Expr rewriteCompare(ExprKind kind, const Expr& a, const Expr& b);
  Expr rewriteLogical(ExprKind kind, const Expr& a, const Expr& b); // And, Or
  Expr rewriteNot(const Expr& a);
  Expr rewriteSelect(const Expr& c, const Expr& t, const Expr& f);
  Expr rewriteCast(Type type, const Expr& value);
};

// Small queries the rule files share.
bool isCommutative(ExprKind kind);
// The comparison with its operands swapped: LT <-> GT, LE <-> GE; EQ, NE unchanged.
ExprKind flipComparison(ExprKind kind);
// True for a constant bool (scalar or broadcast) of the given value.
bool isConstBool(const Expr& e, bool value);
// The integer constant of e (scalar or broadcast) when e is one.
bool constInt(const Expr& e, std::int64_t* value);

} // namespace lathe::loop::simplify_detail
