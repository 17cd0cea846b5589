// Constant folding for the simplifier: exact results in the type's own width and precision,
// or no result at all.

#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/simplify_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace lathe::loop::simplify_detail {

namespace {

// The raw value of an integer or bool constant, scalar or broadcast.
std::optional<std::int64_t> rawInt(const Expr& e) {
  if (const Broadcast* b = e.as<Broadcast>())
    return rawInt(b->value);
  if (const IntImm* imm = e.as<IntImm>())
    return imm->value;
  return std::nullopt;
}

Expr broadcastTo(Expr scalar, int lanes) {
  return lanes == 1 ? scalar : Broadcast::make(std::move(scalar), lanes);
}

// A 64-bit result in the type's width: masked for UInt, nullopt for a signed overflow.
std::optional<std::int64_t> fit(Type t, std::int64_t v) {
  const int bits = t.bits();
  if (bits == 64)
    return v;
  if (t.isUInt())
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(v) & ((1ULL << bits) - 1));
  const std::int64_t limit = std::int64_t(1) << (bits - 1);
  if (v < -limit || v >= limit)
    return std::nullopt;
  return v;
}

std::optional<std::int64_t> foldUnsigned(ExprKind kind, Type t, std::uint64_t x, std::uint64_t y) {
  std::uint64_t r = 0;
  switch (kind) {
  case ExprKind::Add:
    r = x + y;
    break;
  case ExprKind::Sub:
    r = x - y;
    break;
  case ExprKind::Mul:
    r = x * y;
    break;
  case ExprKind::Div:
  case ExprKind::FloorDiv:
    if (y == 0)
      return std::nullopt;
    r = x / y;
    break;
  case ExprKind::Mod:
  case ExprKind::FloorMod:
    if (y == 0)
      return std::nullopt;
    r = x % y;
    break;
  case ExprKind::Min:
    r = std::min(x, y);
    break;
  case ExprKind::Max:
    r = std::max(x, y);
    break;
  default:
    return std::nullopt;
  }
  return fit(t, static_cast<std::int64_t>(r));
}

std::optional<std::int64_t> foldSigned(ExprKind kind, Type t, std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  const bool badDivision = y == 0 || (x == std::numeric_limits<std::int64_t>::min() && y == -1);
  switch (kind) {
  case ExprKind::Add:
    if (__builtin_add_overflow(x, y, &r))
      return std::nullopt;
    break;
  case ExprKind::Sub:
    if (__builtin_sub_overflow(x, y, &r))
      return std::nullopt;
    break;
  case ExprKind::Mul:
    if (__builtin_mul_overflow(x, y, &r))
      return std::nullopt;
    break;
  case ExprKind::Div:
    if (badDivision)
      return std::nullopt;
    r = x / y;
    break;
  case ExprKind::Mod:
    if (badDivision)
      return std::nullopt;
    r = x % y;
    break;
  case ExprKind::FloorDiv:
    if (badDivision)
      return std::nullopt;
    r = x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
    break;
  case ExprKind::FloorMod:
    if (badDivision)
      return std::nullopt;
    r = x % y;
    if (r != 0 && ((r < 0) != (y < 0)))
      r += y;
    break;
  case ExprKind::Min:
    r = std::min(x, y);
    break;
  case ExprKind::Max:
    r = std::max(x, y);
    break;
  default:
    return std::nullopt;
  }
  return fit(t, r);
}

template <typename T>
bool compare(ExprKind kind, T x, T y) {
  switch (kind) {
  case ExprKind::EQ:
    return x == y;
  case ExprKind::NE:
    return x != y;
  case ExprKind::LT:
    return x < y;
  case ExprKind::LE:
    return x <= y;
  case ExprKind::GT:
    return x > y;
  default:
    return x >= y;
  }
}

// Float arithmetic in precision F (float for f32, so rounding matches the generated code).
template <typename F>
std::optional<double> foldFloat(ExprKind kind, F x, F y) {
  switch (kind) {
  case ExprKind::Add:
    return x + y;
  case ExprKind::Sub:
    return x - y;
  case ExprKind::Mul:
    return x * y;
  case ExprKind::Div:
    return x / y;
  case ExprKind::Mod:
    return std::fmod(x, y);
  case ExprKind::Min:
  case ExprKind::Max:
    // NaN and signed zeros give an unspecified result (ir.h), so leave them to run time.
    if (std::isnan(x) || std::isnan(y) || (x == y && std::signbit(x) != std::signbit(y)))
      return std::nullopt;
    return kind == ExprKind::Min ? std::min(x, y) : std::max(x, y);
  default:
    return std::nullopt;
  }
}

} // namespace

Expr foldBinary(ExprKind kind, const Expr& a, const Expr& b) {
  if (!isConst(a) || !isConst(b))
    return {};
  const Type t = a.type();
  const int lanes = t.lanes();
  if (t.isFloat()) {
    if (t.bits() == 16)
      return {};
    const double x = *asConstFloat(a);
    const double y = *asConstFloat(b);
    // f32 values are exact in a double, so comparing doubles gives the f32 answer.
    if (isComparisonKind(kind))
      return makeBool(compare(kind, x, y), lanes);
    const std::optional<double> r =
        t.bits() == 32 ? foldFloat<float>(kind, static_cast<float>(x), static_cast<float>(y))
                       : foldFloat<double>(kind, x, y);
    return r ? makeFloatConst(t, *r) : Expr();
  }
  const std::int64_t x = *rawInt(a);
  const std::int64_t y = *rawInt(b);
  if (t.isBool()) {
    switch (kind) {
    case ExprKind::And:
      return makeBool(x && y, lanes);
    case ExprKind::Or:
      return makeBool(x || y, lanes);
    case ExprKind::EQ:
      return makeBool(x == y, lanes);
    case ExprKind::NE:
      return makeBool(x != y, lanes);
    default:
      return {};
    }
  }
  if (isComparisonKind(kind)) {
    const bool r = t.isUInt()
                       ? compare(kind, static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(y))
                       : compare(kind, x, y);
    return makeBool(r, lanes);
  }
  const std::optional<std::int64_t> r =
      t.isUInt()
          ? foldUnsigned(kind, t, static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(y))
          : foldSigned(kind, t, x, y);
  return r ? makeIntConst(t, *r) : Expr();
}

Expr foldCast(Type type, const Expr& value) {
  if (!isConst(value))
    return {};
  const Type from = value.type();
  const Type to = type.element();
  Expr scalar;
  if (from.isFloat()) {
    if (from.bits() == 16)
      return {};
    const double v = *asConstFloat(value);
    if (to.isBool()) {
      scalar = IntImm::make(to, v != 0.0 ? 1 : 0); // NaN is true, as in LLVM's `fcmp une`
    } else if (to.isFloat()) {
      if (to.bits() == 16)
        return {};
      scalar = FloatImm::make(to, v); // rounds to f32 when narrowing
    } else {
      const double whole = std::trunc(v);
      const double limit = std::ldexp(1.0, to.isUInt() ? to.bits() : to.bits() - 1);
      const double low = to.isUInt() ? 0.0 : -limit;
      if (!(whole >= low && whole < limit)) // also false for NaN
        return {};
      const std::int64_t bits = to.isUInt() && to.bits() == 64
                                    ? static_cast<std::int64_t>(static_cast<std::uint64_t>(whole))
                                    : static_cast<std::int64_t>(whole);
      scalar = IntImm::make(to, bits);
    }
  } else {
    const std::int64_t v = *rawInt(value);
    if (to.isBool()) {
      scalar = IntImm::make(to, v != 0 ? 1 : 0);
    } else if (to.isFloat()) {
      if (to.bits() == 16)
        return {};
      // Convert straight to the target precision: one rounding, as the generated code does.
      const bool isUnsigned = from.isUInt() || from.isBool();
      const auto u = static_cast<std::uint64_t>(v);
      const double d =
          to.bits() == 32
              ? static_cast<double>(isUnsigned ? static_cast<float>(u) : static_cast<float>(v))
              : (isUnsigned ? static_cast<double>(u) : static_cast<double>(v));
      scalar = FloatImm::make(to, d);
    } else {
      // Two's complement truncation of the sign- or zero-extended 64-bit pattern.
      std::int64_t r = v;
      if (to.bits() < 64) {
        const int shift = 64 - to.bits();
        r = to.isUInt()
                ? static_cast<std::int64_t>(static_cast<std::uint64_t>(v) &
                                            ((1ULL << to.bits()) - 1))
                : static_cast<std::int64_t>(static_cast<std::uint64_t>(v) << shift) >> shift;
      }
      scalar = IntImm::make(to, r);
    }
  }
  return broadcastTo(scalar, type.lanes());
}

Expr foldCall(const Call* call, const std::vector<Expr>& args) {
  if (call->op == Intrinsic::Extern || args.size() != 1 || !isConst(args[0]))
    return {};
  const Type t = call->type;
  if (t.isIntOrUInt()) {
    const std::int64_t v = *rawInt(args[0]);
    if (call->op != Intrinsic::Abs)
      return {};
    if (t.isUInt() || v >= 0)
      return args[0];
    const std::optional<std::int64_t> r = foldSigned(ExprKind::Sub, t, 0, v);
    return r ? makeIntConst(t, *r) : Expr();
  }
  if (t.bits() == 16)
    return {};
  // Only functions whose IEEE result is exact or correctly rounded fold; exp, tanh, ... are
  // left to the target's math library so that folding never changes a result.
  const double v = *asConstFloat(args[0]);
  const bool f32 = t.bits() == 32;
  double r = 0;
  switch (call->op) {
  case Intrinsic::Abs:
    r = std::fabs(v);
    break;
  case Intrinsic::Floor:
    r = std::floor(v);
    break;
  case Intrinsic::Ceil:
    r = std::ceil(v);
    break;
  case Intrinsic::Trunc:
    r = std::trunc(v);
    break;
  case Intrinsic::Round:
    r = std::nearbyint(v); // the default rounding mode: half to even
    break;
  case Intrinsic::Sqrt:
    r = f32 ? static_cast<double>(std::sqrt(static_cast<float>(v))) : std::sqrt(v);
    break;
  default:
    return {};
  }
  return makeFloatConst(t, r);
}

} // namespace lathe::loop::simplify_detail
