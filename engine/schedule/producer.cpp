#include "engine/schedule/producer.h"

#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/support/checked_int.h"

#include <algorithm>
#include <map>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

class FindProducer : public IRVisitor {
public:
  explicit FindProducer(const std::string& buffer) : buffer_(buffer) {}
  Producer found;
  int stores = 0;
  bool guarded = false;

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
    ++stores;
    found.store = op;
    guarded = guards_ > 0;
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

class Written : public IRVisitor {
public:
  std::vector<std::string> names;

protected:
  void visitStore(const Store* op) override {
    IRVisitor::visitStore(op);
    names.push_back(op->buffer.name());
  }
};

class Reads : public IRVisitor {
public:
  explicit Reads(const std::string& name) : name_(name) {}
  bool found = false;

protected:
  void visitLoad(const Load* op) override {
    found = found || op->buffer.name() == name_;
    IRVisitor::visitLoad(op);
  }

private:
  const std::string& name_;
};

} // namespace

Producer findProducer(const Stmt& body, const std::string& buffer, const char* primitive) {
  FindProducer finder(buffer);
  finder.visit(body);
  Producer p = finder.found;
  if (!p.allocation)
    fail("'" + buffer + "' is not allocated in the kernel (" + primitive +
         " works on buffers the kernel allocates)");
  if (finder.stores != 1)
    fail("'" + buffer + "' is written by " + std::to_string(finder.stores) + " stores; " +
         primitive + " needs a buffer written by one");
  if (finder.guarded)
    fail("'" + buffer + "' is written under a condition");
  // The loops around the store must enumerate the buffer once, row-major: the index is
  // sum(var_k * stride_k) with strides that are products of the inner extents.
  using Dim = Producer::Dim;
  std::vector<Dim>& dims = p.dims;
  for (const For* f : p.loops) {
    const auto min = asConstInt(simplify(f->min));
    const std::int64_t extent = constantExtent(*f, primitive);
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
    const std::optional<std::int64_t> next = checkedMul(expected, d->extent);
    if (!next)
      fail("the loops around the store of '" + buffer +
           "' cover more elements than an int64 counts");
    expected = *next;
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

  return p;
}

std::vector<std::string> buffersWritten(const Stmt& s) {
  Written w;
  w.visit(s);
  return std::move(w.names);
}

bool readsBuffer(const Expr& e, const std::string& name) {
  Reads r(name);
  r.visit(e);
  return r.found;
}

} // namespace lathe::schedule::detail
