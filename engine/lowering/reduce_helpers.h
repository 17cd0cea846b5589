#pragma once
// Loop structure shared by reductions and normalizations (Reduce*, ArgMax, CumSum, TopK,
// Softmax, LayerNormalization, ...): ops that combine the elements of a tensor along some
// axes, independently for every index of the other ("kept") axes.
//
// A ReduceLayout sees the input as [groups..., columns]: the kept dims after the last
// reduced one are flattened into one contiguous "column" dimension; before it, runs of
// adjacent dims of one kind (kept or reduced) merge into groups, each looped as one dim.
// A kernel is a loop over tasks, each an index of the kept groups plus a block of columns;
// the passes of a task loop over the reduced groups with the block's columns innermost, so
// that the innermost loop is contiguous whether the reduced axes are trailing (columns = 1)
// or not (the rows of a block accumulate side by side).

#include "engine/lowering/kernel_builder.h"

#include <functional>
#include <string>
#include <vector>

namespace lathe::lowering {

class ReduceLayout {
public:
  // `reducedAxes` are normalized (in [0, rank)), in any order, without repeats.
  ReduceLayout(std::vector<std::int64_t> shape, const std::vector<std::int64_t>& reducedAxes);

  // A run of adjacent prefix dims of one kind, looped over as one dim (kept dims of extent 1
  // join whatever run they are in: their index is always 0).
  struct Group {
    std::int64_t extent = 1;
    bool reduced = false;
    std::size_t first = 0, count = 0; // the dims it covers
  };

  const std::vector<std::int64_t>& shape() const { return shape_; }
  bool isReduced(std::size_t dim) const { return reduced_[dim]; }
  std::size_t prefixRank() const { return prefixRank_; } // dims before the column group
  const std::vector<Group>& groups() const { return groups_; }
  std::vector<std::int64_t> outerShape() const;   // extents of the kept groups
  std::vector<std::int64_t> reducedShape() const; // extents of the reduced groups
  std::int64_t reducedCount() const;              // elements combined into each result
  std::int64_t columns() const;                   // product of the trailing kept dims
  std::int64_t numElements() const;

private:
  std::vector<std::int64_t> shape_;
  std::vector<bool> reduced_;
  std::size_t prefixRank_ = 0;
  std::vector<Group> groups_;
};

// One unit of (possibly parallel) work: fixed leading kept indices and a block of columns.
class ReduceTask {
public:
  using ColumnBody = std::function<Stmt(const Expr& local, const Expr& column)>;
  using ReducedBody =
      std::function<Stmt(const std::vector<Expr>& reduced, const Expr& local, const Expr& column)>;

  ReduceTask(KernelBuilder& kb, const ReduceLayout& layout, std::vector<Expr> outer,
             Expr blockStart, Expr width, std::int64_t maxWidth);

  const ReduceLayout& layout() const { return layout_; }
  std::int64_t maxWidth() const { return maxWidth_; }
  const std::vector<Expr>& outer() const { return outer_; }

  // for each column of the block: body(local index in the block, column).
  Stmt overColumns(const ColumnBody& body) const;
  // for each reduced index (row-major; the last reduced group runs backwards when `reverse`)
  // and, innermost, each column of the block.
  Stmt overReduced(const ReducedBody& body, bool reverse = false) const;

  // `reduced` indexes the reduced groups (for a single reduced axis: the position along it).
  // Flat index into the input (full shape) of a reduced index and a column.
  Expr inputFlat(const std::vector<Expr>& reduced, const Expr& column) const;
  // Flat index into the reduced result (kept dims only; keepdims does not change it).
  Expr keptFlat(const Expr& column) const;
  // Index vectors, for epilogues: in the input's shape, and in the reduced result's shape
  // (reduced dims present as 0 with keepDims, absent otherwise).
  std::vector<Expr> fullIndex(const std::vector<Expr>& reduced, const Expr& column) const;
  std::vector<Expr> keptIndex(const Expr& column, bool keepDims) const;

  // A row of per-column values for this task (maxWidth elements, allocated around the task).
  TensorRef row(const std::string& hint, graph::DType dtype);
  const std::vector<TensorRef>& rows() const { return rows_; }

  // Default-trace steps that put a pass over the reduced axis (a loop overReduced built) on
  // vectors, for tasks of one column: a running `acc = acc OP e` becomes partial results
  // (rfactor) in vectors, a pass that writes each element (exp, scaling) becomes split and
  // vectorize. Passes of other shapes (several reduced axes, ...) are left as they are.
  void vectorizePass(const Stmt& pass) const;

private:
  std::vector<Expr> groupIndex(const std::vector<Expr>& reduced) const;
  std::vector<Expr> columnIndex(const Expr& column) const;

  KernelBuilder& kb_;
  const ReduceLayout& layout_;
  std::vector<Expr> outer_;
  Expr blockStart_, width_;
  std::int64_t maxWidth_;
  std::vector<TensorRef> rows_;
};

// The task loop nest. `passes` (reads of the input per element, roughly) decides whether the
// work is worth running in parallel; `maxBlock` caps the columns per task (1: one column each).
Stmt forEachTask(KernelBuilder& kb, const ReduceLayout& layout, std::int64_t passes,
                 const std::function<Stmt(ReduceTask&)>& body, std::int64_t maxBlock = 1024);

// The index into dims `shape` of a row-major flat index over them.
std::vector<Expr> splitFlatIndex(const Expr& flat, const std::vector<std::int64_t>& shape);

// Whether `work` element operations are worth a parallel loop.
bool worthParallel(std::int64_t work);

// The identity of max (lowest) and min (highest) for a type: +-inf for floats, the integer
// limits otherwise.
Expr lowestOf(loop::Type type);
Expr highestOf(loop::Type type);

// Shorthands for typed constants and unary intrinsics.
Expr constLike(const Expr& like, double value);
Expr callIntrinsic(loop::Intrinsic op, Expr x);

// A reduction of `rows` rows of `count` elements each, for gpuRowReduction.
struct RowReduction {
  std::int64_t rows = 1, count = 1;
  graph::DType dtype = graph::DType::F32;
  Expr identity;
  std::function<Expr(const Expr& a, const Expr& b)> combine; // associative
  std::function<Expr(const Expr& row, const Expr& r)> element;
  std::function<Stmt(const Expr& row, const Expr& total)> write;
};

// Threads per block for a block reduction of `count` elements: a power of two, 32 to 256.
std::int64_t blockReduceThreads(std::int64_t count);

// One row of a GPU block reduction: blockReduceThreads(count) threads (threadIdx.x) and a
// shared buffer of one value per thread (reduce_gpu.cpp). Statements outside the thread
// loops run in every thread of the block.
class BlockRow {
public:
  BlockRow(KernelBuilder& kb, graph::DType dtype, std::int64_t count);
  std::int64_t threads() const { return threads_; }
  // A loop bound to threadIdx.x.
  Stmt overThreads(const std::function<Stmt(const Expr& tx)>& body) const;
  // body(at) for every element of the row, thread tx taking tx, tx + threads, ...
  Stmt forEachElement(const std::function<Stmt(const Expr& at)>& body) const;
  // Combines element(at) over the row: each thread into a private scalar (running
  // alsoAt(at, value) for each element too, when given), then a tree over the shared
  // buffer with a barrier per level. total() then holds the result until the buffer is
  // written again (put a barrier between reading it and the next reduce).
  Stmt reduce(const Expr& identity, const std::function<Expr(const Expr&, const Expr&)>& combine,
              const std::function<Expr(const Expr& at)>& element,
              const std::function<Stmt(const Expr& at, const Expr& value)>& alsoAt = {}) const;
  Expr total() const;
  // `body` with the shared buffer allocated around it (inside the loop over rows).
  Stmt inShared(Stmt body) const;

private:
  KernelBuilder& kb_;
  graph::DType dtype_;
  std::int64_t count_, threads_;
  TensorRef red_;
};

// GPU targets: a loop over the rows (the GPU default trace binds it to blockIdx.x) whose
// body is a block reduction: blockReduceThreads(count) threads (threadIdx.x) each combine
// the elements tx, tx + threads, ... of the row into a private scalar, then a tree over a
// shared buffer halves the partials with a barrier per level, and thread 0 writes.
Stmt gpuRowReduction(KernelBuilder& kb, const RowReduction& reduction);

} // namespace lathe::lowering
