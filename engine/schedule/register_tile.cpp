// register_tile(top, k): the loops from `top` down to the reduction loop `k` form a tile of
// output elements that is kept in registers across the whole of k, and of the reduction
// loops nested in k (each the whole body of the one above: a convolution's channels and
// taps), which move outside the tile with it. One or two buffers may be kept (a MaxPool with
// Indices keeps the maximum and its position), each as described for `out` below. The tile loops
// (top and each loop that is the whole body of the one above, down to the loop whose body holds k)
// must be serial and of constant extent; that innermost tile loop's body is `pre; for k:
// update; post`, and every store in it writes one element out[idx] that does not move
// along k. The rewrite distributes the tile loops over the three parts and moves k outside:
//
//   allocate out.tile[T]               (T = the product of the tile extents)
//   tile loops (.init copies): [out.tile[t] = out[idx]]; pre   with out[idx] read and
//                                      written as out.tile[t]; the load only when the
//                                      element is read before pre writes it
//   for k (and its nested chain): tile loops: update          likewise
//   tile loops (.out copies): post; out[idx] = out.tile[t]
//
// where t is the tile position, row-major. In each copy the innermost tile loop is
// vectorized (when its extent is 2..64 and vectorize accepts it; unrolled otherwise) and the
// others unrolled, so the tile's elements become registers. Each element still sums its
// terms in k order: nothing is reassociated.
//
// Refused when: a tile loop is not serial or not of constant extent, or something other than
// a loop sits between them; the tile has more than 512 elements; the part around k writes
// anything but out[idx] (of at most two buffers), or reads out at another index; distinct tile
// positions could write the same element (idx must move by constant strides that keep positions
// apart); k's bounds depend on the tile loops. The tile's buffer is out.tile, or out.<top>.tile
// when a tile of `out` already exists (the remainder copies partition makes each take their own).
#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::schedule::detail {

using namespace lathe::loop;

namespace {

constexpr std::int64_t kMaxTileElements = 512; // 32 registers of 16 lanes

struct TileLoop {
  Expr var, min;
  std::int64_t extent;
  std::string name;
};

// The tile loops around `inner`, renamed with `suffix` (none for the copy that keeps the
// names), as a nest of serial loops.
Stmt nestOf(const std::vector<TileLoop>& tile, const std::string& suffix, Stmt inner) {
  std::map<std::string, Expr> renamed;
  std::vector<Expr> vars;
  for (const TileLoop& l : tile) {
    const Expr v = suffix.empty() ? l.var : Var::make(indexType(), l.name + suffix);
    vars.push_back(v);
    if (!suffix.empty())
      renamed.emplace(l.name, v);
  }
  if (!renamed.empty())
    inner = substitute(inner, renamed);
  for (std::size_t d = tile.size(); d-- > 0;)
    inner = For::make(vars[d], tile[d].min, makeIndex(tile[d].extent), ForKind::Serial, inner);
  return inner;
}

// Innermost loop of a copy vectorized when vectorize accepts it, the rest unrolled.
Stmt markCopy(Stmt body, const std::vector<TileLoop>& tile, const std::string& suffix) {
  const std::string innermost = tile.back().name + suffix;
  const std::int64_t lanes = tile.back().extent;
  bool vectorized = false;
  if (lanes >= 2 && lanes <= 64) {
    try {
      body = vectorize(body, innermost);
      vectorized = true;
    } catch (const Error&) {
      // An epilogue with no vector form (an extern call): that copy stays scalar.
    }
  }
  for (std::size_t d = 0; d < tile.size(); ++d)
    if (d + 1 < tile.size() || !vectorized)
      body = unroll(body, tile[d].name + suffix);
  return body;
}

} // namespace

Stmt registerTile(const Stmt& body, const std::string& topName, const std::string& kName) {
  const For& top = findLoop(body, topName);
  // The tile: top, then each loop that is the whole body of the one before, until a loop
  // whose body holds k.
  std::vector<const For*> loops{&top};
  while (true) {
    const For* inner = loops.back()->body.as<For>();
    if (!inner || inner->name() == kName)
      break;
    loops.push_back(inner);
  }
  const For& last = *loops.back();
  if (last.body.as<IfThenElse>())
    fail("register_tile(" + topName + ", " + kName + ") meets a condition under '" + last.name() +
         "' (a split whose factor does not divide the extent leaves one: partition(" + topName +
         ") first, or pick a factor that divides it)");
  std::vector<Stmt> parts;
  if (const Block* block = last.body.as<Block>())
    parts = block->stmts;
  else
    parts = {last.body};
  std::size_t kAt = parts.size();
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (const For* f = parts[i].as<For>(); f && f->name() == kName)
      kAt = i;
  if (kAt == parts.size())
    fail("register_tile(" + topName + ", " + kName + ") needs '" + kName +
         "' directly in the body of the innermost tile loop '" + last.name() +
         "' (only loops, each the whole body of the one above, may sit between '" + topName +
         "' and it)");
  const For& k = *parts[kAt].as<For>();
  // k and the loops nested in it, each the whole body of the one above.
  std::vector<const For*> chain{&k};
  while (const For* inner = chain.back()->body.as<For>())
    chain.push_back(inner);

  std::vector<TileLoop> tile;
  std::int64_t elements = 1;
  for (const For* l : loops) {
    if (l->forKind != ForKind::Serial)
      fail("register_tile needs serial tile loops; '" + l->name() + "' is " +
           forKindName(l->forKind));
    const std::int64_t extent = constantExtent(*l, "register_tile");
    const std::optional<std::int64_t> min = asConstInt(l->min);
    if (extent < 1 || !min)
      fail("register_tile needs tile loops with constant bounds; '" + l->name() + "' has none");
    elements *= extent;
    if (elements > kMaxTileElements)
      fail("register_tile keeps at most " + std::to_string(kMaxTileElements) +
           " elements in registers; the loops from '" + topName + "' to '" + l->name() + "' hold " +
           std::to_string(elements) + " (split them smaller)");
    tile.push_back({l->var, l->min, extent, l->name()});
    for (const For* r : chain)
      if (usesVar(r->min, l->name()) || usesVar(r->extent, l->name()))
        fail("the bounds of '" + r->name() + "' depend on the tile loop '" + l->name() + "'");
  }

  // The elements the tile accumulates: one of each buffer stored to around and inside k (a
  // MaxPool with Indices keeps its maximum and where it was), in the order first stored.
  const std::vector<Access> accesses = accessesOf(last.body);
  struct Target {
    Buffer out;
    Expr idx;
    Buffer acc;
    bool overwritten = false;
  };
  std::vector<Target> targets;
  for (const Access& a : accesses)
    if (a.isStore && std::none_of(targets.begin(), targets.end(),
                                  [&](const Target& t) { return t.out.name() == a.buffer.name(); }))
      targets.push_back({a.buffer, simplify(a.index), Buffer(), false});
  if (targets.empty())
    fail("register_tile(" + topName + ", " + kName + ") finds no store to keep in registers");
  if (targets.size() > 2)
    fail("register_tile keeps at most two buffers in registers; the tile writes " +
         std::to_string(targets.size()));
  for (Target& target : targets) {
    const Buffer& out = target.out;
    const Expr& idx = target.idx;
    if (idx.type().isVector())
      fail("register_tile needs scalar stores; vectorize after it, not before");
    for (const For* r : chain)
      if (usesVar(idx, r->name()))
        fail("register_tile(" + topName + ", " + kName +
             ") needs a store that stays on one element "
             "along '" +
             r->name() + "'; " + out.name() + "[" + toString(idx) + "] moves along it");
    for (const Access& a : accesses) {
      if (a.buffer.name() == out.name() && !equal(simplify(a.index), idx))
        fail("register_tile keeps " + out.name() + "[" + toString(idx) +
             "] in registers, but the tile also " + (a.isStore ? "writes " : "reads ") +
             out.name() + "[" + toString(a.index) + "]");
      if (a.buffer.name() == out.name() && !a.guards.empty())
        fail("register_tile cannot keep " + out.name() +
             " in registers: it is accessed under a condition (a split whose factor does not "
             "divide the extent leaves one: partition(" +
             topName + ") first)");
    }
    // Distinct tile positions must own distinct elements: constant strides along the tile
    // loops, each larger than the span of the smaller ones.
    std::vector<std::pair<std::int64_t, std::int64_t>> strides; // |stride|, extent
    for (const TileLoop& l : tile) {
      const std::optional<std::int64_t> s = strideAlong(idx, l.name);
      if (!s)
        fail("register_tile needs " + out.name() + "[" + toString(idx) +
             "] to move by a constant stride along '" + l.name + "'");
      if (l.extent > 1)
        strides.emplace_back(std::abs(*s), l.extent);
    }
    std::sort(strides.begin(), strides.end());
    std::int64_t span = 0;
    for (const auto& [stride, extent] : strides) {
      if (stride <= span)
        fail("register_tile: two positions of the tile would write the same element of " +
             out.name() + " (its index " + toString(idx) + " does not keep them apart)");
      span += stride * (extent - 1);
    }
    std::string accName = out.name() + ".tile";
    if (boundNames(body).count(accName))
      accName = out.name() + "." + topName + ".tile";
    requireFreshName(body, accName);
    target.acc = Buffer::make(accName, out.elementType(), makeShape({elements}));
    // The tile starts from the elements' values unless the part before k first writes them
    // outright (out = 0), as a matrix product's nest does.
    const Access* first = nullptr;
    for (const Access& a : accesses)
      if (!first && a.buffer.name() == out.name())
        first = &a;
    target.overwritten = first && first->isStore && first->loops.empty();
  }
  for (const TileLoop& l : tile)
    for (const char* suffix : {".init", ".out"})
      requireFreshName(body, l.name + suffix);

  // The tile position, row-major over the tile loops.
  Expr position = makeIndex(0);
  for (const TileLoop& l : tile)
    position = position * makeIndex(l.extent) + (l.var - l.min);
  const Expr t = simplify(position);
  const auto toAcc = [&](Stmt s) {
    for (const Target& target : targets)
      s = redirectAccesses(s, target.out, {}, target.acc, t);
    return s;
  };
  std::vector<Stmt> pre;
  for (const Target& target : targets)
    if (!target.overwritten)
      pre.push_back(Store::make(target.acc, t, Load::make(target.out, target.idx)));
  for (std::size_t i = 0; i < kAt; ++i)
    pre.push_back(toAcc(parts[i]));
  std::vector<Stmt> post(parts.begin() + static_cast<std::ptrdiff_t>(kAt) + 1, parts.end());
  std::vector<Stmt> stages;
  if (!pre.empty())
    stages.push_back(nestOf(tile, ".init", Block::make(pre)));
  Stmt update = nestOf(tile, "", toAcc(chain.back()->body));
  for (std::size_t r = chain.size(); r-- > 0;)
    update = For::make(chain[r]->var, chain[r]->min, chain[r]->extent, chain[r]->forKind, update);
  stages.push_back(update);
  std::vector<Stmt> out{toAcc(Block::make(post))};
  for (const Target& target : targets)
    out.push_back(Store::make(target.out, target.idx, Load::make(target.acc, t)));
  stages.push_back(nestOf(tile, ".out", Block::make(out)));
  Stmt result = replaceLoop(body, topName, [&](const For&) {
    Stmt inner = Block::make(stages);
    for (std::size_t i = targets.size(); i-- > 0;)
      inner = Allocate::make(targets[i].acc, MemoryScope::Stack, inner);
    return inner;
  });
  if (!pre.empty())
    result = markCopy(result, tile, ".init");
  result = markCopy(result, tile, "");
  return markCopy(result, tile, ".out");
}

} // namespace lathe::schedule::detail
