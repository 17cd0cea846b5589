#include "engine/schedule/loop_nest.h"

#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <map>

namespace lathe::schedule::detail {

using namespace lathe::loop;

void fail(const std::string& reason) {
  throw Error(ErrorKind::Invalid, reason);
}

namespace {

class LoopFinder : public IRVisitor {
public:
  explicit LoopFinder(const std::string& name) : name_(name) {}
  const For* found = nullptr;
  std::vector<const For*> enclosing;
  int count = 0; // loops of that name: names must be unique for a step to mean one loop

protected:
  void visitFor(const For* op) override {
    if (op->name() == name_) {
      if (!found) {
        found = op;
        enclosing = stack_;
      }
      ++count;
    }
    stack_.push_back(op);
    IRVisitor::visitFor(op);
    stack_.pop_back();
  }

private:
  const std::string& name_;
  std::vector<const For*> stack_;
};

class LoopReplacer : public IRMutator {
public:
  LoopReplacer(const std::string& name, const std::function<Stmt(const For&)>& rewrite)
      : name_(name), rewrite_(rewrite) {}

protected:
  Stmt mutateFor(const For* op) override {
    if (op->name() == name_)
      return rewrite_(*op);
    return IRMutator::mutateFor(op);
  }

private:
  const std::string& name_;
  const std::function<Stmt(const For&)>& rewrite_;
};

class NameCollector : public IRVisitor {
public:
  std::set<std::string> names;

protected:
  void visitFor(const For* op) override {
    names.insert(op->name());
    IRVisitor::visitFor(op);
  }
  void visitLet(const Let* op) override {
    names.insert(op->name());
    IRVisitor::visitLet(op);
  }
  void visitLetStmt(const LetStmt* op) override {
    names.insert(op->name());
    IRVisitor::visitLetStmt(op);
  }
  void visitAllocate(const Allocate* op) override {
    names.insert(op->buffer.name());
    IRVisitor::visitAllocate(op);
  }
};

// Loads and stores with let-bound variables replaced by their values, so that indices can
// be compared and bounded.
class AccessCollector : public IRVisitor {
public:
  std::vector<Access> accesses;

protected:
  void visitLoad(const Load* op) override {
    IRVisitor::visitLoad(op);
    if (!local_.count(op->buffer.name()))
      accesses.push_back({op->buffer, resolve(op->index), false, loops_, guards_});
  }
  void visitStore(const Store* op) override {
    IRVisitor::visitStore(op);
    if (!local_.count(op->buffer.name()))
      accesses.push_back({op->buffer, resolve(op->index), true, loops_, guards_});
  }
  void visitFor(const For* op) override {
    loops_.push_back(op);
    IRVisitor::visitFor(op);
    loops_.pop_back();
  }
  void visitIfThenElse(const IfThenElse* op) override {
    visit(op->condition);
    const Expr condition = resolve(op->condition);
    guards_.push_back(condition);
    visit(op->thenCase);
    guards_.back() = Not::make(condition);
    visit(op->elseCase);
    guards_.pop_back();
  }
  void visitAllocate(const Allocate* op) override {
    local_.insert(op->buffer.name());
    IRVisitor::visitAllocate(op);
  }
  void visitLet(const Let* op) override {
    visit(op->value);
    lets_[op->name()] = resolve(op->value);
    visit(op->body);
  }
  void visitLetStmt(const LetStmt* op) override {
    visit(op->value);
    lets_[op->name()] = resolve(op->value);
    visit(op->body);
  }

private:
  Expr resolve(const Expr& e) const { return lets_.empty() ? e : substitute(e, lets_); }

  std::set<std::string> local_;
  std::map<std::string, Expr> lets_;
  std::vector<const For*> loops_;
  std::vector<Expr> guards_;
};

} // namespace

const For& findLoop(const Stmt& body, const std::string& name) {
  LoopFinder finder(name);
  finder.visit(body);
  if (!finder.found)
    fail("there is no loop '" + name + "'");
  if (finder.count > 1)
    fail("the kernel has " + std::to_string(finder.count) + " loops named '" + name +
         "'; a step cannot tell them apart");
  return *finder.found;
}

Stmt replaceLoop(const Stmt& body, const std::string& name,
                 const std::function<Stmt(const For&)>& rewrite) {
  findLoop(body, name);
  LoopReplacer replacer(name, rewrite);
  return replacer.mutate(body);
}

std::set<std::string> boundNames(const Stmt& body) {
  NameCollector collector;
  collector.visit(body);
  return std::move(collector.names);
}

void requireFreshName(const Stmt& body, const std::string& name) {
  if (boundNames(body).count(name))
    fail("the name '" + name + "' it would create is already used in the kernel");
}

std::vector<const For*> enclosingLoops(const Stmt& body, const std::string& name) {
  LoopFinder finder(name);
  finder.visit(body);
  if (!finder.found)
    fail("there is no loop '" + name + "'");
  return finder.enclosing;
}

std::int64_t constantExtent(const For& loop, const char* primitive) {
  const std::optional<std::int64_t> extent = asConstInt(simplify(loop.extent));
  if (!extent)
    fail(std::string(primitive) + " needs a loop of constant extent; '" + loop.name() + "' runs " +
         toString(loop.extent) + " times");
  return *extent;
}

std::vector<Access> accessesOf(const Stmt& s) {
  AccessCollector collector;
  collector.visit(s);
  return std::move(collector.accesses);
}

std::optional<std::int64_t> strideAlong(const Expr& index, const std::string& var) {
  const Type t = index.type();
  Expr v = Var::make(indexType(), var);
  Expr next = substitute(index, var, v + makeIndex(1));
  Expr diff = simplify(next - index);
  if (t.isVector()) {
    const auto* b = diff.as<Broadcast>();
    if (!b)
      return std::nullopt;
    diff = b->value;
  }
  return asConstInt(diff);
}

namespace {

class Redirect : public IRMutator {
public:
  Redirect(const Buffer& from, const Expr& index, const Buffer& to, const Expr& toIndex)
      : from_(from), index_(index), to_(to), toIndex_(toIndex) {}

protected:
  Expr mutateLoad(const Load* op) override {
    if (matches(op->buffer, op->index))
      return Load::make(to_, toIndex_);
    return IRMutator::mutateLoad(op);
  }
  Stmt mutateStore(const Store* op) override {
    Expr value = mutate(op->value);
    if (matches(op->buffer, op->index))
      return Store::make(to_, toIndex_, value);
    return Store::make(op->buffer, mutate(op->index), value);
  }

private:
  bool matches(const Buffer& buffer, const Expr& index) const {
    return buffer.name() == from_.name() && (!index_.defined() || equal(index, index_));
  }
  Buffer from_;
  Expr index_;
  Buffer to_;
  Expr toIndex_;
};

} // namespace

Stmt redirectAccesses(const Stmt& s, const Buffer& from, const Expr& index, const Buffer& to,
                      const Expr& toIndex) {
  return Redirect(from, index, to, toIndex).mutate(s);
}

} // namespace lathe::schedule::detail
