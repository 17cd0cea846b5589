// rfactor(loop, L): a reduction along `loop` whose body is the one store
// `acc[i] = acc[i] OP e` (OP one of +, *, max, min; i the same element in every iteration)
// is computed as L partial results: lane l combines the iterations l, l + L, l + 2L, ...;
// the lanes then combine pairwise in a tree, and the tree's root into acc[i]:
//
//   allocate acc.loop.rf[L] {
//     for (loop.init, 0, L) { rf[loop.init] = identity of OP }
//     for (loop.o, 0, E/L) { for (loop.i, 0, L) { rf[loop.i] = rf[loop.i] OP e(min + loop.o*L +
//     loop.i) } } for (loop.tail, 0, E%L) { acc[i] = acc[i] OP e(min + E/L*L + loop.tail) } for
//     (loop.h1, 0, L/2) { rf[loop.h1] = rf[loop.h1] OP rf[loop.h1 + L/2] }  ... down to 1 acc[i] =
//     acc[i] OP rf[0]
//   }
//
// `loop.i` and `loop.init` can then be vectorized. Max and min give the same result in any
// order. A float sum or product is reassociated and may differ from the in-order one in the
// last bits, as every vectorised sum does. Refused: L not a power of two from 2 to 64, an
// extent that is not a constant of at least L, a body that is not such a store, e reading
// acc, an accumulator of vectors, and signed integer sums and products (their overflow is
// undefined, and the reordered partial sums could overflow where the in-order sum does not).
#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/schedule/producer.h"

#include <limits>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

Expr identityOf(ExprKind op, Type t) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
  case ExprKind::Add:
    // -0 + x is x for every x, +0 + -0 is not.
    return t.isFloat() ? makeFloatConst(t, -0.0) : makeZero(t);
  case ExprKind::Mul:
    return makeOne(t);
  case ExprKind::Max:
    if (t.isFloat())
      return makeFloatConst(t, -inf);
    if (t.isUInt())
      return makeZero(t);
    return makeIntConst(t, t.bits() == 64 ? std::numeric_limits<std::int64_t>::min()
                                          : -(std::int64_t{1} << (t.bits() - 1)));
  default: // Min
    if (t.isFloat())
      return makeFloatConst(t, inf);
    if (t.isUInt()) // all ones: -1 as a 64-bit pattern
      return makeIntConst(t, t.bits() == 64 ? -1 : (std::int64_t{1} << t.bits()) - 1);
    return makeIntConst(t, t.bits() == 64 ? std::numeric_limits<std::int64_t>::max()
                                          : (std::int64_t{1} << (t.bits() - 1)) - 1);
  }
}

} // namespace

Stmt rfactor(const Stmt& body, const std::string& name, std::int64_t lanes) {
  if (lanes < 2 || lanes > 64 || (lanes & (lanes - 1)) != 0)
    fail("rfactor needs a power of two from 2 to 64 partial results, not " + std::to_string(lanes));
  const For& loop = findLoop(body, name);
  if (loop.forKind != ForKind::Serial)
    fail("'" + name + "' is already " + forKindName(loop.forKind));
  const std::int64_t extent = constantExtent(loop, "rfactor");
  if (extent < lanes)
    fail("rfactor(" + name + ", " + std::to_string(lanes) + ") needs at least " +
         std::to_string(lanes) + " iterations; '" + name + "' runs " + std::to_string(extent));
  const Store* store = loop.body.as<Store>();
  const std::string shape = "its body must be the one store acc[i] = acc[i] OP e with OP one "
                            "of +, *, max, min";
  if (!store)
    fail("rfactor(" + name + ") cannot split this reduction: " + shape + ", not\n" +
         toString(loop.body));
  const Buffer& acc = store->buffer;
  const Expr& value = store->value;
  const ExprKind op = value.kind();
  if (op != ExprKind::Add && op != ExprKind::Mul && op != ExprKind::Max && op != ExprKind::Min)
    fail("rfactor(" + name + ") cannot split this reduction: " + shape + ", not\n" +
         toString(loop.body));
  const auto* bin = static_cast<const BinaryExprNode*>(value.get());
  auto isAcc = [&](const Expr& e) {
    const Load* l = e.as<Load>();
    return l && l->buffer.name() == acc.name() && equal(l->index, store->index);
  };
  const Expr element = isAcc(bin->a) ? bin->b : isAcc(bin->b) ? bin->a : Expr();
  if (!element.defined())
    fail("rfactor(" + name + ") cannot split this reduction: " + shape +
         "; neither operand reads " + acc.name() + "[" + toString(store->index) + "]");
  if (usesVar(store->index, name))
    fail("rfactor(" + name + "): the element " + acc.name() + "[" + toString(store->index) +
         "] changes along '" + name + "'; nothing accumulates there");
  if (readsBuffer(element, acc.name()))
    fail("rfactor(" + name + "): the combined value " + toString(element) + " reads " + acc.name() +
         " itself, so the order of the iterations matters");
  const Type t = value.type();
  if (t.lanes() != 1)
    fail("rfactor(" + name + ") needs a scalar accumulator; " + acc.name() + " holds " +
         t.toString());
  if (t.isInt() && (op == ExprKind::Add || op == ExprKind::Mul))
    fail("rfactor(" + name + ") leaves signed integer sums and products in order: " +
         "reordered, they could overflow where the in-order one does not");

  const std::string rfName = acc.name() + "." + name + ".rf";
  std::vector<std::string> loops{name + ".init", name + ".o", name + ".i", name + ".tail"};
  for (std::int64_t h = lanes / 2, level = 1; h >= 1; h /= 2, ++level)
    loops.push_back(name + ".h" + std::to_string(level));
  requireFreshName(body, rfName);
  for (const std::string& l : loops)
    requireFreshName(body, l);

  return replaceLoop(body, name, [&](const For& op_) {
    const Buffer rf = Buffer::make(rfName, t, makeShape({lanes}));
    auto var = [](const std::string& n) { return Var::make(indexType(), n); };
    auto combine = [&](Expr a, Expr b) { return makeBinary(op, std::move(a), std::move(b)); };
    auto at = [&](const Expr& iteration) { return substitute(element, name, iteration); };
    std::vector<Stmt> steps;
    const Expr init = var(loops[0]);
    steps.push_back(For::make(init, makeIndex(0), makeIndex(lanes), ForKind::Serial,
                              Store::make(rf, init, identityOf(op, t))));
    const Expr outer = var(loops[1]), lane = var(loops[2]);
    const Expr iteration = simplify(op_.min + outer * makeIndex(lanes) + lane);
    steps.push_back(
        For::make(outer, makeIndex(0), makeIndex(extent / lanes), ForKind::Serial,
                  For::make(lane, makeIndex(0), makeIndex(lanes), ForKind::Serial,
                            Store::make(rf, lane, combine(Load::make(rf, lane), at(iteration))))));
    if (extent % lanes != 0) {
      const Expr tail = var(loops[3]);
      const Expr last = simplify(op_.min + makeIndex(extent / lanes * lanes) + tail);
      steps.push_back(For::make(
          tail, makeIndex(0), makeIndex(extent % lanes), ForKind::Serial,
          Store::make(acc, store->index, combine(Load::make(acc, store->index), at(last)))));
    }
    std::size_t level = 4;
    for (std::int64_t h = lanes / 2; h >= 1; h /= 2, ++level) {
      const Expr k = var(loops[level]);
      steps.push_back(For::make(
          k, makeIndex(0), makeIndex(h), ForKind::Serial,
          Store::make(rf, k, combine(Load::make(rf, k), Load::make(rf, k + makeIndex(h))))));
    }
    steps.push_back(Store::make(
        acc, store->index, combine(Load::make(acc, store->index), Load::make(rf, makeIndex(0)))));
    return Allocate::make(rf, MemoryScope::Stack, Block::make(steps));
  });
}

} // namespace lathe::schedule::detail
