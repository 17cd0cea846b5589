// The simplifier must preserve values: random integer expressions (scalars and 4-lane
// vectors) are evaluated by a small interpreter before and after simplification.

#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/simplify.h"

#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <random>

namespace lathe::loop {
namespace {

using Lanes = std::vector<std::int64_t>;

// Values of an i64/bool expression per lane; nullopt where the IR leaves the result
// undefined (division by zero) or where the interpreter would overflow.
class Interpreter {
public:
  explicit Interpreter(std::map<std::string, std::int64_t> env) : env_(std::move(env)) {}

  std::optional<Lanes> eval(const Expr& e) {
    const int lanes = e.type().lanes();
    switch (e.kind()) {
    case ExprKind::IntImm:
      return Lanes(lanes, e.as<IntImm>()->value);
    case ExprKind::Var:
      return Lanes(lanes, env_.at(e.as<Var>()->name));
    case ExprKind::Broadcast: {
      auto v = eval(e.as<Broadcast>()->value);
      return v ? std::optional<Lanes>(Lanes(lanes, (*v)[0])) : std::nullopt;
    }
    case ExprKind::Ramp: {
      auto base = eval(e.as<Ramp>()->base), stride = eval(e.as<Ramp>()->stride);
      if (!base || !stride)
        return std::nullopt;
      Lanes out(lanes);
      for (int i = 0; i < lanes; ++i)
        out[i] = (*base)[0] + i * (*stride)[0];
      return out;
    }
    case ExprKind::Not: {
      auto a = eval(e.as<Not>()->a);
      if (a)
        for (auto& v : *a)
          v = !v;
      return a;
    }
    case ExprKind::Select: {
      const Select* s = e.as<Select>();
      auto c = eval(s->condition), t = eval(s->trueValue), f = eval(s->falseValue);
      if (!c || !t || !f)
        return std::nullopt;
      Lanes out(lanes);
      for (int i = 0; i < lanes; ++i)
        out[i] = (*c)[c->size() == 1 ? 0 : i] ? (*t)[i] : (*f)[i];
      return out;
    }
    default:
      break;
    }
    const auto* op = static_cast<const BinaryExprNode*>(e.get());
    auto a = eval(op->a), b = eval(op->b);
    if (!a || !b)
      return std::nullopt;
    Lanes out(lanes);
    for (int i = 0; i < lanes; ++i) {
      auto r = apply(e.kind(), (*a)[i], (*b)[i]);
      if (!r)
        return std::nullopt;
      out[i] = *r;
    }
    return out;
  }

private:
  static std::optional<std::int64_t> apply(ExprKind kind, std::int64_t x, std::int64_t y) {
    if (std::abs(x) > (1 << 20) || std::abs(y) > (1 << 20))
      return std::nullopt; // stay far from overflow, which is undefined
    switch (kind) {
    case ExprKind::Add:
      return x + y;
    case ExprKind::Sub:
      return x - y;
    case ExprKind::Mul:
      return x * y;
    case ExprKind::Div:
      return y == 0 ? std::nullopt : std::optional<std::int64_t>(x / y);
    case ExprKind::Mod:
      return y == 0 ? std::nullopt : std::optional<std::int64_t>(x % y);
    case ExprKind::FloorDiv:
      if (y == 0)
        return std::nullopt;
      return x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
    case ExprKind::FloorMod: {
      if (y == 0)
        return std::nullopt;
      std::int64_t r = x % y;
      return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
    }
    case ExprKind::Min:
      return std::min(x, y);
    case ExprKind::Max:
      return std::max(x, y);
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
    case ExprKind::GE:
      return x >= y;
    case ExprKind::And:
      return x && y;
    case ExprKind::Or:
      return x || y;
    default:
      return std::nullopt;
    }
  }

  std::map<std::string, std::int64_t> env_;
};

class RandomExprs {
public:
  explicit RandomExprs(unsigned seed) : rng_(seed) {}

  Expr index(int depth, int lanes) {
    const int choice = pick(depth <= 0 ? 3 : 14);
    if (lanes > 1 && choice == 0)
      return Ramp::make(index(depth - 1, 1), makeIndex(pick(5) - 2), lanes);
    if (lanes > 1 && choice == 1)
      return Broadcast::make(index(depth - 1, 1), lanes);
    if (choice <= 1)
      return makeIntConst(indexType(lanes), pick(17) - 8);
    if (choice == 2) {
      Expr v = Var::make(indexType(), pick(2) ? "x" : "y");
      return lanes > 1 ? Broadcast::make(v, lanes) : v;
    }
    static const ExprKind kinds[] = {ExprKind::Add,      ExprKind::Sub, ExprKind::Mul,
                                     ExprKind::Div,      ExprKind::Mod, ExprKind::FloorDiv,
                                     ExprKind::FloorMod, ExprKind::Min, ExprKind::Max,
                                     ExprKind::Add,      ExprKind::Sub};
    const ExprKind kind = kinds[pick(11)];
    Expr a = index(depth - 1, lanes);
    // Mostly constant divisors, as in index math.
    const bool division = kind == ExprKind::Div || kind == ExprKind::Mod ||
                          kind == ExprKind::FloorDiv || kind == ExprKind::FloorMod;
    Expr b =
        division && pick(4) ? makeIntConst(indexType(lanes), pick(9) + 1) : index(depth - 1, lanes);
    if (choice == 13)
      return select(condition(depth - 1, lanes), a, b);
    return makeBinary(kind, a, b);
  }

  Expr condition(int depth, int lanes) {
    static const ExprKind kinds[] = {ExprKind::EQ, ExprKind::NE, ExprKind::LT,
                                     ExprKind::LE, ExprKind::GT, ExprKind::GE};
    const int choice = pick(8);
    if (depth > 0 && choice == 6)
      return condition(depth - 1, lanes) && condition(depth - 1, lanes);
    if (depth > 0 && choice == 7)
      return !condition(depth - 1, lanes);
    return makeBinary(kinds[pick(6)], index(depth - 1, lanes), index(depth - 1, lanes));
  }

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

private:
  std::mt19937 rng_;
};

TEST(SimplifyRandom, PreservesIntegerValues) {
  RandomExprs gen(20240611);
  int compared = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    const int lanes = gen.pick(3) == 0 ? 4 : 1;
    Expr e = gen.pick(4) == 0 ? gen.condition(3, lanes) : gen.index(4, lanes);
    Expr s = simplify(e);
    ASSERT_EQ(s.type(), e.type()) << e;
    for (int x = -6; x <= 6; x += 3) {
      for (int y = -5; y <= 5; y += 5) {
        Interpreter interp({{"x", x}, {"y", y}});
        std::optional<Lanes> before = interp.eval(e);
        if (!before)
          continue; // undefined in the input: any result is fine
        std::optional<Lanes> after = interp.eval(s);
        ASSERT_TRUE(after.has_value()) << e << "  ->  " << s << " (x=" << x << ", y=" << y << ")";
        ASSERT_EQ(*before, *after) << e << "  ->  " << s << " (x=" << x << ", y=" << y << ")";
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(SimplifyRandom, IsIdempotent) {
  RandomExprs gen(7);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    Expr once = simplify(gen.index(4, gen.pick(2) ? 4 : 1));
    EXPECT_EQ(toString(simplify(once)), toString(once));
  }
}

} // namespace
} // namespace lathe::loop
