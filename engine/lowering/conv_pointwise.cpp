// Pointwise (1x1, unit stride, unpadded, ungrouped) 2-D Conv as a matrix product: per image,
// Y[m, p] = sum_c W[m, c] * X[c, p] over the H*W positions p of a plane, which is the plain
// product nest with its default trace (tracedProduct, matmul.cpp): R output channels x V
// vectors of positions kept in registers across the input channels, bias and the fused
// epilogue applied to them before the one store.
#include "engine/lowering/conv_internal.h"
#include "engine/lowering/matrix_product.h"

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

} // namespace lathe::lowering
