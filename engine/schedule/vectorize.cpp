// vectorize(loop): the loop, which must be innermost and of constant extent L, is replaced
// by its body computed on L-lane vectors: the loop variable becomes ramp(min, 1, L), scalar
// operands next to vector ones are broadcast, and loads and stores take vector indices
// (contiguous when the index moves by 1 along the loop, gathers and scatters otherwise).
// Refused, with the reason: a loop inside it, an allocation, a condition that varies along
// it (a split tail: pick a factor that divides the extent), an extern call on vectors, and
// whatever requireIndependentIterations refuses (reductions, overlapping writes).
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/widen.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"

#include <algorithm>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

constexpr std::int64_t kMaxLanes = 64;

// The loop body with the loop variable as a ramp: expressions through VectorWidener,
// statements here.
class Vectorizer : public VectorWidener {
public:
  Vectorizer(const std::string& loop, Expr ramp)
      : VectorWidener({{loop, std::move(ramp)}}), loop_(loop) {}

protected:
  void refuse(const std::string& why) override { fail("vectorize(" + loop_ + ") meets " + why); }

  Stmt mutateFor(const For* op) override {
    fail("vectorize(" + loop_ + ") needs an innermost loop; '" + op->name() + "' is inside it");
  }
  Stmt mutateAllocate(const Allocate* op) override {
    fail("vectorize(" + loop_ + ") cannot vectorize the allocation of " + op->buffer.name() +
         " inside it");
  }
  Stmt mutateIfThenElse(const IfThenElse* op) override {
    if (mutate(op->condition).type().isVector())
      fail("vectorize(" + loop_ +
           ") meets a condition that varies along it (a split whose "
           "factor does not divide the extent leaves one; pick a factor that divides it)");
    return IRMutator::mutateIfThenElse(op);
  }
  Stmt mutateStore(const Store* op) override {
    Expr index = mutate(op->index), value = mutate(op->value);
    const int lanes = index.type().lanes();
    if (value.type().lanes() > lanes)
      fail("vectorize(" + loop_ + ") would store a vector into the one element " +
           op->buffer.name() + "[" + toString(op->index) + "]");
    return Store::make(op->buffer, index, broadcastTo(value, lanes));
  }
  Stmt mutateLetStmt(const LetStmt* op) override {
    const Expr value = mutate(op->value);
    const Expr var = bind(op->name(), op->var, value);
    const Stmt body = mutate(op->body);
    if (!var.sameAs(op->var))
      unbind(op->name());
    return LetStmt::make(var, value, body);
  }
  Stmt mutateEvaluate(const Evaluate* op) override {
    if (mutate(op->value).type().isVector())
      fail("vectorize(" + loop_ + ") meets an evaluated call that varies along it");
    return op;
  }

private:
  std::string loop_;
};

} // namespace

Stmt vectorize(const Stmt& body, const std::string& name) {
  const For& loop = findLoop(body, name);
  const std::int64_t lanes = constantExtent(loop, "vectorize");
  if (lanes < 2 || lanes > kMaxLanes)
    fail("vectorize needs an extent from 2 to " + std::to_string(kMaxLanes) + "; '" + name +
         "' has " + std::to_string(lanes) + " (split it first)");
  if (loop.forKind == ForKind::Parallel)
    fail("'" + name + "' is parallel; vectorize an inner loop");
  requireIndependentIterations(loop, "vectorize");
  return replaceLoop(body, name, [&](const For& op) {
    Vectorizer vectorizer(name, Ramp::make(op.min, makeIndex(1), static_cast<int>(lanes)));
    return vectorizer.mutate(op.body);
  });
}

} // namespace lathe::schedule::detail
