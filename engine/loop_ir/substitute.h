#pragma once
// Replacing variables by expressions, and asking whether a variable is used.
// Both follow scoping: inside a Let, LetStmt or For that binds the same name again, the
// outer variable is shadowed and left alone.

#include "engine/loop_ir/ir.h"

#include <map>
#include <string>

namespace lathe::loop {

// Every free use of the variable `name` becomes `replacement`, which must have the
// variable's type. Unchanged subtrees are shared with the input.
Expr substitute(const Expr& e, const std::string& name, const Expr& replacement);
Stmt substitute(const Stmt& s, const std::string& name, const Expr& replacement);
// The same, with the variable given as a Var expression.
Expr substitute(const Expr& e, const Expr& var, const Expr& replacement);
Stmt substitute(const Stmt& s, const Expr& var, const Expr& replacement);
// Several variables at once (simultaneously: replacements are not substituted again).
Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements);
Stmt substitute(const Stmt& s, const std::map<std::string, Expr>& replacements);

// True when the variable `name` occurs free in e / s.
bool usesVar(const Expr& e, const std::string& name);
bool usesVar(const Stmt& s, const std::string& name);
// How many times the variable `name` occurs free in e (each occurrence in the expression
// tree counts, so a shared subexpression counts once per path to it).
int countUses(const Expr& e, const std::string& name);

} // namespace lathe::loop
