#include "engine/tuner/features.h"

#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_visitor.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace lathe::tuner {
namespace {

enum Feature {
  Work,           // statement executions: stores weighted by the iterations around them
  VectorWork,     // the same, counting vector stores once per vector
  Lanes,          // widest vector store
  ParallelExtent, // iterations of the outermost parallel loop (0: none)
  WorkPerTask,    // work inside one iteration of that loop
  Unrolled,       // product of unrolled loop extents
  Loops,          // loops
  Depth,          // deepest nesting
  InnerExtent,    // extent of the innermost loops (greatest)
  LoadsPerStore,  // loads per executed store
  ArithPerStore,  // arithmetic nodes per executed store
  Guards,         // conditions executed
  StackBytes,     // stack allocations
  HeapBytes,      // heap allocations
  Stores,         // store statements in the code
  SerialOuter,    // iterations of serial loops outside any parallel loop
};

float log2p(double x) {
  return static_cast<float>(std::log2(1 + std::max(0.0, x)));
}

class ExprCounter : public loop::IRVisitor {
public:
  double loads = 0, arith = 0;

protected:
  void visitLoad(const loop::Load* op) override {
    ++loads;
    loop::IRVisitor::visitLoad(op);
  }
  void visitAdd(const loop::Add* op) override { count(op); }
  void visitSub(const loop::Sub* op) override { count(op); }
  void visitMul(const loop::Mul* op) override { count(op); }
  void visitDiv(const loop::Div* op) override { count(op); }
  void visitMin(const loop::Min* op) override { count(op); }
  void visitMax(const loop::Max* op) override { count(op); }

private:
  template <typename T>
  void count(const T* op) {
    arith += 1;
    visit(op->a);
    visit(op->b);
  }
};

class FeatureVisitor : public loop::IRVisitor {
public:
  double work = 0, vectorWork = 0, lanes = 1, parallelExtent = 0, perTask = 0, unrolled = 1;
  double loops = 0, depth = 0, innerExtent = 0, loads = 0, arith = 0, guards = 0;
  double stackBytes = 0, heapBytes = 0, stores = 0, serialOuter = 1;

protected:
  void visitFor(const loop::For* op) override {
    const double extent = static_cast<double>(loop::asConstInt(op->extent).value_or(16));
    ++loops;
    trip_.push_back(extent);
    depth = std::max(depth, static_cast<double>(trip_.size()));
    const bool parallel = op->forKind == loop::ForKind::Parallel;
    if (parallel && parallelDepth_ < 0) {
      parallelExtent = std::max(parallelExtent, extent);
      parallelDepth_ = static_cast<int>(trip_.size()) - 1;
    }
    if (op->forKind == loop::ForKind::Unrolled)
      unrolled *= extent;
    if (!parallel && parallelDepth_ < 0)
      serialOuter = std::max(serialOuter, iterations(0, trip_.size()));
    const double before = loops;
    loop::IRVisitor::visitFor(op);
    if (loops == before) // innermost
      innerExtent = std::max(innerExtent, extent);
    if (parallel && parallelDepth_ == static_cast<int>(trip_.size()) - 1)
      parallelDepth_ = -1;
    trip_.pop_back();
  }
  void visitStore(const loop::Store* op) override {
    const double times = iterations(0, trip_.size());
    const int l = op->value.type().lanes();
    ++stores;
    work += times * l;
    vectorWork += times;
    lanes = std::max(lanes, static_cast<double>(l));
    if (parallelDepth_ >= 0)
      perTask += iterations(static_cast<std::size_t>(parallelDepth_) + 1, trip_.size()) * l;
    ExprCounter c;
    c.visit(op->index);
    c.visit(op->value);
    loads += times * c.loads;
    arith += times * c.arith;
  }
  void visitIfThenElse(const loop::IfThenElse* op) override {
    guards += iterations(0, trip_.size());
    loop::IRVisitor::visitIfThenElse(op);
  }
  void visitAllocate(const loop::Allocate* op) override {
    double elements = 1;
    for (const loop::Expr& d : op->buffer.shape())
      elements *= static_cast<double>(loop::asConstInt(d).value_or(1));
    const double bytes = elements * op->buffer.elementType().bytes();
    (op->scope == loop::MemoryScope::Stack ? stackBytes : heapBytes) += bytes;
    loop::IRVisitor::visitAllocate(op);
  }

private:
  double iterations(std::size_t from, std::size_t to) const {
    double n = 1;
    for (std::size_t i = from; i < to; ++i)
      n *= trip_[i];
    return n;
  }
  std::vector<double> trip_;
  int parallelDepth_ = -1;
};

} // namespace

const std::array<const char*, kFeatureCount>& featureNames() {
  static const std::array<const char*, kFeatureCount> names = {
      "work",          "vector_work",     "lanes",           "parallel_extent",
      "work_per_task", "unrolled",        "loops",           "depth",
      "inner_extent",  "loads_per_store", "arith_per_store", "guards",
      "stack_bytes",   "heap_bytes",      "stores",          "serial_outer"};
  return names;
}

Features featuresOf(const loop::Kernel& kernel) {
  FeatureVisitor v;
  v.visit(kernel.body);
  Features f{};
  const double perStore = std::max(1.0, v.vectorWork);
  f[Work] = log2p(v.work);
  f[VectorWork] = log2p(v.vectorWork);
  f[Lanes] = log2p(v.lanes);
  f[ParallelExtent] = log2p(v.parallelExtent);
  f[WorkPerTask] = log2p(v.perTask);
  f[Unrolled] = log2p(v.unrolled - 1);
  f[Loops] = log2p(v.loops);
  f[Depth] = static_cast<float>(v.depth);
  f[InnerExtent] = log2p(v.innerExtent);
  f[LoadsPerStore] = static_cast<float>(v.loads / perStore);
  f[ArithPerStore] = static_cast<float>(v.arith / perStore);
  f[Guards] = log2p(v.guards);
  f[StackBytes] = log2p(v.stackBytes);
  f[HeapBytes] = log2p(v.heapBytes);
  f[Stores] = log2p(v.stores);
  f[SerialOuter] = log2p(v.serialOuter);
  return f;
}

} // namespace lathe::tuner
