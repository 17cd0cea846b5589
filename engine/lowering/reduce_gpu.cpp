// Block reductions for GPU targets: one block per row, its threads combining strided parts
// of the row, then a tree over shared memory (reduce_helpers.h).
#include "engine/lowering/reduce_helpers.h"
#include "engine/lowering/window_helpers.h"

namespace lathe::lowering {

std::int64_t blockReduceThreads(std::int64_t count) {
  std::int64_t threads = 32; // a warp at least
  while (threads < 256 && threads < count)
    threads *= 2;
  return threads;
}

BlockRow::BlockRow(KernelBuilder& kb, graph::DType dtype, std::int64_t count)
    : kb_(kb), dtype_(dtype), count_(count), threads_(blockReduceThreads(count)),
      red_(kb.scratch("red", dtype, {threads_})) {}

Stmt BlockRow::overThreads(const std::function<Stmt(const Expr&)>& body) const {
  const Expr tx = kb_.freshVar("tx");
  return loop::For::make(tx, loop::makeIndex(0), loop::makeIndex(threads_),
                         loop::ForKind::GpuThreadX, body(tx));
}

Stmt BlockRow::forEachElement(const std::function<Stmt(const Expr&)>& body) const {
  return overThreads([&](const Expr& tx) {
    const Expr j = kb_.freshVar("j");
    const Expr at = j * threads_ + tx;
    Stmt s = body(at);
    if (count_ % threads_ != 0)
      s = loop::IfThenElse::make(at < loop::makeIndex(count_), s);
    return forCount(j, (count_ + threads_ - 1) / threads_, s);
  });
}

Stmt BlockRow::reduce(const Expr& identity,
                      const std::function<Expr(const Expr&, const Expr&)>& combine,
                      const std::function<Expr(const Expr& at)>& element,
                      const std::function<Stmt(const Expr& at, const Expr& value)>& alsoAt) const {
  const TensorRef part = kb_.scratch("part", dtype_, {1});
  const Expr zero = loop::makeIndex(0);
  std::vector<Stmt> steps;
  // Each thread combines elements tx, tx + threads, ... of the row, in that order.
  steps.push_back(overThreads([&](const Expr& tx) {
    const Expr j = kb_.freshVar("j");
    const Expr at = j * threads_ + tx;
    const Expr v = freshScalar(kb_, "v", loopType(dtype_));
    Stmt take = part.store({zero}, combine(part.load({zero}), v));
    if (alsoAt)
      take = loop::Block::make(alsoAt(at, v), take);
    take = loop::LetStmt::make(v, element(at), take);
    if (count_ % threads_ != 0)
      take = loop::IfThenElse::make(at < loop::makeIndex(count_), take);
    return kb_.allocate(part,
                        loop::Block::make({part.store({zero}, identity),
                                           forCount(j, (count_ + threads_ - 1) / threads_, take),
                                           red_.store({tx}, part.load({zero}))}));
  }));
  steps.push_back(loop::Barrier::make());
  // The tree: each level halves the partials, a barrier between levels.
  for (std::int64_t half = threads_ / 2; half >= 1; half /= 2) {
    steps.push_back(overThreads([&](const Expr& tx) {
      return loop::IfThenElse::make(
          tx < loop::makeIndex(half),
          red_.store({tx}, combine(red_.load({tx}), red_.load({tx + half}))));
    }));
    steps.push_back(loop::Barrier::make());
  }
  return loop::Block::make(steps);
}

Expr BlockRow::total() const {
  return red_.load({loop::makeIndex(0)});
}

Stmt BlockRow::inShared(Stmt body) const {
  return loop::Allocate::make(red_.buffer, loop::MemoryScope::Shared, std::move(body));
}

Stmt gpuRowReduction(KernelBuilder& kb, const RowReduction& r) {
  const BlockRow block(kb, r.dtype, r.count);
  const Expr row = kb.freshVar("row");
  const Stmt reduce =
      block.reduce(r.identity, r.combine, [&](const Expr& at) { return r.element(row, at); });
  const Stmt write = block.overThreads([&](const Expr& tx) {
    return loop::IfThenElse::make(loop::eq(tx, loop::makeIndex(0)), r.write(row, block.total()));
  });
  kb.describe("block reduction for a GPU: a block per row, " + std::to_string(block.threads()) +
              " threads each combining every " + std::to_string(block.threads()) +
              "th element, then a tree over shared memory (a barrier per level)");
  return forCount(row, r.rows, block.inShared(loop::Block::make(reduce, write)));
}

} // namespace lathe::lowering
