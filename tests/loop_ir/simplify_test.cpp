// Simplifier cases: one rewrite each, checked on the printed result.

#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"
#include "engine/support/diagnostics.h"
#include "test_kernels.h"

#include <gtest/gtest.h>
#include <limits>

namespace lathe::loop {
namespace {

using testing::convReluKernel;
using testing::indexVar;

class Simplify : public ::testing::Test {
protected:
  static std::string show(const Expr& e) { return toString(simplify(e)); }
  static std::string show(const Stmt& s) { return toString(simplify(s)); }
  static Expr f32c(double v) { return makeConst(f32(), v); }

  Expr x = indexVar("x"), y = indexVar("y");
  Expr f = Var::make(f32(), "f"), g = Var::make(f32(), "g");
  Expr u = Var::make(u32(), "u");
  Expr b = Var::make(boolean(), "b");
  Buffer out = Buffer::make("out", f32(), makeShape({64}));
};

// Integer constant folding and identities.
TEST_F(Simplify, FoldsIntegerConstants) {
  EXPECT_EQ(show(makeIndex(2) * 3 + 4), "10");
}
TEST_F(Simplify, QuotientTimesDivisorPlusRemainderIsTheDividend) {
  EXPECT_EQ(show(x / 16 * 16 + x % 16), "x");
  EXPECT_EQ(show(floorDiv(x, 16) * 16 + floorMod(x, 16)), "x");
  EXPECT_EQ(show(x / 16 * 8 + x % 16), "x/16*8 + x%16");
  EXPECT_EQ(show(floorDiv(x, 16) * 16 + x % 16), "floordiv(x, 16)*16 + x%16");
}

// Three loops fused: x / 56 / 56 folds into x / 3136 before the digits are put together.
TEST_F(Simplify, DigitsOfFusedLoopsRecombine) {
  EXPECT_EQ(show((x / 56 / 56 * 56 + x / 56 % 56) * 56 + x % 56), "x");
  EXPECT_EQ(
      show((floorDiv(floorDiv(x, 7), 3) * 3 + floorMod(floorDiv(x, 7), 3)) * 7 + floorMod(x, 7)),
      "x");
  // Divisors that do not multiply up stay as they are.
  EXPECT_EQ(show(x / 100 * 56 + x / 56 % 56), "x/100*56 + x/56%56");
}

TEST_F(Simplify, DivisionTruncatesTowardZero) {
  EXPECT_EQ(show(makeIndex(-7) / 2), "-3");
}
TEST_F(Simplify, ModuloHasTheSignOfTheDividend) {
  EXPECT_EQ(show(makeIndex(-7) % 2), "-1");
}
TEST_F(Simplify, FloorDivisionRoundsDown) {
  EXPECT_EQ(show(floorDiv(makeIndex(-7), 2)), "-4");
}
TEST_F(Simplify, FloorModHasTheSignOfTheDivisor) {
  EXPECT_EQ(show(floorMod(makeIndex(-7), 2)), "1");
}
TEST_F(Simplify, DivisionByZeroIsLeftAlone) {
  EXPECT_EQ(show(makeIndex(1) / 0), "1/0");
}
TEST_F(Simplify, SignedOverflowIsNotFolded) {
  Expr max32 = IntImm::make(i32(), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(show(max32 + IntImm::make(i32(), 1)), "i32(2147483647) + i32(1)");
}
TEST_F(Simplify, UnsignedArithmeticWraps) {
  EXPECT_EQ(show(IntImm::make(u8(), 250) + IntImm::make(u8(), 10)), "u8(4)");
}
TEST_F(Simplify, AddZero) {
  EXPECT_EQ(show(x + 0), "x");
}
TEST_F(Simplify, MultiplyByOne) {
  EXPECT_EQ(show(1 * x), "x");
}
TEST_F(Simplify, IntegerMultiplyByZero) {
  EXPECT_EQ(show(x * 0), "0");
}
TEST_F(Simplify, SubtractSelf) {
  EXPECT_EQ(show(x - x), "0");
}

// Float folding never changes rounding.
TEST_F(Simplify, FoldsF32InF32) {
  EXPECT_EQ(show(f32c(0.1) + f32c(0.2)), "0.3f");
}
TEST_F(Simplify, FoldsF64InF64) {
  EXPECT_EQ(show(makeConst(f64(), 0.1) + makeConst(f64(), 0.2)), "0.30000000000000004");
}
TEST_F(Simplify, FloatTimesOneIsExact) {
  EXPECT_EQ(show(f * 1.0), "f");
}
TEST_F(Simplify, FloatPlusZeroIsKept) {
  EXPECT_EQ(show(f + 0.0), "f + 0.0f");
}
TEST_F(Simplify, FloatPlusNegativeZeroIsExact) {
  EXPECT_EQ(show(f + -0.0), "f");
}
TEST_F(Simplify, FloatMinusZeroIsExact) {
  EXPECT_EQ(show(f - 0.0), "f");
}
TEST_F(Simplify, FloatTimesZeroIsKept) {
  EXPECT_EQ(show(f * 0.0), "f*0.0f");
}
TEST_F(Simplify, FloatSubtractSelfIsKept) {
  EXPECT_EQ(show(f - f), "f - f");
}
TEST_F(Simplify, FloatSumsAreNotReassociated) {
  EXPECT_EQ(show((f + 1.0) + 2.0), "f + 1.0f + 2.0f");
}
TEST_F(Simplify, MinWithNaNIsLeftToRunTime) {
  Expr nan = f32c(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(show(min(nan, f32c(1.0))), "min(f32(nan), 1.0f)");
}

// Canonical order and reassociation.
TEST_F(Simplify, ConstantsGoRight) {
  EXPECT_EQ(show(3 + x), "x + 3");
}
TEST_F(Simplify, ConstantChainsCombine) {
  EXPECT_EQ(show((x + 2) + 3), "x + 5");
}
TEST_F(Simplify, ConstantsMoveOutOfSums) {
  EXPECT_EQ(show((x + 2) + y + 3), "x + y + 5");
}
TEST_F(Simplify, SubtractConstantBecomesAddNegative) {
  EXPECT_EQ(show(x - 3), "x + -3");
}
TEST_F(Simplify, UnsignedSubtractIsKept) {
  EXPECT_EQ(show(u - 3), "u - u32(3)");
}
TEST_F(Simplify, OffsetsCancel) {
  EXPECT_EQ(show((x + 1) - (y + 1)), "x - y");
}
TEST_F(Simplify, AddThenSubtractCancels) {
  EXPECT_EQ(show((x + y) - y), "x");
}
TEST_F(Simplify, ProductsCombine) {
  EXPECT_EQ(show((x * 4) * 8), "x*32");
}
TEST_F(Simplify, ConstantOffsetsDistribute) {
  EXPECT_EQ(show((x + 2) * 3), "x*3 + 6");
}
// Only constant offsets distribute; (x*8 + y)*4 stays factored (no expression growth).
TEST_F(Simplify, IndexMathCollectsConstants) {
  EXPECT_EQ(show(((x + 1) * 8 + (y + 2)) * 4), "(x*8 + y)*4 + 40");
}

// Division by constants in index math.
TEST_F(Simplify, ExactDivisionOfAProduct) {
  EXPECT_EQ(show((x * 6) / 3), "x*2");
}
TEST_F(Simplify, NestedDivisionsCombine) {
  EXPECT_EQ(show(x / 4 / 8), "x/32");
}
TEST_F(Simplify, FloorDivisionSplitsOffMultiples) {
  EXPECT_EQ(show(floorDiv(x * 8 + y, 8)), "x + floordiv(y, 8)");
}
TEST_F(Simplify, FloorModDropsMultiples) {
  EXPECT_EQ(show(floorMod(x * 8 + y + 16, 8)), "floormod(y, 8)");
}
TEST_F(Simplify, ModOfAMultipleIsZero) {
  EXPECT_EQ(show((x * 12) % 4), "0");
}

// Min and max.
TEST_F(Simplify, MinOfConstants) {
  EXPECT_EQ(show(min(makeIndex(3), makeIndex(5))), "3");
}
TEST_F(Simplify, MaxOfSelf) {
  EXPECT_EQ(show(max(x, x)), "x");
}
TEST_F(Simplify, NestedMinCombinesConstants) {
  EXPECT_EQ(show(min(min(x, 4), 2)), "min(x, 2)");
}
TEST_F(Simplify, MinOfOffsetsOfOneValue) {
  EXPECT_EQ(show(min(x + 1, x + 3)), "x + 1");
}
TEST_F(Simplify, ClampThatCollapses) {
  EXPECT_EQ(show(min(max(x, 10), 4)), "4");
}

// Comparisons and logic.
TEST_F(Simplify, ComparisonConstantGoesRight) {
  EXPECT_EQ(show(5 < x), "x > 5");
}
TEST_F(Simplify, ComparisonMovesOffsets) {
  EXPECT_EQ(show(x + 1 < 5), "x < 4");
}
TEST_F(Simplify, ComparisonOfSelf) {
  EXPECT_EQ(show(x < x), "false");
}
TEST_F(Simplify, FloatComparisonOfSelfIsKept) {
  EXPECT_EQ(show(f <= f), "f <= f");
}
TEST_F(Simplify, FloatComparisonOfConstantsFolds) {
  EXPECT_EQ(show(f32c(std::numeric_limits<double>::quiet_NaN()) < f32c(1.0)), "false");
}
TEST_F(Simplify, NotOfIntegerComparisonFlips) {
  EXPECT_EQ(show(!(x < y)), "x >= y");
}
TEST_F(Simplify, NotOfFloatComparisonIsKept) {
  EXPECT_EQ(show(!(f < g)), "!(f < g)");
}
TEST_F(Simplify, AndWithTrue) {
  EXPECT_EQ(show(makeBool(true) && b), "b");
}
TEST_F(Simplify, OrWithTrue) {
  EXPECT_EQ(show(b || makeBool(true)), "true");
}
TEST_F(Simplify, SelectWithConstantCondition) {
  EXPECT_EQ(show(select(x < x, x, y)), "y");
}
TEST_F(Simplify, SelectOfEqualValues) {
  EXPECT_EQ(show(select(x < y, x + 1, 1 + x)), "x + 1");
}

// Casts.
TEST_F(Simplify, CastIntToFloat) {
  EXPECT_EQ(show(cast(f32(), makeIndex(3))), "3.0f");
}
TEST_F(Simplify, CastFloatToIntTruncates) {
  EXPECT_EQ(show(cast(i32(), f32c(-3.7))), "i32(-3)");
}
TEST_F(Simplify, CastNarrowingWraps) {
  EXPECT_EQ(show(cast(u8(), makeIndex(300))), "u8(44)");
}
TEST_F(Simplify, CastOutOfRangeIsKept) {
  EXPECT_EQ(show(cast(i32(), f32c(3e9))), "i32(3e+09f)");
}
TEST_F(Simplify, CastToSameTypeVanishes) {
  EXPECT_EQ(show(cast(i64(), x)), "x");
}
TEST_F(Simplify, CastOfBroadcastMovesInside) {
  EXPECT_EQ(show(cast(f32(4), Broadcast::make(x, 4))), "broadcast(f32(x), 4)");
}

// Vectors.
TEST_F(Simplify, RampPlusBroadcast) {
  EXPECT_EQ(show(Ramp::make(x, makeIndex(1), 8) + Broadcast::make(y, 8)), "ramp(x + y, 1, 8)");
}
TEST_F(Simplify, RampTimesConstant) {
  EXPECT_EQ(show(Ramp::make(x, makeIndex(1), 8) * 4), "ramp(x*4, 4, 8)");
}
TEST_F(Simplify, BroadcastArithmetic) {
  EXPECT_EQ(show(Broadcast::make(x, 4) + Broadcast::make(y, 4)), "broadcast(x + y, 4)");
}
TEST_F(Simplify, RampWithZeroStrideIsABroadcast) {
  EXPECT_EQ(show(Ramp::make(x, y - y, 4)), "broadcast(x, 4)");
}
TEST_F(Simplify, FlatIndexOfVectorLoadBecomesOneRamp) {
  Buffer t = Buffer::make("t", f32(), makeShape({4, 16}));
  Expr index = t.flatIndex({y, Ramp::make(x * 8, makeIndex(1), 8)});
  EXPECT_EQ(show(index), "ramp(y*16 + x*8, 1, 8)");
}

// Calls and lets.
TEST_F(Simplify, ExactCallsFold) {
  EXPECT_EQ(show(Call::make(Intrinsic::Floor, {f32c(-1.5)})), "-2.0f");
}
TEST_F(Simplify, RoundIsHalfToEven) {
  EXPECT_EQ(show(Call::make(Intrinsic::Round, {f32c(2.5)})), "2.0f");
}
TEST_F(Simplify, TranscendentalCallsAreKept) {
  EXPECT_EQ(show(Call::make(Intrinsic::Exp, {f32c(1.0)})), "exp(1.0f)");
}
TEST_F(Simplify, LetOfConstantIsSubstituted) {
  Expr t = indexVar("t");
  EXPECT_EQ(show(Let::make(t, makeIndex(3), t + x)), "x + 3");
}
TEST_F(Simplify, UnusedLetIsDropped) {
  Expr t = indexVar("t");
  EXPECT_EQ(show(Let::make(t, x * y, x)), "x");
}

// Statements.
TEST_F(Simplify, LoopWithExtentZeroVanishes) {
  EXPECT_EQ(show(For::make(x, makeIndex(0), y - y, ForKind::Serial, Store::make(out, x, f))),
            "evaluate(0)\n");
}
TEST_F(Simplify, LoopWithExtentOneIsInlined) {
  Stmt loop =
      For::make(x, makeIndex(5), makeIndex(1), ForKind::Parallel, Store::make(out, x * 2 + 1, f));
  EXPECT_EQ(show(loop), "out[11] = f\n");
}
TEST_F(Simplify, LoopExtentThatOverflowsIsRefused) {
  // 2^32 * 2^32 does not fold (signed overflow): left alone it would wrap to 0 trips.
  const Expr huge = makeIndex(std::int64_t{1} << 32) * makeIndex(std::int64_t{1} << 32);
  try {
    simplify(For::make(x, makeIndex(0), huge, ForKind::Serial, Store::make(out, x, f)));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_NE(e.reason().find(
                  "the extent of loop 'x' overflows or divides by zero: 4294967296*4294967296"),
              std::string::npos)
        << e.reason();
  }
  // An extent that reads a variable is left to run time.
  EXPECT_NE(show(For::make(x, makeIndex(0), y * 2, ForKind::Serial, Store::make(out, x, f)))
                .find("for (x, 0, y*2)"),
            std::string::npos);
}
TEST_F(Simplify, ConstantConditionPicksABranch) {
  Stmt s = IfThenElse::make(x < x, Store::make(out, x, f), Store::make(out, x, g));
  EXPECT_EQ(show(s), "out[x] = g\n");
}
TEST_F(Simplify, EmptyThenCaseNegatesTheCondition) {
  Stmt s = IfThenElse::make(x < y, noOp(), Store::make(out, x, g));
  EXPECT_EQ(show(s), "if (x >= y) {\n  out[x] = g\n}\n");
}
TEST_F(Simplify, BlocksDropNoOps) {
  Stmt s = Block::make(
      {Store::make(out, x, f), Evaluate::make(makeIndex(1) + 2),
       For::make(y, makeIndex(0), makeIndex(0), ForKind::Serial, Store::make(out, y, f))});
  EXPECT_EQ(show(s), "out[x] = f\n");
}
TEST_F(Simplify, UnchangedTreesAreShared) {
  Kernel k = convReluKernel();
  EXPECT_TRUE(simplify(k.body).sameAs(k.body));
  Expr e = x * 4 + y;
  EXPECT_TRUE(simplify(e).sameAs(e));
}

} // namespace
} // namespace lathe::loop
