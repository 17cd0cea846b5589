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

#include <algorithm>
#include <functional>
#include <map>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

struct Producer {
  const Allocate* allocation = nullptr;
  const Store* store = nullptr;
  std::vector<const For*> loops; // around the store, inside the allocation
  int stores = 0;
  bool guarded = false;
};

class FindProducer : public IRVisitor {
public:
  explicit FindProducer(const std::string& buffer) : buffer_(buffer) {}
  Producer found;

protected:
  void visitAllocate(const Allocate* op) override {
    if (op->buffer.name() == buffer_) {
      found.allocation = op;
      allocationDepth_ = loops_.size();
    }
    IRVisitor::visitAllocate(op);
  }
  void visitFor(const For* op) override {
    loops_.push_back(op);
    IRVisitor::visitFor(op);
    loops_.pop_back();
  }
  void visitIfThenElse(const IfThenElse* op) override {
    ++guards_;
    IRVisitor::visitIfThenElse(op);
    --guards_;
  }
  void visitStore(const Store* op) override {
    IRVisitor::visitStore(op);
    if (op->buffer.name() != buffer_)
      return;
    ++found.stores;
    found.store = op;
    found.guarded = guards_ > 0;
    // The loops inside the allocation (a store of it can only be inside it).
    found.loops.assign(loops_.begin() + static_cast<std::ptrdiff_t>(allocationDepth_),
                       loops_.end());
  }

private:
  const std::string& buffer_;
  std::size_t allocationDepth_ = 0;
  std::vector<const For*> loops_;
  int guards_ = 0;
};

class LoadsOf : public IRVisitor {
public:
  explicit LoadsOf(const std::string& buffer) : buffer_(buffer) {}
  std::vector<const Load*> loads;
  std::vector<std::string> written;

protected:
  void visitLoad(const Load* op) override {
    IRVisitor::visitLoad(op);
    if (op->buffer.name() == buffer_)
      loads.push_back(op);
  }
  void visitStore(const Store* op) override {
    IRVisitor::visitStore(op);
    written.push_back(op->buffer.name());
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
  FindProducer finder(buffer);
  finder.visit(body);
  const Producer& p = finder.found;
  if (!p.allocation)
    fail("'" + buffer + "' is not allocated in the kernel (parameters cannot be inlined)");
  if (p.stores != 1)
    fail("'" + buffer + "' is written by " + std::to_string(p.stores) +
         " stores; only a buffer written by one can be inlined");
  if (p.guarded)
    fail("'" + buffer + "' is written under a condition");
  // The loops around the store must enumerate the buffer once, row-major: the index is
  // sum(var_k * stride_k) with strides that are products of the inner extents.
  struct Dim {
    std::string var;
    std::int64_t stride, extent;
  };
  std::vector<Dim> dims;
  for (const For* f : p.loops) {
    const auto min = asConstInt(simplify(f->min));
    const std::int64_t extent = constantExtent(*f, "compute_inline");
    if (!min || *min != 0)
      fail("the loop '" + f->name() + "' around the store does not start at 0");
    const auto stride = strideAlong(p.store->index, f->name());
    if (!stride)
      fail("the store index of '" + buffer + "' is not affine in '" + f->name() + "'");
    if (*stride != 0)
      dims.push_back({f->name(), *stride, extent});
  }
  std::sort(dims.begin(), dims.end(),
            [](const Dim& a, const Dim& b) { return a.stride > b.stride; });
  std::int64_t expected = 1;
  for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
    if (d->stride != expected)
      fail("the loops around the store do not enumerate '" + buffer +
           "' once in row-major order (" + toString(p.store->index) + ")");
    expected *= d->extent;
  }
  std::map<std::string, Expr> zero;
  for (const Dim& d : dims)
    zero[d.var] = makeIndex(0);
  if (!isConstValue(simplify(substitute(p.store->index, zero)), 0))
    fail("the store index of '" + buffer + "' does not start at element 0");
  for (const For* f : p.loops)
    if (std::none_of(dims.begin(), dims.end(), [&](const Dim& d) { return d.var == f->name(); }))
      fail("the loop '" + f->name() + "' writes the same elements of '" + buffer +
           "' more than once");

  LoadsOf uses(buffer);
  uses.visit(p.allocation->body);
  for (const Load* load : uses.loads)
    if (load->index.type().isVector())
      fail("'" + buffer + "' is read as a vector; inline it before vectorizing");
  LoadsOf reads(buffer);
  reads.visit(p.store->value);
  for (const std::string& written : uses.written) {
    if (written == buffer)
      continue;
    class ReadsBuffer : public IRVisitor {
    public:
      explicit ReadsBuffer(const std::string& name) : name_(name) {}
      bool found = false;

    protected:
      void visitLoad(const Load* op) override {
        found = found || op->buffer.name() == name_;
        IRVisitor::visitLoad(op);
      }

    private:
      const std::string& name_;
    } check(written);
    check.visit(p.store->value);
    if (check.found)
      fail("the value of '" + buffer + "' reads '" + written +
           "', which the kernel also writes; inlining could read a later value");
  }
  if (!reads.loads.empty())
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
