#pragma once
// The loop IR text form: stable and readable, the oracle of golden tests and what the
// workbench shows. Not parsed back, but unambiguous:
//   kernel fused_conv_relu_0(%data: f32[1,3,224,224], %w: f32[64,3,7,7]) -> (%out: ...) {
//     parallel for (c, 0, 64) {
//       out[c*112 + x] = max(acc, 0.0f)
//     }
//   }
// Expressions print with C precedence and only the parentheses it needs; `*`, `/`, `%`
// print without spaces, so index math reads as `(n*64 + c)*112 + y`. Immediates of the
// index type (i64) print bare, f32 with an `f` suffix (`0.5f`), f64 with a `.` or exponent,
// other types as casts (`i32(3)`, `u8(255)`); floats print the shortest text that reads
// back to the same value. Vectors show as ramp(base, stride, lanes), broadcast(v, lanes)
// and lane suffixes on types (`f32x8(x)`). Extern calls print as `@name<type>(args)`.

#include "engine/loop_ir/ir.h"

#include <ostream>
#include <string>
#include <unordered_map>

namespace lathe::loop {

std::string toString(const Expr& e);
std::string toString(const Stmt& s); // one line per statement, each ending in '\n'
std::string toString(const Kernel& kernel);
// The same, and the 1-based line of the text each statement starts on (keyed by its node;
// a Block has its first statement's line). Code generation tags instructions with them, so
// that a line of loop IR can be found again in the assembly.
using StmtLines = std::unordered_map<const void*, int>;
std::string toString(const Kernel& kernel, StmtLines* lines);
// "f32[1,3,224,224]", with " strides [..]" when the strides are not row-major.
std::string toString(const Buffer& buffer);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const Kernel& kernel);

} // namespace lathe::loop
