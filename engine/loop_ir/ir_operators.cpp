#include "engine/loop_ir/ir_operators.h"

#include "engine/support/diagnostics.h"

#include <cmath>

namespace lathe::loop {

namespace {

Expr broadcastTo(Expr scalar, int lanes) {
  return lanes == 1 ? scalar : Broadcast::make(std::move(scalar), lanes);
}

} // namespace

Expr makeIntConst(Type type, std::int64_t value) {
  LATHE_CHECK(type.valid(), "makeConst: invalid type");
  const Type scalar = type.element();
  Expr e = scalar.isFloat() ? FloatImm::make(scalar, static_cast<double>(value))
                            : IntImm::make(scalar, value);
  return broadcastTo(e, type.lanes());
}

Expr makeFloatConst(Type type, double value) {
  LATHE_CHECK(type.valid(), "makeConst: invalid type");
  const Type scalar = type.element();
  if (scalar.isFloat())
    return broadcastTo(FloatImm::make(scalar, value), type.lanes());
  LATHE_CHECK(std::trunc(value) == value && std::abs(value) < 9.2e18,
              "makeConst: " + std::to_string(value) + " is not an integer, as " + type.toString() +
                  " needs");
  return makeIntConst(type, static_cast<std::int64_t>(value));
}

Expr makeBool(bool value, int lanes) {
  return broadcastTo(IntImm::make(boolean(), value ? 1 : 0), lanes);
}

std::vector<Expr> makeShape(const std::vector<std::int64_t>& dims) {
  std::vector<Expr> shape;
  shape.reserve(dims.size());
  for (std::int64_t d : dims)
    shape.push_back(makeIndex(d));
  return shape;
}

bool isConst(const Expr& e) {
  if (!e.defined())
    return false;
  if (const Broadcast* b = e.as<Broadcast>())
    return isConst(b->value);
  return e.as<IntImm>() || e.as<FloatImm>();
}

std::optional<std::int64_t> asConstInt(const Expr& e) {
  if (!e.defined())
    return std::nullopt;
  if (const Broadcast* b = e.as<Broadcast>())
    return asConstInt(b->value);
  const IntImm* imm = e.as<IntImm>();
  if (!imm || imm->type.isBool())
    return std::nullopt;
  return imm->value;
}

std::optional<double> asConstFloat(const Expr& e) {
  if (!e.defined())
    return std::nullopt;
  if (const Broadcast* b = e.as<Broadcast>())
    return asConstFloat(b->value);
  if (const FloatImm* imm = e.as<FloatImm>())
    return imm->value;
  return std::nullopt;
}

bool isConstValue(const Expr& e, double value) {
  if (auto i = asConstInt(e))
    return static_cast<double>(*i) == value;
  if (auto f = asConstFloat(e))
    return *f == value;
  return false;
}

Expr operator+(Expr a, Expr b) {
  return Add::make(std::move(a), std::move(b));
}
Expr operator-(Expr a, Expr b) {
  return Sub::make(std::move(a), std::move(b));
}
Expr operator*(Expr a, Expr b) {
  return Mul::make(std::move(a), std::move(b));
}
Expr operator/(Expr a, Expr b) {
  return Div::make(std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) {
  return Mod::make(std::move(a), std::move(b));
}
Expr operator<(Expr a, Expr b) {
  return LT::make(std::move(a), std::move(b));
}
Expr operator<=(Expr a, Expr b) {
  return LE::make(std::move(a), std::move(b));
}
Expr operator>(Expr a, Expr b) {
  return GT::make(std::move(a), std::move(b));
}
Expr operator>=(Expr a, Expr b) {
  return GE::make(std::move(a), std::move(b));
}
Expr min(Expr a, Expr b) {
  return Min::make(std::move(a), std::move(b));
}
Expr max(Expr a, Expr b) {
  return Max::make(std::move(a), std::move(b));
}
Expr floorDiv(Expr a, Expr b) {
  return FloorDiv::make(std::move(a), std::move(b));
}
Expr floorMod(Expr a, Expr b) {
  return FloorMod::make(std::move(a), std::move(b));
}
Expr eq(Expr a, Expr b) {
  return EQ::make(std::move(a), std::move(b));
}
Expr ne(Expr a, Expr b) {
  return NE::make(std::move(a), std::move(b));
}

Expr operator-(const Expr& a) {
  LATHE_CHECK(a.defined(), "negation of an undefined expression");
  if (a.type().isFloat())
    return Mul::make(a, makeFloatConst(a.type(), -1.0));
  return Sub::make(makeZero(a.type()), a);
}

Expr operator!(Expr a) {
  return Not::make(std::move(a));
}
Expr operator&&(Expr a, Expr b) {
  return And::make(std::move(a), std::move(b));
}
Expr operator||(Expr a, Expr b) {
  return Or::make(std::move(a), std::move(b));
}

Expr select(Expr condition, Expr trueValue, Expr falseValue) {
  return Select::make(std::move(condition), std::move(trueValue), std::move(falseValue));
}

Expr cast(Type type, Expr value) {
  return Cast::make(type, std::move(value));
}

Expr bitcast(Type type, Expr value) {
  LATHE_CHECK(type.bits() * type.lanes() == value.type().bits() * value.type().lanes(),
              "bitcast between types of different widths: " + value.type().toString() + " to " +
                  type.toString());
  return Call::makeExtern(type, kBitcast, {std::move(value)});
}

} // namespace lathe::loop
