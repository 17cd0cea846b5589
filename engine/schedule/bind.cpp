// bind(loop, axis): the loop's iterations become the blocks (blockIdx.x/y/z) or the threads
// of a block (threadIdx.x/y/z) of a CUDA launch; the loop no longer iterates. Refused unless
// every loop around it is bound too (a serial loop around threads would need a barrier per
// iteration, which bind does not insert), when a block axis would sit inside a thread axis,
// when the axis is bound twice in one nest, when the extent is not a constant within CUDA's
// limits, and when requireIndependentIterations cannot show that iterations write disjoint
// elements (a reduction bound to threads would race).
#include "engine/loop_ir/ir_visitor.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

class BoundKinds : public IRVisitor {
public:
  std::vector<const For*> loops;

protected:
  void visitFor(const For* op) override {
    if (isGpuBound(op->forKind))
      loops.push_back(op);
    IRVisitor::visitFor(op);
  }
};

std::int64_t axisLimit(ForKind kind) {
  switch (kind) {
  case ForKind::GpuBlockX:
    return 2147483647;
  case ForKind::GpuBlockY:
  case ForKind::GpuBlockZ:
    return 65535;
  case ForKind::GpuThreadZ:
    return 64;
  default:
    return 1024;
  }
}

} // namespace

Stmt bind(const Stmt& body, const std::string& name, const std::string& axis) {
  const std::optional<ForKind> kind = gpuBindingNamed(axis);
  if (!kind)
    fail("'" + axis + "' is not a GPU axis; use blockIdx.x, blockIdx.y, blockIdx.z, " +
         "threadIdx.x, threadIdx.y or threadIdx.z");
  const For& loop = findLoop(body, name);
  if (loop.forKind != ForKind::Serial)
    fail("'" + name + "' is already " + forKindName(loop.forKind));
  const std::int64_t extent = constantExtent(loop, "bind");
  if (extent < 1 || extent > axisLimit(*kind))
    fail("'" + name + "' runs " + std::to_string(extent) + " iterations; " + axis + " takes 1 to " +
         std::to_string(axisLimit(*kind)) + (isGpuBlock(*kind) ? "" : " (split it first)"));
  const std::vector<const For*> outer = enclosingLoops(body, name);
  for (const For* o : outer) {
    if (!isGpuBound(o->forKind))
      fail("'" + name + "' is inside the " + forKindName(o->forKind) + " loop '" + o->name() +
           "'; bind the loops around it first (only bound loops may enclose a bound loop)");
    if (isGpuBlock(*kind) && !isGpuBlock(o->forKind))
      fail("'" + name + "' is inside '" + o->name() + "', bound to " + forKindName(o->forKind) +
           "; blocks go outside threads");
  }
  // Each axis once per nest: the nest is the outermost enclosing loop, or this one.
  BoundKinds bound;
  bound.visit(outer.empty() ? Stmt(&loop) : Stmt(outer.front()));
  for (const For* b : bound.loops)
    if (b->forKind == *kind)
      fail(axis + " is already bound to '" + b->name() + "' in this nest");
  requireIndependentIterations(loop, "bind");
  return replaceLoop(body, name, [&](const For& op) {
    return For::make(op.var, op.min, op.extent, *kind, op.body);
  });
}

} // namespace lathe::schedule::detail
