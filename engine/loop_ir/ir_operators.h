#pragma once
// Readable construction of loop IR (`x*112 + y`, `min(a, 0.0f)`) and constant queries.
// No implicit conversions between types: a plain number takes the type of the other
// operand (and is broadcast when that operand is a vector); mismatched Exprs throw.
// `==`/`!=` keep their handle meaning; build comparisons with eq()/ne().

#include "engine/loop_ir/ir.h"

#include <concepts>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace lathe::loop {

template <typename T>
concept Number = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

// A constant of type `type`, broadcast when `type` is a vector. An integral value gives a
// FloatImm for a Float type; a fractional value for an integer type is an error.
Expr makeIntConst(Type type, std::int64_t value);
Expr makeFloatConst(Type type, double value);
template <Number T>
Expr makeConst(Type type, T value) {
  if constexpr (std::is_integral_v<T>)
    return makeIntConst(type, static_cast<std::int64_t>(value));
  else
    return makeFloatConst(type, static_cast<double>(value));
}
Expr makeBool(bool value, int lanes = 1);
inline Expr makeZero(Type type) {
  return makeIntConst(type, 0);
}
inline Expr makeOne(Type type) {
  return makeIntConst(type, 1);
}
// An indexType() constant: loop bounds, shapes.
inline Expr makeIndex(std::int64_t value) {
  return makeIntConst(indexType(), value);
}

// A constant shape (or list of indices): {1, 3, 224, 224} as indexType() immediates.
std::vector<Expr> makeShape(const std::vector<std::int64_t>& dims);

// Constant queries: an immediate, or a Broadcast of one.
bool isConst(const Expr& e);
std::optional<std::int64_t> asConstInt(const Expr& e); // IntImm (not Bool)
std::optional<double> asConstFloat(const Expr& e);     // FloatImm
// True when e is an int or float constant equal to value.
bool isConstValue(const Expr& e, double value);

// Binary operators: Expr op Expr, Expr op number, number op Expr.
#define LATHE_LOOP_BINARY_OPERATOR(op)                                                             \
  Expr operator op(Expr a, Expr b);                                                                \
  template <Number T>                                                                              \
  Expr operator op(const Expr& a, T b) {                                                           \
    return a op makeConst(a.type(), b);                                                            \
  }                                                                                                \
  template <Number T>                                                                              \
  Expr operator op(T a, const Expr& b) {                                                           \
    return makeConst(b.type(), a) op b;                                                            \
  }
LATHE_LOOP_BINARY_OPERATOR(+)
LATHE_LOOP_BINARY_OPERATOR(-)
LATHE_LOOP_BINARY_OPERATOR(*)
LATHE_LOOP_BINARY_OPERATOR(/) // Div: truncating for ints (see ir.h)
LATHE_LOOP_BINARY_OPERATOR(%) // Mod: truncating for ints
LATHE_LOOP_BINARY_OPERATOR(<)
LATHE_LOOP_BINARY_OPERATOR(<=)
LATHE_LOOP_BINARY_OPERATOR(>)
LATHE_LOOP_BINARY_OPERATOR(>=)
#undef LATHE_LOOP_BINARY_OPERATOR

#define LATHE_LOOP_BINARY_FUNCTION(name)                                                           \
  Expr name(Expr a, Expr b);                                                                       \
  template <Number T>                                                                              \
  Expr name(const Expr& a, T b) {                                                                  \
    return name(a, makeConst(a.type(), b));                                                        \
  }                                                                                                \
  template <Number T>                                                                              \
  Expr name(T a, const Expr& b) {                                                                  \
    return name(makeConst(b.type(), a), b);                                                        \
  }
LATHE_LOOP_BINARY_FUNCTION(min)
LATHE_LOOP_BINARY_FUNCTION(max)
LATHE_LOOP_BINARY_FUNCTION(floorDiv)
LATHE_LOOP_BINARY_FUNCTION(floorMod)
LATHE_LOOP_BINARY_FUNCTION(eq)
LATHE_LOOP_BINARY_FUNCTION(ne)
#undef LATHE_LOOP_BINARY_FUNCTION

// -x: 0 - x for integers; x * -1.0 for floats, which is exact and keeps the sign of zero.
Expr operator-(const Expr& a);
Expr operator!(Expr a);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);

Expr select(Expr condition, Expr trueValue, Expr falseValue);
Expr cast(Type type, Expr value);
// The same bits read as another type of the same width (an extern call named kBitcast, which
// code generators emit as a bit cast).
inline constexpr const char* kBitcast = "bitcast";
Expr bitcast(Type type, Expr value);

} // namespace lathe::loop
