#include "engine/runtime/memory_plan.h"
#include "engine/support/diagnostics.h"

#include <gtest/gtest.h>
#include <random>

namespace lathe::runtime {
namespace {

TEST(MemoryPlan, EmptyInput) {
  const MemoryPlan plan = planMemory({});
  EXPECT_EQ(plan.peakBytes, 0u);
  EXPECT_EQ(plan.naiveBytes, 0u);
  EXPECT_EQ(validateMemoryPlan({}, plan), "");
}

TEST(MemoryPlan, ChainReusesFreedBuffers) {
  // a -> b -> c -> d: each kernel reads the previous buffer and writes the next.
  const std::vector<BufferRequest> buffers = {
      {0, 1024, 0, 1}, {1, 1024, 1, 2}, {2, 1024, 2, 3}, {3, 1024, 3, 4}};
  const MemoryPlan plan = planMemory(buffers);
  EXPECT_EQ(validateMemoryPlan(buffers, plan), "");
  EXPECT_EQ(plan.peakBytes, 2048u); // ping-pong between two slots
  EXPECT_EQ(plan.naiveBytes, 4096u);
  EXPECT_EQ(plan.lowerBoundBytes, 2048u);
  EXPECT_EQ(plan.offsetOf(0), plan.offsetOf(2));
  EXPECT_EQ(plan.offsetOf(1), plan.offsetOf(3));
  EXPECT_NE(plan.offsetOf(0), plan.offsetOf(1));
}

TEST(MemoryPlan, SmallBufferTakesTheTightestHole) {
  // At step 1 only L1 (id 2) and L2 (id 4) are live; the dead X (id 1) and Y (id 3) leave a
  // 1024-byte hole below L1 and a 360-byte hole between L1 and L2. S (id 5) fits both;
  // best fit takes the tighter one, where first fit would have taken offset 0.
  const std::vector<BufferRequest> buffers = {
      {1, 1000, 0, 0}, {2, 600, 0, 1}, {3, 300, 0, 0}, {4, 280, 0, 1}, {5, 250, 1, 1},
  };
  const MemoryPlan plan = planMemory(buffers);
  ASSERT_EQ(validateMemoryPlan(buffers, plan), "");
  EXPECT_EQ(plan.offsetOf(1), 0u);
  EXPECT_EQ(plan.offsetOf(2), 1024u);
  EXPECT_EQ(plan.offsetOf(3), 1664u);
  EXPECT_EQ(plan.offsetOf(4), 1984u);
  EXPECT_EQ(plan.offsetOf(5), plan.offsetOf(3));
  EXPECT_EQ(plan.peakBytes, 2304u);
}

TEST(MemoryPlan, AlignmentAndZeroSizedBuffers) {
  const std::vector<BufferRequest> buffers = {
      {10, 100, 0, 2}, {11, 0, 0, 2}, {12, 4096, 1, 2, 4096}, {13, 1, 0, 2, 16}};
  const MemoryPlan plan = planMemory(buffers);
  ASSERT_EQ(validateMemoryPlan(buffers, plan), "");
  EXPECT_EQ(plan.alignment, 4096u);
  EXPECT_EQ(plan.offsetOf(12) % 4096, 0u);
  EXPECT_EQ(plan.offsetOf(13) % 64, 0u); // raised to 64
  EXPECT_EQ(plan.offsetOf(11), 0u);
  EXPECT_EQ(plan.peakBytes % 64, 0u);
  EXPECT_EQ(plan.naiveBytes, 128u + 0u + 4096u + 64u);
}

TEST(MemoryPlan, NeverWorseThanNoReuse) {
  // Greedy would put the 4097-byte buffer at 0 and the page-aligned one at 8192 (12288
  // bytes); giving each its own slot, page-aligned first, needs 8256.
  const std::vector<BufferRequest> buffers = {{1, 4097, 0, 1}, {2, 4096, 0, 1, 4096}};
  const MemoryPlan plan = planMemory(buffers);
  ASSERT_EQ(validateMemoryPlan(buffers, plan), "");
  EXPECT_EQ(plan.naiveBytes, 8256u);
  EXPECT_EQ(plan.peakBytes, 8256u);
  EXPECT_EQ(plan.offsetOf(2), 0u);
}

TEST(MemoryPlan, BadRequestsAreInternalErrors) {
  const std::vector<BufferRequest> duplicate = {{1, 8, 0, 1}, {1, 8, 2, 3}};
  EXPECT_THROW(planMemory(duplicate), Error);
  const std::vector<BufferRequest> backwards = {{1, 8, 3, 1}};
  EXPECT_THROW(planMemory(backwards), Error);
  const std::vector<BufferRequest> badAlignment = {{1, 8, 0, 1, 48}};
  EXPECT_THROW(planMemory(badAlignment), Error);
}

TEST(MemoryPlan, ValidatorCatchesConflicts) {
  const std::vector<BufferRequest> buffers = {{0, 128, 0, 2}, {1, 128, 2, 3}, {2, 64, 4, 5}};
  MemoryPlan plan = planMemory(buffers);
  ASSERT_EQ(validateMemoryPlan(buffers, plan), "");
  MemoryPlan broken = plan;
  broken.placements[1].offset = broken.placements[0].offset + 64; // overlaps 0 at step 2
  broken.peakBytes = 1024;
  EXPECT_NE(validateMemoryPlan(buffers, broken).find("share memory"), std::string::npos)
      << validateMemoryPlan(buffers, broken);
  broken = plan;
  broken.placements[2].offset = 32;
  EXPECT_NE(validateMemoryPlan(buffers, broken).find("not aligned"), std::string::npos);
  broken = plan;
  broken.peakBytes = 64;
  EXPECT_NE(validateMemoryPlan(buffers, broken).find("beyond the arena"), std::string::npos);
  broken = plan;
  broken.placements.pop_back();
  EXPECT_NE(validateMemoryPlan(buffers, broken), "");
  // Disjoint lifetimes may share bytes.
  broken = plan;
  broken.placements[2].offset = broken.placements[0].offset;
  EXPECT_EQ(validateMemoryPlan(buffers, broken), "");
}

// Random straight-line programs: hundreds of cases, each plan must be valid and between
// the live-bytes lower bound and the naive sum.
TEST(MemoryPlan, RandomLifetimesNeverConflict) {
  std::mt19937_64 rng(2024);
  double ratioSum = 0;
  int cases = 0;
  for (int round = 0; round < 600; ++round) {
    const int steps = 1 + static_cast<int>(rng() % 40);
    const int count = static_cast<int>(rng() % 120);
    std::vector<BufferRequest> buffers;
    for (int i = 0; i < count; ++i) {
      BufferRequest b;
      b.id = 1000 + i * 3;
      const int sizeClass = static_cast<int>(rng() % 4);
      b.bytes = sizeClass == 0 ? rng() % 64 : rng() % (std::uint64_t(1) << (8 + 4 * sizeClass));
      b.firstUse = static_cast<std::int64_t>(rng() % steps);
      b.lastUse = b.firstUse + static_cast<std::int64_t>(rng() % (1 + rng() % steps));
      if (rng() % 10 == 0)
        b.alignment = std::uint64_t(1) << (rng() % 13);
      buffers.push_back(b);
    }
    const MemoryPlan plan = planMemory(buffers);
    ASSERT_EQ(validateMemoryPlan(buffers, plan), "") << "round " << round;
    ASSERT_LE(plan.peakBytes, plan.naiveBytes) << "round " << round;
    ASSERT_GE(plan.peakBytes, plan.lowerBoundBytes) << "round " << round;
    if (plan.lowerBoundBytes > 0) {
      ratioSum += static_cast<double>(plan.peakBytes) / static_cast<double>(plan.lowerBoundBytes);
      ++cases;
    }
  }
  // Greedy-by-size lands within a few percent of the bound here (1.02); a regression in the
  // gap search would show here first. Deterministic (fixed seed).
  const double meanRatio = ratioSum / cases;
  RecordProperty("mean_peak_over_lower_bound", std::to_string(meanRatio));
  EXPECT_LT(meanRatio, 1.1);
}

TEST(MemoryPlan, LifetimesRunFromTheFirstCallToTheLast) {
  // Slots: 0 input, 1 and 2 intermediates, 3 an intermediate no call uses, 4 output.
  const std::vector<std::optional<std::uint64_t>> bytes = {std::nullopt, 100, 200, 300,
                                                           std::nullopt};
  const std::vector<int> c0 = {0, 1}, c1 = {1, 2}, c2 = {2, 4};
  const auto requests = lifetimeRequests(bytes, {&c0, &c1, &c2});
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].id, 1);
  EXPECT_EQ(requests[0].bytes, 100u);
  EXPECT_EQ(requests[0].firstUse, 0);
  EXPECT_EQ(requests[0].lastUse, 1);
  EXPECT_EQ(requests[1].id, 2);
  EXPECT_EQ(requests[1].firstUse, 1);
  EXPECT_EQ(requests[1].lastUse, 2);
}

} // namespace
} // namespace lathe::runtime
