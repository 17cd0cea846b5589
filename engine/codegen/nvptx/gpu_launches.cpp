#include "engine/codegen/nvptx/gpu_launches.h"

#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify.h"
#include "engine/support/diagnostics.h"

namespace lathe::codegen::nvptx {

namespace {

using loop::Stmt;
using loop::StmtKind;

[[noreturn]] void refuse(const loop::Kernel& kernel, const std::string& why) {
  throw Error(ErrorKind::Unsupported, "CUDA code for kernel " + kernel.name + ": " + why);
}

// The launch sizes a nest's bound loops ask for.
class BoundExtents : public loop::IRVisitor {
public:
  explicit BoundExtents(const loop::Kernel& kernel) : kernel_(kernel) {}
  std::array<std::int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};

protected:
  void visitFor(const loop::For* op) override {
    if (loop::isGpuBound(op->forKind)) {
      const std::optional<std::int64_t> extent = loop::asConstInt(loop::simplify(op->extent));
      if (!extent)
        refuse(kernel_, "the bound loop '" + op->name() + "' has no constant extent");
      std::array<std::int64_t, 3>& dims = loop::isGpuBlock(op->forKind) ? grid : block;
      std::int64_t& dim = dims[static_cast<std::size_t>(loop::gpuAxis(op->forKind))];
      if (dim != 1 && dim != *extent)
        refuse(kernel_, std::string(loop::forKindName(op->forKind)) + " is bound twice, to " +
                            std::to_string(dim) + " and " + std::to_string(*extent) +
                            " iterations");
      dim = *extent;
    }
    loop::IRVisitor::visitFor(op);
  }

private:
  const loop::Kernel& kernel_;
};

class Splitter {
public:
  explicit Splitter(const loop::Kernel& kernel) : kernel_(kernel) {}

  GpuKernelPlan run() {
    split(kernel_.body);
    std::vector<loop::Buffer> scratch;
    for (const Allocated& a : allocated_)
      scratch.push_back(a.buffer);
    for (std::size_t i = 0; i < plan_.launches.size(); ++i) {
      loop::Kernel& k = plan_.launches[i].kernel;
      k.name = plan_.launches.size() == 1 ? kernel_.name : kernel_.name + "_l" + std::to_string(i);
      k.outputs.insert(k.outputs.end(), scratch.begin(), scratch.end());
    }
    for (const Allocated& a : allocated_)
      plan_.scratch.push_back({a.buffer.name(), a.bytes});
    return std::move(plan_);
  }

private:
  struct Allocated {
    loop::Buffer buffer;
    std::int64_t bytes;
  };

  void split(const Stmt& s) {
    if (!s.defined())
      return;
    switch (s.kind()) {
    case StmtKind::Allocate: {
      const auto* op = s.as<loop::Allocate>();
      if (op->scope == loop::MemoryScope::Shared)
        refuse(kernel_, "the shared buffer '" + op->buffer.name() +
                            "' is outside the loops bound to blocks (each block has its own)");
      std::int64_t count = 1;
      for (const loop::Expr& d : op->buffer.shape()) {
        const std::optional<std::int64_t> n = loop::asConstInt(loop::simplify(d));
        if (!n)
          refuse(kernel_, "the buffer '" + op->buffer.name() + "' has no constant size");
        count *= *n;
      }
      allocated_.push_back({op->buffer, count * op->buffer.elementType().bytes()});
      split(op->body);
      return;
    }
    case StmtKind::LetStmt: {
      const auto* op = s.as<loop::LetStmt>();
      lets_.push_back(op);
      split(op->body);
      lets_.pop_back();
      return;
    }
    case StmtKind::Block:
      for (const Stmt& child : s.as<loop::Block>()->stmts)
        split(child);
      return;
    default:
      addLaunch(s);
      return;
    }
  }

  void addLaunch(Stmt body) {
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
      body = loop::LetStmt::make((*it)->var, (*it)->value, body);
    GpuLaunch launch;
    launch.kernel = kernel_;
    launch.kernel.body = body;
    BoundExtents extents(kernel_);
    extents.visit(body);
    const std::int64_t threads = extents.block[0] * extents.block[1] * extents.block[2];
    if (threads > 1024)
      refuse(kernel_, std::to_string(threads) + " threads per block (CUDA allows 1024)");
    launch.grid = extents.grid;
    launch.block = extents.block;
    plan_.launches.push_back(std::move(launch));
  }

  const loop::Kernel& kernel_;
  std::vector<const loop::LetStmt*> lets_;
  std::vector<Allocated> allocated_;
  GpuKernelPlan plan_;
};

} // namespace

GpuKernelPlan planLaunches(const loop::Kernel& kernel) {
  return Splitter(kernel).run();
}

} // namespace lathe::codegen::nvptx
