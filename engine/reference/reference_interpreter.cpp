#include "engine/reference/reference_interpreter.h"

#include "engine/reference/reference_ops.h"
#include "engine/support/diagnostics.h"

#include <memory>
#include <optional>
#include <unordered_map>

namespace lathe::reference {
namespace {

using Values = std::unordered_map<std::string, graph::TensorData>;

// A scope's values: its own, then those of the enclosing graphs (captures by name).
struct Scope {
  Values own;
  const Scope* outer = nullptr;
  const graph::TensorData* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->outer)
      if (const auto it = s->own.find(name); it != s->own.end())
        return &it->second;
    return nullptr;
  }
};

// The most iterations a Loop may run in the reference: far beyond real models, and a bound
// on a loop whose condition never turns false.
constexpr std::int64_t kMaxLoopIterations = 10'000'000;

struct Stop {
  std::string reason;
};

void checkCancel(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load())
    throw Error(ErrorKind::Cancelled, "the comparison was cancelled");
}

const graph::TensorData& valueOf(const graph::Value* v, const Scope& scope) {
  if (v->isConstant() && !v->constant().isElided())
    return v->constant();
  const graph::TensorData* data = scope.find(v->name());
  if (!data || data->isElided())
    throw Stop{"its input '" + v->name() + "' has no value"};
  return *data;
}

const graph::Graph& subgraph(const graph::Node& node, const std::string& attribute) {
  const graph::Attribute* a = node.findAttribute(attribute);
  if (!a || !a->is<graph::GraphPtr>() || !a->as<graph::GraphPtr>())
    throw Stop{"it has no '" + attribute + "' subgraph"};
  return *a->as<graph::GraphPtr>();
}

std::vector<graph::TensorData> runGraph(const graph::Graph& g, Scope& scope,
                                        const std::atomic<bool>* cancel);

// A one-node graph whose inputs are constants holding the values computed so far; the
// reference kernels read their operands from it like the constant evaluator does.
std::vector<graph::TensorData> evaluateOne(const graph::Node& node, const Scope& scope) {
  graph::Graph scratch;
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
    inputs.push_back(copies[v] = scratch.addConstant(v->name(), valueOf(v, scope)));
  }
  std::vector<std::string> outputNames;
  for (const graph::Value* out : node.outputs())
    outputNames.push_back(out ? out->name() : std::string());
  graph::Node* copy = scratch.addNode(node.opType(), inputs, outputNames, node.domain());
  copy->name = node.name;
  copy->attributes = node.attributes;
  NodeEvaluation evaluation = evaluateNode(*copy);
  if (!evaluation.ok())
    throw Stop{evaluation.refusal};
  return std::move(evaluation.outputs);
}

// A scope for a subgraph of `node`: the values it captures (the node's inputs after its
// ONNX ones, named as in the enclosing graph) bound by name, then the enclosing scope.
Scope subgraphScope(const graph::Node& node, const Scope& scope) {
  Scope inner{{}, &scope};
  const std::size_t first = node.inputs.size() - node.capturedInputCount();
  const graph::Attribute* names = node.findAttribute(graph::kCapturesAttribute);
  for (std::size_t i = first; i < node.inputs.size(); ++i)
    if (const graph::Value* v = node.input(i))
      inner.own.insert_or_assign(names->as<std::vector<std::string>>()[i - first],
                                 valueOf(v, scope));
  return inner;
}

// If: the branch the condition picks, run on the enclosing values.
std::vector<graph::TensorData> evaluateIf(const graph::Node& node, const Scope& scope,
                                          const std::atomic<bool>* cancel) {
  const graph::TensorData& cond = valueOf(node.input(0), scope);
  if (cond.numElements() != 1)
    throw Stop{"its condition has " + std::to_string(cond.numElements()) + " elements, not 1"};
  Scope branch = subgraphScope(node, scope);
  return runGraph(subgraph(node, cond.elementAsInt(0) ? "then_branch" : "else_branch"), branch,
                  cancel);
}

// Stacks equally shaped tensors along a new first axis.
graph::TensorData stack(const std::vector<graph::TensorData>& pieces) {
  std::vector<std::int64_t> dims = pieces.front().dims();
  dims.insert(dims.begin(), static_cast<std::int64_t>(pieces.size()));
  auto bytes = std::make_shared<std::string>();
  for (const graph::TensorData& p : pieces) {
    if (p.dims() != pieces.front().dims() || p.dtype() != pieces.front().dtype())
      throw Stop{"its scan outputs change shape or type between iterations"};
    bytes->append(reinterpret_cast<const char*>(p.data()), p.byteSize());
  }
  return graph::TensorData(pieces.front().dtype(), std::move(dims), std::move(bytes));
}

// Loop: the body run while the trip count and the condition allow, the loop-carried values
// passed on, the scan outputs stacked.
std::vector<graph::TensorData> evaluateLoop(const graph::Node& node, const Scope& scope,
                                            const std::atomic<bool>* cancel) {
  const graph::Graph& body = subgraph(node, "body");
  const std::size_t onnxInputs = node.inputs.size() - node.capturedInputCount();
  const std::size_t carried = onnxInputs - 2;
  if (onnxInputs < 2 || body.inputs.size() != carried + 2 || body.outputs.size() < carried + 1)
    throw Stop{"its body does not match its inputs"};
  const std::size_t scans = body.outputs.size() - 1 - carried;
  std::optional<std::int64_t> tripCount;
  if (const graph::Value* m = node.input(0))
    tripCount = valueOf(m, scope).elementAsInt(0);
  bool condition = true;
  const graph::Value* condInput = node.input(1);
  if (condInput)
    condition = valueOf(condInput, scope).elementAsInt(0) != 0;
  std::vector<graph::TensorData> state;
  for (std::size_t i = 0; i < carried; ++i)
    state.push_back(valueOf(node.input(2 + i), scope));
  std::vector<std::vector<graph::TensorData>> scanned(scans);
  std::int64_t iteration = 0;
  while ((!tripCount || iteration < *tripCount) && (!condInput || condition)) {
    if (iteration >= kMaxLoopIterations)
      throw Stop{"it runs more than " + std::to_string(kMaxLoopIterations) + " iterations"};
    checkCancel(cancel);
    Scope inner = subgraphScope(node, scope);
    inner.own.insert_or_assign(
        body.inputs[0]->name(),
        graph::TensorData::fromValues(graph::DType::I64, {}, std::vector<std::int64_t>{iteration}));
    inner.own.insert_or_assign(
        body.inputs[1]->name(),
        graph::TensorData::fromValues(
            graph::DType::Bool, {},
            std::vector<std::uint8_t>{static_cast<std::uint8_t>(condition)}));
    for (std::size_t i = 0; i < carried; ++i)
      inner.own.insert_or_assign(body.inputs[2 + i]->name(), state[i]);
    std::vector<graph::TensorData> out = runGraph(body, inner, cancel);
    condition = out[0].elementAsInt(0) != 0;
    for (std::size_t i = 0; i < carried; ++i)
      state[i] = std::move(out[1 + i]);
    for (std::size_t k = 0; k < scans; ++k)
      scanned[k].push_back(std::move(out[1 + carried + k]));
    ++iteration;
  }
  std::vector<graph::TensorData> results = std::move(state);
  for (std::size_t k = 0; k < scans; ++k) {
    if (scanned[k].empty())
      throw Stop{"it ran no iterations, so its scan outputs have no element shape"};
    results.push_back(stack(scanned[k]));
  }
  return results;
}

std::vector<graph::TensorData> evaluateNodeIn(const graph::Node& node, const Scope& scope,
                                              const std::atomic<bool>* cancel) {
  if (node.domain().empty() && node.opType() == "If")
    return evaluateIf(node, scope, cancel);
  if (node.domain().empty() && node.opType() == "Loop")
    return evaluateLoop(node, scope, cancel);
  return evaluateOne(node, scope);
}

// A subgraph's outputs, computed in `scope` (which holds its inputs).
std::vector<graph::TensorData> runGraph(const graph::Graph& g, Scope& scope,
                                        const std::atomic<bool>* cancel) {
  for (const auto& node : g.nodes()) {
    checkCancel(cancel);
    std::vector<graph::TensorData> outputs = evaluateNodeIn(*node, scope, cancel);
    for (std::size_t o = 0; o < node->outputs().size() && o < outputs.size(); ++o)
      if (const graph::Value* out = node->output(o))
        scope.own.insert_or_assign(out->name(), std::move(outputs[o]));
  }
  std::vector<graph::TensorData> results;
  for (const graph::Value* out : g.outputs)
    results.push_back(valueOf(out, scope));
  return results;
}

} // namespace

Interpretation interpretGraph(const graph::Graph& graph,
                              const std::unordered_map<std::string, graph::TensorData>& inputs,
                              const std::atomic<bool>* cancel) {
  Interpretation result;
  Scope scope;
  for (const graph::Value* in : graph.inputs) {
    const auto it = inputs.find(in->name());
    if (it == inputs.end())
      throw Error(ErrorKind::Invalid, "input '" + in->name() + "' has no data");
    scope.own.emplace(in->name(), it->second);
  }
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    const graph::Node& node = *graph.nodes()[i];
    checkCancel(cancel);
    try {
      std::vector<graph::TensorData> outputs = evaluateNodeIn(node, scope, cancel);
      for (std::size_t o = 0; o < node.outputs().size() && o < outputs.size(); ++o)
        if (const graph::Value* out = node.output(o))
          scope.own.insert_or_assign(out->name(), std::move(outputs[o]));
    } catch (const Stop& stop) {
      result.complete = false;
      result.stoppedAt = i;
      result.stoppedNode = node.name;
      result.stoppedOp = node.opType();
      result.stopReason = stop.reason;
      break;
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Cancelled)
        throw;
      result.complete = false;
      result.stoppedAt = i;
      result.stoppedNode = node.name;
      result.stoppedOp = node.opType();
      result.stopReason = e.reason();
      break;
    }
  }
  result.values = std::move(scope.own);
  return result;
}

} // namespace lathe::reference
