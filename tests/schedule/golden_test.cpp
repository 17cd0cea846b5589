// Golden tests in the form "kernel before -> steps -> the loop IR expected": the whole
// kernel is compared, so a change in any loop, index or statement a primitive makes shows
// up here as a diff of the printed loop IR.
#include "engine/loop_ir/ir_printer.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_io.h"
#include "tests/schedule/schedule_kernels.h"

#include <gtest/gtest.h>

namespace lathe::schedule {
namespace {

struct Golden {
  const char* name;
  const char* steps;
  const char* expected;
  loop::Kernel (*kernel)() = testing::matmulKernel; // the kernel before
};

loop::Kernel stencil() {
  return testing::stencilKernel();
}
loop::Kernel scratch() {
  return testing::scratchKernel();
}
loop::Kernel argmax() {
  return testing::argmaxKernel();
}

const Golden kGolden[] = {
    {"reorder_swaps_the_epilogue_loops", "reorder(q, p)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j, 0, 20) {\n"
     "      out[i*20 + j] = 0.0f\n"
     "      for (k, 0, 17) {\n"
     "        out[i*20 + j] = out[i*20 + j] + a[i*17 + k]*b[k*20 + j]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (q, 0, 20) {\n"
     "    for (p, 0, 30) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"pack_copies_a_panel_per_column_block", "split(j, 4)\nreorder(j.o, i)\npack(b, j.o)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (j.o, 0, 5) {\n"
     "    allocate b.j.o.packed: f32[68] on stack {\n"
     "      for (j.i.b.pack, 0, 4) {\n"
     "        for (k.b.pack, 0, 17) {\n"
     "          b.j.o.packed[j.i.b.pack*17 + k.b.pack] = b[k.b.pack*20 + (j.o*4 + j.i.b.pack)]\n"
     "        }\n"
     "      }\n"
     "      for (i, 0, 30) {\n"
     "        for (j.i, 0, 4) {\n"
     "          out[i*20 + (j.o*4 + j.i)] = 0.0f\n"
     "          for (k, 0, 17) {\n"
     "            out[i*20 + (j.o*4 + j.i)] = out[i*20 + (j.o*4 + j.i)] + a[i*17 + "
     "k]*b.j.o.packed[j.i*17 + k]\n"
     "          }\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q, 0, 20) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"compute_at_computes_the_rows_each_iteration_reads", "compute_at(t, p)\n",
     "kernel stencil(%a: f32[8,5]) -> (%y: f32[6,5]) {  # from: s\n"
     "  allocate t: f32[40] on stack {\n"
     "    for (p, 0, 6) {\n"
     "      for (i, max(p, 0), min(p + 2, 7) - max(p, 0) + 1) {\n"
     "        for (j, 0, 5) {\n"
     "          t[i*5 + j] = a[i*5 + j]*2.0f\n"
     "        }\n"
     "      }\n"
     "      for (q, 0, 5) {\n"
     "        y[p*5 + q] = t[p*5 + q] + t[p*5 + q + 10]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n",
     stencil},
    {"compute_inline_recomputes_the_scratch_where_read", "compute_inline(t)\n",
     "kernel scratch(%a: f32[6,5]) -> (%y: f32[6,5]) {  # from: s\n"
     "  for (p, 0, 6) {\n"
     "    for (q, 0, 5) {\n"
     "      y[p*5 + q] = a[p*5 + q]*2.0f + a[(p + 1)%6*5 + q]*2.0f\n"
     "    }\n"
     "  }\n"
     "}\n",
     scratch},
    {"split_that_divides_makes_no_guard", "split(q, 4)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j, 0, 20) {\n"
     "      out[i*20 + j] = 0.0f\n"
     "      for (k, 0, 17) {\n"
     "        out[i*20 + j] = out[i*20 + j] + a[i*17 + k]*b[k*20 + j]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q.o, 0, 5) {\n"
     "      for (q.i, 0, 4) {\n"
     "        y[p*20 + (q.o*4 + q.i)] = max(out[p*20 + (q.o*4 + q.i)]*0.5f + bias[q.o*4 + q.i], "
     "0.0f)\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"split_with_a_tail_guards_the_body", "split(q, 7)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j, 0, 20) {\n"
     "      out[i*20 + j] = 0.0f\n"
     "      for (k, 0, 17) {\n"
     "        out[i*20 + j] = out[i*20 + j] + a[i*17 + k]*b[k*20 + j]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q.o, 0, 3) {\n"
     "      for (q.i, 0, 7) {\n"
     "        if (q.o*7 + q.i < 20) {\n"
     "          y[p*20 + (q.o*7 + q.i)] = max(out[p*20 + (q.o*7 + q.i)]*0.5f + bias[q.o*7 + q.i], "
     "0.0f)\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"tile_reorders_into_blocks", "tile(p, q, 5, 4)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j, 0, 20) {\n"
     "      out[i*20 + j] = 0.0f\n"
     "      for (k, 0, 17) {\n"
     "        out[i*20 + j] = out[i*20 + j] + a[i*17 + k]*b[k*20 + j]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p.o, 0, 6) {\n"
     "    for (q.o, 0, 5) {\n"
     "      for (p.i, 0, 5) {\n"
     "        for (q.i, 0, 4) {\n"
     "          y[(p.o*5 + p.i)*20 + (q.o*4 + q.i)] = max(out[(p.o*5 + p.i)*20 + (q.o*4 + "
     "q.i)]*0.5f + bias[q.o*4 + q.i], 0.0f)\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"fuse_parallel_vectorize",
     "split(q, 4)\nfuse(p, q.o)\nparallel(p.q.o.fused)\nvectorize(q.i)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j, 0, 20) {\n"
     "      out[i*20 + j] = 0.0f\n"
     "      for (k, 0, 17) {\n"
     "        out[i*20 + j] = out[i*20 + j] + a[i*17 + k]*b[k*20 + j]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  parallel for (p.q.o.fused, 0, 150) {\n"
     "    y[ramp(p.q.o.fused/5*20 + p.q.o.fused%5*4, 1, 4)] = max(out[ramp(p.q.o.fused/5*20 + "
     "p.q.o.fused%5*4, 1, 4)]*broadcast(0.5f, 4) + bias[ramp(p.q.o.fused%5*4, 1, 4)], "
     "broadcast(0.0f, 4))\n"
     "  }\n"
     "}\n"},
    {"cache_write_keeps_the_accumulator_on_the_stack", "cache_write(k)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j, 0, 20) {\n"
     "      out[i*20 + j] = 0.0f\n"
     "      allocate out.k.acc: f32[1] on stack {\n"
     "        out.k.acc[0] = out[i*20 + j]\n"
     "        for (k, 0, 17) {\n"
     "          out.k.acc[0] = out.k.acc[0] + a[i*17 + k]*b[k*20 + j]\n"
     "        }\n"
     "        out[i*20 + j] = out.k.acc[0]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q, 0, 20) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"unroll_marks_the_loop", "unroll(k)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j, 0, 20) {\n"
     "      out[i*20 + j] = 0.0f\n"
     "      unrolled for (k, 0, 17) {\n"
     "        out[i*20 + j] = out[i*20 + j] + a[i*17 + k]*b[k*20 + j]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q, 0, 20) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"register_tile_one_row_of_vectors", "split(j, 4)\nregister_tile(j.i, k)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j.o, 0, 5) {\n"
     "      allocate out.tile: f32[4] on stack {\n"
     "        out.tile[ramp(0, 1, 4)] = broadcast(0.0f, 4)\n"
     "        for (k, 0, 17) {\n"
     "          out.tile[ramp(0, 1, 4)] = out.tile[ramp(0, 1, 4)] + broadcast(a[i*17 + k], "
     "4)*b[ramp(k*20 + j.o*4, 1, 4)]\n"
     "        }\n"
     "        out[ramp(i*20 + j.o*4, 1, 4)] = out.tile[ramp(0, 1, 4)]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q, 0, 20) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"register_tile_two_rows_two_vectors_parallel",
     "split(i, 2)\nsplit(j, 10)\nsplit(j.i, 5)\nreorder(j.o, i.o, i.i, j.i.o, j.i.i)\n"
     "register_tile(i.i, k)\nfuse(j.o, i.o)\nparallel(j.o.i.o.fused)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  parallel for (j.o.i.o.fused, 0, 30) {\n"
     "    allocate out.tile: f32[20] on stack {\n"
     "      unrolled for (i.i.init, 0, 2) {\n"
     "        unrolled for (j.i.o.init, 0, 2) {\n"
     "          out.tile[ramp((i.i.init*2 + j.i.o.init)*5, 1, 5)] = broadcast(0.0f, 5)\n"
     "        }\n"
     "      }\n"
     "      for (k, 0, 17) {\n"
     "        unrolled for (i.i, 0, 2) {\n"
     "          unrolled for (j.i.o, 0, 2) {\n"
     "            out.tile[ramp((i.i*2 + j.i.o)*5, 1, 5)] = out.tile[ramp((i.i*2 + j.i.o)*5, 1, "
     "5)] + broadcast(a[(j.o.i.o.fused%15*2 + i.i)*17 + k], 5)*b[ramp(k*20 + (j.o.i.o.fused/15*10 "
     "+ j.i.o*5), 1, 5)]\n"
     "          }\n"
     "        }\n"
     "      }\n"
     "      unrolled for (i.i.out, 0, 2) {\n"
     "        unrolled for (j.i.o.out, 0, 2) {\n"
     "          out[ramp((j.o.i.o.fused%15*2 + i.i.out)*20 + (j.o.i.o.fused/15*10 + j.i.o.out*5), "
     "1, 5)] = out.tile[ramp((i.i.out*2 + j.i.o.out)*5, 1, 5)]\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q, 0, 20) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"rfactor_keeps_partial_sums_and_combines_them_in_a_tree",
     "rfactor(k, 8)\nvectorize(k.i)\nvectorize(k.init)\n",
     "kernel matmul_relu(%a: f32[30,17], %b: f32[17,20], %bias: f32[20]) -> (%out: f32[30,20], %y: "
     "f32[30,20]) {  # from: mm\n"
     "  for (i, 0, 30) {\n"
     "    for (j, 0, 20) {\n"
     "      out[i*20 + j] = 0.0f\n"
     "      allocate out.k.rf: f32[8] on stack {\n"
     "        out.k.rf[ramp(0, 1, 8)] = broadcast(-0.0f, 8)\n"
     "        for (k.o, 0, 2) {\n"
     "          out.k.rf[ramp(0, 1, 8)] = out.k.rf[ramp(0, 1, 8)] + a[ramp(i*17 + k.o*8, 1, "
     "8)]*b[ramp(k.o*160 + j, 20, 8)]\n"
     "        }\n"
     "        out[i*20 + j] = out[i*20 + j] + a[i*17 + 16]*b[j + 320]\n"
     "        for (k.h1, 0, 4) {\n"
     "          out.k.rf[k.h1] = out.k.rf[k.h1] + out.k.rf[k.h1 + 4]\n"
     "        }\n"
     "        for (k.h2, 0, 2) {\n"
     "          out.k.rf[k.h2] = out.k.rf[k.h2] + out.k.rf[k.h2 + 2]\n"
     "        }\n"
     "        out.k.rf[0] = out.k.rf[0] + out.k.rf[1]\n"
     "        out[i*20 + j] = out[i*20 + j] + out.k.rf[0]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for (p, 0, 30) {\n"
     "    for (q, 0, 20) {\n"
     "      y[p*20 + q] = max(out[p*20 + q]*0.5f + bias[q], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n"},
    {"register_tile_keeps_a_maximum_and_its_position", "register_tile(j, k)\n",
     "kernel argmax(%x: f32[8,16]) -> (%m: f32[2,16], %at: i64[2,16]) {  # from: am\n"
     "  for (i, 0, 2) {\n"
     "    allocate m.tile: f32[16] on stack {\n"
     "      allocate at.tile: i64[16] on stack {\n"
     "        m.tile[ramp(0, 1, 16)] = broadcast(f32(-inf), 16)\n"
     "        at.tile[ramp(0, 1, 16)] = broadcast(-1, 16)\n"
     "        for (k, 0, 4) {\n"
     "          let takes = x[ramp((i*4 + k)*16, 1, 16)] > m.tile[ramp(0, 1, 16)]\n"
     "          at.tile[ramp(0, 1, 16)] = select(takes, broadcast(i*4 + k, 16), at.tile[ramp(0, 1, "
     "16)])\n"
     "          m.tile[ramp(0, 1, 16)] = select(takes, x[ramp((i*4 + k)*16, 1, 16)], "
     "m.tile[ramp(0, 1, 16)])\n"
     "        }\n"
     "        m[ramp(i*16, 1, 16)] = m.tile[ramp(0, 1, 16)]\n"
     "        at[ramp(i*16, 1, 16)] = at.tile[ramp(0, 1, 16)]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n",
     argmax},
};

class GoldenSchedule : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenSchedule, PrintsTheExpectedLoopIr) {
  const Golden& g = GetParam();
  const loop::Kernel before = g.kernel();
  const ScheduleSet set = parseText("kernel " + before.name + ":\n" + g.steps);
  EXPECT_EQ(loop::toString(apply(before, set.schedules.at(0))), g.expected);
}

INSTANTIATE_TEST_SUITE_P(Schedules, GoldenSchedule, ::testing::ValuesIn(kGolden),
                         [](const auto& info) { return std::string(info.param.name); });

} // namespace
} // namespace lathe::schedule
