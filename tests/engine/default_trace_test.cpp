// Default traces: kernels lowered as a plain nest plus the steps that make the default, and
// the driver replaying them (LoweredModel::unscheduled keeps the nest).
#include "engine/driver/compile_model.h"
#include "engine/graph/parser.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_io.h"
#include "engine/target/target.h"

#include <gtest/gtest.h>
#include <string>

namespace lathe {
namespace {

lowering::LoweredModel lower(const std::string& text,
                             const std::string& target = "llvm -mcpu=x86-64-v3") {
  auto g = graph::parseGraph(text, "model.lir");
  return driver::lowerModel(*g, target::parseTarget(target), nullptr);
}

// The default trace of kernel k replayed on its nest gives the kernel lowerModel made.
void expectTraceReplays(const lowering::LoweredModel& lowered, std::size_t k) {
  const loop::Kernel& naive = lowered.unscheduledKernel(k);
  ASSERT_FALSE(naive.defaultTrace.empty()) << naive.name;
  EXPECT_EQ(lowered.scheduleTraces.at(k), naive.defaultTrace);
  const schedule::Schedule steps = schedule::parseTrace(naive.name, naive.defaultTrace);
  EXPECT_EQ(loop::toString(schedule::apply(naive, steps)), loop::toString(lowered.kernels[k]));
}

TEST(DefaultTrace, AMatrixProductIsAPlainNestTiledInRegisters) {
  const auto lowered = lower("graph @mm opset 17 {\n  input %a: f32[64,96]\n"
                             "  input %b: f32[96,48]\n  %y: f32[64,48] = MatMul(%a, %b)\n"
                             "  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  // AVX2: 8 lanes, 4 rows by 2 vectors; 48 columns are 3 tiles of 16.
  EXPECT_EQ(naive.defaultTrace, "split(i, 4)\nsplit(j, 16)\nsplit(j.i, 8)\n"
                                "reorder(j.o, i.o, i.i, j.i.o, j.i.i)\nregister_tile(i.i, k)\n"
                                "fuse(j.o, i.o)\nparallel(j.o.i.o.fused)\n");
  const std::string plain = loop::toString(naive);
  EXPECT_NE(plain.find("for (k, 0, 96)"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("parallel"), std::string::npos) << plain;
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find("parallel for (j.o.i.o.fused, 0, 48)"), std::string::npos) << tiled;
  EXPECT_NE(tiled.find("y.tile"), std::string::npos) << tiled;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, ABlockedConvIsAPlainNestTiledWithItsRemainders) {
  // 7x7 planes: the tile's rows or columns leave a remainder, which partition lifts into
  // tiles of their own before each is kept in registers.
  const auto lowered = lower("graph @c opset 17 {\n  input %x: f32[1,2,7,7,16]\n"
                             "  input %w: f32[3,2,3,3,16,16]\n"
                             "  %y: f32[1,3,7,7,16] = lathe::ConvNCHWc(%x, %w) "
                             "{pads = [1, 1, 1, 1]}\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  for (const char* step : {"partition(", "register_tile(", "reorder("})
    EXPECT_NE(naive.defaultTrace.find(step), std::string::npos) << naive.defaultTrace;
  const std::string plain = loop::toString(naive);
  EXPECT_NE(plain.find("for (ci, 0, 16)"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("ramp("), std::string::npos) << plain;
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find(".r1.tile"), std::string::npos) << tiled;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, ADepthwiseBlockedConvTilesItsInteriorAndRunsItsEdgesApart) {
  // An 11-wide row with a 3x3 window and padding 1: position 0 and position 10 reach past
  // the edges, positions 1..9 do not. AVX2 tiles of 6 interior positions x 2 vectors leave
  // 3, lifted into a tile of their own; each edge position is a tile of one. No padded copy:
  // the taps of the edge positions and rows are bounded instead.
  const auto lowered = lower("graph @dw opset 17 {\n  input %x: f32[1,2,6,11,16]\n"
                             "  input %w: f32[2,3,3,16]\n  input %b: f32[32]\n"
                             "  %y: f32[1,2,6,11,16] = lathe::DepthwiseConvNCHWc(%x, %w, %b) "
                             "{pads = [1, 1, 1, 1]}\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  const std::string& trace = naive.defaultTrace;
  std::size_t tiles = 0;
  for (std::size_t at = trace.find("register_tile("); at != std::string::npos;
       at = trace.find("register_tile(", at + 1))
    ++tiles;
  EXPECT_EQ(tiles, 4u) << trace; // left edge, interior, its remainder, right edge
  EXPECT_NE(trace.find("split(ow, 6)\n"), std::string::npos) << trace;
  EXPECT_NE(trace.find("partition(ow.i)\n"), std::string::npos) << trace;
  const std::string plain = loop::toString(naive);
  EXPECT_EQ(plain.find("xpad"), std::string::npos) << plain;
  EXPECT_NE(plain.find("for (ow, 0, 9)"), std::string::npos) << plain;
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find(".r1.tile"), std::string::npos) << tiled;
  EXPECT_NE(tiled.find("ramp("), std::string::npos) << tiled;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, AStemConvReadsItsImageInNchw) {
  // Three input channels in NCHW, one block of 16 output channels: the blocked tile
  // broadcasts each input element, so the input's layout only changes its address.
  const auto lowered = lower("graph @stem opset 17 {\n  input %x: f32[1,3,9,9]\n"
                             "  input %w: f32[1,1,3,3,3,16]\n"
                             "  %y: f32[1,1,5,5,16] = lathe::ConvNCHWc(%x, %w) "
                             "{pads = [1, 1, 1, 1], strides = [2, 2]}\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const std::string plain = loop::toString(lowered.unscheduledKernel(0));
  EXPECT_NE(plain.find("for (ci, 0, 3)"), std::string::npos) << plain;
  const std::string& trace = lowered.unscheduledKernel(0).defaultTrace;
  EXPECT_NE(trace.find("register_tile("), std::string::npos) << trace;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, ABlockedMaxPoolSlidesItsWindowLikeADepthwiseConv) {
  // ResNet's pool: 3x3, stride 2, padding 1 on a 12x12 plane: position 0 reaches past the left
  // edge, 1..5 do not; the window's max is kept in registers across its taps.
  const auto lowered = lower("graph @mp opset 17 {\n  input %x: f32[1,2,12,12,16]\n"
                             "  %y: f32[1,2,6,6,16] = lathe::MaxPoolNCHWc(%x) {kernel_shape = "
                             "[3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  const std::string plain = loop::toString(naive);
  EXPECT_NE(plain.find("for (ow, 0, 5)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("select("), std::string::npos) << plain;
  EXPECT_NE(naive.defaultTrace.find("register_tile(ow, kh"), std::string::npos)
      << naive.defaultTrace;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, BlockedAverageAndLpPoolsShareTheWindowNest) {
  // The same window nest with a sum: AveragePool divides by the taps inside the input
  // (count_include_pad = 0: corner positions divide by 4, not 9), LpPool takes the root of
  // its sum of squares (p = 2: a square root).
  const char* avg = "graph @ap opset 17 {\n  input %x: f32[1,2,7,7,16]\n"
                    "  %y: f32[1,2,7,7,16] = lathe::AveragePoolNCHWc(%x) {kernel_shape = [3, 3], "
                    "pads = [1, 1, 1, 1]}\n  output %y\n}\n";
  const char* lp = "graph @lp opset 17 {\n  input %x: f32[1,2,7,7,16]\n"
                   "  %y: f32[1,2,3,3,16] = lathe::LpPoolNCHWc(%x) {kernel_shape = [2, 2], "
                   "strides = [2, 2], p = 2}\n  output %y\n}\n";
  for (const char* text : {avg, lp}) {
    const auto lowered = lower(text);
    ASSERT_EQ(lowered.kernels.size(), 1u);
    const loop::Kernel& naive = lowered.unscheduledKernel(0);
    const std::string plain = loop::toString(naive);
    EXPECT_EQ(plain.find("select("), std::string::npos) << plain; // sums, no maximum
    EXPECT_NE(plain.find(text == avg ? "/f32(max(" : "sqrt("), std::string::npos) << plain;
    EXPECT_NE(naive.defaultTrace.find("register_tile("), std::string::npos) << naive.defaultTrace;
    expectTraceReplays(lowered, 0);
  }
}

TEST(DefaultTrace, ABlockedGlobalPoolKeepsABlockInRegistersAcrossThePlane) {
  const auto lowered = lower("graph @gap opset 17 {\n  input %x: f32[2,3,7,7,16]\n"
                             "  %y: f32[2,3,1,1,16] = lathe::GlobalAveragePoolNCHWc(%x)\n"
                             "  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace.rfind("split(j, 8)\nregister_tile(j.o, h)\n", 0), 0u)
      << naive.defaultTrace;
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find("y.tile"), std::string::npos) << tiled;
  EXPECT_NE(tiled.find("/broadcast(49.0f, 8)"), std::string::npos) << tiled;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, APointwiseConvIsAProductWithARemainderTile) {
  // A 1x1 Conv over a 5x8 plane is a 12 x 40 product per image: AVX2 tiles of 4 channels x
  // 2 vectors of 8 positions leave one vector per row, lifted into a tile of its own.
  const auto lowered = lower("graph @pw opset 17 {\n  input %x: f32[1,8,5,8]\n"
                             "  input %w: f32[12,8,1,1]\n  input %b: f32[12]\n"
                             "  %y: f32[1,12,5,8] = Conv(%x, %w, %b)\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace, "split(i, 4)\nsplit(j, 16)\nreorder(j.o, i.o, i.i, j.i)\n"
                                "partition(i.i)\nsplit(j.i, 8)\nregister_tile(i.i, k)\n"
                                "split(j.i.r1, 8)\nregister_tile(i.i.r1, k.r1)\n"
                                "fuse(j.o, i.o)\n"); // too little work to run in parallel
  const std::string plain = loop::toString(naive);
  EXPECT_NE(plain.find("for (k, 0, 8)"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("ramp("), std::string::npos) << plain;
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find(".r1.tile"), std::string::npos) << tiled;
  EXPECT_NE(tiled.find("+ broadcast(b["), std::string::npos) << tiled; // bias on the registers
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, AnNchwConvTilesChannelsByVectorsOfARow) {
  // Three input channels, five output channels: too few to fill blocks, so the Conv stays in
  // NCHW. Five is odd: a tile is one channel x 2 vectors of 8 positions (AVX2); the 20-wide
  // rows leave 4 positions, one shorter vector. The padded copy runs row by row, its rows
  // in vectors and a shorter last one.
  const auto lowered = lower("graph @c opset 17 {\n  input %x: f32[1,3,6,20]\n"
                             "  input %w: f32[5,3,3,3]\n  input %b: f32[5]\n"
                             "  %y: f32[1,5,6,20] = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]}\n"
                             "  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace,
            "fuse(hp, plane)\nsplit(w, 8)\npartition(w.i)\nvectorize(w.i)\nvectorize(w.i.r1)\n"
            "split(wp, 8)\npartition(wp.i)\nvectorize(wp.i)\nvectorize(wp.i.r1)\n"
            "split(ow, 16)\nreorder(oh, ow.o, m, ow.i)\npartition(ow.i)\nsplit(ow.i, 8)\n"
            "register_tile(ow.i.o, c)\nregister_tile(ow.i.r1, c.r1)\nfuse(oh, ow.o)\n"
            "fuse(oh.ow.o.fused, m)\n"); // too little work to run in parallel
  const std::string plain = loop::toString(naive);
  EXPECT_NE(plain.find("for (c, 0, 3)"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("ramp("), std::string::npos) << plain;
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find("y.ow.i.r1.tile"), std::string::npos) << tiled;
  EXPECT_NE(tiled.find("+ broadcast(b["), std::string::npos) << tiled; // bias on the registers
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, AGroupedNchwConvRunsItsGroupsAsTasks) {
  // Two groups of 2 output channels reading 2 input channels each: the tile is a group's 2
  // channels x the row's 2 vectors, and the group is a task loop, so the tile's input loads
  // do not depend on its channel.
  const auto lowered = lower("graph @g opset 17 {\n  input %x: f32[1,4,6,16]\n"
                             "  input %w: f32[4,2,3,3]\n"
                             "  %y: f32[1,4,6,16] = Conv(%x, %w) {group = 2, pads = [1, 1, 1, 1]}\n"
                             "  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace, "fuse(hp, plane)\nsplit(w, 8)\nvectorize(w.i)\nsplit(wp, 8)\n"
                                "partition(wp.i)\nvectorize(wp.i)\nvectorize(wp.i.r1)\n"
                                "split(ow, 8)\nreorder(oh, g, m, ow.o, ow.i)\n"
                                "register_tile(m, c)\nfuse(oh, g)\n");
  const std::string plain = loop::toString(naive);
  EXPECT_NE(plain.find("for (g, 0, 2)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("(g*2 + c)"), std::string::npos) << plain; // the group's input channels
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, ADepthwiseNchwConvPadsEachPlaneInsideItsTask) {
  // Eight channels do not fill a block, so the depthwise Conv stays in NCHW: a task per
  // (image, channel) plane, which first copies its plane into a padded scratch of its own
  // (vectorized rows), then keeps tiles of 4 output rows x 3 vectors in registers across the
  // 3x3 taps (AVX2: 8 lanes; the 30-wide rows end in a shorter vector of 6).
  const auto lowered = lower("graph @dw opset 17 {\n  input %x: f32[2,8,16,30]\n"
                             "  input %w: f32[8,1,3,3]\n  input %b: f32[8]\n"
                             "  %y: f32[2,8,16,30] = Conv(%x, %w, %b) {group = 8, "
                             "pads = [1, 1, 1, 1]}\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace,
            "split(w, 8)\npartition(w.i)\nvectorize(w.i)\nvectorize(w.i.r1)\nsplit(wp, 8)\n"
            "vectorize(wp.i)\nunroll(kw)\nunroll(kh)\nsplit(oh, 4)\nsplit(ow, 24)\n"
            "reorder(oh.o, ow.o, oh.i, ow.i)\npartition(oh.i)\nsplit(ow.i, 8)\n"
            "register_tile(oh.i, kh)\nregister_tile(oh.i.r1, kh.r1)\nparallel(n)\nfuse(n, g)\n");
  const std::string plain = loop::toString(naive);
  const std::size_t planes = plain.find("for (g, 0, 8)"), scratch = plain.find("xpad");
  ASSERT_NE(planes, std::string::npos) << plain;
  EXPECT_NE(scratch, std::string::npos) << plain;
  EXPECT_GT(scratch, planes) << plain; // allocated inside the task
  EXPECT_NE(plain.find("for (kh, 0, 3)"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("ramp("), std::string::npos) << plain;
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find("parallel for (n.g.fused, 0, 16)"), std::string::npos) << tiled;
  EXPECT_NE(tiled.find("+ broadcast(b["), std::string::npos) << tiled; // bias on the registers
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, AnNchwMaxPoolKeepsVectorsOfARowAcrossItsWindow) {
  // Two channels do not fill a block, so the pool stays in NCHW: a task per plane, which
  // copies its plane padded with the lowest float (which never wins) first; tiles of 3 rows x
  // 2 vectors of 8 positions (AVX2), and 3 rows x a shorter vector for the last 4 of each
  // 20-wide row, kept in registers across the unrolled 3x3 window. Too little work to run the
  // two planes in parallel.
  const auto lowered = lower("graph @p opset 17 {\n  input %x: f32[1,2,9,20]\n"
                             "  %y: f32[1,2,9,20] = MaxPool(%x) {kernel_shape = [3, 3], "
                             "pads = [1, 1, 1, 1]}\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace,
            "split(w, 8)\npartition(w.i)\nvectorize(w.i)\nvectorize(w.i.r1)\nsplit(wp, 8)\n"
            "partition(wp.i)\nvectorize(wp.i)\nvectorize(wp.i.r1)\nunroll(kw)\nunroll(kh)\n"
            "split(oh, 3)\nsplit(ow, 16)\nreorder(oh.o, ow.o, oh.i, ow.i)\npartition(oh.i)\n"
            "split(ow.i, 8)\nregister_tile(oh.i, kh)\nregister_tile(oh.i.r1, kh.r1)\n");
  const std::string plain = loop::toString(naive);
  EXPECT_NE(plain.find("for (kh, 0, 3)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("f32(-inf)"), std::string::npos) << plain; // the padding value
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find("y.oh.i.r1.tile"), std::string::npos) << tiled;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, ARowNarrowerThanAVectorIsOneShorterVector) {
  // 6-wide rows with 8 lanes (AVX2): each row of a tile is one vector of 6, kept in
  // registers across the window like a whole one; no split of the row, no remainder.
  const auto lowered = lower("graph @dw opset 17 {\n  input %x: f32[1,4,6,6]\n"
                             "  input %w: f32[4,1,3,3]\n"
                             "  %y: f32[1,4,6,6] = Conv(%x, %w) {group = 4, pads = [1, 1, 1, 1]}\n"
                             "  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace,
            "vectorize(wp)\nunroll(kw)\nunroll(kh)\nsplit(oh, 3)\nreorder(oh.o, oh.i, ow)\n"
            "register_tile(oh.i, kh)\n"); // the padded rows are 8 wide
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find("ramp("), std::string::npos) << tiled;
  EXPECT_NE(tiled.find(", 1, 6)]"), std::string::npos) << tiled; // vectors of 6
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, AnNchwConvOnNarrowRowsTakesMoreChannelsInItsTile) {
  // 7-wide rows with 8 lanes (AVX2): a row is one vector of 7, and the tile takes all 6
  // output channels (a divisor of M beyond 1, 2, 4 and 8) across the 3 input channels x 9
  // taps; nothing splits the row.
  const auto lowered = lower("graph @c opset 17 {\n  input %x: f32[1,3,7,7]\n"
                             "  input %w: f32[6,3,3,3]\n"
                             "  %y: f32[1,6,7,7] = Conv(%x, %w) {pads = [1, 1, 1, 1]}\n"
                             "  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_NE(naive.defaultTrace.find("register_tile(m, c)"), std::string::npos)
      << naive.defaultTrace;
  EXPECT_EQ(naive.defaultTrace.find("split(ow"), std::string::npos) << naive.defaultTrace;
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find(", 1, 7)]"), std::string::npos) << tiled; // rows of 7 lanes
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, ARowTimesAMatrixTakesItsRemainderToo) {
  // One row: tiles of 8 vectors of 8 columns; 72 columns leave one vector.
  const auto lowered = lower("graph @gemv opset 17 {\n  input %a: f32[1,16]\n"
                             "  input %b: f32[16,72]\n  %y: f32[1,72] = MatMul(%a, %b)\n"
                             "  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  EXPECT_EQ(lowered.unscheduledKernel(0).defaultTrace,
            "split(j, 64)\npartition(j.i)\nsplit(j.i, 8)\nregister_tile(j.i.o, k)\n"
            "split(j.i.r1, 8)\nregister_tile(j.i.r1.o, k.r1)\n");
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, AProductNarrowerThanAVectorTilesRowsOfOneShorterVector) {
  // Six classes with 8 lanes (AVX2): each row of the result is one vector of 6 lanes; 24
  // rows are 3 tiles of 8 rows kept in registers across the sum.
  const auto lowered = lower("graph @cls opset 17 {\n  input %a: f32[24,32]\n"
                             "  input %b: f32[32,6]\n  %y: f32[24,6] = MatMul(%a, %b)\n"
                             "  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace, "split(i, 8)\nregister_tile(i.i, k)\n");
  const std::string tiled = loop::toString(lowered.kernels[0]);
  EXPECT_NE(tiled.find(", 1, 6)]"), std::string::npos) << tiled; // rows of 6 lanes
  EXPECT_NE(tiled.find("y.tile"), std::string::npos) << tiled;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, AWidthThatIsNoWholeNumberOfVectorsEndsInAShorterOne) {
  // AVX2: 8 lanes. One row of 100 columns: a tile of 8 vectors, then the last 36 columns as
  // 4 vectors and one vector of 4.
  const auto row = lower("graph @mm opset 17 {\n  input %a: f32[1,64]\n"
                         "  input %b: f32[64,100]\n  %y: f32[1,100] = MatMul(%a, %b)\n"
                         "  output %y\n}\n");
  ASSERT_EQ(row.kernels.size(), 1u);
  EXPECT_EQ(row.unscheduledKernel(0).defaultTrace,
            "split(j, 64)\npartition(j.i)\nsplit(j.i, 8)\nregister_tile(j.i.o, k)\n"
            "split(j.i.r1, 32)\npartition(j.i.r1.i)\nsplit(j.i.r1.i, 8)\n"
            "register_tile(j.i.r1.i.o, k.r1)\nregister_tile(j.i.r1.i.r1, k.r1.r1)\n");
  const std::string text = loop::toString(row.kernels[0]);
  EXPECT_NE(text.find("y.j.i.r1.i.r1.tile[ramp(0, 1, 4)]"), std::string::npos) << text;
  expectTraceReplays(row, 0);
  // Rows of 20 columns in tiles of 4 rows x 2 vectors: the last 4 columns are one vector of 4.
  const auto rows = lower("graph @mm opset 17 {\n  input %a: f32[8,64]\n"
                          "  input %b: f32[64,20]\n  %y: f32[8,20] = MatMul(%a, %b)\n"
                          "  output %y\n}\n");
  ASSERT_EQ(rows.kernels.size(), 1u);
  EXPECT_EQ(rows.unscheduledKernel(0).defaultTrace,
            "split(i, 4)\nsplit(j, 16)\nreorder(j.o, i.o, i.i, j.i)\npartition(i.i)\n"
            "split(j.i, 8)\nregister_tile(i.i, k)\nregister_tile(i.i.r1, k.r1)\n"
            "fuse(j.o, i.o)\n");
  expectTraceReplays(rows, 0);
}

TEST(DefaultTrace, LongSumsTakeEightRowsWithAvx512) {
  // 32 registers: a sum of 256 takes 8 rows x 2 vectors of 16; a sum of 128 keeps 4 x 4.
  const auto product = [](int k) {
    const std::string K = std::to_string(k);
    return lower("graph @mm opset 17 {\n  input %a: f32[64," + K + "]\n  input %b: f32[" + K +
                     ",128]\n  %y: f32[64,128] = MatMul(%a, %b)\n  output %y\n}\n",
                 "llvm -mcpu=skylake-avx512");
  };
  const auto longSum = product(256), shortSum = product(128);
  EXPECT_EQ(longSum.unscheduledKernel(0).defaultTrace.rfind("split(i, 8)\nsplit(j, 32)\n", 0), 0u)
      << longSum.unscheduledKernel(0).defaultTrace;
  EXPECT_EQ(shortSum.unscheduledKernel(0).defaultTrace.rfind("split(i, 4)\nsplit(j, 64)\n", 0), 0u)
      << shortSum.unscheduledKernel(0).defaultTrace;
  expectTraceReplays(longSum, 0);
}

TEST(DefaultTrace, ALargeElementwiseNestIsParallelByItsTrace) {
  const auto lowered = lower("graph @relu opset 17 {\n  input %x: f32[1,8,64,64]\n"
                             "  %y: f32[1,8,64,64] = Relu(%x)\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  EXPECT_EQ(naive.defaultTrace.rfind("parallel(", 0), 0u) << naive.defaultTrace;
  EXPECT_EQ(loop::toString(naive).find("parallel"), std::string::npos);
  EXPECT_NE(loop::toString(lowered.kernels[0]).find("parallel for"), std::string::npos);
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, SoftmaxRowsRunOnVectorsWithPartialResults) {
  // AVX2: 8 lanes; rows of 100 take 4 vectors of partial results (3 rounds and a tail of 4),
  // and the passes that write every element split by 8 with a remainder of 4. The rows are
  // spread over the threads first, while the nest is plain.
  const auto lowered = lower("graph @sm opset 17 {\n  input %x: f32[256,100]\n"
                             "  %y: f32[256,100] = Softmax(%x)\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  const loop::Kernel& naive = lowered.unscheduledKernel(0);
  const std::string& trace = naive.defaultTrace;
  EXPECT_EQ(
      trace.rfind("parallel(t)\nrfactor(r, 32)\nsplit(r.i, 8)\nvectorize(r.i.i)\nunroll(r.i.o)\n"
                  "vectorize(r.init)\nvectorize(r.h1)\nvectorize(r.h2)\nvectorize(r.h3)\n"
                  "vectorize(r.h4)\nsplit(r1, 8)\npartition(r1.i)\nvectorize(r1.i)\n",
                  0),
      0u)
      << trace;
  EXPECT_NE(trace.find("rfactor(r2, 32)"), std::string::npos) << trace;
  const std::string plain = loop::toString(naive);
  EXPECT_EQ(plain.find("parallel"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("ramp"), std::string::npos) << plain;
  const std::string vectors = loop::toString(lowered.kernels[0]);
  // The running maximum over 8-lane partials, the tree's first level on 16 of them.
  EXPECT_NE(vectors.find("max.r.rf[ramp(r.i.o*8, 1, 8)] = max(max.r.rf[ramp(r.i.o*8, 1, 8)]"),
            std::string::npos)
      << vectors;
  EXPECT_NE(vectors.find("max.r.rf[ramp(0, 1, 16)] = max(max.r.rf[ramp(0, 1, 16)], "
                         "max.r.rf[ramp(16, 1, 16)])"),
            std::string::npos)
      << vectors;
  expectTraceReplays(lowered, 0);
}

TEST(DefaultTrace, RowReductionsTakePartialResultsExceptSignedSums) {
  const auto mean = lower("graph @m opset 17 {\n  input %x: f32[32,256]\n"
                          "  %y: f32[32,1] = ReduceMean(%x) {axes = [1]}\n  output %y\n}\n");
  ASSERT_EQ(mean.kernels.size(), 1u);
  EXPECT_EQ(mean.unscheduledKernel(0).defaultTrace.rfind("rfactor(r, 32)\n", 0), 0u)
      << mean.unscheduledKernel(0).defaultTrace;
  expectTraceReplays(mean, 0);
  // Max of int32 reorders exactly; a sum of int32 could overflow out of order, so it stays.
  const auto imax = lower("graph @m opset 17 {\n  input %x: i32[4,64]\n"
                          "  %y: i32[4] = ReduceMax(%x) {axes = [1], keepdims = 0}\n"
                          "  output %y\n}\n");
  EXPECT_EQ(imax.unscheduledKernel(0).defaultTrace.rfind("rfactor(r, 32)\n", 0), 0u)
      << imax.unscheduledKernel(0).defaultTrace;
  // With AVX-512 a vector holds 64 bytes or 32 shorts: rfactor's 64 partial results at most.
  const auto bytes = lower("graph @m opset 13 {\n  input %x: u8[4,512]\n"
                           "  %y: u8[4,1] = ReduceMax(%x) {axes = [1]}\n  output %y\n}\n",
                           "llvm -mcpu=skylake-avx512");
  EXPECT_EQ(bytes.unscheduledKernel(0).defaultTrace.rfind("rfactor(r, 64)\nvectorize(r.i)\n", 0),
            0u)
      << bytes.unscheduledKernel(0).defaultTrace;
  expectTraceReplays(bytes, 0);
  const auto shorts = lower("graph @m opset 13 {\n  input %x: i16[4,512]\n"
                            "  %y: i16[4,1] = ReduceMin(%x) {axes = [1]}\n  output %y\n}\n",
                            "llvm -mcpu=skylake-avx512");
  EXPECT_EQ(shorts.unscheduledKernel(0).defaultTrace.rfind("rfactor(r, 64)\nsplit(r.i, 32)\n", 0),
            0u)
      << shorts.unscheduledKernel(0).defaultTrace;
  expectTraceReplays(shorts, 0);
  const auto isum = lower("graph @m opset 11 {\n  input %x: i32[4,64]\n"
                          "  %y: i32[4] = ReduceSum(%x) {axes = [1], keepdims = 0}\n"
                          "  output %y\n}\n");
  EXPECT_EQ(isum.unscheduledKernel(0).defaultTrace.find("rfactor"), std::string::npos)
      << isum.unscheduledKernel(0).defaultTrace;
}

TEST(DefaultTrace, ASmallNestHasNone) {
  const auto lowered = lower("graph @relu opset 17 {\n  input %x: f32[4,8]\n"
                             "  %y: f32[4,8] = Relu(%x)\n  output %y\n}\n");
  ASSERT_EQ(lowered.kernels.size(), 1u);
  EXPECT_TRUE(lowered.unscheduledKernel(0).defaultTrace.empty());
  EXPECT_TRUE(lowered.scheduleTraces.at(0).empty());
}

// A schedule replaces the default trace and replays on the plain nest.
TEST(DefaultTrace, AScheduleReplacesIt) {
  auto g = graph::parseGraph("graph @mm opset 17 {\n  input %a: f32[64,96]\n"
                             "  input %b: f32[96,48]\n  %y: f32[64,48] = MatMul(%a, %b)\n"
                             "  output %y\n}\n",
                             "model.lir");
  const auto name = lower("graph @mm opset 17 {\n  input %a: f32[64,96]\n"
                          "  input %b: f32[96,48]\n  %y: f32[64,48] = MatMul(%a, %b)\n"
                          "  output %y\n}\n")
                        .kernels.at(0)
                        .name;
  const schedule::ScheduleSet set =
      schedule::parseText("kernel " + name + ":\n  split(j, 8)\n  parallel(i)\n", "s.txt");
  const auto lowered = driver::lowerModel(*g, target::parseTarget("llvm -mcpu=x86-64-v3"), &set);
  EXPECT_EQ(lowered.scheduleTraces.at(0), "split(j, 8)\nparallel(i)\n");
  const std::string text = loop::toString(lowered.kernels[0]);
  EXPECT_EQ(text.find("tile"), std::string::npos) << text;
  EXPECT_NE(text.find("parallel for (i, 0, 64)"), std::string::npos) << text;
  EXPECT_NE(text.find("for (j.i, 0, 8)"), std::string::npos) << text;
}

} // namespace
} // namespace lathe
