#include "engine/lowering/vector_epilogue.h"

#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/substitute.h"
#include "engine/loop_ir/widen.h"
#include "engine/lowering/window_helpers.h"

namespace lathe::lowering {
namespace {

// The epilogue with the value and the last index as vectors; `failed` when some part has no
// vector form (a library call).
class Widen : public loop::VectorWidener {
public:
  using VectorWidener::VectorWidener;
  bool failed = false;

protected:
  void refuse(const std::string&) override { failed = true; }
};

} // namespace

VectorEpilogue::VectorEpilogue(KernelBuilder& kb, const Epilogue& finish, graph::DType dtype,
                               std::size_t rank, int lanes) {
  const loop::Type t = loopType(dtype);
  const Expr scalarValue = freshScalar(kb, "ev", t);
  const Expr vectorValue = freshScalar(kb, "evv", t.withLanes(lanes));
  std::vector<Expr> index;
  for (std::size_t d = 0; d < rank; ++d)
    index.push_back(kb.freshVar("ei"));
  const Expr lastLane = index.back();
  const Expr scalar = finish(scalarValue, index);
  Widen widen(
      {{scalarValue.as<loop::Var>()->name, vectorValue},
       {lastLane.as<loop::Var>()->name, loop::Ramp::make(lastLane, loop::makeIndex(1), lanes)}});
  // The last index's own name stays free for the first lane (the ramp's base).
  const Expr wide = widen.mutate(scalar);
  if (widen.failed)
    return;
  widened_ = Widen::broadcastTo(wide, lanes);
  value_ = vectorValue;
  valueUses_ = loop::countUses(widened_, vectorValue.as<loop::Var>()->name);
  for (const Expr& i : index)
    index_.push_back(i.as<loop::Var>()->name);
}

Expr VectorEpilogue::operator()(const Expr& value, const std::vector<Expr>& outIndex) const {
  std::map<std::string, Expr> at;
  for (std::size_t d = 0; d < index_.size(); ++d)
    at[index_[d]] = outIndex[d];
  // A value the epilogue reads more than once (Relu: select(v > 0, v, 0)) is bound once
  // rather than copied into every read.
  if (valueUses_ > 1 && !value.as<loop::Var>() && !loop::isConst(value))
    return loop::Let::make(value_, value, loop::substitute(widened_, at));
  at[value_.as<loop::Var>()->name] = value;
  return loop::substitute(widened_, at);
}

} // namespace lathe::lowering
