// Schedule primitives on small loop nests: the loops they make, and the clear refusals.
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/schedule/schedule.h"
#include "engine/support/diagnostics.h"
#include "tests/schedule/schedule_kernels.h"

#include <gtest/gtest.h>
#include <limits>

namespace lathe::schedule {
namespace {

using testing::matmulKernel;

Step step(Primitive p, std::vector<std::string> loops, std::vector<std::int64_t> factors = {}) {
  return Step{p, std::move(loops), std::move(factors), 0};
}

std::string scheduled(std::vector<Step> steps) {
  return loop::toString(apply(matmulKernel(), Schedule{"matmul_relu", std::move(steps)}));
}

// The reason apply() gives for a schedule that must be refused.
std::string refusal(std::vector<Step> steps) {
  try {
    apply(matmulKernel(), Schedule{"matmul_relu", std::move(steps)}, "s.txt");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    return e.reason();
  }
  ADD_FAILURE() << "the schedule was accepted";
  return {};
}

// The reason apply() gives for refusing `schedule` on `kernel`.
std::string refusalOf(const loop::Kernel& kernel, const Schedule& schedule) {
  try {
    apply(kernel, schedule);
  } catch (const Error& e) {
    return e.reason();
  }
  ADD_FAILURE() << "the schedule was accepted";
  return {};
}

// Refused by the bound, or by the enumeration, which stops at the first conflict.
bool refusedAsOverlapping(const std::string& reason) {
  return reason.find("iterations write overlapping elements of o") != std::string::npos ||
         reason.find("both write element") != std::string::npos;
}

// What each primitive makes is checked whole in golden_test.cpp.

TEST(Schedule, RefusesWhatWouldBeWrongOrMeaningless) {
  EXPECT_NE(refusal({step(Primitive::Split, {"zz"}, {4})}).find("there is no loop 'zz'"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Split, {"q"}, {0})}).find("at least 1"), std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Vectorize, {"k"})}).find("a reduction along 'k'"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Parallel, {"k"})}).find("a reduction along 'k'"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Vectorize, {"j"})}).find("'k' is inside it"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Split, {"q"}, {7}), step(Primitive::Vectorize, {"q.i"})})
                .find("condition that varies"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Parallel, {"i"}), step(Primitive::Parallel, {"j"})})
                .find("inside the parallel loop 'i'"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Fuse, {"i", "k"})}).find("whole body of 'i'"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Reorder, {"j", "k"})}).find("not perfectly nested"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Reorder, {"i", "q"})}).find("not in one loop nest"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::RegisterTile, {"i", "k"})}).find("at most 512 elements"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::RegisterTile, {"p", "q"})}).find("stays on one element"),
            std::string::npos);
  EXPECT_NE(
      refusal({step(Primitive::Split, {"j"}, {3}), step(Primitive::RegisterTile, {"j.i", "k"})})
          .find("meets a condition under 'j.i'"),
      std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Parallel, {"j"}), step(Primitive::RegisterTile, {"j", "k"})})
                .find("needs serial tile loops"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::CacheWrite, {"j"})}).find("finds no store"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Split, {"q"}, {4}), step(Primitive::Split, {"q"}, {2})})
                .find("there is no loop 'q'"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Split, {"q"})}).find("split takes 1 loop(s) then 1"),
            std::string::npos);
}

TEST(Schedule, RfactorRefusesWhatIsNotAnOrderFreeReduction) {
  EXPECT_NE(refusal({step(Primitive::Rfactor, {"k"}, {6})}).find("power of two"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Rfactor, {"k"}, {32})}).find("at least 32 iterations"),
            std::string::npos);
  // q's body stores y[p, q] = max(out[p, q]*0.5 + bias[q], 0): a max that accumulates nothing.
  EXPECT_NE(refusal({step(Primitive::Rfactor, {"q"}, {4})}).find("neither operand reads y"),
            std::string::npos);
  // j's body is a block of the zero store and the k loop.
  EXPECT_NE(refusal({step(Primitive::Rfactor, {"j"}, {4})}).find("the one store"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Split, {"k"}, {4}), step(Primitive::Rfactor, {"k.o"}, {2})})
                .find("the one store"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Parallel, {"i"}), step(Primitive::Rfactor, {"i"}, {2})})
                .find("'i' is already parallel"),
            std::string::npos);
}

TEST(Schedule, FactorsLargerThanTheExtentAreRefused) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kTrillion = 1000000000000;
  // split(q, 2^63 - 1) overflowed ceil(20 / factor) into a negative extent, so the simplifier
  // deleted the loop nest; split(q, 10^12) made an inner loop of 10^12 guarded iterations.
  for (std::int64_t factor : {kMax, kTrillion, std::int64_t{21}}) {
    const std::string f = std::to_string(factor);
    EXPECT_EQ(refusal({step(Primitive::Split, {"q"}, {factor})}),
              "s.txt: kernel matmul_relu, step 1 split(q, " + f + "): the factor " + f +
                  " is larger than the extent of 'q' (20); use a factor from 1 to 20 (a larger "
                  "one only adds empty iterations)");
  }
  // tile splits both loops, each checked against its own extent.
  EXPECT_NE(refusal({step(Primitive::Tile, {"p", "q"}, {5, kMax})})
                .find("tile(p, q, 5, 9223372036854775807): the factor 9223372036854775807 is "
                      "larger than the extent of 'q' (20)"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Tile, {"p", "q"}, {kTrillion, 4})})
                .find("the factor 1000000000000 is larger than the extent of 'p' (30)"),
            std::string::npos);
  // A split loop is checked against its new extent.
  EXPECT_NE(refusal({step(Primitive::Split, {"q"}, {4}), step(Primitive::Split, {"q.i"}, {5})})
                .find("larger than the extent of 'q.i' (4)"),
            std::string::npos);
  // unroll takes no factor, and unrolls only loops of at most 256 iterations.
  EXPECT_NE(refusal({step(Primitive::Unroll, {"k"}, {kMax})}).find("unroll takes 1 loop(s), as in"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Split, {"q"}, {2}), step(Primitive::Unroll, {"q.o"}),
                     step(Primitive::Unroll, {"k"}), step(Primitive::Tile, {"i", "j"}, {kMax, 2})})
                .find("step 4 tile(i, j, 9223372036854775807, 2): the factor"),
            std::string::npos);
  // The whole extent is a factor: one outer iteration, which the simplifier removes.
  const std::string whole = scheduled({step(Primitive::Split, {"q"}, {20})});
  EXPECT_NE(whole.find("for (q.i, 0, 20)"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("if ("), std::string::npos) << whole;
}

TEST(Schedule, SplitOfAVaryingExtentIsCheckedAgainstItsBound) {
  using namespace loop;
  Buffer x = Buffer::make("x", i64(), makeShape({1}));
  Buffer o = Buffer::make("o", f32(), makeShape({40}));
  Expr r = testing::indexVar("r"), c = testing::indexVar("c"), n = testing::indexVar("n");
  Stmt store = Store::make(o, r * 4 + c, makeFloatConst(f32(), 1.0));
  // c runs min(r + 1, 4) times: at most 4.
  Kernel bounded{
      "bounded",
      {},
      {o},
      testing::serialFor(
          r, 10, For::make(c, makeIndex(0), min(r + 1, makeIndex(4)), ForKind::Serial, store)),
      {}};
  EXPECT_NE(
      loop::toString(apply(bounded, Schedule{"bounded", {step(Primitive::Split, {"c"}, {4})}}))
          .find("for (c.i, 0, 4)"),
      std::string::npos);
  try {
    apply(bounded, Schedule{"bounded", {step(Primitive::Split, {"c"}, {5})}});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("larger than the extent of 'c' (at most 4)"), std::string::npos)
        << e.reason();
  }
  // c runs x[0] times: no bound to check a factor against.
  Kernel loaded{
      "loaded",
      {x},
      {o},
      testing::serialFor(r, 10,
                         LetStmt::make(n, Load::make(x, makeIndex(0)),
                                       For::make(c, makeIndex(0), n, ForKind::Serial, store))),
      {}};
  try {
    apply(loaded, Schedule{"loaded", {step(Primitive::Split, {"c"}, {2})}});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("'c' runs n times, which has no bound"), std::string::npos)
        << e.reason();
  }
}

TEST(Schedule, UnrollRefusesHugeLoops) {
  using namespace loop;
  Buffer o = Buffer::make("o", f32(), makeShape({1}));
  Expr r = testing::indexVar("r");
  Kernel k{"huge",
           {},
           {o},
           testing::serialFor(r, std::int64_t{1} << 40,
                              Store::make(o, makeIndex(0), makeFloatConst(f32(), 1.0))),
           {}};
  try {
    apply(k, Schedule{"huge", {step(Primitive::Unroll, {"r"})}});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("unroll allows at most 256 iterations; 'r' has 1099511627776"),
              std::string::npos)
        << e.reason();
  }
}

TEST(Schedule, FuseRefusesAnExtentThatOverflows) {
  using namespace loop;
  Buffer o = Buffer::make("o", f32(), makeShape({1}));
  Expr a = testing::indexVar("a"), b = testing::indexVar("b");
  auto kernel = [&](std::int64_t extent) {
    return Kernel{"big",
                  {},
                  {o},
                  testing::serialFor(
                      a, extent,
                      testing::serialFor(b, extent,
                                         Store::make(o, makeIndex(0), makeFloatConst(f32(), 1.0)))),
                  {}};
  };
  const Schedule fuse{"big", {step(Primitive::Fuse, {"a", "b"})}};
  // 2^32 * 2^32 iterations do not fit in an int64: the product would wrap to 0 at run time.
  try {
    apply(kernel(std::int64_t{1} << 32), fuse);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("the fused loop would run 4294967296 * 4294967296 times, more than "
                              "an int64 counts"),
              std::string::npos)
        << e.reason();
  }
  EXPECT_NE(loop::toString(apply(kernel(std::int64_t{1} << 31), fuse))
                .find("for (a.b.fused, 0, 4611686018427387904)"),
            std::string::npos);
}

TEST(Schedule, RefusalNamesFileLineKernelAndStep) {
  Step bad = step(Primitive::Vectorize, {"k"});
  bad.line = 3;
  try {
    apply(matmulKernel(), Schedule{"matmul_relu", {step(Primitive::Split, {"q"}, {4}), bad}},
          "s.txt");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.reason().rfind("s.txt:3: kernel matmul_relu, step 2 vectorize(k): ", 0), 0u)
        << e.reason();
  }
}

TEST(Schedule, ParallelRefusesOverlappingWrites) {
  using namespace loop;
  Buffer o = Buffer::make("o", f32(), makeShape({24}));
  Expr r = testing::indexVar("r"), c = testing::indexVar("c");
  // Rows two apart, four wide: iteration r writes o[2r .. 2r+3], overlapping r+1.
  Stmt simple = testing::serialFor(
      r, 10, testing::serialFor(c, 4, Store::make(o, r * 2 + c, makeFloatConst(f32(), 1.0))));
  Kernel k{"overlap", {}, {o}, simple, {}};
  try {
    apply(k, Schedule{"overlap", {step(Primitive::Parallel, {"r"})}});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("iterations 0 and 1 both write element 2 of o"), std::string::npos)
        << e.reason();
  }
  // Four apart, the same rows do not overlap.
  Stmt disjoint = testing::serialFor(
      r, 6, testing::serialFor(c, 4, Store::make(o, r * 4 + c, makeFloatConst(f32(), 1.0))));
  Kernel ok{"disjoint", {}, {o}, disjoint, {}};
  EXPECT_NE(loop::toString(apply(ok, Schedule{"disjoint", {step(Primitive::Parallel, {"r"})}}))
                .find("parallel for (r"),
            std::string::npos);
}

TEST(Schedule, ReadsApartFromEveryWriteAreIndependent) {
  using namespace loop;
  Buffer o = Buffer::make("o", f32(), makeShape({8}));
  Expr h = testing::indexVar("h");
  auto halve = [&](std::int64_t pairs, std::int64_t distance) {
    Stmt s = testing::serialFor(
        h, pairs, Store::make(o, h, Load::make(o, h) + Load::make(o, h + makeIndex(distance))));
    return Kernel{"tree", {}, {o}, s, {}};
  };
  // A tree level: o[0..3] += o[4..7] reads nothing the loop writes.
  EXPECT_NE(
      loop::toString(apply(halve(4, 4), Schedule{"tree", {step(Primitive::Vectorize, {"h"})}}))
          .find("o[ramp(0, 1, 4)] = o[ramp(0, 1, 4)] + o[ramp(4, 1, 4)]"),
      std::string::npos);
  // o[0..3] += o[2..5]: iteration 0 reads o[2], which iteration 2 writes.
  const std::string reason =
      refusalOf(halve(4, 2), Schedule{"tree", {step(Primitive::Vectorize, {"h"})}});
  EXPECT_NE(reason.find("that other iterations may write"), std::string::npos) << reason;
}

TEST(Schedule, LargeNestsAreBoundedInsteadOfEnumerated) {
  using namespace loop;
  Buffer o = Buffer::make("o", f32(), makeShape({2000 * 1000}));
  Expr r = testing::indexVar("r"), c = testing::indexVar("c");
  auto kernel = [&](std::int64_t rowStride) {
    Stmt body = testing::serialFor(
        r, 2000,
        testing::serialFor(c, 1000, Store::make(o, r * rowStride + c, makeFloatConst(f32(), 1.0))));
    return Kernel{"big", {}, {o}, body, {}};
  };
  const Schedule parallelRows{"big", {step(Primitive::Parallel, {"r"})}};
  EXPECT_NE(loop::toString(apply(kernel(1000), parallelRows)).find("parallel for (r"),
            std::string::npos);
  const std::string reason = refusalOf(kernel(999), parallelRows);
  EXPECT_TRUE(refusedAsOverlapping(reason)) << reason;
}

TEST(Schedule, ParallelTellsInterleavedWritesApartByTheirDigits) {
  using namespace loop;
  Buffer o = Buffer::make("o", f32(), makeShape({64 * 200 * 100}));
  Expr r = testing::indexVar("r"), c = testing::indexVar("c"), x = testing::indexVar("x");
  // Rows outside channels in a channel-major layout, too many writes to enumerate: a row's
  // writes span every channel, yet rows never meet.
  auto kernel = [&](std::int64_t channelStride) {
    Stmt body = testing::serialFor(
        r, 200,
        testing::serialFor(c, 64,
                           testing::serialFor(x, 100,
                                              Store::make(o, (c * channelStride + r) * 100 + x,
                                                          makeFloatConst(f32(), 1.0)))));
    return Kernel{"rows", {}, {o}, body, {}};
  };
  const Schedule parallelRows{"rows", {step(Primitive::Parallel, {"r"})}};
  EXPECT_NE(loop::toString(apply(kernel(200), parallelRows)).find("parallel for (r"),
            std::string::npos);
  // Channels 199 rows apart: row 199 of channel c is row 0 of channel c + 1.
  const std::string reason = refusalOf(kernel(199), parallelRows);
  EXPECT_TRUE(refusedAsOverlapping(reason)) << reason;
}

TEST(Schedule, ParallelTellsStoresAtConstantOffsetsApartByTheirDigits) {
  using namespace loop;
  Buffer o = Buffer::make("o", f32(), makeShape({36 * 400 * 1000}));
  Expr r = testing::indexVar("r"), x = testing::indexVar("x");
  // Winograd's input transform: per iteration, one store per point of the tile, each a
  // whole plane of `plane` elements further on. Too many writes to enumerate; the offsets
  // are one more digit, and iterations never meet while a row fits the plane.
  auto kernel = [&](std::int64_t plane) {
    std::vector<Stmt> stores;
    for (std::int64_t p = 0; p < 36; ++p)
      stores.push_back(Store::make(o, r * 1000 + x + p * plane, makeFloatConst(f32(), 1.0)));
    Stmt body = testing::serialFor(r, 400, testing::serialFor(x, 1000, Block::make(stores)));
    return Kernel{"points", {}, {o}, body, {}};
  };
  const Schedule parallelRows{"points", {step(Primitive::Parallel, {"r"})}};
  EXPECT_NE(loop::toString(apply(kernel(400 * 1000), parallelRows)).find("parallel for (r"),
            std::string::npos);
  // Planes one row short: point 1 of row 0 writes where point 0 of row 399 does.
  const std::string reason = refusalOf(kernel(399 * 1000), parallelRows);
  EXPECT_TRUE(refusedAsOverlapping(reason)) << reason;
}

TEST(Schedule, ParallelTellsTheIterationsOfAFusedLoopApart) {
  using namespace loop;
  Buffer o = Buffer::make("o", f32(), makeShape({96 * 12544}));
  Expr m = testing::indexVar("m"), p = testing::indexVar("p"), r = testing::indexVar("r"),
       x = testing::indexVar("x");
  // A 1x1 convolution's tiles: blocks of 64 positions outside blocks of 4 channels, each
  // writing a 4 x 64 tile of a channel-major output. Too many writes to enumerate, and the
  // fused loop's quotient and remainder are no constant stride: each part is told apart on
  // its own.
  auto kernel = [&](std::int64_t channelStride) {
    Stmt body = testing::serialFor(
        p, 196,
        testing::serialFor(
            m, 24,
            testing::serialFor(
                r, 4,
                testing::serialFor(x, 64,
                                   Store::make(o, (m * 4 + r) * channelStride + p * 64 + x,
                                               makeFloatConst(f32(), 1.0))))));
    return Kernel{"tiles", {}, {o}, body, {}};
  };
  const Schedule fusedTasks{
      "tiles", {step(Primitive::Fuse, {"p", "m"}), step(Primitive::Parallel, {"p.m.fused"})}};
  EXPECT_NE(loop::toString(apply(kernel(12544), fusedTasks)).find("parallel for (p.m.fused"),
            std::string::npos);
  // Channels one position short of a plane: position 12543 of a channel is position 0 of
  // the next.
  const std::string reason = refusalOf(kernel(12543), fusedTasks);
  EXPECT_TRUE(refusedAsOverlapping(reason)) << reason;
  EXPECT_NE(reason.find("parallel(p.m.fused)"), std::string::npos) << reason;
}

TEST(Schedule, PartitionLiftsTheRemainderOfASplit) {
  // 30 rows by 4: the last block has 2. The copies need no guard, so the tile of each
  // goes to registers, and the rows of both copies can run in parallel.
  const std::string text =
      scheduled({step(Primitive::Split, {"i"}, {4}), step(Primitive::Split, {"j"}, {8}),
                 step(Primitive::Reorder, {"i.o", "j.o", "i.i", "j.i"}),
                 step(Primitive::Partition, {"i.i"}), step(Primitive::RegisterTile, {"i.i", "k"}),
                 step(Primitive::RegisterTile, {"i.i.r1", "k.r1"}),
                 step(Primitive::RegisterTile, {"i.i.r2", "k.r2"}),
                 step(Primitive::RegisterTile, {"i.i.r3", "k.r3"}),
                 step(Primitive::Parallel, {"i.o"}), step(Primitive::Fuse, {"i.o", "j.o"})});
  EXPECT_NE(text.find("parallel for (i.o.j.o.fused, 0, 24)"), std::string::npos) << text;
  for (const char* part : {"out.tile", "out.i.i.r1.tile", "out.i.i.r2.tile", "out.i.i.r3.tile",
                           "for (i.i.r2, 0, 2)", "out.i.i.r3.tile: f32[8]"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  EXPECT_EQ(text.find(" < 30"), std::string::npos) << text;
  EXPECT_NE(refusal({step(Primitive::Split, {"i"}, {5}), step(Primitive::Partition, {"i.i"})})
                .find("finds no guard of a split"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Split, {"i"}, {4}), step(Primitive::CacheWrite, {"k"}),
                     step(Primitive::Partition, {"i.i"})})
                .find("partition before cache_write"),
            std::string::npos);
}

// What compute_inline, compute_at and pack make is checked whole in golden_test.cpp; here
// the loop order that compute_inline accepts too, and the refusals.
TEST(Schedule, ComputeInlineRecomputesTheScratchWhereItIsRead) {
  const Schedule inlineT{"scratch", {step(Primitive::ComputeInline, {"t"})}};
  EXPECT_EQ(loop::toString(apply(testing::scratchKernel("ji"), inlineT)),
            loop::toString(apply(testing::scratchKernel("ij"), inlineT)));
  auto refusal = [](const loop::Kernel& k, const std::string& buffer) {
    try {
      apply(k, Schedule{k.name, {step(Primitive::ComputeInline, {buffer})}});
    } catch (const Error& e) {
      return e.reason();
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal(testing::scratchKernel("overlap"), "t").find("row-major"), std::string::npos);
  EXPECT_NE(refusal(testing::scratchKernel(), "a").find("not allocated"), std::string::npos);
  EXPECT_NE(refusal(matmulKernel(), "out").find("not allocated"), std::string::npos);
}

TEST(Schedule, ComputeAtComputesTheRowsEachIterationReads) {
  auto refusal = [](const loop::Kernel& k, std::vector<std::string> args) {
    try {
      apply(k, Schedule{k.name, {step(Primitive::ComputeAt, std::move(args))}});
    } catch (const Error& e) {
      return e.reason();
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal(testing::stencilKernel(), {"t", "i"}).find("a loop of the producer"),
            std::string::npos);
  EXPECT_NE(refusal(testing::stencilKernel(), {"t", "zz"}).find("no loop 'zz'"), std::string::npos);
  EXPECT_NE(refusal(matmulKernel(), {"out", "p"}).find("allocates"), std::string::npos);
  loop::Kernel parallelConsumer = testing::stencilKernel();
  parallelConsumer =
      apply(parallelConsumer, Schedule{"stencil", {step(Primitive::Parallel, {"p"})}});
  EXPECT_NE(refusal(parallelConsumer, {"t", "p"}).find("is parallel"), std::string::npos);
}

TEST(Schedule, PackCopiesWhatTheLoopReadsInVisitingOrder) {
  EXPECT_NE(refusal({step(Primitive::Pack, {"out", "j"})}).find("writes 'out'"), std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Pack, {"b", "k"})}).find("nothing to pack"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Split, {"j"}, {3}), step(Primitive::Pack, {"b", "i"})})
                .find("under a condition"),
            std::string::npos);
  EXPECT_NE(refusal({step(Primitive::Pack, {"bias", "q"})}).find("nothing to pack"),
            std::string::npos);
}

// Cases a review found accepted with wrong results; each must now be refused.
TEST(Schedule, RefusesRewritesThatWouldRaceOrReadOutOfBounds) {
  using namespace loop;
  auto reason = [](const Kernel& k, std::vector<Step> steps) {
    try {
      apply(k, Schedule{k.name, std::move(steps)});
    } catch (const Error& e) {
      return e.reason();
    }
    return std::string("accepted");
  };
  // cache_write under a split tail's guard, moved below the reduction by reorder.
  EXPECT_NE(reason(matmulKernel(),
                   {step(Primitive::Split, {"j"}, {8}), step(Primitive::CacheWrite, {"k"})})
                .find("accepted"),
            std::string::npos); // the guard is outside k: fine
  // A parallel reduction s[i] += x[i*4 + k], then fuse: threads would split inside one i.
  Buffer x = Buffer::make("x", f32(), makeShape({40}));
  Buffer sBuf = Buffer::make("s", f32(), makeShape({10}));
  Expr i = testing::indexVar("i"), k = testing::indexVar("k");
  Kernel sum{"sum",
             {x},
             {sBuf},
             testing::serialFor(
                 i, 10,
                 testing::serialFor(
                     k, 4, Store::make(sBuf, i, Load::make(sBuf, i) + Load::make(x, i * 4 + k)))),
             {}};
  EXPECT_NE(reason(sum, {step(Primitive::Parallel, {"i"}), step(Primitive::Fuse, {"i", "k"})})
                .find("parallel(i.k.fused) is not safe"),
            std::string::npos);
  // col2im: y[i + k] += ...; parallel over i is safe inside k, not around it.
  Buffer y = Buffer::make("y", f32(), makeShape({13}));
  Kernel col2im{"col2im",
                {x},
                {y},
                testing::serialFor(
                    k, 4,
                    testing::serialFor(
                        i, 10, Store::make(y, i + k, Load::make(y, i + k) + Load::make(x, i)))),
                {}};
  EXPECT_NE(reason(col2im, {step(Primitive::Parallel, {"i"}), step(Primitive::Reorder, {"i", "k"})})
                .find("both write element"),
            std::string::npos);
  // A true dependence a[(r+1)*5 + c] = a[r*5 + c + 1] must not be interchanged.
  Buffer a = Buffer::make("a", f32(), makeShape({60}));
  Expr r = testing::indexVar("r"), c = testing::indexVar("c");
  Kernel shift{
      "shift",
      {},
      {a},
      testing::serialFor(
          r, 10,
          testing::serialFor(c, 4, Store::make(a, (r + 1) * 5 + c, Load::make(a, r * 5 + c + 1)))),
      {}};
  EXPECT_NE(reason(shift, {step(Primitive::Reorder, {"c", "r"})}).find("reordering could change"),
            std::string::npos);
  // A read of what another iteration's guarded store writes.
  Buffer b = Buffer::make("b", f32(), makeShape({2}));
  Kernel guarded{"guarded",
                 {x},
                 {a},
                 Allocate::make(b, MemoryScope::Stack,
                                testing::serialFor(
                                    i, 4,
                                    Block::make(IfThenElse::make(
                                                    i < 2, Store::make(b, i % 2, Load::make(x, i))),
                                                Store::make(a, i, Load::make(b, i % 2))))),
                 {}};
  EXPECT_NE(reason(guarded, {step(Primitive::Parallel, {"i"})}).find("same conditions"),
            std::string::npos);
  // compute_inline of a value that uses a let bound around its store.
  Buffer t = Buffer::make("t", f32(), makeShape({10}));
  Expr v = Var::make(f32(), "v");
  Kernel withLet{
      "with_let",
      {x},
      {y},
      Allocate::make(
          t, MemoryScope::Stack,
          Block::make(testing::serialFor(
                          i, 10, LetStmt::make(v, Load::make(x, i), Store::make(t, i, v * v))),
                      testing::serialFor(k, 10, Store::make(y, k, Load::make(t, k))))),
      {}};
  EXPECT_NE(reason(withLet, {step(Primitive::ComputeInline, {"t"})}).find("uses 'v'"),
            std::string::npos);
  EXPECT_NE(reason(withLet, {step(Primitive::ComputeAt, {"t", "i"})}).find("not a perfect nest"),
            std::string::npos);
}

TEST(Schedule, UnknownKernelIsAnError) {
  ScheduleSet set{"s.txt", {Schedule{"nope", {}}}};
  try {
    checkKernelsExist(set, {"matmul_relu"});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("no kernel named 'nope'"), std::string::npos) << e.reason();
  }
}

} // namespace
} // namespace lathe::schedule
