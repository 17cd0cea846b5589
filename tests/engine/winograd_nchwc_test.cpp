// Winograd's minimal filtering: the transforms themselves, which blocked 3x3 Convs the
// winograd-nchwc pass takes and which tile it picks. (Numbers of whole kernels:
// tests/oracle runs winograd_zoo against ONNX Runtime.)
#include "engine/api/session.h"
#include "engine/graph_passes/winograd_nchwc.h"
#include "engine/support/winograd.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <string>

namespace lathe {
namespace {

// At [(G g Gt) .* (Bt d B)] A for one tile, in double.
std::vector<double> winogradTile(const winograd::Transforms& t, const std::vector<double>& d,
                                 const std::vector<double>& g) {
  const int a = t.alpha, m = t.m;
  std::vector<double> u(a * a), v(a * a), gg(a * 3), bd(a * a), product(a * a), am(m * a), y(m * m);
  for (int r = 0; r < a; ++r) // G g
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        gg[r * 3 + j] += t.g[r * 3 + k] * g[k * 3 + j];
  for (int r = 0; r < a; ++r) // (G g) Gt
    for (int c = 0; c < a; ++c)
      for (int k = 0; k < 3; ++k)
        u[r * a + c] += gg[r * 3 + k] * t.g[c * 3 + k];
  for (int r = 0; r < a; ++r) // Bt d
    for (int j = 0; j < a; ++j)
      for (int i = 0; i < a; ++i)
        bd[r * a + j] += t.bt[r * a + i] * d[i * a + j];
  for (int r = 0; r < a; ++r) // (Bt d) B
    for (int c = 0; c < a; ++c)
      for (int j = 0; j < a; ++j)
        v[r * a + c] += bd[r * a + j] * t.bt[c * a + j];
  for (int i = 0; i < a * a; ++i)
    product[i] = u[i] * v[i];
  for (int p = 0; p < m; ++p) // At M
    for (int c = 0; c < a; ++c)
      for (int r = 0; r < a; ++r)
        am[p * a + c] += t.at[p * a + r] * product[r * a + c];
  for (int p = 0; p < m; ++p) // (At M) A
    for (int q = 0; q < m; ++q)
      for (int c = 0; c < a; ++c)
        y[p * m + q] += am[p * a + c] * t.at[q * a + c];
  return y;
}

TEST(Winograd, TransformsComputeTheCorrelationOfATile) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int m : {2, 4}) {
    const winograd::Transforms t = winograd::transforms(m);
    ASSERT_EQ(t.m, m);
    ASSERT_EQ(t.alpha, m + 2);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> d(t.alpha * t.alpha), g(9);
      for (double& x : d)
        x = dist(rng);
      for (double& x : g)
        x = dist(rng);
      const std::vector<double> y = winogradTile(t, d, g);
      for (int p = 0; p < m; ++p)
        for (int q = 0; q < m; ++q) {
          double direct = 0; // ONNX Conv: a correlation, no flipped filter
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              direct += d[(p + i) * t.alpha + q + j] * g[i * 3 + j];
          ASSERT_NEAR(y[p * m + q], direct, 1e-12) << "m " << m << " at " << p << "," << q;
        }
    }
  }
  EXPECT_EQ(winograd::transforms(3).m, 0);
}

TEST(Winograd, TileFollowsTheNumberOfTilesAndTheMultipliesSaved) {
  // ResNet-50's 3x3 Convs: 56x56 and 28x28 planes take 4x4 tiles; 14x14 has 16 of them,
  // too few to reuse the transformed weights, and takes 2x2 (49 tiles); 7x7 stays direct.
  EXPECT_EQ(passes::winogradTileFor(1, 64, 64, 56, 56), 4);
  EXPECT_EQ(passes::winogradTileFor(1, 128, 128, 28, 28), 4);
  EXPECT_EQ(passes::winogradTileFor(1, 256, 256, 14, 14), 2);
  EXPECT_EQ(passes::winogradTileFor(1, 512, 512, 7, 7), 0);
  EXPECT_EQ(passes::winogradTileFor(8, 512, 512, 7, 7), 4); // a batch brings the tiles
  EXPECT_EQ(passes::winogradTileFor(1, 16, 64, 56, 56), 0); // too few input channels
  // 2x2 tiles on an 8x7 plane: the last column of tiles is half outside, and the multiplies
  // no longer halve (16 * 32 against 9 * 2 * 56).
  EXPECT_EQ(passes::winogradTileFor(2, 64, 32, 8, 7), 0);
}

TEST(Winograd, ZooConvsTakeTheirTilesThroughThePipeline) {
  api::Session session;
  const api::OpenResult r = session.openModel(std::string(LATHE_MODEL_DIR) + "/winograd_zoo.onnx");
  ASSERT_TRUE(r.ok()) << r.failure->message;
  std::map<std::string, std::string> ops;
  for (const auto& n : r.report->final.nodes)
    ops[n.name] = n.opType;
  EXPECT_EQ(ops["w0"], "ConvWinogradNCHWc");
  EXPECT_EQ(ops["w1"], "ConvWinogradNCHWc");
  EXPECT_EQ(ops["w2"], "ConvNCHWc"); // 1x1
  EXPECT_EQ(ops["w3"], "ConvWinogradNCHWc");
  EXPECT_EQ(ops["w4"], "ConvWinogradNCHWc");
  EXPECT_EQ(ops["w5"], "ConvNCHWc"); // 8x7 plane: too few tiles
}

} // namespace
} // namespace lathe
