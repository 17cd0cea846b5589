#pragma once
// Structural equality and hashing of loop IR, for tests, CSE and memo tables.
//
// Two trees are equal when they have the same node kinds, types and fields. Vars compare by
// name and type and Buffers by name (names identify, see ir.h), so equality is not
// alpha-equivalence: `let a = 1 in a` and `let b = 1 in b` differ. Floats compare by bit
// pattern, so a NaN immediate equals itself and 0.0 differs from -0.0.
// equal(a, b) implies structuralHash(a) == structuralHash(b).

#include "engine/loop_ir/ir.h"

#include <cstddef>

namespace lathe::loop {

bool equal(const Expr& a, const Expr& b);
bool equal(const Stmt& a, const Stmt& b);
std::size_t structuralHash(const Expr& e);
std::size_t structuralHash(const Stmt& s);

// Function objects for unordered containers keyed by structure.
struct StructuralEqual {
  bool operator()(const Expr& a, const Expr& b) const { return equal(a, b); }
  bool operator()(const Stmt& a, const Stmt& b) const { return equal(a, b); }
};
struct StructuralHash {
  std::size_t operator()(const Expr& e) const { return structuralHash(e); }
  std::size_t operator()(const Stmt& s) const { return structuralHash(s); }
};

} // namespace lathe::loop
