// partition(top): the remainder of a split, made a copy of its own. A split whose factor f
// does not divide a loop's extent E leaves a guard `base + x.i < E` over the body; a tile
// that holds it cannot be kept in registers (register_tile) nor vectorized along x.i.
// partition takes the nest from `top` down (top, and each loop or guard that is the whole
// body of the one above) and, for each such guard in it, puts the choice outside the nest:
//
//   if (base + f <= E)  the nest with x.i over [0, f) and the guard gone
//   else                the nest with x.i over [0, E - last) and the guard gone
//
// where `last` is the one value base takes when the tail runs: base must be a multiple of f
// (outer*f, as split makes it) that is free of the nest's loops and bounded by the constant
// loops around `top`. With g guards there are 2^g copies; copy c (its bits, outermost guard
// first, say which guards take the tail) names every loop and let in it with the suffix
// ".r<c>", copy 0 keeps the names. Guards of another form stay where they are; a guard that
// always holds (base + f <= E for every base) is dropped without a copy.
//
// Refused when: the nest holds no such guard; x.i does not start at 0 with a constant extent;
// base has no bound; the nest allocates a buffer (partition before cache_write or pack).
#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/support/checked_int.h"

#include <algorithm>
#include <functional>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

constexpr std::size_t kMaxGuards = 4; // 16 copies

struct SplitGuard {
  const IfThenElse* node = nullptr;
  std::string loop; // x.i
  Expr base;
  std::int64_t factor = 0, bound = 0; // f and E
  std::int64_t tail = 0;              // the tail copy's extent of x.i; -1: the guard always holds
};

// Every loop and let bound in the copy gets `suffix`.
class RenameBound : public IRMutator {
public:
  explicit RenameBound(std::string suffix) : suffix_(std::move(suffix)) {}

protected:
  Stmt mutateFor(const For* op) override {
    const Expr v = Var::make(indexType(), op->name() + suffix_);
    return For::make(v, mutate(op->min), mutate(op->extent), op->forKind,
                     mutate(substitute(op->body, op->name(), v)));
  }
  Stmt mutateLetStmt(const LetStmt* op) override {
    const Expr v = Var::make(op->var.type(), op->name() + suffix_);
    return LetStmt::make(v, mutate(op->value), mutate(substitute(op->body, op->name(), v)));
  }
  Expr mutateLet(const Let* op) override {
    const Expr v = Var::make(op->var.type(), op->name() + suffix_);
    return Let::make(v, mutate(op->value), mutate(substitute(op->body, op->name(), v)));
  }
  Stmt mutateAllocate(const Allocate* op) override {
    fail("partition copies the nest, and it allocates " + op->buffer.name() +
         "; partition before cache_write, pack or register_tile");
  }

private:
  std::string suffix_;
};

// base is a multiple of f by its form: a constant multiple, k*f, or a sum of such.
bool multipleOf(const Expr& e, std::int64_t f) {
  if (const std::optional<std::int64_t> c = asConstInt(e))
    return *c % f == 0;
  if (const Mul* m = e.as<Mul>()) {
    for (const Expr* side : {&m->a, &m->b})
      if (const std::optional<std::int64_t> c = asConstInt(*side); c && *c % f == 0)
        return true;
    return false;
  }
  if (const Add* a = e.as<Add>())
    return multipleOf(a->a, f) && multipleOf(a->b, f);
  if (const Sub* s = e.as<Sub>())
    return multipleOf(s->a, f) && multipleOf(s->b, f);
  return false;
}

struct Nest {
  std::vector<const For*> loops;
  std::vector<const IfThenElse*> guards;
};

Nest nestFrom(const For& top) {
  Nest nest{{&top}, {}};
  Stmt s = top.body;
  while (true) {
    if (const For* f = s.as<For>()) {
      nest.loops.push_back(f);
      s = f->body;
    } else if (const IfThenElse* g = s.as<IfThenElse>(); g && !g->elseCase.defined()) {
      nest.guards.push_back(g);
      s = g->thenCase;
    } else {
      return nest;
    }
  }
}

// The guard as `base + x.i < E` for a loop x.i of the nest, when it has that form.
std::optional<SplitGuard> splitGuard(const IfThenElse* g, const Nest& nest,
                                     const VarRanges& outside, const std::string& top) {
  const LT* lt = g->condition.as<LT>();
  if (!lt)
    return std::nullopt;
  const std::optional<std::int64_t> E = asConstInt(simplify(lt->b));
  if (!E)
    return std::nullopt;
  const Expr lhs = simplify(lt->a);
  const For* x = nullptr;
  for (const For* l : nest.loops)
    if (usesVar(lhs, l->name())) {
      if (x)
        return std::nullopt; // two loops of the nest
      x = l;
    }
  if (!x || strideAlong(lhs, x->name()) != std::optional<std::int64_t>(1))
    return std::nullopt;
  SplitGuard sg{g, x->name(), simplify(substitute(lhs, x->name(), makeIndex(0))), 0, *E, 0};
  if (usesVar(sg.base, x->name()))
    return std::nullopt;
  const std::optional<std::int64_t> min = asConstInt(simplify(x->min));
  const std::optional<std::int64_t> extent = asConstInt(simplify(x->extent));
  if (!min || *min != 0 || !extent || *extent < 1)
    fail("partition(" + top + ") needs '" + x->name() +
         "', whose guard it lifts, to start at 0 and run a constant number of times");
  sg.factor = *extent;
  if (!multipleOf(sg.base, sg.factor))
    fail("partition(" + top + ") needs the guard " + toString(g->condition) +
         " in the form base + " + x->name() + " < " + std::to_string(*E) +
         " with base a multiple of " + std::to_string(sg.factor) + ", as split leaves it");
  const ValueRange range = constantRange(sg.base, outside);
  if (!range.hi || !range.lo)
    fail("partition(" + top + ") cannot bound " + toString(sg.base) +
         " over the loops around it, so the tail of '" + x->name() + "' has no constant extent");
  if (*range.hi + sg.factor <= *E) {
    sg.tail = -1; // always holds
    return sg;
  }
  // The tail runs for the one multiple of f in (E - f, hi]: the largest one at most hi.
  const std::int64_t last = floorDivide(*range.hi, sg.factor) * sg.factor;
  if (last >= *E || last + sg.factor <= *E || last < *range.lo)
    fail("partition(" + top + "): the guard " + toString(g->condition) +
         " does not leave one remainder of '" + x->name() + "' (" + toString(sg.base) + " runs " +
         std::to_string(*range.lo) + ".." + std::to_string(*range.hi) + ")");
  sg.tail = *E - last;
  return sg;
}

Stmt copyNest(const Stmt& s, const std::vector<SplitGuard>& lifted, const std::vector<bool>& tails);

// The loop with the lifted guards below it gone and, where `tails` says so, the tail extent.
Stmt copyLoop(const For& f, const std::vector<SplitGuard>& lifted, const std::vector<bool>& tails) {
  Expr extent = f.extent;
  for (std::size_t i = 0; i < lifted.size(); ++i)
    if (lifted[i].loop == f.name() && lifted[i].tail > 0)
      extent = makeIndex(tails[i] ? lifted[i].tail : lifted[i].factor);
  return For::make(f.var, f.min, extent, f.forKind, copyNest(f.body, lifted, tails));
}

Stmt copyNest(const Stmt& s, const std::vector<SplitGuard>& lifted,
              const std::vector<bool>& tails) {
  if (const For* f = s.as<For>())
    return copyLoop(*f, lifted, tails);
  if (const IfThenElse* g = s.as<IfThenElse>(); g && !g->elseCase.defined()) {
    for (const SplitGuard& sg : lifted)
      if (sg.node == g)
        return copyNest(g->thenCase, lifted, tails);
    return IfThenElse::make(g->condition, copyNest(g->thenCase, lifted, tails));
  }
  return s;
}

} // namespace

Stmt partition(const Stmt& body, const std::string& topName) {
  const For& top = findLoop(body, topName);
  const Nest nest = nestFrom(top);
  VarRanges outside;
  for (const For* l : enclosingLoops(body, topName)) {
    const std::optional<std::int64_t> min = asConstInt(simplify(l->min));
    const std::optional<std::int64_t> extent = asConstInt(simplify(l->extent));
    if (min && extent && *extent >= 1)
      outside[l->name()] = {*min, *min + *extent - 1};
  }
  std::vector<SplitGuard> lifted, always;
  for (const IfThenElse* g : nest.guards)
    if (std::optional<SplitGuard> sg = splitGuard(g, nest, outside, topName))
      (sg->tail < 0 ? always : lifted).push_back(*sg);
  if (lifted.empty() && always.empty())
    fail("partition(" + topName + ") finds no guard of a split in the nest from '" + topName +
         "' (a split whose factor divides the extent leaves none)");
  if (lifted.size() > kMaxGuards)
    fail("partition(" + topName + ") would make " +
         std::to_string(std::size_t{1} << lifted.size()) + " copies; it lifts at most " +
         std::to_string(kMaxGuards) + " guards");
  // Lifted guards in nest order, outermost loop first.
  const auto depth = [&](const SplitGuard& sg) {
    for (std::size_t d = 0; d < nest.loops.size(); ++d)
      if (nest.loops[d]->name() == sg.loop)
        return d;
    return nest.loops.size();
  };
  std::stable_sort(lifted.begin(), lifted.end(),
                   [&](const SplitGuard& a, const SplitGuard& b) { return depth(a) < depth(b); });
  std::vector<SplitGuard> all = lifted;
  all.insert(all.end(), always.begin(), always.end());
  const std::size_t copies = std::size_t{1} << lifted.size();
  const std::set<std::string> names = boundNames(body);
  std::vector<Stmt> versions;
  for (std::size_t c = 0; c < copies; ++c) {
    std::vector<bool> tails(all.size(), false);
    for (std::size_t i = 0; i < lifted.size(); ++i)
      tails[i] = (c >> (lifted.size() - 1 - i)) & 1;
    const Stmt copy = copyLoop(top, all, tails);
    if (c == 0) {
      versions.push_back(copy);
      continue;
    }
    const std::string suffix = ".r" + std::to_string(c);
    for (const std::string& name : boundNames(copy))
      if (names.count(name + suffix))
        fail("partition(" + topName + ") names its copy's loops with '" + suffix + "', and '" +
             name + suffix + "' is taken");
    versions.push_back(RenameBound(suffix).mutate(copy));
  }
  // Copy c sits where the choices of its bits lead: the outermost guard decides first.
  const std::function<Stmt(std::size_t, std::size_t)> choose = [&](std::size_t guard,
                                                                   std::size_t c) -> Stmt {
    if (guard == lifted.size())
      return versions[c];
    const SplitGuard& sg = lifted[guard];
    const Expr full = simplify(sg.base + makeIndex(sg.factor)) <= makeIndex(sg.bound);
    return IfThenElse::make(full, choose(guard + 1, c << 1), choose(guard + 1, (c << 1) | 1));
  };
  const Stmt chosen = choose(0, 0);
  return replaceLoop(body, topName, [&](const For&) { return chosen; });
}

} // namespace lathe::schedule::detail
