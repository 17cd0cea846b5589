// IRVisitor reaches every node; IRMutator rebuilds only what changed.

#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/substitute.h"
#include "engine/support/diagnostics.h"
#include "test_kernels.h"

#include <gtest/gtest.h>
#include <map>

namespace lathe::loop {
namespace {

using testing::convReluKernel;
using testing::indexVar;

class NodeCounter : public IRVisitor {
public:
  std::map<std::string, int> exprs;
  std::map<std::string, int> stmts;
  std::map<std::string, int> vars; // uses per variable name

protected:
  void visitVar(const Var* op) override {
    ++vars[op->name];
    IRVisitor::visitVar(op);
  }
  void visitLoad(const Load* op) override {
    ++exprs["Load"];
    IRVisitor::visitLoad(op);
  }
  void visitFloatImm(const FloatImm* op) override { ++exprs["FloatImm"]; }
  void visitBinary(const BinaryExprNode* op) override {
    ++exprs[exprKindName(op->kind)];
    IRVisitor::visitBinary(op);
  }
  void visitFor(const For* op) override {
    ++stmts["For"];
    IRVisitor::visitFor(op);
  }
  void visitStore(const Store* op) override {
    ++stmts["Store"];
    IRVisitor::visitStore(op);
  }
};

TEST(LoopVisitor, CountsEveryNodeOfTheConvKernel) {
  NodeCounter counter;
  counter.visit(convReluKernel().body);
  EXPECT_EQ(counter.stmts["For"], 6);
  EXPECT_EQ(counter.stmts["Store"], 3);
  EXPECT_EQ(counter.exprs["Load"], 4); // acc twice, data, w
  EXPECT_EQ(counter.exprs["FloatImm"], 2);
  EXPECT_EQ(counter.exprs["Max"], 1);
  EXPECT_EQ(counter.exprs["Mul"], 8);  // the product, 2 in data's index, 3 in w's, 2 in out's
  EXPECT_EQ(counter.exprs["Add"], 10); // 1 acc + 4 data + 3 w + 2 out
  // Loop variables are counted at their uses only, not where the loop binds them.
  EXPECT_EQ(counter.vars["co"], 2);
  EXPECT_EQ(counter.vars["ky"], 2);
  EXPECT_EQ(counter.vars["x"], 2);
}

TEST(LoopVisitor, AllocateVisitsItsShape) {
  Expr n = indexVar("n");
  Buffer tmp = Buffer::make("tmp", f32(), {n * 4});
  NodeCounter counter;
  counter.visit(Allocate::make(tmp, MemoryScope::Heap, noOp()));
  EXPECT_EQ(counter.vars["n"], 1);
}

// Replaces f32 0.0 by 1.0 and leaves everything else alone.
class ZeroToOne : public IRMutator {
protected:
  Expr mutateFloatImm(const FloatImm* op) override {
    return op->value == 0.0 ? FloatImm::make(op->type, 1.0) : Expr(op);
  }
};

TEST(LoopMutator, IdentityKeepsEveryPointer) {
  Kernel k = convReluKernel();
  IRMutator identity;
  EXPECT_TRUE(identity.mutate(k.body).sameAs(k.body));
  Expr e = indexVar("a") + 1;
  EXPECT_TRUE(identity.mutate(e).sameAs(e));
}

TEST(LoopMutator, UnchangedSubtreesKeepTheirPointer) {
  Kernel k = convReluKernel();
  Stmt result = ZeroToOne().mutate(k.body);
  ASSERT_FALSE(result.sameAs(k.body));

  // Walk down to the allocate's block in both trees.
  auto block = [](const Stmt& s) {
    const For* co = s.as<For>();
    const For* y = co->body.as<For>();
    const For* x = y->body.as<For>();
    return x->body.as<Allocate>()->body.as<Block>();
  };
  const Block* before = block(k.body);
  const Block* after = block(result);
  EXPECT_FALSE(after->stmts[0].sameAs(before->stmts[0])); // acc[0] = 0.0f changed
  EXPECT_TRUE(after->stmts[1].sameAs(before->stmts[1]));  // the reduction did not
  EXPECT_FALSE(after->stmts[2].sameAs(before->stmts[2])); // max(acc[0], 0.0f) changed
  // Inside a changed store, the untouched index is shared.
  EXPECT_TRUE(after->stmts[2].as<Store>()->index.sameAs(before->stmts[2].as<Store>()->index));
  EXPECT_EQ(toString(after->stmts[2]), "out[co*64 + y*8 + x] = max(acc[0], 1.0f)\n");
}

TEST(LoopMutator, RebuildsThroughMakeSoTypesAreRechecked) {
  class IndexToFloat : public IRMutator {
  protected:
    Expr mutateVar(const Var* op) override { return Var::make(f32(), op->name); }
  };
  Expr e = indexVar("a") + indexVar("b");
  EXPECT_NO_THROW(IndexToFloat().mutate(e)); // both operands change type together
  Expr mixed = indexVar("a") + 1;
  EXPECT_THROW(IndexToFloat().mutate(mixed), Error);
}

TEST(LoopSubstitute, ReplacesFreeUsesOnly) {
  Expr x = indexVar("x"), y = indexVar("y");
  EXPECT_EQ(toString(substitute(x * 2 + y, "x", y + 1)), "(y + 1)*2 + y");
  EXPECT_EQ(toString(substitute(x + Let::make(x, y, x * 3), x, makeIndex(7))),
            "7 + (let x = y in x*3)");
  Expr unchanged = y + 1;
  EXPECT_TRUE(substitute(unchanged, "x", makeIndex(0)).sameAs(unchanged));
  EXPECT_TRUE(usesVar(x + y, "x"));
  EXPECT_FALSE(usesVar(Let::make(x, y, x + 1), "x"));
  EXPECT_THROW(substitute(x, "x", makeConst(f32(), 1.0)), Error);

  Buffer out = Buffer::make("out", i64(), makeShape({4}));
  Stmt loop = For::make(x, y, makeIndex(4), ForKind::Serial, Store::make(out, x, y));
  EXPECT_EQ(toString(substitute(loop, {{"x", makeIndex(9)}, {"y", makeIndex(1)}})),
            "for (x, 1, 4) {\n  out[x] = 1\n}\n");
}

} // namespace
} // namespace lathe::loop
