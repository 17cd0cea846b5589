// Convs that are matrix products, as the plain product nest with its default trace
// (tracedProduct and productLoops, matmul.cpp), bias and the fused epilogue applied before
// the one store:
// - pointwise (1x1, unit stride, unpadded, ungrouped) 2-D: per image,
//   Y[m, p] = sum_c W[m, c] * X[c, p] over the H*W positions p of a plane; R output channels
//   x V vectors of positions kept in registers across the input channels;
// - one output position a plane (any window, stride, padding and groups): per group,
//   Y[n, m] = sum_k W[m, k] * col[k, n] over the input channels and the taps that read inside
//   the input, col those input values copied first (on targets without vectors too).
#include "engine/lowering/conv_internal.h"
#include "engine/lowering/matrix_product.h"

#include <algorithm>

namespace lathe::lowering {

Stmt pointwiseConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                   const std::vector<WindowAxis>& axes) {
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  if (ops.group != 1 || x.rank() != 4 || y.rank() != 4 || x.dtype != graph::DType::F32 ||
      y.dtype != graph::DType::F32 || w.dtype != graph::DType::F32 || axes.size() != 2)
    return Stmt();
  for (const WindowAxis& a : axes)
    if (a.kernel != 1 || a.stride != 1 || a.padBegin != 0 || a.padEnd != 0 || a.in != a.out)
      return Stmt();
  // The epilogue sees position p of a plane as index (n, m, 0, p): its operands must be whole
  // planes or constant over them.
  if (!kb.epilogueFlattens(y.shape, 2))
    return Stmt();
  const std::int64_t N = x.shape[0], C = x.shape[1], M = y.shape[1];
  const std::int64_t HW = y.shape[2] * y.shape[3];
  const TensorRef x3{x.buffer, {N, C, HW}, x.dtype}, y3{y.buffer, {N, M, HW}, y.dtype};
  MatrixProduct p;
  p.batch = N;
  p.M = M;
  p.N = HW;
  p.K = C;
  const Expr zero = loop::makeIndex(0);
  p.a = [&](const Expr&, const Expr& i, const Expr& k) { return w.load({i, k, zero, zero}); };
  p.b = [&](const Expr& b, const Expr& k, const Expr& j) { return x3.load({b, k, j}); };
  p.yIndex = [](const Expr& b, const Expr& i, const Expr& j) { return std::vector<Expr>{b, i, j}; };
  p.finish = [&](const Expr& sum, const std::vector<Expr>& idx) {
    const Expr v = ops.bias ? sum + ops.bias->load({idx[1]}) : sum;
    return epilogue(v, {idx[0], idx[1], zero, idx[2]});
  };
  return tracedProduct(kb, y3, p);
}

Stmt onePositionConv(KernelBuilder& kb, const Epilogue& epilogue, const ConvOperands& ops,
                     const std::vector<WindowAxis>& axes) {
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const std::size_t S = axes.size();
  if (S == 0 || x.rank() != S + 2 || y.rank() != S + 2 || w.rank() != S + 2 ||
      x.dtype != graph::DType::F32 || y.dtype != graph::DType::F32 ||
      w.dtype != graph::DType::F32 || x.numElements() == 0)
    return Stmt();
  // The taps of the one position that read inside the input: [first[a], first[a] + taps[a])
  // along each axis (the others read padding, which adds nothing).
  std::vector<std::int64_t> first(S), taps(S);
  for (std::size_t a = 0; a < S; ++a) {
    const WindowAxis& ax = axes[a];
    if (ax.out != 1)
      return Stmt();
    const auto [lo, hi] = validSpan(ax.kernel, ax.dilation, -ax.padBegin, ax.in);
    first[a] = lo;
    taps[a] = hi - lo;
  }
  const std::int64_t N = x.shape[0], C = x.shape[1], M = y.shape[1], G = ops.group;
  if (M < 1 || G < 1 || y.numElements() == 0)
    return Stmt();
  const std::int64_t Mg = M / G, Cg = C / G, T = product(taps), K = Cg * T;
  // With every tap inside the input, W's rows are the product's rows as they are.
  const bool whole = Cg > 0 && T == w.numElements() / (M * Cg);
  // Against the hand-written tile that took these before: padding's taps dropped, 128 -> 128
  // 3x3 over 1x1 ran 0.0045 against 0.022 ms; 3 images as columns 0.0077 against 0.025 ms.
  // A whole window over one image (its rows of W read by gathers) was 2x slower; layout-weights
  // makes the ones with constant weights and one group a Gemm on transposed weights first.
  if (T == 0)
    return Stmt();
  // k = c * T + t, t the valid taps numbered row-major.
  const auto tapsOf = [&](const Expr& t) {
    std::vector<Expr> k(S);
    Expr rest = t;
    for (std::size_t a = S; a-- > 0;) {
      k[a] = (a == 0 ? rest : rest % taps[a]) + first[a];
      rest = rest / taps[a];
    }
    return k;
  };
  const TensorRef col = kb.scratch("col", x.dtype, {G, K, N});
  MatrixProduct p;
  p.batch = G;
  p.M = Mg;
  p.N = N;
  p.K = K;
  const TensorRef wRows{w.buffer, {M, K}, w.dtype};
  p.a = [&](const Expr& g, const Expr& i, const Expr& k) {
    if (whole)
      return wRows.load({g * Mg + i, k});
    std::vector<Expr> at{g * Mg + i, k / T};
    for (const Expr& e : tapsOf(k % T))
      at.push_back(e);
    return w.load(at);
  };
  p.b = [&](const Expr& g, const Expr& k, const Expr& n) { return col.load({g, k, n}); };
  const Expr zero = loop::makeIndex(0);
  p.yIndex = [&](const Expr& g, const Expr& i, const Expr& n) {
    std::vector<Expr> at{n, g * Mg + i};
    at.resize(S + 2, zero);
    return at;
  };
  p.finish = [&](const Expr& sum, const std::vector<Expr>& idx) {
    return epilogue(ops.bias ? sum + ops.bias->load({idx[1]}) : sum, idx);
  };
  const Stmt product = productLoops(kb, y, p);
  // The copy: for n, g, k: col[g, k, n] = X(n, g*Cg + k / T, the input position of tap k % T).
  const Expr n = kb.freshVar("n"), g = kb.freshVar("g"), k = kb.freshVar("k");
  std::vector<Expr> at{n, g * Cg + k / T};
  const std::vector<Expr> tap = tapsOf(k % T);
  for (std::size_t a = 0; a < S; ++a)
    at.push_back(tap[a] * axes[a].dilation - axes[a].padBegin);
  const Stmt copy =
      forCount(n, N, forCount(g, G, forCount(k, K, col.store({g, k, n}, x.load(at)))));
  kb.describe("one output position a plane: the " + std::to_string(K) +
              " input values it reads (inside the input) are copied first, then a matrix "
              "product over them");
  return kb.allocate(col, loop::Block::make(copy, product), G * K * N * 4 > (128 << 10));
}

} // namespace lathe::lowering
