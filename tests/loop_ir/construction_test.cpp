// Types, make() checks and the construction operators.

#include "engine/loop_ir/ir.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/support/diagnostics.h"

#include <functional>
#include <gtest/gtest.h>

namespace lathe::loop {
namespace {

// A broken invariant is an Internal error, never a user error.
void expectInternal(const std::function<void()>& build, const std::string& fragment) {
  try {
    build();
    FAIL() << "expected an internal error mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(LoopType, NamesAndLanes) {
  EXPECT_EQ(f32().toString(), "f32");
  EXPECT_EQ(i64(8).toString(), "i64x8");
  EXPECT_EQ(boolean().toString(), "bool");
  EXPECT_EQ(boolean(4).toString(), "boolx4");
  EXPECT_EQ(u8().toString(), "u8");
  EXPECT_EQ(f32().withLanes(8), f32(8));
  EXPECT_TRUE(f32(8).isVector());
  EXPECT_FALSE(f32().isVector());
  EXPECT_EQ(f32(8).element(), f32());
  EXPECT_EQ(boolean().bytes(), 1);
  EXPECT_EQ(f16().bytes(), 2);
  EXPECT_FALSE(Type().valid());
  expectInternal([] { (void)Type(TypeCode::Int, 7); }, "bit width");
  expectInternal([] { (void)f32(0); }, "lane count");
}

TEST(LoopConstruction, TypesFollowOperands) {
  Expr x = Var::make(i64(), "x");
  Expr f = Var::make(f32(8), "f");
  EXPECT_EQ((x + 1).type(), i64());
  EXPECT_EQ((x < 3).type(), boolean());
  EXPECT_EQ((f * 2.0).type(), f32(8));
  EXPECT_EQ((f < 0.5).type(), boolean(8));
  EXPECT_EQ(cast(i32(8), f).type(), i32(8));
  EXPECT_EQ(Ramp::make(x, makeIndex(1), 8).type(), i64(8));
  EXPECT_EQ(Broadcast::make(makeConst(f32(), 1.0), 4).type(), f32(4));
  EXPECT_EQ(Call::make(Intrinsic::Exp, {f}).type(), f32(8));
  EXPECT_EQ(Call::makeExtern(i32(), "lathe_tick", {}).type(), i32());
}

TEST(LoopConstruction, NumbersTakeTheOtherOperandType) {
  Expr f = Var::make(f32(), "f");
  Expr v = Var::make(i32(4), "v");
  EXPECT_EQ(toString(f + 1), "f + 1.0f");
  EXPECT_EQ(toString(v * 3), "v*broadcast(i32(3), 4)");
  EXPECT_EQ(toString(-f), "f*-1.0f");
  EXPECT_EQ(toString(-Var::make(i64(), "x")), "0 - x");
  expectInternal([&] { (void)(v + 2.5); }, "not an integer");
}

TEST(LoopConstruction, BadMakeThrowsInternalError) {
  Expr x = Var::make(i64(), "x");
  Expr f = Var::make(f32(), "f");
  Expr b = Var::make(boolean(), "b");
  Buffer buf = Buffer::make("buf", f32(), makeShape({16}));
  expectInternal([&] { (void)(x + f); }, "operand types differ: i64 vs f32");
  expectInternal([&] { (void)(b + b); }, "must be numbers");
  expectInternal([&] { (void)(b < b); }, "cannot be ordered");
  expectInternal([&] { (void)floorDiv(f, f); }, "must be integers");
  expectInternal([&] { (void)(x && b); }, "operand types differ");
  expectInternal([&] { (void)!x; }, "must be bool");
  expectInternal([&] { (void)select(x, f, f); }, "condition must be bool");
  expectInternal([&] { (void)cast(f32(4), f); }, "lane counts must match");
  expectInternal([&] { (void)Load::make(buf, cast(i32(), x)); }, "index must be i64");
  expectInternal([&] { (void)Store::make(buf, x, x); }, "expected f32");
  expectInternal([&] { (void)Ramp::make(x, makeIndex(1), 1); }, "lanes must be > 1");
  expectInternal([&] { (void)Broadcast::make(Broadcast::make(x, 4), 4); }, "must be a scalar");
  expectInternal([&] { (void)Call::make(Intrinsic::Pow, {f}); }, "expects 2 arguments");
  expectInternal([&] { (void)Call::make(Intrinsic::Exp, {x}); }, "unsupported argument type");
  expectInternal([&] { (void)IntImm::make(u8(), 256); }, "does not fit in u8");
  expectInternal([&] { (void)IntImm::make(f32(), 1); }, "must be a scalar Int");
  expectInternal(
      [&] { (void)For::make(x + 1, makeIndex(0), makeIndex(4), ForKind::Serial, noOp()); },
      "must be a Var");
  expectInternal([&] { (void)For::make(f, makeIndex(0), makeIndex(4), ForKind::Serial, noOp()); },
                 "loop variable must be i64");
  expectInternal([&] { (void)IfThenElse::make(Broadcast::make(b, 4), noOp()); }, "scalar bool");
  expectInternal([&] { (void)Let::make(x, f, x); }, "differs from value type");
  expectInternal([&] { (void)(x + Expr()); }, "undefined");
}

TEST(LoopConstruction, ImmediatesAreNormalised) {
  EXPECT_EQ(FloatImm::make(f32(), 0.1).as<FloatImm>()->value, static_cast<double>(0.1f));
  EXPECT_EQ(FloatImm::make(f64(), 0.1).as<FloatImm>()->value, 0.1);
  Expr big = IntImm::make(u64(), -1); // u64 immediates hold the bit pattern
  EXPECT_EQ(big.as<IntImm>()->unsignedValue(), ~std::uint64_t(0));
  EXPECT_EQ(toString(big), "u64(18446744073709551615)");
}

TEST(LoopConstruction, BlockFlattensAndCollapses) {
  Buffer buf = Buffer::make("buf", i64(), makeShape({4}));
  Stmt s0 = Store::make(buf, makeIndex(0), makeIndex(1));
  Stmt s1 = Store::make(buf, makeIndex(1), makeIndex(2));
  Stmt s2 = Store::make(buf, makeIndex(2), makeIndex(3));
  Stmt nested = Block::make({s0, Block::make(s1, s2)});
  ASSERT_NE(nested.as<Block>(), nullptr);
  EXPECT_EQ(nested.as<Block>()->stmts.size(), 3u);
  EXPECT_TRUE(Block::make({s0}).sameAs(s0));
  EXPECT_TRUE(isNoOp(Block::make(std::vector<Stmt>{})));
}

TEST(LoopConstruction, BufferStridesAndFlatIndex) {
  Expr n = Var::make(i64(), "n");
  Buffer fixed = Buffer::make("t", f32(), makeShape({2, 3, 4}));
  EXPECT_EQ(toString(fixed), "f32[2,3,4]");
  EXPECT_EQ(toString(fixed.strides()[0]), "12");
  EXPECT_TRUE(fixed.hasDefaultStrides());
  Buffer dynamic = Buffer::make("d", f32(), {n, makeIndex(8)});
  EXPECT_EQ(toString(dynamic), "f32[n,8]");
  EXPECT_TRUE(dynamic.hasDefaultStrides());
  Buffer transposed = Buffer::make("tt", f32(), makeShape({4, 4}), makeShape({1, 4}));
  EXPECT_EQ(toString(transposed), "f32[4,4] strides [1,4]");

  Expr i = Var::make(i64(), "i"), j = Var::make(i64(), "j"), k = Var::make(i64(), "k");
  EXPECT_EQ(toString(fixed.flatIndex({i, j, k})), "i*12 + j*4 + k");
  Expr lanes = fixed.flatIndex({i, j, Ramp::make(k, makeIndex(1), 4)});
  EXPECT_EQ(lanes.type(), i64(4));
  EXPECT_EQ(toString(lanes),
            "broadcast(i, 4)*broadcast(12, 4) + broadcast(j, 4)*broadcast(4, 4) + ramp(k, 1, 4)");
}

TEST(LoopConstruction, StridesThatOverflowAreRefused) {
  // 2^32 x 2^32 elements: the row-major strides' product does not fit in an int64 index.
  const std::int64_t big = std::int64_t{1} << 32;
  try {
    Buffer::make("huge", f32(), makeShape({big, big}));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.reason(), "buffer 'huge' has more elements than an int64 index counts");
  }
  EXPECT_EQ(toString(Buffer::make("big", f32(), makeShape({big, big / 4})).strides()[0]),
            "1073741824");
}

TEST(LoopConstruction, KernelParametersAreInputsThenOutputs) {
  Buffer a = Buffer::make("a", f32(), makeShape({4}));
  Buffer b = Buffer::make("b", f32(), makeShape({4}));
  Buffer c = Buffer::make("c", f32(), makeShape({4}));
  Kernel k;
  k.inputs = {a, b};
  k.outputs = {c};
  std::vector<Buffer> params = k.parameters();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].name(), "a");
  EXPECT_EQ(params[1].name(), "b");
  EXPECT_EQ(params[2].name(), "c");
}

TEST(LoopConstruction, ConstantQueries) {
  EXPECT_EQ(asConstInt(makeIndex(7)), 7);
  EXPECT_EQ(asConstInt(makeConst(i32(4), 3)), 3);
  EXPECT_FALSE(asConstInt(makeBool(true)).has_value());
  EXPECT_EQ(asConstFloat(makeConst(f32(8), 0.5)), 0.5);
  EXPECT_TRUE(isConst(makeConst(f32(8), 0.5)));
  EXPECT_FALSE(isConst(Var::make(i64(), "x")));
  EXPECT_TRUE(isConstValue(makeConst(f32(), 1.0), 1.0));
}

} // namespace
} // namespace lathe::loop
