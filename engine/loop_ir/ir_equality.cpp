#include "engine/loop_ir/ir_equality.h"

#include <bit>
#include <cstdint>
#include <functional>

namespace lathe::loop {

namespace {

bool equalBuffers(const Buffer& a, const Buffer& b) {
  if (a.sameAs(b))
    return true;
  if (!a.defined() || !b.defined())
    return false;
  return a.name() == b.name() && a.elementType() == b.elementType();
}

bool equalLists(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i]))
      return false;
  return true;
}

bool equalNodes(const Expr& x, const Expr& y) {
  switch (x.kind()) {
  case ExprKind::IntImm:
    return x.as<IntImm>()->value == y.as<IntImm>()->value;
  case ExprKind::FloatImm:
    return std::bit_cast<std::uint64_t>(x.as<FloatImm>()->value) ==
           std::bit_cast<std::uint64_t>(y.as<FloatImm>()->value);
  case ExprKind::Var:
    return x.as<Var>()->name == y.as<Var>()->name;
  case ExprKind::Not:
    return equal(x.as<Not>()->a, y.as<Not>()->a);
  case ExprKind::Select: {
    const Select* a = x.as<Select>();
    const Select* b = y.as<Select>();
    return equal(a->condition, b->condition) && equal(a->trueValue, b->trueValue) &&
           equal(a->falseValue, b->falseValue);
  }
  case ExprKind::Cast:
    return equal(x.as<Cast>()->value, y.as<Cast>()->value);
  case ExprKind::Load: {
    const Load* a = x.as<Load>();
    const Load* b = y.as<Load>();
    return equalBuffers(a->buffer, b->buffer) && equal(a->index, b->index);
  }
  case ExprKind::Ramp: {
    const Ramp* a = x.as<Ramp>();
    const Ramp* b = y.as<Ramp>();
    return a->lanes == b->lanes && equal(a->base, b->base) && equal(a->stride, b->stride);
  }
  case ExprKind::Broadcast: {
    const Broadcast* a = x.as<Broadcast>();
    const Broadcast* b = y.as<Broadcast>();
    return a->lanes == b->lanes && equal(a->value, b->value);
  }
  case ExprKind::Call: {
    const Call* a = x.as<Call>();
    const Call* b = y.as<Call>();
    return a->op == b->op && a->name == b->name && equalLists(a->args, b->args);
  }
  case ExprKind::Let: {
    const Let* a = x.as<Let>();
    const Let* b = y.as<Let>();
    return equal(a->var, b->var) && equal(a->value, b->value) && equal(a->body, b->body);
  }
  default: {
    const auto* a = static_cast<const BinaryExprNode*>(x.get());
    const auto* b = static_cast<const BinaryExprNode*>(y.get());
    return equal(a->a, b->a) && equal(a->b, b->b);
  }
  }
}

bool equalNodes(const Stmt& x, const Stmt& y) {
  switch (x.kind()) {
  case StmtKind::For: {
    const For* a = x.as<For>();
    const For* b = y.as<For>();
    return a->forKind == b->forKind && equal(a->var, b->var) && equal(a->min, b->min) &&
           equal(a->extent, b->extent) && equal(a->body, b->body);
  }
  case StmtKind::Store: {
    const Store* a = x.as<Store>();
    const Store* b = y.as<Store>();
    return equalBuffers(a->buffer, b->buffer) && equal(a->index, b->index) &&
           equal(a->value, b->value);
  }
  case StmtKind::Allocate: {
    const Allocate* a = x.as<Allocate>();
    const Allocate* b = y.as<Allocate>();
    return a->scope == b->scope && equalBuffers(a->buffer, b->buffer) &&
           equalLists(a->buffer.shape(), b->buffer.shape()) &&
           equalLists(a->buffer.strides(), b->buffer.strides()) && equal(a->body, b->body);
  }
  case StmtKind::Block: {
    const Block* a = x.as<Block>();
    const Block* b = y.as<Block>();
    if (a->stmts.size() != b->stmts.size())
      return false;
    for (std::size_t i = 0; i < a->stmts.size(); ++i)
      if (!equal(a->stmts[i], b->stmts[i]))
        return false;
    return true;
  }
  case StmtKind::IfThenElse: {
    const IfThenElse* a = x.as<IfThenElse>();
    const IfThenElse* b = y.as<IfThenElse>();
    return equal(a->condition, b->condition) && equal(a->thenCase, b->thenCase) &&
           equal(a->elseCase, b->elseCase);
  }
  case StmtKind::LetStmt: {
    const LetStmt* a = x.as<LetStmt>();
    const LetStmt* b = y.as<LetStmt>();
    return equal(a->var, b->var) && equal(a->value, b->value) && equal(a->body, b->body);
  }
  case StmtKind::Evaluate:
    return equal(x.as<Evaluate>()->value, y.as<Evaluate>()->value);
  case StmtKind::Barrier:
    return true;
  }
  return false;
}

// boost::hash_combine's mixing step, widened to 64 bits.
void combine(std::size_t& seed, std::size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

std::size_t hashType(Type t) {
  return static_cast<std::size_t>(t.code()) | static_cast<std::size_t>(t.bits()) << 8 |
         static_cast<std::size_t>(t.lanes()) << 16;
}

std::size_t hashString(const std::string& s) {
  return std::hash<std::string>{}(s);
}

void hashList(std::size_t& seed, const std::vector<Expr>& exprs) {
  combine(seed, exprs.size());
  for (const Expr& e : exprs)
    combine(seed, structuralHash(e));
}

std::size_t hashNode(const Expr& e) {
  std::size_t seed = static_cast<std::size_t>(e.kind()) * 0x100000001b3ULL;
  combine(seed, hashType(e.type()));
  switch (e.kind()) {
  case ExprKind::IntImm:
    combine(seed, static_cast<std::size_t>(e.as<IntImm>()->value));
    break;
  case ExprKind::FloatImm:
    combine(seed, std::bit_cast<std::uint64_t>(e.as<FloatImm>()->value));
    break;
  case ExprKind::Var:
    combine(seed, hashString(e.as<Var>()->name));
    break;
  case ExprKind::Not:
    combine(seed, structuralHash(e.as<Not>()->a));
    break;
  case ExprKind::Select: {
    const Select* op = e.as<Select>();
    combine(seed, structuralHash(op->condition));
    combine(seed, structuralHash(op->trueValue));
    combine(seed, structuralHash(op->falseValue));
    break;
  }
  case ExprKind::Cast:
    combine(seed, structuralHash(e.as<Cast>()->value));
    break;
  case ExprKind::Load: {
    const Load* op = e.as<Load>();
    combine(seed, hashString(op->buffer.name()));
    combine(seed, structuralHash(op->index));
    break;
  }
  case ExprKind::Ramp: {
    const Ramp* op = e.as<Ramp>();
    combine(seed, structuralHash(op->base));
    combine(seed, structuralHash(op->stride));
    break;
  }
  case ExprKind::Broadcast:
    combine(seed, structuralHash(e.as<Broadcast>()->value));
    break;
  case ExprKind::Call: {
    const Call* op = e.as<Call>();
    combine(seed, static_cast<std::size_t>(op->op));
    combine(seed, hashString(op->name));
    hashList(seed, op->args);
    break;
  }
  case ExprKind::Let: {
    const Let* op = e.as<Let>();
    combine(seed, hashString(op->name()));
    combine(seed, structuralHash(op->value));
    combine(seed, structuralHash(op->body));
    break;
  }
  default: {
    const auto* op = static_cast<const BinaryExprNode*>(e.get());
    combine(seed, structuralHash(op->a));
    combine(seed, structuralHash(op->b));
    break;
  }
  }
  return seed;
}

std::size_t hashNode(const Stmt& s) {
  std::size_t seed = (static_cast<std::size_t>(s.kind()) + 64) * 0x100000001b3ULL;
  switch (s.kind()) {
  case StmtKind::For: {
    const For* op = s.as<For>();
    combine(seed, static_cast<std::size_t>(op->forKind));
    combine(seed, hashString(op->name()));
    combine(seed, structuralHash(op->min));
    combine(seed, structuralHash(op->extent));
    combine(seed, structuralHash(op->body));
    break;
  }
  case StmtKind::Store: {
    const Store* op = s.as<Store>();
    combine(seed, hashString(op->buffer.name()));
    combine(seed, structuralHash(op->index));
    combine(seed, structuralHash(op->value));
    break;
  }
  case StmtKind::Allocate: {
    const Allocate* op = s.as<Allocate>();
    combine(seed, static_cast<std::size_t>(op->scope));
    combine(seed, hashString(op->buffer.name()));
    hashList(seed, op->buffer.shape());
    combine(seed, structuralHash(op->body));
    break;
  }
  case StmtKind::Block:
    for (const Stmt& child : s.as<Block>()->stmts)
      combine(seed, structuralHash(child));
    break;
  case StmtKind::IfThenElse: {
    const IfThenElse* op = s.as<IfThenElse>();
    combine(seed, structuralHash(op->condition));
    combine(seed, structuralHash(op->thenCase));
    combine(seed, structuralHash(op->elseCase));
    break;
  }
  case StmtKind::LetStmt: {
    const LetStmt* op = s.as<LetStmt>();
    combine(seed, hashString(op->name()));
    combine(seed, structuralHash(op->value));
    combine(seed, structuralHash(op->body));
    break;
  }
  case StmtKind::Evaluate:
    combine(seed, structuralHash(s.as<Evaluate>()->value));
    break;
  case StmtKind::Barrier:
    break;
  }
  return seed;
}

} // namespace

bool equal(const Expr& a, const Expr& b) {
  if (a.sameAs(b))
    return true;
  if (!a.defined() || !b.defined())
    return false;
  return a.kind() == b.kind() && a.type() == b.type() && equalNodes(a, b);
}

bool equal(const Stmt& a, const Stmt& b) {
  if (a.sameAs(b))
    return true;
  if (!a.defined() || !b.defined())
    return false;
  return a.kind() == b.kind() && equalNodes(a, b);
}

std::size_t structuralHash(const Expr& e) {
  return e.defined() ? hashNode(e) : 0x51ed270b;
}

std::size_t structuralHash(const Stmt& s) {
  return s.defined() ? hashNode(s) : 0x2c1b3c6d;
}

} // namespace lathe::loop
