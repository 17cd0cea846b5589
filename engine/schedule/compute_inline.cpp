// compute_inline(buffer): a buffer the kernel allocates, written by one store inside loops
// that enumerate it exactly once in row-major order (buf[i*W + j] = f(i, j) over
// for i in [0, H), for j in [0, W)), is replaced by f at every place that reads it:
// buf[e] becomes f(e / W, e % W). The store and the allocation go away. Refused when the
// buffer is a kernel parameter, is written more than once or under a condition, the loops
// around the store do not enumerate it exactly once, a read is a vector (inline before
// vectorizing), or f reads a buffer the kernel writes after it (its value could change).
#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/schedule/producer.h"

#include <algorithm>
#include <functional>
#include <map>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

class LoadsOf : public IRVisitor {
public:
  explicit LoadsOf(const std::string& buffer) : buffer_(buffer) {}
  std::vector<const Load*> loads;

protected:
  void visitLoad(const Load* op) override {
    IRVisitor::visitLoad(op);
    if (op->buffer.name() == buffer_)
      loads.push_back(op);
  }

private:
  const std::string& buffer_;
};

class Inline : public IRMutator {
public:
  Inline(const std::string& buffer, const Store* store, std::function<Expr(const Expr&)> value)
      : buffer_(buffer), store_(store), value_(std::move(value)) {}

protected:
  Expr mutateLoad(const Load* op) override {
    if (op->buffer.name() == buffer_)
      return value_(mutate(op->index));
    return IRMutator::mutateLoad(op);
  }
  Stmt mutateStore(const Store* op) override {
    if (op == store_)
      return noOp();
    return IRMutator::mutateStore(op);
  }
  Stmt mutateAllocate(const Allocate* op) override {
    if (op->buffer.name() == buffer_)
      return mutate(op->body);
    return IRMutator::mutateAllocate(op);
  }

private:
  const std::string& buffer_;
  const Store* store_;
  std::function<Expr(const Expr&)> value_;
};

} // namespace

Stmt computeInline(const Stmt& body, const std::string& buffer) {
  const Producer p = findProducer(body, buffer, "compute_inline");
  const std::vector<Producer::Dim>& dims = p.dims;
  // The value is recomputed where the buffer is read: it may only use the loop variables
  // (replaced there) and names bound outside the allocation.
  std::set<std::string> local = boundNames(p.allocation->body);
  for (const Producer::Dim& d : dims)
    local.erase(d.var);
  for (const std::string& name : local)
    if (usesVar(p.store->value, name) || usesVar(p.store->index, name))
      fail("the value of '" + buffer + "' uses '" + name +
           "', which is bound where it is computed but not where it is read");
  LoadsOf uses(buffer);
  uses.visit(p.allocation->body);
  for (const Load* load : uses.loads)
    if (load->index.type().isVector())
      fail("'" + buffer + "' is read as a vector; inline it before vectorizing");
  for (const std::string& written : buffersWritten(p.allocation->body))
    if (written != buffer && readsBuffer(p.store->value, written))
      fail("the value of '" + buffer + "' reads '" + written +
           "', which the kernel also writes; inlining could read a later value");
  if (readsBuffer(p.store->value, buffer))
    fail("the value of '" + buffer + "' reads '" + buffer + "' itself");

  const Expr value = p.store->value;
  auto recompute = [&](const Expr& index) {
    std::map<std::string, Expr> at;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      Expr v = index / makeIndex(dims[k].stride);
      if (k > 0)
        v = v % makeIndex(dims[k].extent);
      at[dims[k].var] = v;
    }
    return substitute(value, at);
  };
  Inline rewrite(buffer, p.store, recompute);
  return rewrite.mutate(body);
}

} // namespace lathe::schedule::detail
