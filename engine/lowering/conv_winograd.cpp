// lathe::ConvWinogradNCHWc: a blocked 3x3 convolution with stride and dilation 1 by
// Winograd's minimal filtering F(m x m, 3 x 3) (engine/support/winograd.h), made by the
// winograd-nchwc pass. X is [N, C/16, H, W, 16], Y is [N, M/16, OH, OW, 16], the weights
// were transformed at compile time to U = G g Gt, [M/16, C/16, a, a, 16, 16] with
// a = m + 2, and the bias is [M]. The output is cut into T tiles of m x m; the kernel runs
// four plain nests, each with its default trace:
//   1. the input planes, zero-padded to cover the tiles (Hp = rows of tiles * m + 2);
//   2. the input transform: per tile and input channel V = Bt d B of its a x a patch d,
//      stored as [a*a, C/16, T, 16];
//   3. a*a independent products over input channels, Mt[p] = V[p] x U[p] for each point p of
//      the transformed tile, stored as [a*a, M/16, T, 16]: a blocked 1x1 convolution whose
//      images are the points, tiled in registers like the direct convolution (its variants
//      are the tuner's);
//   4. the output transform Y = At Mt A per tile and output channel, plus bias and the
//      fused epilogue, stored where the tile lies in Y (the part of the last tiles that
//      falls outside the plane is dropped).
// Vectors run along the 16 channels of a block in nests 1, 2 and 4. Per tile the products
// take a*a multiply-adds per channel pair instead of 9 m*m: 36 instead of 144 with m = 4.
#include "engine/lowering/conv_nchwc_internal.h"
#include "engine/support/winograd.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace lathe::lowering {
namespace {

constexpr std::int64_t kBlock = kNchwcBlock;

// sum_k coefficients[k] * terms[k], skipping zero coefficients and multiplying by none for
// +-1 (a positive term first, so that no negation is needed).
Expr combine(const double* coefficients, std::size_t stride, const std::vector<Expr>& terms) {
  std::vector<std::pair<double, Expr>> parts;
  for (std::size_t k = 0; k < terms.size(); ++k)
    if (coefficients[k * stride] != 0)
      parts.emplace_back(coefficients[k * stride], terms[k]);
  std::stable_partition(parts.begin(), parts.end(), [](const auto& p) { return p.first > 0; });
  const auto scaled = [](double c, const Expr& e) {
    return std::abs(c) == 1 ? e : e * constantOf(graph::DType::F32, std::abs(c));
  };
  Expr sum;
  for (const auto& [c, e] : parts) {
    if (!sum.defined())
      sum = c > 0 ? scaled(c, e) : e * constantOf(graph::DType::F32, c);
    else if (c > 0)
      sum = sum + scaled(c, e);
    else
      sum = sum - scaled(c, e);
  }
  return sum.defined() ? sum : constantOf(graph::DType::F32, 0);
}

// Values bound once per iteration (the tile's elements and the partial transforms), in order:
// later values may use earlier ones.
class Lets {
public:
  explicit Lets(KernelBuilder& kb) : kb_(kb) {}
  Expr bind(const std::string& hint, Expr value) {
    vars_.push_back(freshScalar(kb_, hint, value.type()));
    values_.push_back(std::move(value));
    return vars_.back();
  }
  Stmt around(Stmt body) const {
    for (std::size_t i = vars_.size(); i-- > 0;)
      body = loop::LetStmt::make(vars_[i], values_[i], body);
    return body;
  }

private:
  KernelBuilder& kb_;
  std::vector<Expr> vars_, values_;
};

// L x Rt for the a x a tile x (row-major), L `lRows` x a and R `rRows` x a: the partial
// product L x bound once each (`hint`), the results as expressions, row-major. Bt d B is
// (Bt, Bt); At s A is (At, At).
std::vector<Expr> sandwich(Lets& lets, const std::string& hint, const double* L, std::int64_t lRows,
                           const double* R, std::int64_t rRows, std::int64_t a,
                           const std::vector<Expr>& x) {
  std::vector<Expr> lx; // row r, column c
  for (std::int64_t r = 0; r < lRows; ++r)
    for (std::int64_t c = 0; c < a; ++c) {
      std::vector<Expr> column;
      for (std::int64_t i = 0; i < a; ++i)
        column.push_back(x[std::size_t(i * a + c)]);
      lx.push_back(lets.bind(hint, combine(L + r * a, 1, column)));
    }
  std::vector<Expr> out;
  for (std::int64_t r = 0; r < lRows; ++r)
    for (std::int64_t q = 0; q < rRows; ++q)
      out.push_back(combine(R + q * a, 1, {lx.begin() + r * a, lx.begin() + (r + 1) * a}));
  return out;
}

// The steps that vectorize the innermost channel loop of a block of 16.
std::vector<std::string> vectorSteps(const Expr& channel, int lanes) {
  if (lanes < 4)
    return {};
  const std::string name = loopName(channel);
  if (lanes >= kBlock)
    return {"vectorize(" + name + ")"};
  return {"split(" + name + ", " + std::to_string(lanes) + ")", "vectorize(" + name + ".i)"};
}

} // namespace

Stmt lowerConvWinogradNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const winograd::Transforms t = winograd::transforms(node.attrInt("tile", 0));
  ConvOperands ops{kb.input(*node.input(0), node), kb.input(*node.input(1), node), {}, {}, 1};
  if (node.input(2))
    ops.bias = kb.input(*node.input(2), node);
  ops.y = kb.output(*node.output(0), node);
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const std::int64_t m = t.m, a = t.alpha, points = a * a;
  if (m == 0)
    unsupportedNode(node, "needs the attribute tile = 2 or 4 (the output tile of Winograd's "
                          "F(m x m, 3 x 3))");
  if (x.rank() != 5 || w.rank() != 6 || y.rank() != 5 || x.shape[4] != kBlock || w.shape[2] != a ||
      w.shape[3] != a || w.shape[4] != kBlock || w.shape[5] != kBlock || y.shape[4] != kBlock ||
      x.dtype != graph::DType::F32 || w.shape[1] != x.shape[1] || w.shape[0] != y.shape[1] ||
      y.shape[0] != x.shape[0])
    unsupportedNode(node, "needs blocked [N, C/16, H, W, 16] input and output and weights "
                          "transformed as [M/16, C/16, a, a, 16, 16] with a = tile + 2");
  const std::int64_t N = x.shape[0], Cb = x.shape[1], H = x.shape[2], W = x.shape[3];
  const std::int64_t Mb = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  const std::vector<WindowAxis> axes = slidingWindow(node, {H, W}, {OH, OW}, {3, 3});
  for (const WindowAxis& ax : axes)
    if (ax.stride != 1 || ax.dilation != 1 || ax.out != ax.in + ax.padBegin + ax.padEnd - 2)
      unsupportedNode(node, "Winograd's filtering needs a 3x3 window with stride and dilation 1");
  const std::int64_t TH = (OH + m - 1) / m, TW = (OW + m - 1) / m, T = N * TH * TW;
  const int lanes =
      kb.vectorBits() / 32 >= 4 && kBlock % (kb.vectorBits() / 32) == 0 ? kb.vectorBits() / 32 : 0;

  // --- 1. the input planes, zero-padded to whole tiles ---
  const std::int64_t top = axes[0].padBegin, left = axes[1].padBegin;
  const std::int64_t Hp = TH * m + 2, Wp = TW * m + 2;
  const bool copy = top > 0 || left > 0 || Hp > H || Wp > W;
  const PaddedPlanes planes =
      paddedPlanes(kb, x, N * Cb, H, W, top, left, Hp, Wp, copy, lanes ? lanes : int(kBlock));
  std::vector<std::string> prefix = lanes ? planes.steps : std::vector<std::string>{};

  // for n, block, th, tw, channel: body; with its steps: the channels vectorized, and
  // (n, block, th) one parallel loop.
  const auto tileNest = [&](const Expr& n, const Expr& block, std::int64_t blocks, const Expr& th,
                            const Expr& tw, const Expr& channel, Stmt body) {
    if (lanes) {
      for (std::string& step : vectorSteps(channel, lanes))
        prefix.push_back(std::move(step));
      for (std::string& step :
           parallelTaskSteps(loopsOver({{n, N}, {block, blocks}, {th, TH}}), N * blocks * TH,
                             N * blocks * T * kBlock * points * 4))
        prefix.push_back(std::move(step));
    }
    return loopOver(
        n, N,
        loopOver(block, blocks,
                 loopOver(th, TH, loopOver(tw, TW, forCount(channel, kBlock, std::move(body))))));
  };
  const TensorRef V = kb.scratch("winograd_in", x.dtype, {points * Cb * T * kBlock});
  const TensorRef Mt = kb.scratch("winograd_out", y.dtype, {points * Mb * T * kBlock});

  // --- 2. the input transform V = Bt d B ---
  Stmt inputTransform;
  {
    const Expr n = axisVar(kb, "n", N), cb = axisVar(kb, "cb", Cb), th = axisVar(kb, "th", TH),
               tw = axisVar(kb, "tw", TW), ci = kb.freshVar("ci");
    const Expr tile = (n * TH + th) * TW + tw;
    Lets lets(kb);
    std::vector<Expr> d;
    const TensorRef& src = planes.planes;
    for (std::int64_t i = 0; i < a; ++i)
      for (std::int64_t j = 0; j < a; ++j)
        d.push_back(lets.bind(
            "d",
            src.loadFlat(
                (((n * Cb + cb) * planes.H + th * m + i) * planes.W + tw * m + j) * kBlock + ci)));
    const std::vector<Expr> v = sandwich(lets, "bd", t.bt, a, t.bt, a, a, d);
    std::vector<Stmt> stores;
    for (std::int64_t p = 0; p < points; ++p)
      stores.push_back(V.storeFlat(((p * Cb + cb) * T + tile) * kBlock + ci, v[std::size_t(p)]));
    inputTransform = tileNest(n, cb, Cb, th, tw, ci, lets.around(loop::Block::make(stores)));
  }

  // --- 4. the output transform Y = At Mt A, bias and epilogue ---
  Stmt outputTransform;
  {
    const Expr n = axisVar(kb, "n", N), mb = axisVar(kb, "mb", Mb), th = axisVar(kb, "th", TH),
               tw = axisVar(kb, "tw", TW), j = kb.freshVar("j");
    const Expr tile = (n * TH + th) * TW + tw;
    Lets lets(kb);
    std::vector<Expr> s;
    for (std::int64_t p = 0; p < points; ++p)
      s.push_back(lets.bind("s", Mt.loadFlat(((p * Mb + mb) * T + tile) * kBlock + j)));
    const std::vector<Expr> out = sandwich(lets, "as", t.at, m, t.at, m, a, s);
    std::optional<Expr> bias;
    if (ops.bias)
      bias = lets.bind("bias", ops.bias->load({mb * kBlock + j}));
    std::vector<Stmt> stores;
    for (std::int64_t p = 0; p < m; ++p)
      for (std::int64_t q = 0; q < m; ++q) {
        Expr value = out[std::size_t(p * m + q)];
        if (bias)
          value = value + *bias;
        const Expr oh = th * m + p, ow = tw * m + q;
        const std::vector<Expr> idx{n, mb, oh, ow, j};
        Stmt store = y.store(idx, epilogue(value, idx));
        // Only the last row and column of tiles may reach past the plane.
        if (OH % m != 0 && p >= OH % m)
          store = loop::IfThenElse::make(th < TH - 1, store);
        if (OW % m != 0 && q >= OW % m)
          store = loop::IfThenElse::make(tw < TW - 1, store);
        stores.push_back(store);
      }
    outputTransform = tileNest(n, mb, Mb, th, tw, j, lets.around(loop::Block::make(stores)));
  }

  // --- 3. the products, a blocked 1x1 convolution over the points as images ---
  NchwcGeometry g;
  g.N = points;
  g.Cb = Cb;
  g.C = Cb * kBlock;
  g.H = g.OH = 1;
  g.W = g.OW = T;
  g.M = Mb * kBlock;
  g.KH = g.KW = 1;
  g.batchedWeights = true;
  ConvOperands products{TensorRef{V.buffer, {points, Cb, 1, T, kBlock}, V.dtype},
                        TensorRef{w.buffer, {Mb, Cb, points, kBlock, kBlock}, w.dtype},
                        TensorRef{Mt.buffer, {points, Mb, 1, T, kBlock}, Mt.dtype},
                        {},
                        1};
  PaddedPlanes transformedPlanes;
  transformedPlanes.planes = TensorRef{V.buffer, {points * Cb * T * kBlock}, V.dtype};
  transformedPlanes.H = 1;
  transformedPlanes.W = T;
  const TiledNchwcConv conv = tiledNchwcConv(
      kb, [](Expr value, const std::vector<Expr>&) { return value; }, products, g, lanes,
      transformedPlanes, prefix);

  const std::string name = "F(" + std::to_string(m) + "x" + std::to_string(m) + ", 3x3)";
  kb.describe("Winograd " + name +
              " convolution on blocked (NCHW16c) tensors: " + std::to_string(T) + " tiles of " +
              std::to_string(m) + "x" + std::to_string(m) + " outputs, " + std::to_string(points) +
              " multiply-adds per tile and channel pair "
              "instead of " +
              std::to_string(9 * m * m));
  kb.describe("weights were transformed at compile time to G g Gt, [M/16, C/16, " +
              std::to_string(a) + ", " + std::to_string(a) + ", 16, 16]");
  kb.describe("the input transform Bt d B writes [" + std::to_string(points) +
              ", C/16, tiles, 16]; the output transform At M A adds the bias and the epilogue");
  if (lanes)
    kb.describe("the " + std::to_string(points) +
                " products (a 1x1 blocked convolution per "
                "point): " +
                std::to_string(conv.tasks) + " tasks of " + std::to_string(conv.P) + " tiles x " +
                std::to_string(conv.R) + " vector(s) of " + std::to_string(lanes) +
                " output channels in registers over " + std::to_string(g.C) + " input channels");
  Stmt body = loop::Block::make({inputTransform, conv.nest, outputTransform});
  body = kb.allocate(Mt, body, true);
  body = kb.allocate(V, body, true);
  if (copy)
    body = kb.allocate(planes.planes, loop::Block::make(planes.copy, body), true);
  return body;
}

} // namespace lathe::lowering
