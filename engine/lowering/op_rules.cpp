#include "engine/lowering/op_rules.h"

#include "engine/support/diagnostics.h"

namespace lathe::lowering {

const RuleTable& rules() {
  static const RuleTable table = [] {
    RuleTable t;
    registerElementwiseRules(t);
    registerDataMovementRules(t);
    registerConvPoolRules(t);
    registerMatMulRules(t);
    registerNormalizationRules(t);
    registerReductionRules(t);
    registerRecurrentRules(t);
    registerLossRules(t);
    registerMiscRules(t);
    registerQuantizeRules(t);
    return t;
  }();
  return table;
}

Expr readBroadcast(OperandReader& in, const graph::Node& node, std::size_t input,
                   const std::vector<Expr>& outIndex) {
  const graph::Value* v = node.input(input);
  LATHE_CHECK(v, "absent operand read");
  return in.read(input, broadcastIndex(staticShape(*v, node), outIndex));
}

void unsupportedNode(const graph::Node& node, const std::string& reason) {
  throw Error(ErrorKind::Unsupported, reason, {{}, node.name, node.opType()});
}

const graph::TensorData& constantInput(const graph::Node& node, std::size_t i, const char* what) {
  const graph::Value* v = node.input(i);
  if (!v || !v->isConstant() || v->constant().isElided())
    unsupportedNode(node, std::string(what) + " must be a compile-time constant");
  return v->constant();
}

std::vector<std::int64_t> constantInts(const graph::Node& node, std::size_t i, const char* what) {
  const graph::TensorData& t = constantInput(node, i, what);
  std::vector<std::int64_t> out;
  for (std::int64_t k = 0; k < t.numElements(); ++k)
    out.push_back(t.elementAsInt(k));
  return out;
}

} // namespace lathe::lowering
