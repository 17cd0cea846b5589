#include "engine/reference/reference_interpreter.h"

#include "engine/reference/reference_ops.h"
#include "engine/support/diagnostics.h"

#include <memory>
#include <unordered_map>

namespace lathe::reference {
namespace {

// A one-node graph whose inputs are constants holding the values computed so far; the
// reference kernels read their operands from it like the constant evaluator does.
struct NodeWithValues {
  std::unique_ptr<graph::Graph> scratch = std::make_unique<graph::Graph>();
  graph::Node* node = nullptr;
  std::string missingInput; // an input without a value (then node is null)
};

NodeWithValues bindInputs(const graph::Node& node,
                          const std::unordered_map<std::string, graph::TensorData>& values) {
  NodeWithValues bound;
  std::unordered_map<const graph::Value*, graph::Value*> copies;
  std::vector<graph::Value*> inputs;
  for (const graph::Value* v : node.inputs) {
    if (!v) {
      inputs.push_back(nullptr);
      continue;
    }
    if (auto it = copies.find(v); it != copies.end()) {
      inputs.push_back(it->second);
      continue;
    }
    const graph::TensorData* data = nullptr;
    if (v->isConstant())
      data = &v->constant();
    else if (auto it = values.find(v->name()); it != values.end())
      data = &it->second;
    if (!data || data->isElided()) {
      bound.missingInput = v->name();
      return bound;
    }
    inputs.push_back(copies[v] = bound.scratch->addConstant(v->name(), *data));
  }
  std::vector<std::string> outputNames;
  for (const graph::Value* out : node.outputs())
    outputNames.push_back(out ? out->name() : std::string());
  bound.node = bound.scratch->addNode(node.opType(), inputs, outputNames, node.domain());
  bound.node->name = node.name;
  bound.node->attributes = node.attributes;
  return bound;
}

} // namespace

Interpretation interpretGraph(const graph::Graph& graph,
                              const std::unordered_map<std::string, graph::TensorData>& inputs,
                              const std::atomic<bool>* cancel) {
  Interpretation result;
  for (const graph::Value* in : graph.inputs) {
    const auto it = inputs.find(in->name());
    if (it == inputs.end())
      throw Error(ErrorKind::Invalid, "input '" + in->name() + "' has no data");
    result.values.emplace(in->name(), it->second);
  }
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    const graph::Node& node = *graph.nodes()[i];
    if (cancel && cancel->load())
      throw Error(ErrorKind::Cancelled, "the comparison was cancelled");
    auto stop = [&](const std::string& reason) {
      result.complete = false;
      result.stoppedAt = i;
      result.stoppedNode = node.name;
      result.stoppedOp = node.opType();
      result.stopReason = reason;
    };
    NodeWithValues bound = bindInputs(node, result.values);
    if (!bound.node) {
      stop("its input '" + bound.missingInput + "' has no value");
      break;
    }
    NodeEvaluation evaluation;
    try {
      evaluation = evaluateNode(*bound.node);
    } catch (const Error& e) {
      stop(e.reason());
      break;
    }
    if (!evaluation.ok()) {
      stop(evaluation.refusal);
      break;
    }
    for (std::size_t o = 0; o < node.outputs().size(); ++o)
      if (const graph::Value* out = node.output(o))
        result.values.insert_or_assign(out->name(), std::move(evaluation.outputs[o]));
  }
  return result;
}

} // namespace lathe::reference
