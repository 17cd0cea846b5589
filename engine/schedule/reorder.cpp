// reorder(a, b, ...): the named loops belong to one nest, each directly inside the next
// (guards and lets may sit between them; loops not named stay where they are). They are
// put in the given order, outermost first, in the places the named loops held. Guards and
// lets between them move down to just above the body, which keeps their meaning: they are
// pure and see the same loop variables there. Loop bounds must not depend on the loops of
// the nest (the nest must be rectangular).
#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/schedule/loop_nest.h"
#include "engine/schedule/primitives.h"
#include "engine/schedule/producer.h"

#include <algorithm>
#include <set>

namespace lathe::schedule::detail {

using namespace lathe::loop;

Stmt reorder(const Stmt& body, const std::vector<std::string>& order) {
  if (order.size() < 2)
    fail("reorder needs at least two loops");
  const std::set<std::string> named(order.begin(), order.end());
  if (named.size() != order.size())
    fail("reorder names a loop twice");
  // The outermost named loop: the one no other named loop encloses.
  std::string outermost;
  for (const std::string& name : order) {
    bool enclosed = false;
    for (const For* loop : enclosingLoops(body, name))
      enclosed = enclosed || named.count(loop->name());
    if (!enclosed) {
      if (!outermost.empty())
        fail("'" + outermost + "' and '" + name + "' are not in one loop nest");
      outermost = name;
    }
  }
  // Reordering changes which iteration touches an element first: refused when a buffer the
  // nest writes is also read or written at another index (a dependence between iterations).
  // A reduction (read and written at one index) only changes the order of its sum.
  {
    const Stmt nest = Stmt(&findLoop(body, outermost));
    const std::vector<Access> accesses = accessesOf(nest);
    for (const Access& store : accesses) {
      if (!store.isStore)
        continue;
      for (const Access& other : accesses)
        if (other.buffer.name() == store.buffer.name() &&
            !equal(simplify(other.index), simplify(store.index)))
          fail("the nest writes " + store.buffer.name() + "[" + toString(store.index) +
               "] and also " + (other.isStore ? "writes " : "reads ") + store.buffer.name() + "[" +
               toString(other.index) +
               "]; reordering could change which iteration sees which value");
    }
  }
  std::vector<std::string> chain; // every loop of the nest, for the parallel re-check
  Stmt result = replaceLoop(body, outermost, [&](const For& top) {
    std::vector<const For*> loops; // the nest from `top` down to the last named loop
    std::vector<Stmt> wrappers;    // guards and lets between them, outermost first
    std::set<std::string> chainVars;
    std::size_t found = 0;
    Stmt s = Stmt(&top);
    while (found < order.size()) {
      if (const For* f = s.as<For>()) {
        // Guards move below every loop of the nest: a loop they protected must not need them.
        const bool guarded = std::any_of(wrappers.begin(), wrappers.end(),
                                         [](const Stmt& w) { return w.as<IfThenElse>(); });
        if (guarded && !(asConstInt(simplify(f->min)) && asConstInt(simplify(f->extent))))
          fail("'" + f->name() +
               "' sits under a condition and has bounds that are not "
               "constant; moving the condition below it could evaluate them unprotected");
        for (const std::string& v : chainVars)
          if (usesVar(f->min, v) || usesVar(f->extent, v))
            fail("the bounds of '" + f->name() + "' depend on '" + v +
                 "', so the nest cannot be reordered");
        loops.push_back(f);
        chainVars.insert(f->name());
        found += named.count(f->name());
        s = f->body;
      } else if (const IfThenElse* g = s.as<IfThenElse>(); g && !g->elseCase.defined()) {
        wrappers.push_back(s);
        s = g->thenCase;
      } else if (const LetStmt* l = s.as<LetStmt>()) {
        for (const std::string& written : buffersWritten(Stmt(&top)))
          if (readsBuffer(l->value, written))
            fail("the let '" + l->name() + "' reads " + written +
                 ", which the nest writes; moving it down would change its value");
        wrappers.push_back(s);
        chainVars.insert(l->name());
        s = l->body;
      } else {
        const std::string& last = loops.back()->name();
        fail("the loops are not perfectly nested: '" + last +
             "' holds more than one statement before the next named loop");
      }
    }
    // Named loops go, in the requested order, into the slots named loops held.
    std::vector<const For*> placed = loops;
    std::size_t next = 0;
    for (const For*& slot : placed)
      if (named.count(slot->name()))
        slot = &findLoop(Stmt(&top), order[next++]);
    Stmt rebuilt = s;
    for (auto w = wrappers.rbegin(); w != wrappers.rend(); ++w) {
      if (const IfThenElse* g = w->as<IfThenElse>())
        rebuilt = IfThenElse::make(g->condition, rebuilt);
      else {
        const LetStmt* l = w->as<LetStmt>();
        rebuilt = LetStmt::make(l->var, l->value, rebuilt);
      }
    }
    for (auto f = placed.rbegin(); f != placed.rend(); ++f)
      rebuilt = For::make((*f)->var, (*f)->min, (*f)->extent, (*f)->forKind, rebuilt);
    for (const For* f : loops)
      chain.push_back(f->name());
    return rebuilt;
  });
  // Parallel loops of the nest: their iterations must still be independent where they are now.
  for (const std::string& name : chain)
    if (const For& f = findLoop(result, name); f.forKind == ForKind::Parallel)
      requireIndependentIterations(f, "parallel");
  return result;
}

} // namespace lathe::schedule::detail
