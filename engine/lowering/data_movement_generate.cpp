// Ops that generate their output from shapes and a few scalars rather than moving input
// elements: Shape, Size, ConstantOfShape, Range, EyeLike and Trilu (a masked copy).
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

using graph::Node;
using Shape = std::vector<std::int64_t>;

[[noreturn]] void invalidNode(const Node& n, const std::string& reason) {
  throw Error(ErrorKind::Invalid, reason, {{}, n.name, n.opType()});
}

graph::DType outputDType(const Node& n) {
  return n.output(0)->type.dtype;
}

Expr elementConst(const graph::TensorData& t, std::int64_t i, graph::DType dtype) {
  const loop::Type type = loopType(dtype);
  if (type.isFloat())
    return loop::makeFloatConst(type, t.elementAsDouble(i));
  if (type.isBool())
    return loop::makeBool(t.elementAsInt(i) != 0);
  return loop::makeIntConst(type, t.elementAsInt(i));
}

// The scalar operand `input` in `dtype`: an immediate when it is constant, else a load.
Expr scalarOperand(const Node& n, std::size_t input, OperandReader& in, graph::DType dtype) {
  const graph::Value* v = n.input(input);
  if (!v)
    invalidNode(n, "input " + std::to_string(input) + " is required");
  if (v->isConstant() && !v->constant().isElided())
    return elementConst(v->constant(), 0, dtype);
  Expr e = in.readFlat(input, loop::makeIndex(0));
  return e.type() == loopType(dtype) ? e : loop::cast(loopType(dtype), e);
}

// Shape and Size are normally folded to constants (their input shape is static by the time
// code is generated); these rules write the same values when they were not.
Expr lowerShape(const Node& n, const std::vector<Expr>& idx, OperandReader&) {
  const Shape dims = staticShape(*n.input(0), n);
  const auto rank = static_cast<std::int64_t>(dims.size());
  auto clampAxis = [rank](std::int64_t a) {
    return std::clamp<std::int64_t>(a < 0 ? a + rank : a, 0, rank);
  };
  const std::int64_t start = clampAxis(n.attrInt("start", 0));
  const std::int64_t end = std::max(start, clampAxis(n.attrInt("end", rank)));
  if (start == end) // an empty output: never stored
    return loop::makeIntConst(loop::i64(), 0);
  Expr value = loop::makeIntConst(loop::i64(), dims[static_cast<std::size_t>(end - 1)]);
  for (std::int64_t i = end - 1; i-- > start;)
    value = loop::select(idx[0] <= i - start,
                         loop::makeIntConst(loop::i64(), dims[static_cast<std::size_t>(i)]), value);
  return value;
}

Expr lowerSize(const Node& n, const std::vector<Expr>&, OperandReader&) {
  std::int64_t count = 1;
  for (std::int64_t d : staticShape(*n.input(0), n))
    count *= d;
  return loop::makeIntConst(loop::i64(), count);
}

Expr lowerConstantOfShape(const Node& n, const std::vector<Expr>&, OperandReader&) {
  const graph::Attribute* value = n.findAttribute("value");
  if (!value)
    return constantOf(outputDType(n), 0); // the default is a float 0
  if (!value->is<graph::TensorData>() || value->as<graph::TensorData>().numElements() != 1 ||
      value->as<graph::TensorData>().isElided())
    invalidNode(n, "value must be a one-element tensor");
  return elementConst(value->as<graph::TensorData>(), 0, outputDType(n));
}

// output[i] = start + i * delta (the ONNX definition, not a running sum). start and delta
// are read from their operands, so they need not be constants; the output length must be.
Expr lowerRange(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const graph::DType dtype = outputDType(n);
  Expr start = scalarOperand(n, 0, in, dtype), delta = scalarOperand(n, 2, in, dtype);
  return start + loop::cast(loopType(dtype), idx[0]) * delta;
}

Expr lowerEyeLike(const Node& n, const std::vector<Expr>& idx, OperandReader&) {
  if (idx.size() != 2)
    invalidNode(n, "needs a rank-2 input");
  const graph::DType dtype = outputDType(n);
  return loop::select(loop::eq(idx[1] - idx[0], n.attrInt("k", 0)), constantOf(dtype, 1),
                      constantOf(dtype, 0));
}

// Keeps the elements with column - row >= k (upper) or <= k (lower) of the last two dims.
Expr lowerTrilu(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  if (idx.size() < 2)
    invalidNode(n, "needs an input of rank 2 or more");
  Expr k = loop::makeIndex(0);
  if (n.input(1))
    k = scalarOperand(n, 1, in, graph::DType::I64);
  Expr diff = idx[idx.size() - 1] - idx[idx.size() - 2];
  Expr keep = n.attrInt("upper", 1) != 0 ? diff >= k : diff <= k;
  Expr x = in.read(0, idx);
  return loop::select(keep, x, constantOf(outputDType(n), 0));
}

} // namespace

void registerDataMovementGenerateRules(RuleTable& t) {
  auto& p = t.pointwise;
  p["Shape"] = lowerShape;
  p["Size"] = lowerSize;
  p["ConstantOfShape"] = lowerConstantOfShape;
  p["Range"] = lowerRange;
  p["EyeLike"] = lowerEyeLike;
  p["Trilu"] = lowerTrilu;
}

} // namespace lathe::lowering
