// compute_at(buffer, loop): the producer of a scratch buffer (one store in a perfect nest that
// enumerates it once, row-major) moves into `loop`, a later loop that does all the reading,
// and computes there only the rows the current iteration reads: its outermost dimension
// runs over [lo / row, hi / row] where [lo, hi] bounds the indices read while the loops
// inside `loop` run. Rows two iterations both need are computed twice (the price of
// locality). Refused when the producer is not such a nest or does not come first, a read
// lies outside `loop`, the reads cannot be bounded, the producer reads a buffer the kernel
// writes, or `loop` is parallel (threads would write the same rows).
#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/schedule/producer.h"
#include "engine/support/checked_int.h"

#include <algorithm>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

class CountLoads : public IRVisitor {
public:
  explicit CountLoads(const std::string& buffer) : buffer_(buffer) {}
  int count = 0;

protected:
  void visitLoad(const Load* op) override {
    count += op->buffer.name() == buffer_;
    IRVisitor::visitLoad(op);
  }

private:
  const std::string& buffer_;
};

int loadsOf(const Stmt& s, const std::string& buffer) {
  CountLoads c(buffer);
  c.visit(s);
  return c.count;
}

class MoveProducer : public IRMutator {
public:
  MoveProducer(const For* producer, const std::string& consumer, Stmt nest)
      : producer_(producer), consumer_(consumer), nest_(std::move(nest)) {}

protected:
  Stmt mutateFor(const For* op) override {
    if (op == producer_)
      return noOp();
    if (op->name() == consumer_)
      return For::make(op->var, op->min, op->extent, op->forKind,
                       Block::make(nest_, mutate(op->body)));
    return IRMutator::mutateFor(op);
  }

private:
  const For* producer_;
  const std::string& consumer_;
  Stmt nest_;
};

} // namespace

Stmt computeAt(const Stmt& body, const std::string& buffer, const std::string& loopName) {
  const Producer p = findProducer(body, buffer, "compute_at");
  if (p.loops.empty())
    fail("compute_at needs loops around the store of '" + buffer + "'");
  for (std::size_t k = 0; k < p.loops.size(); ++k) {
    const Stmt inner = k + 1 < p.loops.size() ? Stmt(p.loops[k + 1]) : Stmt(p.store);
    if (!p.loops[k]->body.sameAs(inner))
      fail("the loops around the store of '" + buffer + "' are not a perfect nest ('" +
           p.loops[k]->name() + "' holds more than the next loop)");
  }
  const For* top = p.loops.front();
  const Stmt allocated = p.allocation->body;
  const For& consumer = findLoop(allocated, loopName);
  for (const For* f : p.loops)
    if (f == &consumer)
      fail("'" + loopName + "' is a loop of the producer of '" + buffer + "'");
  // The producer comes first among the statements of the allocation; the loop later.
  const Block* block = allocated.as<Block>();
  std::ptrdiff_t producerAt = -1, consumerAt = -1;
  if (block)
    for (std::size_t i = 0; i < block->stmts.size(); ++i) {
      if (block->stmts[i].sameAs(Stmt(top)))
        producerAt = static_cast<std::ptrdiff_t>(i);
      else if (consumerAt < 0 && boundNames(block->stmts[i]).count(loopName))
        consumerAt = static_cast<std::ptrdiff_t>(i);
    }
  if (producerAt < 0 || consumerAt < producerAt)
    fail("the producer of '" + buffer + "' must be a statement of its own before '" + loopName +
         "'");
  if (loadsOf(allocated, buffer) != loadsOf(consumer.body, buffer))
    fail("'" + buffer + "' is also read outside '" + loopName + "'");
  for (const std::string& written : buffersWritten(allocated))
    if (written != buffer && readsBuffer(p.store->value, written))
      fail("the producer of '" + buffer + "' reads '" + written +
           "', which the kernel also writes; moving it could read a later value");
  if (consumer.forKind == ForKind::Parallel)
    fail("'" + loopName + "' is parallel: iterations would write the same rows of '" + buffer +
         "' at once");
  for (const For* outer : enclosingLoops(allocated, loopName))
    if (outer->forKind == ForKind::Parallel)
      fail("'" + loopName + "' is inside the parallel loop '" + outer->name() +
           "': iterations would write the same rows of '" + buffer + "' at once");

  // The elements the loop body reads for the current iteration.
  Expr lo, hi;
  for (const Access& a : accessesOf(consumer.body)) {
    if (a.isStore || a.buffer.name() != buffer)
      continue;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> ranges;
    for (const For* f : a.loops) {
      const auto min = asConstInt(simplify(f->min));
      const std::int64_t extent = constantExtent(*f, "compute_at");
      if (!min)
        fail("the loop '" + f->name() + "' inside '" + loopName + "' has a varying start");
      const std::optional<std::int64_t> last =
          checkedAdd(*min, std::max<std::int64_t>(extent, 1) - 1);
      if (!last)
        fail("the loop '" + f->name() + "' inside '" + loopName + "' ends past the int64 range");
      ranges[f->name()] = {*min, *last};
    }
    const auto b = symbolicBounds(a.index, ranges);
    if (!b)
      fail("cannot bound the elements of '" + buffer + "' read at [" + toString(a.index) + "]");
    lo = lo.defined() ? min(lo, b->first) : b->first;
    hi = hi.defined() ? max(hi, b->second) : b->second;
  }
  if (!lo.defined())
    fail("'" + buffer + "' is not read inside '" + loopName + "'");
  class HasLoad : public IRVisitor {
  public:
    bool found = false;

  protected:
    void visitLoad(const Load*) override { found = true; }
  } loadsInBounds;
  loadsInBounds.visit(lo);
  loadsInBounds.visit(hi);
  if (loadsInBounds.found)
    fail("the rows of '" + buffer + "' read inside '" + loopName +
         "' depend on values loaded there; they cannot be computed ahead");
  const Producer::Dim& rows = p.dims.front();
  const Expr first = simplify(max(floorDiv(lo, makeIndex(rows.stride)), makeIndex(0)));
  const Expr last = simplify(min(floorDiv(hi, makeIndex(rows.stride)), makeIndex(rows.extent - 1)));
  Stmt nest = Stmt(p.store);
  for (auto f = p.loops.rbegin(); f != p.loops.rend(); ++f)
    nest = (*f)->name() == rows.var
               ? For::make((*f)->var, first, simplify(last - first + makeIndex(1)), (*f)->forKind,
                           nest)
               : For::make((*f)->var, (*f)->min, (*f)->extent, (*f)->forKind, nest);
  MoveProducer move(top, loopName, nest);
  return move.mutate(body);
}

} // namespace lathe::schedule::detail
