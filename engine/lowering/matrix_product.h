#pragma once
// Matrix products as the lowerings share them (matmul.cpp; conv_pointwise.cpp sees a 1x1
// Conv as one).
#include "engine/lowering/kernel_builder.h"

#include <functional>

namespace lathe::lowering {

// Y[b, i, j] = finish(sum_k A(b, i, k) * B(b, k, j)) for batch b of `batch`, with the
// operands and the result addressed through callbacks.
struct MatrixProduct {
  std::int64_t batch = 1, M = 1, N = 1, K = 1;
  bool bContiguous = true; // B(b, k, j) is unit-stride in j
  std::function<Expr(const Expr& b, const Expr& i, const Expr& k)> a;
  std::function<Expr(const Expr& b, const Expr& k, const Expr& j)> b;
  // The output index of (b, i, j), and the value stored there given the sum (nullptr: the
  // sum itself).
  std::function<std::vector<Expr>(const Expr& b, const Expr& i, const Expr& j)> yIndex;
  std::function<Expr(const Expr& sum, const std::vector<Expr>& yIndex)> finish;
};

// The register-tiled product as a plain nest and the default trace that tiles it, for f32 and
// int32 with B contiguous in j (matmul.cpp). An undefined Stmt when it does not apply.
Stmt tracedProduct(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p);

// The default schedule of any product (matmul.cpp): tracedProduct where it applies (over a
// transposed copy of B when B is not contiguous), else the plain nest of scalar sums with its
// outer loops run in parallel by the default trace. Throws when the operands' element type
// is not the result's.
Stmt productLoops(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p);

// The default-trace steps, appended to `steps`, that tile a nest whose columns `jn` were split
// into tiles that do not divide them (`rem` columns left per row): partition, then whole
// vectors and one shorter vector, each kept in registers across the reduction loop `kn`.
// `rows` is the tile's row loop, or empty when the tile has one row (matmul.cpp).
void remainderTiles(std::vector<std::string>& steps, const std::string& rows, const std::string& jn,
                    const std::string& kn, std::int64_t rem, std::int64_t lanes);

} // namespace lathe::lowering
