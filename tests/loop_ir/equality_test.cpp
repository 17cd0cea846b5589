// Structural equality and hashing.

#include "engine/loop_ir/ir_equality.h"
#include "test_kernels.h"

#include <gtest/gtest.h>
#include <limits>
#include <unordered_set>

namespace lathe::loop {
namespace {

using testing::convReluKernel;
using testing::indexVar;

TEST(LoopEquality, SeparatelyBuiltTreesAreEqual) {
  Expr a = indexVar("x") * 4 + indexVar("y");
  Expr b = indexVar("x") * 4 + indexVar("y");
  EXPECT_FALSE(a.sameAs(b));
  EXPECT_TRUE(equal(a, b));
  EXPECT_EQ(structuralHash(a), structuralHash(b));
  EXPECT_TRUE(equal(convReluKernel().body, convReluKernel().body));
  EXPECT_EQ(structuralHash(convReluKernel().body), structuralHash(convReluKernel().body));
}

TEST(LoopEquality, DifferencesAreSeen) {
  Expr x = indexVar("x");
  EXPECT_FALSE(equal(x + 1, x + 2));
  EXPECT_FALSE(equal(x + 1, x - 1));
  EXPECT_FALSE(equal(x + 1, 1 + x)); // structure, not algebra
  EXPECT_FALSE(equal(x, indexVar("y")));
  EXPECT_FALSE(equal(x, Var::make(i32(), "x")));             // same name, other type
  EXPECT_FALSE(equal(makeIndex(1), IntImm::make(i32(), 1))); // same value, other type
  EXPECT_FALSE(equal(Ramp::make(x, makeIndex(1), 4), Ramp::make(x, makeIndex(1), 8)));
  EXPECT_FALSE(equal(Call::make(Intrinsic::Exp, {makeConst(f32(), 1.0)}),
                     Call::make(Intrinsic::Log, {makeConst(f32(), 1.0)})));
  EXPECT_FALSE(equal(x, Expr()));
  EXPECT_TRUE(equal(Expr(), Expr()));
}

TEST(LoopEquality, FloatsCompareByBits) {
  Expr zero = makeConst(f32(), 0.0);
  Expr negativeZero = makeConst(f32(), -0.0);
  Expr nan = makeConst(f32(), std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(equal(zero, negativeZero));
  EXPECT_TRUE(equal(nan, makeConst(f32(), std::numeric_limits<double>::quiet_NaN())));
}

TEST(LoopEquality, VarsAndBuffersMatchByName) {
  Buffer a1 = Buffer::make("a", f32(), makeShape({4}));
  Buffer a2 = Buffer::make("a", f32(), makeShape({8})); // another handle, same name
  Expr i = indexVar("i");
  EXPECT_TRUE(equal(Load::make(a1, i), Load::make(a2, i)));
  Buffer b = Buffer::make("b", f32(), makeShape({4}));
  EXPECT_FALSE(equal(Load::make(a1, i), Load::make(b, i)));
}

TEST(LoopEquality, StatementsCompareByStructure) {
  Buffer out = Buffer::make("out", i64(), makeShape({4}));
  Expr i = indexVar("i");
  auto loop = [&](ForKind kind, int extent) {
    return For::make(i, makeIndex(0), makeIndex(extent), kind, Store::make(out, i, i * 2));
  };
  EXPECT_TRUE(equal(loop(ForKind::Serial, 4), loop(ForKind::Serial, 4)));
  EXPECT_FALSE(equal(loop(ForKind::Serial, 4), loop(ForKind::Parallel, 4)));
  EXPECT_FALSE(equal(loop(ForKind::Serial, 4), loop(ForKind::Serial, 3)));
  EXPECT_NE(structuralHash(loop(ForKind::Serial, 4)), structuralHash(loop(ForKind::Parallel, 4)));
}

TEST(LoopEquality, UnorderedSetDeduplicates) {
  std::unordered_set<Expr, StructuralHash, StructuralEqual> set;
  Expr x = indexVar("x");
  set.insert(x * 2);
  set.insert(x * 2);
  set.insert(indexVar("x") * 2);
  set.insert(x * 3);
  EXPECT_EQ(set.size(), 2u);
}

} // namespace
} // namespace lathe::loop
