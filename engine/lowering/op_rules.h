#pragma once
// How each op becomes loop IR. Two kinds of rule:
//  - a pointwise rule gives the value of a single-output op at one output index
//    (elementwise ops, broadcasting, most data movement); chains of them fuse freely;
//  - a kernel rule writes a whole loop nest (Conv, MatMul, pooling, reductions, Softmax...);
//    an anchor's kernel rule stores output 0 through an epilogue, the fused elementwise ops
//    that follow it.
// Rules are registered per op family (one .cpp per family) in rules().

#include "engine/graph/axis.h"
#include "engine/lowering/kernel_builder.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace lathe::lowering {

// Reads operand `input` of the node being lowered, at an index in the operand's own shape.
class OperandReader {
public:
  virtual ~OperandReader() = default;
  virtual Expr read(std::size_t input, const std::vector<Expr>& index) = 0;
  virtual Expr readFlat(std::size_t input, const Expr& flatIndex) = 0;
};

// Operand `input` at output index `outIndex` under numpy broadcasting.
Expr readBroadcast(OperandReader& in, const graph::Node& node, std::size_t input,
                   const std::vector<Expr>& outIndex);

using PointwiseRule = Expr (*)(const graph::Node& node, const std::vector<Expr>& outIndex,
                               OperandReader& in);

// Maps the value an op computes at an output index to the value stored there.
using Epilogue = std::function<Expr(Expr value, const std::vector<Expr>& outIndex)>;

using KernelRule = Stmt (*)(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue);

struct RuleTable {
  std::map<std::string, PointwiseRule> pointwise;
  std::map<std::string, KernelRule> kernels;
};

const RuleTable& rules();

// One registration function per op family file.
void registerElementwiseRules(RuleTable& table);
void registerDataMovementRules(RuleTable& table);
void registerConvPoolRules(RuleTable& table);
void registerMatMulRules(RuleTable& table);
void registerNormalizationRules(RuleTable& table);
void registerReductionRules(RuleTable& table);
void registerRecurrentRules(RuleTable& table);
void registerLossRules(RuleTable& table);
void registerMiscRules(RuleTable& table);
void registerQuantizeRules(RuleTable& table);

using graph::normalizeAxis; // engine/graph/axis.h

// The constant data of input `i`; throws Unsupported naming the node when it is not a
// compile-time constant (dynamic shapes/axes are not supported).
const graph::TensorData& constantInput(const graph::Node& node, std::size_t i, const char* what);
std::vector<std::int64_t> constantInts(const graph::Node& node, std::size_t i, const char* what);
[[noreturn]] void unsupportedNode(const graph::Node& node, const std::string& reason);

} // namespace lathe::lowering
