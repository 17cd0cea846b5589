// Shape rules of the ONNX quantization ops: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.
// The integer and requantized products have the geometry of MatMul and Conv, so their
// rules run the MatMul/Conv rules (registered before these) on a copy of the node whose
// first two inputs are the two operands, and only change the element type.
#include "engine/graph_passes/shape_rules_internal.h"

namespace lathe::passes::rules {
namespace {

// The MatMul and Conv rules, looked up once when the table is built (a Rule is a plain
// function pointer, so the wrappers below cannot capture them).
Rule gMatMulRule = nullptr;
Rule gConvRule = nullptr;

// The type of input i with another element type; unknown rank when the input's type is not
// known.
std::optional<Types> sameShape(const Node& n, std::size_t i, DType dtype) {
  const TensorType* x = inputType(n, i);
  if (!x)
    return std::nullopt;
  TensorType out = *x;
  out.dtype = dtype;
  return Types{out};
}

// The element type of optional input i, or `fallback` when it is absent or unknown.
DType dtypeOr(const Node& n, std::size_t i, DType fallback) {
  const DType t = inputDType(n, i);
  return t == DType::Undefined ? fallback : t;
}

std::optional<Types> inferQuantizeLinear(const Node& n) {
  // The output has the zero point's type, uint8 when there is none.
  return sameShape(n, 0, dtypeOr(n, 2, DType::U8));
}

std::optional<Types> inferDequantizeLinear(const Node& n) {
  return sameShape(n, 0, dtypeOr(n, 1, DType::F32));
}

std::optional<Types> inferDynamicQuantizeLinear(const Node& n) {
  auto y = sameShape(n, 0, DType::U8);
  if (!y)
    return std::nullopt;
  y->push_back(makeType(DType::F32, {}));
  y->push_back(makeType(DType::U8, {}));
  return y;
}

// Runs `rule` on the node with operands a = input(aIndex), b = input(bIndex) and sets the
// result's element type.
std::optional<Types> productOf(const Node& n, Rule rule, std::size_t aIndex, std::size_t bIndex,
                               DType dtype) {
  if (!rule || !n.input(aIndex) || !n.input(bIndex))
    return std::nullopt;
  Node operands = n;
  operands.inputs = {n.input(aIndex), n.input(bIndex)};
  auto types = rule(operands);
  if (types)
    for (TensorType& t : *types)
      t.dtype = dtype;
  return types;
}

std::optional<Types> inferMatMulInteger(const Node& n) {
  return productOf(n, gMatMulRule, 0, 1, DType::I32);
}
std::optional<Types> inferConvInteger(const Node& n) {
  return productOf(n, gConvRule, 0, 1, DType::I32);
}
std::optional<Types> inferQLinearMatMul(const Node& n) {
  return productOf(n, gMatMulRule, 0, 3, dtypeOr(n, 7, DType::U8));
}
std::optional<Types> inferQLinearConv(const Node& n) {
  return productOf(n, gConvRule, 0, 3, dtypeOr(n, 7, DType::U8));
}

} // namespace

void addQuantizeRules(RuleTable& rules) {
  if (auto it = rules.find("MatMul"); it != rules.end())
    gMatMulRule = it->second;
  if (auto it = rules.find("Conv"); it != rules.end())
    gConvRule = it->second;
  rules["QuantizeLinear"] = inferQuantizeLinear;
  rules["DequantizeLinear"] = inferDequantizeLinear;
  rules["DynamicQuantizeLinear"] = inferDynamicQuantizeLinear;
  rules["MatMulInteger"] = inferMatMulInteger;
  rules["ConvInteger"] = inferConvInteger;
  rules["QLinearMatMul"] = inferQLinearMatMul;
  rules["QLinearConv"] = inferQLinearConv;
}

} // namespace lathe::passes::rules
