#include "engine/loop_ir/substitute.h"

#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/support/diagnostics.h"

namespace lathe::loop {

namespace {

class Substituter : public IRMutator {
public:
  explicit Substituter(std::map<std::string, Expr> replacements)
      : replacements_(std::move(replacements)) {}

protected:
  Expr mutateVar(const Var* op) override {
    auto it = replacements_.find(op->name);
    if (it == replacements_.end())
      return op;
    LATHE_CHECK(it->second.type() == op->type,
                "substitute: " + op->name + " is " + op->type.toString() +
                    " but the replacement is " + it->second.type().toString());
    return it->second;
  }

  Expr mutateLet(const Let* op) override {
    Expr value = mutate(op->value);
    Expr body = withShadowed(op->name(), [&] { return mutate(op->body); });
    if (value.sameAs(op->value) && body.sameAs(op->body))
      return op;
    return Let::make(op->var, std::move(value), std::move(body));
  }

  Stmt mutateLetStmt(const LetStmt* op) override {
    Expr value = mutate(op->value);
    Stmt body = withShadowed(op->name(), [&] { return mutate(op->body); });
    if (value.sameAs(op->value) && body.sameAs(op->body))
      return op;
    return LetStmt::make(op->var, std::move(value), std::move(body));
  }

  Stmt mutateFor(const For* op) override {
    Expr min = mutate(op->min);
    Expr extent = mutate(op->extent);
    Stmt body = withShadowed(op->name(), [&] { return mutate(op->body); });
    if (min.sameAs(op->min) && extent.sameAs(op->extent) && body.sameAs(op->body))
      return op;
    return For::make(op->var, std::move(min), std::move(extent), op->forKind, std::move(body));
  }

private:
  // Runs f with `name` removed from the replacements (it is rebound inside).
  template <typename F>
  auto withShadowed(const std::string& name, F f) -> decltype(f()) {
    auto it = replacements_.find(name);
    if (it == replacements_.end())
      return f();
    Expr saved = it->second;
    replacements_.erase(it);
    auto result = f();
    replacements_.emplace(name, std::move(saved));
    return result;
  }

  std::map<std::string, Expr> replacements_;
};

class VarUseFinder : public IRVisitor {
public:
  explicit VarUseFinder(const std::string& name) : name_(name) {}
  int count = 0; // free occurrences

protected:
  void visitVar(const Var* op) override { count += op->name == name_ ? 1 : 0; }

  void visitLet(const Let* op) override {
    visit(op->value);
    if (op->name() != name_)
      visit(op->body);
  }

  void visitLetStmt(const LetStmt* op) override {
    visit(op->value);
    if (op->name() != name_)
      visit(op->body);
  }

  void visitFor(const For* op) override {
    visit(op->min);
    visit(op->extent);
    if (op->name() != name_)
      visit(op->body);
  }

private:
  const std::string& name_;
};

const std::string& varName(const Expr& var) {
  const Var* v = var.as<Var>();
  LATHE_CHECK(v != nullptr, "substitute: the variable to replace must be a Var");
  return v->name;
}

} // namespace

Expr substitute(const Expr& e, const std::string& name, const Expr& replacement) {
  return Substituter({{name, replacement}}).mutate(e);
}

Stmt substitute(const Stmt& s, const std::string& name, const Expr& replacement) {
  return Substituter({{name, replacement}}).mutate(s);
}

Expr substitute(const Expr& e, const Expr& var, const Expr& replacement) {
  return substitute(e, varName(var), replacement);
}

Stmt substitute(const Stmt& s, const Expr& var, const Expr& replacement) {
  return substitute(s, varName(var), replacement);
}

Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements) {
  return Substituter(replacements).mutate(e);
}

Stmt substitute(const Stmt& s, const std::map<std::string, Expr>& replacements) {
  return Substituter(replacements).mutate(s);
}

bool usesVar(const Expr& e, const std::string& name) {
  VarUseFinder finder(name);
  finder.visit(e);
  return finder.count > 0;
}

bool usesVar(const Stmt& s, const std::string& name) {
  VarUseFinder finder(name);
  finder.visit(s);
  return finder.count > 0;
}

int countUses(const Expr& e, const std::string& name) {
  VarUseFinder finder(name);
  finder.visit(e);
  return finder.count;
}

} // namespace lathe::loop
