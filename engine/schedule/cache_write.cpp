// cache_write(loop): a reduction loop that reads and writes buffer[index] with an index that
// does not change inside it (out[i, j] += a[i, k] * b[k, j] along k) accumulates in a stack
// buffer instead: load the element once before the loop, update the accumulator in it, store
// it once after. Every buffer so written gets an accumulator named <buffer>.<loop>.acc.
// Refused when no store in the loop is invariant, or when the buffer is also read or written
// at another index inside the loop.
#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"

#include <map>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

struct RawAccess {
  Buffer buffer;
  Expr index;
  bool isStore;
};

// Loads and stores as written (lets not resolved), with buffers allocated inside left out.
class RawAccesses : public IRVisitor {
public:
  std::vector<RawAccess> accesses;

protected:
  void visitLoad(const Load* op) override {
    IRVisitor::visitLoad(op);
    accesses.push_back({op->buffer, op->index, false});
  }
  void visitStore(const Store* op) override {
    IRVisitor::visitStore(op);
    accesses.push_back({op->buffer, op->index, true});
  }
};

} // namespace

Stmt cacheWrite(const Stmt& body, const std::string& name) {
  const For& loop = findLoop(body, name);
  std::set<std::string> inner = boundNames(loop.body);
  inner.insert(name);
  auto invariant = [&](const Expr& index) {
    for (const std::string& v : inner)
      if (usesVar(index, v))
        return false;
    return true;
  };
  RawAccesses raw;
  raw.visit(loop.body);
  // Buffers with an invariant store, each with that store's index.
  std::vector<std::pair<Buffer, Expr>> targets;
  for (const RawAccess& a : raw.accesses) {
    if (!a.isStore || inner.count(a.buffer.name()) || !invariant(a.index))
      continue;
    bool known = false;
    for (const auto& [buffer, index] : targets)
      known = known || buffer.name() == a.buffer.name();
    if (!known)
      targets.emplace_back(a.buffer, a.index);
  }
  if (targets.empty())
    fail("cache_write(" + name + ") finds no store whose element stays the same along '" + name +
         "' (nothing accumulates there)");
  for (const auto& [buffer, index] : targets)
    for (const RawAccess& a : raw.accesses)
      if (a.buffer.name() == buffer.name() && !equal(a.index, index))
        fail("cache_write(" + name + ") cannot keep " + buffer.name() + "[" + toString(index) +
             "] in a register: the loop also " + (a.isStore ? "writes " : "reads ") +
             buffer.name() + "[" + toString(a.index) + "]");
  for (const auto& [buffer, index] : targets) {
    requireFreshName(body, buffer.name() + "." + name + ".acc");
    for (const Access& a : accessesOf(loop.body))
      if (a.buffer.name() == buffer.name() && !a.guards.empty())
        fail("cache_write(" + name + ") cannot keep " + buffer.name() +
             " in a register: it is accessed under a condition inside the loop (a split tail "
             "moved down by reorder?), and the load before and store after the loop would not "
             "be");
  }

  return replaceLoop(body, name, [&](const For& op) {
    Stmt result = Stmt(&op);
    for (const auto& [buffer, index] : targets) {
      const int lanes = index.type().lanes();
      Buffer acc = Buffer::make(buffer.name() + "." + name + ".acc", buffer.elementType(),
                                makeShape({lanes}));
      Expr accIndex = lanes == 1 ? makeIndex(0) : Ramp::make(makeIndex(0), makeIndex(1), lanes);
      Stmt inside = redirectAccesses(result, buffer, index, acc, accIndex);
      Stmt core = Block::make({Store::make(acc, accIndex, Load::make(buffer, index)), inside,
                               Store::make(buffer, index, Load::make(acc, accIndex))});
      if (!asConstInt(op.extent) || *asConstInt(op.extent) < 1)
        core = IfThenElse::make(op.extent > makeIndex(0), core, inside);
      result = Allocate::make(acc, MemoryScope::Stack, core);
    }
    return result;
  });
}

} // namespace lathe::schedule::detail
