// The reference kernels' dispatch, their shared helpers, and the data-movement ops that the
// constant evaluator does not cover (several outputs: Split, Dropout).

#include "engine/reference/reference_ops.h"

#include "engine/graph_passes/constant_evaluator.h"
#include "engine/graph_passes/constant_evaluator_internal.h"
#include "engine/graph_passes/shape_rules.h"
#include "engine/reference/reference_ops_internal.h"
#include "engine/support/diagnostics.h"

#include <limits>

namespace lathe::reference {
namespace ops {

void refuse(const std::string& reason) {
  throw Refusal(reason);
}

const TensorData& input(const Node& node, std::size_t i) {
  const TensorData* data = optionalInput(node, i);
  if (!data)
    refuse("input " + std::to_string(i) + " is absent");
  return *data;
}

const TensorData* optionalInput(const Node& node, std::size_t i) {
  const graph::Value* v = node.input(i);
  if (!v)
    return nullptr;
  LATHE_CHECK(v->isConstant() && !v->constant().isElided(),
              "reference kernels read constant inputs only");
  return &v->constant();
}

bool isRealFloat(DType t) {
  return t == DType::F32 || t == DType::F64;
}

std::vector<double> floatInput(const Node& node, std::size_t i) {
  const TensorData& data = input(node, i);
  if (!isRealFloat(data.dtype()))
    refuse("input " + std::to_string(i) + " is " + std::string(graph::dtypeName(data.dtype())) +
           "; the reference computes f32 and f64 only");
  return passes::eval::realsOf(data);
}

TensorData makeOutput(const TensorType& type, const std::vector<double>& values) {
  return passes::eval::makeTensor(type.dtype, type.staticDims(), values);
}

std::int64_t product(const Dims& dims) {
  return passes::eval::product(dims);
}

Dims stridesOf(const Dims& dims) {
  return passes::eval::stridesOf(dims);
}

namespace {

// Consecutive pieces along `axis`, sized by the shape rule's output types.
std::optional<Outputs> splitKernel(const Node& node, const std::vector<TensorType>& out) {
  const TensorData& data = input(node, 0);
  const Dims& dims = data.dims();
  const auto axis = static_cast<std::size_t>(
      passes::normalizeAxis(node, node.attrInt("axis", 0), static_cast<std::int64_t>(dims.size())));
  const std::int64_t outer = product(Dims(dims.begin(), dims.begin() + axis));
  const std::int64_t inner = product(Dims(dims.begin() + axis + 1, dims.end()));
  const std::size_t size = graph::dtypeSize(data.dtype());
  Outputs outputs;
  std::int64_t offset = 0;
  for (const TensorType& type : out) {
    const Dims piece = type.staticDims();
    const std::int64_t extent = piece[axis];
    auto bytes = std::make_shared<std::string>();
    bytes->reserve(static_cast<std::size_t>(product(piece)) * size);
    for (std::int64_t o = 0; o < outer; ++o) {
      const auto* from =
          reinterpret_cast<const char*>(data.data()) + ((o * dims[axis] + offset) * inner) * size;
      bytes->append(from, static_cast<std::size_t>(extent * inner) * size);
    }
    outputs.emplace_back(data.dtype(), piece, std::move(bytes));
    offset += extent;
  }
  return outputs;
}

// Inference: the data unchanged and a mask of ones.
std::optional<Outputs> dropoutKernel(const Node& node, const std::vector<TensorType>& out) {
  if (const TensorData* training = optionalInput(node, 2);
      training && training->numElements() == 1 && training->elementAsInt(0) != 0)
    refuse("training mode (random dropout) has no reference result");
  const TensorData& data = input(node, 0);
  Outputs outputs{data};
  if (out.size() > 1 && node.outputs().size() > 1 && node.output(1))
    outputs.push_back(passes::eval::makeTensor(
        DType::Bool, out[1].staticDims(),
        std::vector<std::int64_t>(static_cast<std::size_t>(data.numElements()), 1)));
  return outputs;
}

const KernelTable& kernels() {
  static const KernelTable table = [] {
    KernelTable t;
    t["Split"] = splitKernel;
    t["Dropout"] = dropoutKernel;
    addNetworkKernels(t);
    addNormalizationKernels(t);
    addPointwiseKernels(t);
    addSequenceKernels(t);
    addResizeKernels(t);
    addSelectKernels(t);
    return t;
  }();
  return table;
}

std::string inputTypes(const Node& node) {
  std::string text;
  for (const graph::Value* v : node.inputs)
    if (v)
      text += (text.empty() ? "" : ", ") + std::string(graph::dtypeName(v->type.dtype));
  return text.empty() ? "no inputs" : text;
}

Outputs evaluate(const Node& node) {
  const std::string& op = node.opType();
  if (!node.domain().empty())
    refuse("ops of domain '" + node.domain() + "' have no reference kernels");
  if (op == "Constant") {
    auto value = passes::constantNodeValue(node);
    if (!value)
      refuse("a string or sparse Constant");
    return {*value};
  }
  if (op == "If" || op == "Loop") // interpretGraph runs their subgraphs
    refuse(op + " is evaluated with its subgraphs by the interpreter, not alone");
  if (op == "Scan")
    refuse("Scan is not evaluated by the reference");
  auto types = passes::inferOutputTypes(node);
  // Rules list every output the op may have (MaxPool's Indices); the node may have fewer.
  if (!types || types->size() < node.outputs().size())
    refuse("no shape rule gives its output types");
  types->resize(node.outputs().size());
  for (std::size_t i = 0; i < types->size(); ++i)
    if (node.output(i) && (!(*types)[i].isStatic() || (*types)[i].dtype == DType::Undefined))
      refuse("output " + std::to_string(i) + " has no static type (" +
             graph::toString((*types)[i]) + ")");
  const KernelTable& table = kernels();
  const auto kernel = table.find(op);
  std::optional<Outputs> outputs;
  if (kernel != table.end())
    outputs = kernel->second(node, *types);
  if (!outputs)
    outputs = passes::evaluateConstantNode(node, std::numeric_limits<std::int64_t>::max());
  if (!outputs && kernel == table.end())
    refuse("the reference has no kernel for " + op);
  if (!outputs)
    refuse("the reference does not evaluate " + op + " on " + inputTypes(node));
  LATHE_CHECK(outputs->size() == types->size(), "the reference gave " +
                                                    std::to_string(outputs->size()) +
                                                    " outputs for " + node.describe());
  for (std::size_t i = 0; i < types->size(); ++i)
    LATHE_CHECK(!node.output(i) || ((*outputs)[i].dtype() == (*types)[i].dtype &&
                                    (*outputs)[i].dims() == (*types)[i].staticDims()),
                "the reference's output " + std::to_string(i) + " of " + node.describe() +
                    " disagrees with its shape rule");
  return std::move(*outputs);
}

} // namespace
} // namespace ops

NodeEvaluation evaluateNode(const graph::Node& node) {
  NodeEvaluation result;
  try {
    result.outputs = ops::evaluate(node);
  } catch (const ops::Refusal& r) {
    result.outputs.clear();
    result.refusal = r.what();
  }
  return result;
}

} // namespace lathe::reference
