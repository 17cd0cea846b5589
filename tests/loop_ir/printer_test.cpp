// Golden text of the loop IR printer.

#include "engine/loop_ir/ir_printer.h"
#include "test_kernels.h"

#include <gtest/gtest.h>
#include <limits>

namespace lathe::loop {
namespace {

using testing::convReluKernel;
using testing::indexVar;

TEST(LoopPrinter, ConvReluKernel) {
  EXPECT_EQ(
      toString(convReluKernel()),
      R"(kernel fused_conv_relu_0(%data: f32[1,3,10,10], %w: f32[4,3,3,3]) -> (%out: f32[1,4,8,8]) {  # from: conv0, relu0
  parallel for (co, 0, 4) {
    for (y, 0, 8) {
      for (x, 0, 8) {
        allocate acc: f32[1] on stack {
          acc[0] = 0.0f
          for (ci, 0, 3) {
            for (ky, 0, 3) {
              for (kx, 0, 3) {
                acc[0] = acc[0] + data[ci*100 + (y + ky)*10 + x + kx]*w[co*27 + ci*9 + ky*3 + kx]
              }
            }
          }
          out[co*64 + y*8 + x] = max(acc[0], 0.0f)
        }
      }
    }
  }
}
)");
}

TEST(LoopPrinter, VectorizedLoop) {
  Buffer a = Buffer::make("a", f32(), makeShape({64}));
  Buffer idx = Buffer::make("idx", i32(), makeShape({64}));
  Buffer out = Buffer::make("out", f32(), makeShape({64}));
  Expr xo = indexVar("x.outer"), xi = indexVar("x.inner");
  Expr lanes = Ramp::make(xo * 8, makeIndex(1), 8);
  Expr v = Var::make(f32(8), "v");
  Expr scaled =
      Load::make(a, lanes) * makeConst(f32(8), 2.0) + cast(f32(8), Load::make(idx, lanes));
  Stmt vectorBody =
      LetStmt::make(v, scaled, Store::make(out, lanes, select(v > 0.0, v, v * 0.125)));
  Stmt scalarBody = Store::make(out, xo * 8 + xi, Load::make(a, xo * 8 + xi));
  Stmt body = For::make(xo, makeIndex(0), makeIndex(8), ForKind::Parallel,
                        Block::make(vectorBody, For::make(xi, makeIndex(0), makeIndex(8),
                                                          ForKind::Vectorized, scalarBody)));
  EXPECT_EQ(toString(body), R"(parallel for (x.outer, 0, 8) {
  let v = a[ramp(x.outer*8, 1, 8)]*broadcast(2.0f, 8) + f32x8(idx[ramp(x.outer*8, 1, 8)])
  out[ramp(x.outer*8, 1, 8)] = select(v > broadcast(0.0f, 8), v, v*broadcast(0.125f, 8))
  vectorized for (x.inner, 0, 8) {
    out[x.outer*8 + x.inner] = a[x.outer*8 + x.inner]
  }
}
)");
}

TEST(LoopPrinter, StatementForms) {
  Buffer buf = Buffer::make("buf", i64(), {indexVar("n")});
  Expr i = indexVar("i");
  Stmt body =
      IfThenElse::make(i < 4, Store::make(buf, i, i),
                       IfThenElse::make(i < 8, Store::make(buf, i, makeIndex(0)),
                                        Evaluate::make(Call::makeExtern(i32(), "trap", {i}))));
  Stmt s = Allocate::make(buf, MemoryScope::Heap,
                          For::make(i, makeIndex(0), indexVar("n"), ForKind::Unrolled, body));
  EXPECT_EQ(toString(s), R"(allocate buf: i64[n] on heap {
  unrolled for (i, 0, n) {
    if (i < 4) {
      buf[i] = i
    } else if (i < 8) {
      buf[i] = 0
    } else {
      evaluate(@trap<i32>(i))
    }
  }
}
)");
  EXPECT_EQ(toString(noOp()), "evaluate(0)\n");
}

TEST(LoopPrinter, PrecedenceNeedsOnlyNecessaryParentheses) {
  Expr a = indexVar("a"), b = indexVar("b"), c = indexVar("c");
  EXPECT_EQ(toString((a + b) * c), "(a + b)*c");
  EXPECT_EQ(toString(a + b * c), "a + b*c");
  EXPECT_EQ(toString(a - b - c), "a - b - c");
  EXPECT_EQ(toString(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(toString(a / (b * c)), "a/(b*c)");
  EXPECT_EQ(toString(a * b % c), "a*b%c");
  EXPECT_EQ(toString(a + -3), "a + -3");
  EXPECT_EQ(toString(a * -3), "a*-3");
  EXPECT_EQ(toString((a < b && b < c) || eq(a, c)), "a < b && b < c || a == c");
  EXPECT_EQ(toString(a < b && (b < c || eq(a, c))), "a < b && (b < c || a == c)");
  EXPECT_EQ(toString(!(a < b)), "!(a < b)");
  EXPECT_EQ(toString(eq(a < b, b < c)), "(a < b) == (b < c)");
  EXPECT_EQ(toString(floorDiv(a + 1, 8)), "floordiv(a + 1, 8)");
  EXPECT_EQ(toString(floorMod(a, 8)), "floormod(a, 8)");
  EXPECT_EQ(toString(min(a, max(b, 0))), "min(a, max(b, 0))");
  Expr t = indexVar("t");
  EXPECT_EQ(toString(Let::make(t, a + 1, t * t) + 1), "(let t = a + 1 in t*t) + 1");
  EXPECT_EQ(toString(Call::make(Intrinsic::Fma, {makeConst(f32(), 1.0), makeConst(f32(), 2.0),
                                                 makeConst(f32(), 3.0)})),
            "fma(1.0f, 2.0f, 3.0f)");
}

TEST(LoopPrinter, ImmediatesRoundTrip) {
  auto f32c = [](double v) { return toString(FloatImm::make(f32(), v)); };
  auto f64c = [](double v) { return toString(FloatImm::make(f64(), v)); };
  EXPECT_EQ(f32c(0.0), "0.0f");
  EXPECT_EQ(f32c(-0.0), "-0.0f");
  EXPECT_EQ(f32c(1.0), "1.0f");
  EXPECT_EQ(f32c(0.1), "0.1f"); // shortest text for the float nearest 0.1
  EXPECT_EQ(f32c(1e-7), "1e-07f");
  EXPECT_EQ(f32c(3e38), "3e+38f");
  EXPECT_EQ(f32c(16777217.0), "16777216.0f"); // rounded to f32 on construction
  EXPECT_EQ(f32c(std::numeric_limits<double>::infinity()), "f32(inf)");
  EXPECT_EQ(f32c(-std::numeric_limits<double>::infinity()), "f32(-inf)");
  EXPECT_EQ(f32c(std::numeric_limits<double>::quiet_NaN()), "f32(nan)");
  EXPECT_EQ(f64c(0.1), "0.1");
  EXPECT_EQ(f64c(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(f64c(2.0), "2.0");
  EXPECT_EQ(toString(FloatImm::make(f16(), 1.5)), "f16(1.5)");
  EXPECT_EQ(toString(makeIndex(-5)), "-5");
  EXPECT_EQ(toString(IntImm::make(i32(), -5)), "i32(-5)");
  EXPECT_EQ(toString(IntImm::make(u8(), 255)), "u8(255)");
  EXPECT_EQ(toString(makeBool(true)), "true");
  EXPECT_EQ(toString(makeBool(false, 4)), "broadcast(false, 4)");
}

} // namespace
} // namespace lathe::loop
