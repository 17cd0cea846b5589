// pack(buffer, loop): at the top of each iteration of `loop`, the elements of `buffer` that
// the loops inside it read are copied into a stack (or heap) buffer laid out in the order
// those loops visit them (the innermost loop contiguous), and the reads go to the copy:
// for a matmul's B[k*N + j] read inside j.o over k and j.i, the copy is P[k*16 + j.i], a
// 16-wide panel. Every read of `buffer` inside `loop` must use one index, affine with
// constant strides in the inner loops, unguarded and scalar (pack before vectorizing);
// `loop` must not write `buffer`; the copy holds at most 2^22 elements.
#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/schedule/producer.h"
#include "engine/support/checked_int.h"

#include <algorithm>
#include <map>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

constexpr std::int64_t kMaxPacked = std::int64_t{1} << 22;
constexpr std::int64_t kMaxStackBytes = 64 * 1024;

class Redirect : public IRMutator {
public:
  Redirect(const std::string& from, Buffer to, Expr toIndex)
      : from_(from), to_(std::move(to)), toIndex_(std::move(toIndex)) {}

protected:
  Expr mutateLoad(const Load* op) override {
    if (op->buffer.name() == from_)
      return Load::make(to_, toIndex_);
    return IRMutator::mutateLoad(op);
  }

private:
  const std::string& from_;
  Buffer to_;
  Expr toIndex_;
};

} // namespace

Stmt pack(const Stmt& body, const std::string& buffer, const std::string& loopName) {
  const For& loop = findLoop(body, loopName);
  const std::string packedName = buffer + "." + loopName + ".packed";
  requireFreshName(body, packedName);
  for (const std::string& written : buffersWritten(loop.body))
    if (written == buffer)
      fail("'" + loopName + "' writes '" + buffer + "'; only a buffer it only reads can be packed");

  const std::set<std::string> inner = boundNames(loop.body);
  const Access* read = nullptr;
  const std::vector<Access> accesses = accessesOf(loop.body);
  for (const Access& a : accesses) {
    if (a.isStore || a.buffer.name() != buffer)
      continue;
    if (a.index.type().isVector())
      fail("'" + buffer + "' is read as a vector inside '" + loopName +
           "'; pack before vectorizing");
    if (!a.guards.empty())
      fail("a read of '" + buffer +
           "' is under a condition (a split tail?); the copy could read "
           "past the buffer");
    if (read && !equal(simplify(read->index), simplify(a.index)))
      fail("'" + buffer + "' is read at two indices inside '" + loopName + "' (" +
           toString(read->index) + " and " + toString(a.index) + ")");
    if (!read)
      read = &a;
  }
  if (!read)
    fail("'" + loopName + "' does not read '" + buffer + "'");

  // The inner loops the index moves along, outermost first, with their strides.
  struct Dim {
    const For* loop;
    std::int64_t stride, extent;
  };
  std::vector<Dim> dims;
  std::int64_t elements = 1;
  for (const For* f : read->loops) {
    const auto stride = strideAlong(read->index, f->name());
    if (!stride)
      fail("the index of '" + buffer + "' (" + toString(read->index) + ") is not affine in '" +
           f->name() + "'");
    if (*stride == 0)
      continue;
    const auto min = asConstInt(simplify(f->min));
    if (!min)
      fail("the loop '" + f->name() + "' has a varying start");
    const std::int64_t extent = constantExtent(*f, "pack");
    dims.push_back({f, *stride, extent});
    const std::optional<std::int64_t> more =
        checkedMul(elements, std::max<std::int64_t>(extent, 1));
    elements = more ? *more : kMaxPacked + 1;
    if (elements > kMaxPacked)
      fail("the copy of '" + buffer + "' would hold more than " + std::to_string(kMaxPacked) +
           " elements");
  }
  for (const std::string& v : inner) {
    if (usesVar(read->index, v) && std::none_of(read->loops.begin(), read->loops.end(),
                                                [&](const For* f) { return f->name() == v; }))
      fail("the index of '" + buffer + "' reads '" + v + "', bound inside '" + loopName + "'");
  }
  if (dims.empty())
    fail("the index of '" + buffer + "' does not move inside '" + loopName +
         "'; there is nothing to pack");

  // packed[flat(v)] = buffer[index(v)], row-major in the loops' order.
  Buffer packed = Buffer::make(packedName, read->buffer.elementType(), makeShape({elements}));
  Expr flat = makeIndex(0);
  for (const Dim& d : dims)
    flat = flat * makeIndex(d.extent) + (d.loop->var - d.loop->min);
  flat = simplify(flat);
  // The copy loops get names of their own (v.BUFFER.pack): each name still names one loop.
  std::map<std::string, Expr> renamed;
  for (const Dim& d : dims) {
    const std::string name = d.loop->name() + "." + buffer + ".pack";
    requireFreshName(body, name);
    renamed[d.loop->name()] = Var::make(indexType(), name);
  }
  Stmt fill = Store::make(packed, substitute(flat, renamed),
                          Load::make(read->buffer, substitute(read->index, renamed)));
  for (auto d = dims.rbegin(); d != dims.rend(); ++d)
    fill = For::make(renamed.at(d->loop->name()), d->loop->min, d->loop->extent, ForKind::Serial,
                     fill);
  const MemoryScope scope = elements * read->buffer.elementType().bytes() <= kMaxStackBytes
                                ? MemoryScope::Stack
                                : MemoryScope::Heap;
  return replaceLoop(body, loopName, [&](const For& op) {
    Redirect redirect(buffer, packed, flat);
    return For::make(op.var, op.min, op.extent, op.forKind,
                     Allocate::make(packed, scope, Block::make(fill, redirect.mutate(op.body))));
  });
}

} // namespace lathe::schedule::detail
