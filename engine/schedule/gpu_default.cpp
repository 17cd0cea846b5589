// The default GPU schedule: the independent outer loops of each top-level nest, fused and
// spread over blocks and threads (schedule.h).
#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify.h"
#include "engine/schedule/schedule.h"
#include "engine/support/diagnostics.h"

namespace lathe::schedule {

namespace {

using loop::For;
using loop::Stmt;
using loop::StmtKind;

// The top-level nests: loops reached from the body through allocations, lets and blocks.
void collectNests(const Stmt& s, std::vector<const For*>& nests) {
  if (!s.defined())
    return;
  switch (s.kind()) {
  case StmtKind::For:
    nests.push_back(s.as<For>());
    return;
  case StmtKind::Allocate:
    collectNests(s.as<loop::Allocate>()->body, nests);
    return;
  case StmtKind::LetStmt:
    collectNests(s.as<loop::LetStmt>()->body, nests);
    return;
  case StmtKind::Block:
    for (const Stmt& child : s.as<loop::Block>()->stmts)
      collectNests(child, nests);
    return;
  default:
    return;
  }
}

struct ChainLoop {
  std::string name;
  std::int64_t extent;
};

// The perfectly nested serial loops with constant extents at the top of `nest`.
std::vector<ChainLoop> leadingChain(const For* nest) {
  std::vector<ChainLoop> chain;
  for (const For* f = nest; f && f->forKind == loop::ForKind::Serial; f = f->body.as<For>()) {
    const std::optional<std::int64_t> extent = loop::asConstInt(loop::simplify(f->extent));
    if (!extent || *extent < 1)
      break;
    chain.push_back({f->name(), *extent});
  }
  return chain;
}

Step step(Primitive p, std::vector<std::string> loops, std::vector<std::int64_t> factors = {}) {
  Step s;
  s.primitive = p;
  s.loops = std::move(loops);
  s.factors = std::move(factors);
  return s;
}

// Whether the nest has loops bound already (the lowering's block reductions bind their
// threads): then only blocks are left to bind.
bool hasBoundLoops(const For* nest) {
  struct Finder : loop::IRVisitor {
    bool found = false;
    void visitFor(const For* op) override {
      found = found || loop::isGpuBound(op->forKind);
      loop::IRVisitor::visitFor(op);
    }
  } finder;
  finder.visit(Stmt(nest));
  return finder.found;
}

// Fuses the first `count` loops of `chain` and binds the result: to blocks only when the
// nest binds its threads itself, else split into blocks of threads.
std::vector<Step> planNest(const std::vector<ChainLoop>& chain, std::size_t count,
                           bool threadsBound) {
  std::vector<Step> steps;
  std::string name = chain[0].name;
  std::int64_t extent = chain[0].extent;
  for (std::size_t i = 1; i < count; ++i) {
    steps.push_back(step(Primitive::Fuse, {name, chain[i].name}));
    name += "." + chain[i].name + ".fused";
    extent *= chain[i].extent;
  }
  if (threadsBound) {
    steps.push_back(step(Primitive::Bind, {name, "blockIdx.x"}));
  } else if (extent > kGpuBlockThreads) {
    steps.push_back(step(Primitive::Split, {name}, {kGpuBlockThreads}));
    steps.push_back(step(Primitive::Bind, {name + ".o", "blockIdx.x"}));
    steps.push_back(step(Primitive::Bind, {name + ".i", "threadIdx.x"}));
  } else {
    steps.push_back(step(Primitive::Bind, {name, "threadIdx.x"}));
  }
  return steps;
}

// Loops of the kinds `serial` picks become serial. `onHost`: the GPU's barriers go and its
// shared buffers become stack buffers, for a kernel run serially on a CPU.
class SerialLoops : public loop::IRMutator {
public:
  SerialLoops(bool (*serial)(loop::ForKind), bool onHost) : serial_(serial), onHost_(onHost) {}

protected:
  Stmt mutateBarrier(const loop::Barrier* op) override { return onHost_ ? loop::noOp() : op; }
  Stmt mutateAllocate(const loop::Allocate* op) override {
    Stmt body = mutate(op->body);
    const bool shared = onHost_ && op->scope == loop::MemoryScope::Shared;
    if (!shared && body.sameAs(op->body))
      return op;
    return loop::Allocate::make(op->buffer, shared ? loop::MemoryScope::Stack : op->scope, body);
  }
  Stmt mutateFor(const For* op) override {
    Stmt body = mutate(op->body);
    if (!serial_(op->forKind) && body.sameAs(op->body))
      return op;
    return For::make(op->var, op->min, op->extent,
                     serial_(op->forKind) ? loop::ForKind::Serial : op->forKind, body);
  }

private:
  bool (*serial_)(loop::ForKind);
  bool onHost_;
};

// Thread-pool loops that the lowering marked itself become serial again: on a GPU their
// independence is what bind needs, and it checks that anew.
bool isParallel(loop::ForKind kind) {
  return kind == loop::ForKind::Parallel;
}

} // namespace

loop::Kernel withoutParallelLoops(const loop::Kernel& kernel) {
  loop::Kernel out = kernel;
  out.body = SerialLoops(isParallel, false).mutate(kernel.body);
  return out;
}

loop::Kernel withSerialGpuLoops(const loop::Kernel& kernel) {
  loop::Kernel out = kernel;
  out.body = SerialLoops(loop::isGpuBound, true).mutate(kernel.body);
  return out;
}

std::string gpuDefaultTrace(const loop::Kernel& kernel, loop::Kernel* scheduled) {
  std::vector<const For*> nests;
  collectNests(kernel.body, nests);
  Schedule accepted;
  accepted.kernel = kernel.name;
  // Each nest's steps are replayed on the kernel as the nests before left it.
  loop::Kernel current = kernel;
  for (const For* nest : nests) {
    const std::vector<ChainLoop> chain = leadingChain(nest);
    // Grid sizes stay far below int64: at most 2^31 blocks of kGpuBlockThreads.
    std::size_t count = chain.size();
    std::int64_t total = 1;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      if (total > (std::int64_t{1} << 40) / chain[i].extent) {
        count = i;
        break;
      }
      total *= chain[i].extent;
    }
    const bool threadsBound = hasBoundLoops(nest);
    for (; count >= 1; --count) {
      Schedule steps{kernel.name, planNest(chain, count, threadsBound)};
      try {
        current = apply(current, steps);
      } catch (const Error&) {
        continue; // a shorter run of loops may still be independent
      }
      accepted.steps.insert(accepted.steps.end(), steps.steps.begin(), steps.steps.end());
      break;
    }
  }
  if (scheduled)
    *scheduled = std::move(current);
  return traceText(accepted);
}

} // namespace lathe::schedule
