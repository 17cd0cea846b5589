#include "engine/runtime/timing_stats.h"
#include "engine/support/diagnostics.h"

#include <gtest/gtest.h>
#include <vector>

namespace lathe::runtime {
namespace {

TEST(TimingStats, MatchesNumpy) {
  // numpy: a = [4, 1, 3, 2, 10]; np.mean 4.0, np.median 3.0, np.std(a, ddof=1) 3.5355339...,
  // np.percentile(a, 90) 7.6, (a, 95) 8.8, (a, 99) 9.76.
  const std::vector<double> ms = {4, 1, 3, 2, 10};
  const TimingStats s = computeTimingStats(ms);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_NEAR(s.stddev, 3.5355339059327378, 1e-12);
  EXPECT_NEAR(s.p90, 7.6, 1e-12);
  EXPECT_NEAR(s.p95, 8.8, 1e-12);
  EXPECT_NEAR(s.p99, 9.76, 1e-12);
}

TEST(TimingStats, EvenCountMedianInterpolates) {
  const std::vector<double> ms = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(computeTimingStats(ms).median, 2.5);
  EXPECT_DOUBLE_EQ(percentile(ms, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(ms, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile(ms, 25), 1.75);
  EXPECT_THROW(percentile(ms, 101), Error);
}

TEST(TimingStats, EmptyAndSingle) {
  const TimingStats empty = computeTimingStats({});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.mean, 0.0);
  const std::vector<double> one = {2.5};
  const TimingStats s = computeTimingStats(one);
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_EQ(s.median, 2.5);
  EXPECT_EQ(s.p99, 2.5);
  EXPECT_EQ(s.stddev, 0.0);
}

TEST(TimingStats, StddevIsStableForLargeOffsets) {
  // Sum-of-squares would lose every digit here; two passes keep them.
  const std::vector<double> ms = {1e9 + 1, 1e9 + 2, 1e9 + 3};
  EXPECT_NEAR(computeTimingStats(ms).stddev, 1.0, 1e-6);
}

TEST(TimingStats, Format) {
  const std::vector<double> ms = {1, 2, 3};
  const std::string text = formatTimingStats(computeTimingStats(ms));
  EXPECT_NE(text.find("mean 2 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("(n=3)"), std::string::npos) << text;
}

} // namespace
} // namespace lathe::runtime
