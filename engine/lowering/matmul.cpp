// Matrix products as kernel rules: Gemm, MatMul (1-D operands, numpy batch broadcasting,
// integer types) and Einsum.
//
// Every product is a plain nest plus a default trace (productLoops): for f32 and int32 on a
// target with vectors, the trace tiles it in registers (tracedProduct; a B that is not
// contiguous in j is copied transposed first); otherwise it runs the plain nest's outer
// loops in parallel.
// Every output element sums its k terms in order, so the rounding matches a plain dot
// product (no reassociation).
#include "engine/lowering/matrix_product.h"
#include "engine/lowering/op_rules.h"
#include "engine/lowering/window_helpers.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>

namespace lathe::lowering {
namespace {

using graph::Node;

bool hasEpilogue(const Node& node) {
  return node.group >= 0;
}

} // namespace

// The default-trace steps after the split of the columns `jn` into tiles that do not divide
// them: partition lifts the last tile of each row (`rem` columns) into a copy of its own,
// then both copies split their columns into vectors and keep their tiles in registers. The
// tile's top is its rows (`rows`, when the tile has several) or its first column loop. A
// remainder that is not a whole number of vectors splits once more: its whole vectors, and
// one shorter vector of the last columns, each tiled in registers (N = 1000 with 16 lanes:
// 3 tiles of 256 columns, then 14 vectors, then 8 columns).
void remainderTiles(std::vector<std::string>& steps, const std::string& rows, const std::string& jn,
                    const std::string& kn, std::int64_t rem, std::int64_t lanes) {
  auto step = [&](const std::string& s) { steps.push_back(s); };
  auto vectorTile = [&](const std::string& columns, const std::string& rowLoops,
                        const std::string& k) {
    step("split(" + columns + ", " + std::to_string(lanes) + ")");
    step("register_tile(" + (rowLoops.empty() ? columns + ".o" : rowLoops) + ", " + k + ")");
  };
  const std::string r1 = rows.empty() ? "" : rows + ".r1";
  step("partition(" + (rows.empty() ? jn + ".i" : rows) + ")");
  vectorTile(jn + ".i", rows, kn);
  const std::string columns = jn + ".i.r1", k1 = kn + ".r1";
  const std::int64_t whole = rem / lanes * lanes, part = rem % lanes;
  if (part == 0) {
    vectorTile(columns, r1, k1);
    return;
  }
  if (whole == 0) { // one vector shorter than the lanes: the innermost loop is it
    step("register_tile(" + (r1.empty() ? columns : r1) + ", " + k1 + ")");
    return;
  }
  step("split(" + columns + ", " + std::to_string(whole) + ")");
  if (!r1.empty())
    step("reorder(" + columns + ".o, " + r1 + ")");
  step("partition(" + (r1.empty() ? columns + ".i" : r1) + ")");
  vectorTile(columns + ".i", r1, k1);
  step("register_tile(" + (r1.empty() ? columns + ".i.r1" : r1 + ".r1") + ", " + k1 + ".r1)");
}

namespace {

// The plain nest of the product: for b, i, j: Y = 0; for k: Y += A(b, i, k) * B(b, k, j);
// Y = finish(Y) (b and i only when they have more than one iteration).
struct ProductNest {
  Stmt nest;
  std::string bn, in, jn, kn; // loop names; bn and in empty without their loop
};
ProductNest productNest(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p) {
  const Expr b = p.batch > 1 ? kb.freshVar("b") : loop::makeIndex(0);
  const Expr i = p.M > 1 ? kb.freshVar("i") : loop::makeIndex(0);
  const Expr j = kb.freshVar("j"), k = kb.freshVar("k");
  const std::vector<Expr> idx = p.yIndex(b, i, j);
  std::vector<Stmt> element{
      y.store(idx, constantOf(y.dtype, 0)),
      forCount(k, p.K, y.store(idx, y.load(idx) + p.a(b, i, k) * p.b(b, k, j)))};
  if (p.finish)
    element.push_back(y.store(idx, p.finish(y.load(idx), idx)));
  ProductNest out;
  out.nest = forCount(j, p.N, loop::Block::make(element));
  if (p.M > 1)
    out.nest = forCount(i, p.M, out.nest);
  if (p.batch > 1)
    out.nest = forCount(b, p.batch, out.nest);
  out.bn = p.batch > 1 ? loopName(b) : "";
  out.in = p.M > 1 ? loopName(i) : "";
  out.jn = loopName(j);
  out.kn = loopName(k);
  return out;
}

// A product narrower than a vector (N < lanes: a classifier's 10 classes, a 3x3 plane's
// positions): each row of Y is one shorter vector, R rows of them kept in registers across k
// (one load of B's row and R broadcasts of A per k), the row blocks one parallel loop. With
// one column (a matrix times a vector) the R rows are R independent scalar sums: 0.125 ->
// 0.093 ms against the old hand-written rows (4 x 300 x 256 by 256, 1 thread). Undefined for
// one column without rows to tile.
Stmt narrowProduct(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p, int lanes) {
  // Rows a tile: 8, 4 or 2 when they divide M, else the largest divisor up to 8 (1001
  // classes: 7 rows; a 1x1 Conv to them over a 1x1 plane, 1024 input channels: 0.94 ms as
  // the scalar fallback, 0.29 ms as tiles of 7).
  std::int64_t R = p.M % 8 == 0 ? 8 : p.M % 4 == 0 ? 4 : p.M % 2 == 0 ? 2 : 1;
  for (std::int64_t r = 7; R == 1 && r > 2; --r)
    if (p.M % r == 0)
      R = r;
  if (p.N == 1 && (p.M == 1 || R == 1)) // one column has no loop: a tile needs rows
    return Stmt();
  const ProductNest n = productNest(kb, y, p);
  std::vector<std::string> tasks;
  if (!n.bn.empty())
    tasks.push_back(n.bn);
  std::string top = n.jn; // the tile's outermost loop
  if (!n.in.empty() && R > 1 && R < p.M) {
    kb.defaultStep("split(" + n.in + ", " + std::to_string(R) + ")");
    tasks.push_back(n.in + ".o");
    top = n.in + ".i";
  } else if (!n.in.empty() && R > 1) {
    top = n.in;
  } else if (!n.in.empty()) {
    tasks.push_back(n.in);
  }
  kb.defaultStep("register_tile(" + top + ", " + n.kn + ")");
  const std::int64_t taskCount = p.batch * (p.M / R);
  for (const std::string& step : parallelTaskSteps(tasks, taskCount, p.batch * p.M * p.N * p.K))
    kb.defaultStep(step);
  kb.describe("register-tiled product (default trace): " + std::to_string(taskCount) +
              " tasks, each " + std::to_string(R) + " row(s) of " + std::to_string(p.N) +
              " columns, one vector shorter than " + std::to_string(lanes) + " lanes a row, " +
              "summing " + std::to_string(p.K) + " products per element in order");
  return n.nest;
}

// A product of one term per element (K = 1: an outer product) has no sum to keep in
// registers: the trace vectorizes the rows of Y (a row narrower than a vector is one shorter
// vector) and runs the rows as one parallel loop.
Stmt outerProduct(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p, int lanes) {
  if (p.N < 2)
    return Stmt();
  const ProductNest n = productNest(kb, y, p);
  std::vector<std::string> tasks;
  if (!n.bn.empty())
    tasks.push_back(n.bn);
  if (!n.in.empty())
    tasks.push_back(n.in);
  for (const std::string& step : parallelTaskSteps(tasks, p.batch * p.M, p.batch * p.M * p.N))
    kb.defaultStep(step);
  std::vector<std::string> rowSteps;
  if (p.N < lanes) // one shorter vector
    rowSteps.push_back("vectorize(" + n.jn + ")");
  vectorizeRowSteps(rowSteps, n.jn, p.N, lanes);
  for (const std::string& step : rowSteps)
    kb.defaultStep(step);
  kb.describe("outer product (default trace): " + std::to_string(p.batch * p.M) + " rows of " +
              std::to_string(p.N) + " columns, each element one product, the rows in vectors");
  return n.nest;
}

} // namespace

// The register-tiled product as a plain nest and the default trace that tiles it: for f32 and
// int32 with B contiguous in j (narrower than a vector: narrowProduct). The nest is
//   for b, i, j: Y = 0; for k: Y += A(b, i, k) * B(b, k, j); Y = finish(Y)
// (b and i only when they have more than one iteration); the trace splits i into rows of R
// and j into tiles of V vectors, moves the tiles inside the blocks of columns, keeps each
// R x V-vector tile in registers across k (register_tile) and runs the blocks as one
// parallel loop over (batch, column block, row block). A width that does not divide N leaves
// a remainder tile per row (remainderTiles). Undefined when it does not apply.
Stmt tracedProduct(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p) {
  const int lanes = kb.vectorBits() / 32;
  // (One column reads B one element at a time whatever its layout.)
  if (lanes < 4 || (y.dtype != graph::DType::F32 && y.dtype != graph::DType::I32) ||
      (!p.bContiguous && p.N > 1) || p.batch < 1 || p.M < 1 || p.N < 1 || p.K < 1)
    return Stmt(); // (an empty product is the plain nest's: zeros, or nothing)
  if (p.K == 1)    // (a sum of one product has no loop to keep a tile across)
    return outerProduct(kb, y, p, lanes);
  if (p.N < lanes)
    return narrowProduct(kb, y, p, lanes);
  // With long sums (BERT's 768 and 3072) 32 vector registers hold 8 rows x 2 vectors: the
  // column block of B a task streams over k is half as wide, and twice as many rows share
  // each load of it. Measured on BERT (AVX-512, kernel sums): 7.23 -> 6.29 ms at 1 thread,
  // 4.42 -> 4.00 ms at 2; on short sums (1x1 Convs over 16 to 192 channels) 4 x 4 is faster.
  const bool eightRows = lanes >= 16 && p.M % 8 == 0 && p.K >= 256;
  const std::int64_t R = eightRows ? 8 : p.M % 4 == 0 ? 4 : p.M % 2 == 0 ? 2 : 1;
  const std::int64_t widest = p.M == 1    ? (lanes >= 16 ? 16 : 8)
                              : eightRows ? 2
                                          : (lanes >= 16 ? 4 : 2);
  std::int64_t V = std::min(widest, p.N / lanes);
  // One row in a single column tile (a fully connected layer on one image): narrower tiles,
  // so that two threads can share the row and its weights. 25088 x 256: 0.27 -> 0.16 ms at 2
  // threads, 1 thread unchanged within noise (0.30); 4 tiles of 4 vectors were slower at
  // 1 thread (0.50). Small ones (BERT's 256 x 256 pooler) gain nothing from a second task.
  while (p.M == 1 && V > 4 && p.batch * ((p.N + V * lanes - 1) / (V * lanes)) < 2 &&
         p.batch * p.N * p.K >= (std::int64_t{1} << 20))
    V /= 2;
  // A width that does not divide N leaves a remainder tile, lifted into a copy of its own
  // by partition.
  const std::int64_t TW = V * lanes;
  const bool remainder = p.N % TW != 0;

  const ProductNest n = productNest(kb, y, p);
  const std::string &jn = n.jn, &kn = n.kn, &in = n.in, &bn = n.bn;
  // The loops after the splits, in the order the trace wants them.
  std::vector<std::string> order, tile;
  if (!bn.empty())
    order.push_back(bn);
  order.push_back(jn + ".o");
  if (!in.empty() && R > 1) { // rows: blocks of R outside, the R rows in the tile
    kb.defaultStep("split(" + in + ", " + std::to_string(R) + ")");
    order.push_back(in + ".o");
    tile.push_back(in + ".i");
  } else if (!in.empty()) {
    order.push_back(in);
  }
  kb.defaultStep("split(" + jn + ", " + std::to_string(TW) + ")");
  // Without a remainder the columns split into vectors before the reorder; with one, each
  // copy partition makes (the full tiles, the last tile of a row) splits its own.
  if (remainder) {
    tile.push_back(jn + ".i");
  } else if (V > 1) {
    kb.defaultStep("split(" + jn + ".i, " + std::to_string(lanes) + ")");
    tile.push_back(jn + ".i.o");
    tile.push_back(jn + ".i.i");
  } else {
    tile.push_back(jn + ".i");
  }
  order.insert(order.end(), tile.begin(), tile.end());
  if (!in.empty())
    kb.defaultStep("reorder(" + loopList(order) + ")");
  if (remainder) {
    std::vector<std::string> steps;
    remainderTiles(steps, tile.size() > 1 ? tile.front() : "", jn, kn, p.N % TW, lanes);
    for (const std::string& step : steps)
      kb.defaultStep(step);
  } else {
    kb.defaultStep("register_tile(" + tile.front() + ", " + kn + ")");
  }
  // One parallel loop over the blocks: batch, column block, row block.
  std::string tasks = order.front();
  for (std::size_t l = 1; l < order.size() - tile.size(); ++l) {
    kb.defaultStep("fuse(" + tasks + ", " + order[l] + ")");
    tasks += "." + order[l] + ".fused";
  }
  const std::int64_t taskCount = p.batch * (p.M / R) * ((p.N + TW - 1) / TW);
  if (taskCount > 1 && parallelFor(p.batch * p.M * p.N * p.K) == loop::ForKind::Parallel)
    kb.defaultStep("parallel(" + tasks + ")");
  kb.describe("register-tiled product (default trace): " + std::to_string(taskCount) +
              " tasks, each " + std::to_string(R) + " row(s) x " + std::to_string(V) +
              " vector(s) of " + std::to_string(lanes) + " columns, summing " +
              std::to_string(p.K) + " products per element in order");
  if (remainder)
    kb.describe("the last " + std::to_string(p.N % TW) +
                " columns of each row run as a smaller "
                "remainder tile");
  return n.nest;
}

namespace {

// The GPU's product: the outer loops run over the output elements (batch, rows, columns;
// batch and rows only when they have more than one iteration), each summing its K products
// in order into a scalar and storing it once, finished. The GPU default trace spreads the
// outer loops over blocks and threads. Undefined when the operands' element type is not
// the result's.
Stmt plainProduct(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p) {
  const Expr b = p.batch > 1 ? kb.freshVar("b") : loop::makeIndex(0);
  const Expr i = p.M > 1 ? kb.freshVar("i") : loop::makeIndex(0);
  const Expr j = kb.freshVar("j"), k = kb.freshVar("k");
  const loop::Type t = loopType(y.dtype);
  const Expr av = p.a(b, i, k), bv = p.b(b, k, j);
  if (av.type() != t || bv.type() != t)
    return Stmt();
  const TensorRef acc = kb.scratch("acc", y.dtype, {1});
  const Expr zero = loop::makeIndex(0);
  const std::vector<Expr> idx = p.yIndex(b, i, j);
  const Expr sum = acc.load({zero});
  Stmt nest =
      kb.allocate(acc, loop::Block::make({acc.store({zero}, constantOf(y.dtype, 0)),
                                          forCount(k, p.K, acc.store({zero}, sum + av * bv)),
                                          y.store(idx, p.finish ? p.finish(sum, idx) : sum)}));
  nest = forCount(j, p.N, nest);
  if (p.M > 1)
    nest = forCount(i, p.M, nest);
  if (p.batch > 1)
    nest = forCount(b, p.batch, nest);
  if (kb.gpu()) {
    kb.describe("plain product for a GPU: one output element per iteration of the outer loops, " +
                std::to_string(p.K) + " products summed in order into a scalar");
    return nest;
  }
  // On a CPU the trace runs the outer loops (batch and rows; the columns too with one row)
  // as one parallel loop.
  std::vector<std::string> tasks;
  if (p.batch > 1)
    tasks.push_back(loopName(b));
  if (p.M > 1)
    tasks.push_back(loopName(i));
  else if (p.N > 1) // (a loop of one iteration is gone by the time the trace runs)
    tasks.push_back(loopName(j));
  const std::int64_t work = p.batch * p.M * p.N * p.K;
  for (const std::string& step :
       parallelTaskSteps(tasks, p.batch * p.M * (p.M > 1 ? 1 : p.N), work))
    kb.defaultStep(step);
  kb.describe(
      "plain product (default trace): " + std::to_string(p.batch * p.M * p.N) +
      " output elements, each summing " + std::to_string(p.K) + " products in order into a scalar" +
      (parallelFor(work) == loop::ForKind::Parallel ? "; the outer loops run in parallel" : ""));
  return nest;
}

// A product whose B is not contiguous in j (a Gemm with transB on a B computed at run time;
// constant ones are transposed at compile time by layout-weights): B copied into a scratch
// bt[b, k, j] first, then the register-tiled product over the copy. The copy is K*N loads
// against M*N*K multiply-adds. Undefined when the tiled product does not apply.
Stmt transposedCopyProduct(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p) {
  const TensorRef bt = kb.scratch("bt", y.dtype, {p.batch, p.K, p.N});
  MatrixProduct q = p;
  q.bContiguous = true;
  q.b = [&](const Expr& b, const Expr& k, const Expr& j) { return bt.load({b, k, j}); };
  const Stmt product = tracedProduct(kb, y, q);
  if (!product.defined())
    return Stmt();
  // for b, j, k: bt[b, k, j] = B(b, k, j), reading B's rows along k.
  const Expr b = p.batch > 1 ? kb.freshVar("bb") : loop::makeIndex(0);
  const Expr j = kb.freshVar("jb"), k = kb.freshVar("kb");
  Stmt copy = forCount(j, p.N, forCount(k, p.K, bt.store({b, k, j}, p.b(b, k, j))));
  std::vector<std::string> tasks;
  if (p.batch > 1) {
    copy = forCount(b, p.batch, copy);
    tasks.push_back(loopName(b));
  }
  tasks.push_back(loopName(j));
  for (const std::string& step : parallelTaskSteps(tasks, p.batch * p.N, p.batch * p.N * p.K))
    kb.defaultStep(step);
  kb.describe("B is first copied with its rows as columns (" + std::to_string(p.K) + " x " +
              std::to_string(p.N) + "), so that the tiles read it in vectors");
  return kb.allocate(bt, loop::Block::make(copy, product),
                     p.batch * p.K * p.N * loopType(y.dtype).bytes() > (128 << 10));
}

} // namespace

// The default schedule of every product: the register-tiled one (f32 and int32; the outer
// product's rows in vectors), over a transposed copy of B when B is not contiguous;
// otherwise (other element types, targets without vectors, one row times one column) the
// plain nest, one scalar sum per output element, with a default trace that runs its outer
// loops as one parallel loop.
Stmt productLoops(KernelBuilder& kb, const TensorRef& y, const MatrixProduct& p) {
  if (kb.gpu())
    if (Stmt plain = plainProduct(kb, y, p); plain.defined())
      return plain;
  if (Stmt traced = tracedProduct(kb, y, p); traced.defined())
    return traced;
  if (!p.bContiguous)
    if (Stmt copied = transposedCopyProduct(kb, y, p); copied.defined())
      return copied;
  const Stmt plain = plainProduct(kb, y, p);
  if (!plain.defined())
    throw Error(ErrorKind::Internal, "a product whose operands are not of the result's type");
  return plain;
}

namespace {

Stmt lowerGemm(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef a = kb.input(*node.input(0), node);
  const TensorRef b = kb.input(*node.input(1), node);
  const float alpha = node.attrFloat("alpha", 1.0f), beta = node.attrFloat("beta", 1.0f);
  std::optional<TensorRef> c;
  if (node.input(2) && beta != 0.0f)
    c = kb.input(*node.input(2), node);
  const TensorRef y = kb.output(*node.output(0), node);
  if (!loopType(y.dtype).isFloat() && (alpha != 1.0f || (c && beta != 1.0f)))
    unsupportedNode(node, "integer Gemm with alpha or beta other than 1");
  if (a.rank() != 2 || b.rank() != 2 || y.rank() != 2)
    unsupportedNode(node, "needs 2-D A and B");
  const bool transA = node.attrInt("transA", 0) != 0, transB = node.attrInt("transB", 0) != 0;
  MatrixProduct p;
  p.M = y.shape[0];
  p.N = y.shape[1];
  p.K = transA ? a.shape[0] : a.shape[1];
  if ((transB ? b.shape[1] : b.shape[0]) != p.K)
    unsupportedNode(node, "inner dimensions of A and B differ");
  if (c) { // unidirectional broadcasting to (M, N)
    bool ok = c->rank() <= 2;
    for (std::size_t d = 0; ok && d < c->rank(); ++d) {
      const std::int64_t want = y.shape[2 - c->rank() + d];
      ok = c->shape[d] == 1 || c->shape[d] == want;
    }
    if (!ok)
      unsupportedNode(node, "C does not broadcast to the output");
  }
  p.bContiguous = !transB;
  p.a = [&](const Expr&, const Expr& i, const Expr& k) {
    return transA ? a.load({k, i}) : a.load({i, k});
  };
  p.b = [&](const Expr&, const Expr& k, const Expr& j) {
    return transB ? b.load({j, k}) : b.load({k, j});
  };
  p.yIndex = [](const Expr&, const Expr& i, const Expr& j) { return std::vector<Expr>{i, j}; };
  // alpha * (A*B) + beta * C, in ONNX Runtime's order.
  if (alpha != 1.0f || c || hasEpilogue(node))
    p.finish = [&](const Expr& sum, const std::vector<Expr>& idx) {
      Expr v = alpha == 1.0f ? sum : sum * loop::makeFloatConst(sum.type(), double(alpha));
      if (c) {
        const Expr cv = c->load(broadcastIndex(c->shape, idx));
        v = v + (beta == 1.0f ? cv : cv * loop::makeFloatConst(sum.type(), double(beta)));
      }
      return epilogue(v, idx);
    };
  return productLoops(kb, y, p);
}

Stmt lowerMatMul(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef a = kb.input(*node.input(0), node);
  const TensorRef b = kb.input(*node.input(1), node);
  const TensorRef y = kb.output(*node.output(0), node);
  if (a.rank() < 1 || b.rank() < 1)
    unsupportedNode(node, "needs operands of rank >= 1");
  const bool vectorA = a.rank() == 1, vectorB = b.rank() == 1;
  const std::size_t matrixDims = (vectorA ? 0 : 1) + (vectorB ? 0 : 1);
  if (y.rank() < matrixDims)
    unsupportedNode(node, "output rank does not match the operands");
  const std::vector<std::int64_t> batchShape(y.shape.begin(), y.shape.end() - matrixDims);
  const std::vector<std::int64_t> aBatch(a.shape.begin(), a.shape.end() - (vectorA ? 1 : 2));
  const std::vector<std::int64_t> bBatch(b.shape.begin(), b.shape.end() - (vectorB ? 1 : 2));
  if (aBatch.size() > batchShape.size() || bBatch.size() > batchShape.size())
    unsupportedNode(node, "output rank does not match the operands");
  MatrixProduct p;
  p.batch = product(batchShape);
  p.M = vectorA ? 1 : a.shape[a.rank() - 2];
  p.K = a.shape.back();
  p.N = vectorB ? 1 : b.shape.back();
  if ((vectorB ? b.shape[0] : b.shape[b.rank() - 2]) != p.K)
    unsupportedNode(node, "inner dimensions of A and B differ");
  // Batch b (flat over the output's batch dims) reads each operand's own batch index under
  // broadcasting.
  auto operandIndex = [&](const std::vector<std::int64_t>& opBatch, const Expr& bFlat,
                          std::vector<Expr> tail) {
    std::vector<Expr> idx = broadcastIndex(opBatch, unflatten(bFlat, batchShape));
    idx.insert(idx.end(), tail.begin(), tail.end());
    return idx;
  };
  p.a = [&](const Expr& bf, const Expr& i, const Expr& k) {
    return a.load(
        operandIndex(aBatch, bf, vectorA ? std::vector<Expr>{k} : std::vector<Expr>{i, k}));
  };
  p.b = [&](const Expr& bf, const Expr& k, const Expr& j) {
    return b.load(
        operandIndex(bBatch, bf, vectorB ? std::vector<Expr>{k} : std::vector<Expr>{k, j}));
  };
  p.yIndex = [&](const Expr& bf, const Expr& i, const Expr& j) {
    std::vector<Expr> idx = unflatten(bf, batchShape);
    if (!vectorA)
      idx.push_back(i);
    if (!vectorB)
      idx.push_back(j);
    return idx;
  };
  if (hasEpilogue(node))
    p.finish = [&](const Expr& sum, const std::vector<Expr>& idx) { return epilogue(sum, idx); };
  return productLoops(kb, y, p);
}

// --- Einsum ---------------------------------------------------------------------------

// A subscript: a letter, or one dimension of the ellipsis counted from its right end.
using Label = int;
constexpr Label kEllipsis = 1000;

struct EinsumSpec {
  std::vector<std::vector<Label>> inputs;
  std::vector<Label> output;
};

std::vector<Label> parseTerm(const Node& node, const std::string& term, std::size_t rank,
                             std::size_t& ellipsisRank) {
  std::vector<Label> labels;
  std::size_t letters = 0;
  for (char ch : term)
    letters += std::isalpha(static_cast<unsigned char>(ch)) ? 1 : 0;
  for (std::size_t pos = 0; pos < term.size(); ++pos) {
    const char ch = term[pos];
    if (term.compare(pos, 3, "...") == 0) {
      if (rank < letters)
        unsupportedNode(node, "einsum term '" + term + "' has more subscripts than dims");
      const std::size_t dims = rank == SIZE_MAX ? ellipsisRank : rank - letters;
      ellipsisRank = std::max(ellipsisRank, dims);
      for (std::size_t d = dims; d-- > 0;)
        labels.push_back(kEllipsis + static_cast<Label>(d));
      pos += 2;
    } else if (std::isalpha(static_cast<unsigned char>(ch))) {
      labels.push_back(ch);
    } else if (ch != ' ') {
      unsupportedNode(node, std::string("einsum equation character '") + ch + "'");
    }
  }
  if (rank != SIZE_MAX && labels.size() != rank)
    unsupportedNode(node, "einsum term '" + term + "' does not match its operand's rank");
  return labels;
}

EinsumSpec parseEinsum(const Node& node, const std::vector<TensorRef>& operands) {
  const std::string eq = node.attrString("equation", "");
  const std::size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms{""};
  for (char ch : lhs)
    if (ch == ',')
      terms.push_back("");
    else
      terms.back() += ch;
  if (terms.size() != operands.size())
    unsupportedNode(node, "einsum equation has " + std::to_string(terms.size()) + " terms for " +
                              std::to_string(operands.size()) + " inputs");
  EinsumSpec spec;
  std::size_t ellipsisRank = 0;
  std::map<Label, int> counts;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    spec.inputs.push_back(parseTerm(node, terms[i], operands[i].rank(), ellipsisRank));
    for (Label l : spec.inputs.back())
      ++counts[l];
  }
  if (arrow != std::string::npos) {
    spec.output = parseTerm(node, eq.substr(arrow + 2), SIZE_MAX, ellipsisRank);
  } else {
    // Implicit output: the ellipsis dims, then the letters used once, alphabetically.
    for (std::size_t d = ellipsisRank; d-- > 0;)
      spec.output.push_back(kEllipsis + static_cast<Label>(d));
    for (const auto& [label, count] : counts)
      if (label < kEllipsis && count == 1)
        spec.output.push_back(label);
  }
  return spec;
}

// Einsum as a direct sum: a loop over the output, a nest over the summed subscripts
// inside, accumulating the product of the operands in the output element.
Stmt lowerEinsum(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  std::vector<TensorRef> operands;
  for (std::size_t i = 0; i < node.inputs.size(); ++i)
    operands.push_back(kb.input(*node.input(i), node));
  const TensorRef y = kb.output(*node.output(0), node);
  const EinsumSpec spec = parseEinsum(node, operands);
  if (spec.output.size() != y.rank())
    unsupportedNode(node, "einsum output does not match the output rank");
  std::map<Label, std::int64_t> extent; // size-1 dims broadcast
  for (std::size_t i = 0; i < operands.size(); ++i)
    for (std::size_t d = 0; d < spec.inputs[i].size(); ++d)
      extent[spec.inputs[i][d]] = std::max(extent[spec.inputs[i][d]], operands[i].shape[d]);
  std::vector<Label> summed;
  std::vector<std::int64_t> sumExtents;
  for (const auto& [label, size] : extent)
    if (std::find(spec.output.begin(), spec.output.end(), label) == spec.output.end()) {
      summed.push_back(label);
      sumExtents.push_back(size);
    }
  const std::int64_t sumSize = product(sumExtents);
  return kb.loopNest(
      y.shape,
      [&](const std::vector<Expr>& out) {
        std::map<Label, Expr> at;
        for (std::size_t d = 0; d < out.size(); ++d)
          at[spec.output[d]] = out[d];
        const Stmt clear = y.store(out, constantOf(y.dtype, 0));
        const Stmt sum = nestedLoops(
            kb, sumExtents,
            [&](const std::vector<Expr>& s) {
              for (std::size_t d = 0; d < s.size(); ++d)
                at[summed[d]] = s[d];
              Expr term;
              for (std::size_t i = 0; i < operands.size(); ++i) {
                std::vector<Expr> idx;
                for (std::size_t d = 0; d < spec.inputs[i].size(); ++d)
                  idx.push_back(operands[i].shape[d] == 1 ? loop::makeIndex(0)
                                                          : at.at(spec.inputs[i][d]));
                const Expr v = operands[i].load(idx);
                term = term.defined() ? term * v : v;
              }
              return y.store(out, y.load(out) + term);
            },
            "s");
        Stmt finish = loop::noOp();
        if (hasEpilogue(node))
          finish = y.store(out, epilogue(y.load(out), out));
        return loop::Block::make({clear, sum, finish});
      },
      "o", std::max<std::int64_t>(1, 65536 / std::max<std::int64_t>(sumSize, 1)));
}

} // namespace

void registerMatMulRules(RuleTable& table) {
  auto& k = table.kernels;
  k["Gemm"] = lowerGemm;
  k["MatMul"] = lowerMatMul;
  k["Einsum"] = lowerEinsum;
}

} // namespace lathe::lowering
