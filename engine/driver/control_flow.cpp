#include "engine/driver/control_flow.h"

#include "engine/driver/compile_model.h"
#include "engine/driver/fold_constant_subgraphs.h"
#include "engine/graph_passes/shape_rules.h"
#include "engine/pipeline/pass_manager.h"
#include "engine/support/diagnostics.h"

#include <cstring>
#include <limits>
#include <map>

namespace lathe::driver {
namespace {

using graph::Node;
using graph::Value;
using runtime::ElementType;
using runtime::Tensor;

// What a host call knows of one of its arguments.
struct ArgType {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<std::int64_t> shape; // -1 where only known at run time
  bool dynamic = false;
};

ArgType argTypeOf(const Value& v) {
  ArgType a;
  a.name = v.name();
  a.type = elementTypeOf(v.type.dtype);
  if (!v.type.shape)
    throw Error(ErrorKind::Unsupported, "value '" + v.name() + "' has an unknown rank");
  for (const graph::Dim& d : *v.type.shape) {
    a.shape.push_back(d.isKnown() ? d.value : -1);
    a.dynamic = a.dynamic || !d.isKnown();
  }
  return a;
}

std::string typeText(ElementType type, const std::vector<std::int64_t>& shape) {
  return std::string(runtime::elementTypeName(type)) + runtime::formatShape(shape);
}

Tensor viewOf(const ArgType& a, void* data) {
  return Tensor::view(a.type, a.shape, data);
}

// Stores `value` into an output argument: copied into a static slot (after checking that it
// has the planned type), or handed over for a slot whose shape is known only now.
void writeOutput(Tensor value, const ArgType& out, void* arg, const std::string& what) {
  if (out.dynamic) {
    if (value.elementType() != out.type || value.rank() != static_cast<int>(out.shape.size()))
      throw Error(ErrorKind::Invalid,
                  what + " gave " + typeText(value.elementType(), value.shape()) + " for '" +
                      out.name + "', which must be " + typeText(out.type, out.shape));
    *static_cast<Tensor*>(arg) = value.ownsStorage() ? std::move(value) : value.clone();
    return;
  }
  if (value.elementType() != out.type || value.shape() != out.shape)
    throw Error(ErrorKind::Invalid, what + " gave " + typeText(value.elementType(), value.shape()) +
                                        " for '" + out.name + "', but it was compiled for " +
                                        typeText(out.type, out.shape));
  if (value.byteSize() > 0)
    std::memcpy(arg, value.rawData(), value.byteSize());
}

// Copies between a tensor `full` and its slice at `index` along `axis` (the slice has
// full's shape without that axis).
void copySlice(std::byte* full, const std::vector<std::int64_t>& fullShape, std::size_t axis,
               std::int64_t index, std::byte* slice, std::size_t elementBytes, bool intoFull) {
  std::int64_t outer = 1, inner = static_cast<std::int64_t>(elementBytes);
  for (std::size_t d = 0; d < axis; ++d)
    outer *= fullShape[d];
  for (std::size_t d = axis + 1; d < fullShape.size(); ++d)
    inner *= fullShape[d];
  const std::int64_t length = fullShape[axis];
  for (std::int64_t o = 0; o < outer; ++o) {
    std::byte* f = full + (o * length + index) * inner;
    std::byte* s = slice + o * inner;
    if (intoFull)
      std::memcpy(f, s, static_cast<std::size_t>(inner));
    else
      std::memcpy(s, f, static_cast<std::size_t>(inner));
  }
}

std::vector<std::int64_t> withoutAxis(std::vector<std::int64_t> shape, std::size_t axis) {
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  return shape;
}

// The axis normalized against `rank`, as the shape rules do it (Invalid, naming the node).
std::size_t normalizedAxis(const Node& node, std::int64_t axis, std::size_t rank) {
  return static_cast<std::size_t>(
      passes::normalizeAxis(node, axis, static_cast<std::int64_t>(rank)));
}

// The node's inputs split into its ONNX inputs and the captured values after them, with the
// position of each present one among the call's arguments (-1 when absent).
struct Operands {
  std::vector<const Value*> formal, captured;
  std::vector<int> formalArg, capturedArg;
  std::vector<const Value*> outputs;
  std::vector<int> outputArg;
  std::vector<ArgType> capturedTypes;

  explicit Operands(const Node& node) {
    const std::size_t k = node.capturedInputCount();
    const std::size_t f = node.inputs.size() - k;
    int arg = 0;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const Value* v = node.inputs[i];
      (i < f ? formal : captured).push_back(v);
      (i < f ? formalArg : capturedArg).push_back(v ? arg++ : -1);
    }
    for (const Value* v : captured) {
      if (!v)
        throw Error(ErrorKind::Invalid, "a captured value is missing",
                    {{}, node.name, node.opType()});
      capturedTypes.push_back(argTypeOf(*v));
    }
    for (const Value* v : node.outputs()) {
      outputs.push_back(v);
      outputArg.push_back(v ? arg++ : -1);
    }
  }

  void addCaptureViews(std::vector<Tensor>& inputs, void** args) const {
    for (std::size_t k = 0; k < captured.size(); ++k)
      inputs.push_back(viewOf(capturedTypes[k], args[capturedArg[k]]));
  }
};

const graph::Graph& subgraphAttribute(const Node& node, const std::string& key) {
  const graph::Attribute* a = node.findAttribute(key);
  if (!a || !a->is<graph::GraphPtr>() || !a->as<graph::GraphPtr>())
    throw Error(ErrorKind::Invalid, "attribute '" + key + "' (a graph) is missing",
                {{}, node.name, node.opType()});
  return *a->as<graph::GraphPtr>();
}

// Runs the default pipeline on a prepared subgraph and compiles it.
struct CompiledBody {
  std::unique_ptr<graph::Graph> graph; // the lowered calls point into it
  std::unique_ptr<CompiledModel> model;
};

CompiledBody compilePrepared(std::unique_ptr<graph::Graph> g, const target::Target& target,
                             const std::shared_ptr<runtime::ThreadPool>& pool) {
  pipeline::PassManager pm;
  pm.addPasses(pipeline::defaultPipeline());
  pm.run(*g);
  foldConstantSubgraphs(*g);
  for (const Value* out : g->outputs)
    if (!out->type.isStatic() && !(out->producer() && out->producer()->opType() == "Loop"))
      throw Error(ErrorKind::Unsupported, "output '" + out->name() + "' has shape " +
                                              graph::toString(out->type) +
                                              "; code generation needs static shapes");
  CompileSettings settings;
  settings.target = target;
  settings.pool = pool;
  settings.foldConstants = false; // done above, before the shapes are checked
  CompiledBody body;
  body.model = compileModel(*g, settings).compiled;
  body.graph = std::move(g);
  return body;
}

bool needsStaticShapes(const Error& e) {
  return e.kind() == ErrorKind::Unsupported &&
         e.reason().find("needs static shapes") != std::string::npos;
}

// A subgraph compiled as a model of its own: its inputs are the ONNX inputs of the body
// followed by the node's captured values. When its shapes depend on the values of small
// integer inputs (a Slice bounded by the iteration number, say), it is compiled at run time
// for each set of those values met, with them as constants.
class Body {
public:
  Body() = default;
  Body(const Node& node, const std::string& key, const std::vector<graph::TensorType>& formalTypes,
       const Operands& operands, const target::Target& target,
       const std::shared_ptr<runtime::ThreadPool>& pool)
      : what_("subgraph '" + key + "'"), where_{{}, node.name, node.opType()}, target_(target),
        pool_(pool) {
    prepared_ = subgraphAttribute(node, key).clone();
    graph::Graph& g = *prepared_;
    if (g.inputs.size() != formalTypes.size())
      throw Error(ErrorKind::Invalid,
                  what_ + " takes " + std::to_string(g.inputs.size()) + " inputs; " +
                      node.opType() + " passes it " + std::to_string(formalTypes.size()),
                  where_);
    for (std::size_t i = 0; i < formalTypes.size(); ++i) {
      graph::TensorType& declared = g.inputs[i]->type;
      if (declared.dtype != graph::DType::Undefined && declared.dtype != formalTypes[i].dtype)
        throw Error(ErrorKind::Invalid,
                    what_ + " input '" + g.inputs[i]->name() + "' is " + graph::toString(declared) +
                        " but receives " + graph::toString(formalTypes[i]),
                    where_);
      declared = formalTypes[i];
      if (isSmallInteger(formalTypes[i]))
        keyInputs_.push_back(i);
    }
    const graph::Attribute* names = node.findAttribute(graph::kCapturesAttribute);
    for (std::size_t k = 0; k < operands.captured.size(); ++k) {
      const std::string& name = names->as<std::vector<std::string>>()[k];
      graph::Value* v = g.findValue(name);
      if (v && v->kind() == graph::ValueKind::Capture) {
        v->type = operands.captured[k]->type;
        g.captureToInput(v);
      } else { // only the other branch reads it
        g.addInput(g.uniqueName(name), operands.captured[k]->type);
      }
    }
    try {
      fixed_ = compilePrepared(g.clone(), target_, pool_);
    } catch (const Error& e) {
      if (!needsStaticShapes(e) || keyInputs_.empty())
        throw located(e);
    }
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    if (fixed_.model)
      return fixed_.model->executor->run(inputs);
    std::string key;
    for (std::size_t i : keyInputs_)
      key.append(reinterpret_cast<const char*>(inputs[i].rawData()), inputs[i].byteSize());
    auto it = specialized_.find(key);
    if (it == specialized_.end()) {
      if (specialized_.size() >= kMaxSpecializations)
        throw Error(ErrorKind::Unsupported,
                    "in " + what_ + ": shapes depend on input values, and more than " +
                        std::to_string(kMaxSpecializations) + " different values were met",
                    where_);
      it = specialized_.emplace(key, specialize(inputs)).first;
    }
    return it->second.model->executor->run(inputs);
  }

  std::size_t outputCount() const { return prepared_->outputs.size(); }
  // Element type and shape of output i when it is static (-1 dims otherwise).
  std::pair<ElementType, std::vector<std::int64_t>> outputType(std::size_t i) const {
    if (fixed_.model) {
      const runtime::ExecutionPlan& plan = fixed_.model->executor->plan();
      const runtime::PlanSlot& slot = plan.slots[plan.outputs[i]];
      return {slot.type, slot.shape};
    }
    const graph::TensorType& t = prepared_->outputs[i]->type;
    std::vector<std::int64_t> shape;
    if (t.shape)
      for (const graph::Dim& d : *t.shape)
        shape.push_back(d.isKnown() ? d.value : -1);
    return {elementTypeOf(t.dtype), shape};
  }

private:
  static constexpr std::size_t kMaxSpecializations = 1024;

  static bool isSmallInteger(const graph::TensorType& t) {
    const bool integral = t.dtype == graph::DType::I64 || t.dtype == graph::DType::I32 ||
                          t.dtype == graph::DType::Bool;
    if (!integral || !t.isStatic())
      return false;
    std::int64_t n = 1;
    for (std::int64_t d : t.staticDims())
      n *= d;
    return n <= 16;
  }

  Error located(const Error& e) const {
    return Error(e.kind(), "in " + what_ + ": " + formatError(e.kind(), e.reason(), e.where()),
                 where_);
  }

  CompiledBody specialize(const std::vector<Tensor>& inputs) const {
    std::unique_ptr<graph::Graph> g = prepared_->clone();
    for (std::size_t i : keyInputs_) {
      graph::Value* in = g->inputs[i];
      const Tensor& t = inputs[i];
      auto bytes =
          std::make_shared<std::string>(static_cast<const char*>(t.rawData()), t.byteSize());
      graph::Value* c = g->addConstant(g->uniqueName(in->name() + "_value"),
                                       graph::TensorData(in->type.dtype, t.shape(), bytes));
      g->replaceAllUsesWith(in, c);
    }
    try {
      return compilePrepared(std::move(g), target_, pool_);
    } catch (const Error& e) {
      throw located(e);
    }
  }

  std::string what_;
  ErrorLocation where_;
  target::Target target_;
  std::shared_ptr<runtime::ThreadPool> pool_;
  std::unique_ptr<graph::Graph> prepared_; // typed, captures bound, before the pipeline
  std::vector<std::size_t> keyInputs_;     // small integer inputs shapes may depend on
  CompiledBody fixed_;                     // when shapes do not depend on values
  std::map<std::string, CompiledBody> specialized_;
};

// --- If ------------------------------------------------------------------------------------

class IfCall final : public runtime::HostCall {
public:
  IfCall(const Node& node, const target::Target& target,
         const std::shared_ptr<runtime::ThreadPool>& pool)
      : operands_(node) {
    thenBody_ = Body(node, "then_branch", {}, operands_, target, pool);
    elseBody_ = Body(node, "else_branch", {}, operands_, target, pool);
    for (const Value* v : operands_.outputs)
      outputs_.push_back(v ? argTypeOf(*v) : ArgType{});
    if (thenBody_.outputCount() != outputs_.size() || elseBody_.outputCount() != outputs_.size())
      throw Error(ErrorKind::Invalid, "the branches must give as many outputs as If has",
                  {{}, node.name, node.opType()});
    name_ = node.describe();
  }

  void run(void** args) override {
    const bool condition = *static_cast<const std::uint8_t*>(args[operands_.formalArg[0]]) != 0;
    std::vector<Tensor> inputs;
    operands_.addCaptureViews(inputs, args);
    std::vector<Tensor> results = (condition ? thenBody_ : elseBody_).run(inputs);
    for (std::size_t j = 0; j < results.size(); ++j)
      if (operands_.outputArg[j] >= 0)
        writeOutput(std::move(results[j]), outputs_[j], args[operands_.outputArg[j]],
                    name_ + (condition ? " then_branch" : " else_branch"));
  }

private:
  Operands operands_;
  Body thenBody_, elseBody_;
  std::vector<ArgType> outputs_;
  std::string name_;
};

// --- Loop ----------------------------------------------------------------------------------

class LoopCall final : public runtime::HostCall {
public:
  LoopCall(const Node& node, const target::Target& target,
           const std::shared_ptr<runtime::ThreadPool>& pool)
      : operands_(node), name_(node.describe()) {
    const std::size_t carried = operands_.formal.size() - 2;
    const graph::Graph& sub = subgraphAttribute(node, "body");
    std::vector<graph::TensorType> formal;
    // Iteration number and condition: scalars unless the body declares a static shape.
    auto declaredOr = [&](std::size_t i, graph::DType dtype) {
      if (i < sub.inputs.size() && sub.inputs[i]->type.isStatic())
        return sub.inputs[i]->type;
      return graph::TensorType::of(dtype, {});
    };
    formal.push_back(declaredOr(0, graph::DType::I64));
    formal.push_back(declaredOr(1, graph::DType::Bool));
    for (std::size_t n = 0; n < carried; ++n) {
      const Value* v = operands_.formal[2 + n];
      if (!v)
        throw Error(ErrorKind::Invalid, "loop-carried input " + std::to_string(n) + " is missing",
                    {{}, node.name, node.opType()});
      formal.push_back(v->type);
      carriedTypes_.push_back(argTypeOf(*v));
    }
    iterType_ = formal[0];
    condType_ = formal[1];
    body_ = Body(node, "body", formal, operands_, target, pool);
    if (body_.outputCount() != 1 + operands_.outputs.size())
      throw Error(ErrorKind::Invalid,
                  "the body gives " + std::to_string(body_.outputCount()) +
                      " outputs; Loop needs 1 + " + std::to_string(operands_.outputs.size()),
                  {{}, node.name, node.opType()});
    for (const Value* v : operands_.outputs)
      outputs_.push_back(v ? argTypeOf(*v) : ArgType{});
  }

  void run(void** args) override {
    const int tripArg = operands_.formalArg[0], condArg = operands_.formalArg[1];
    const std::int64_t trips = tripArg >= 0 ? *static_cast<const std::int64_t*>(args[tripArg])
                                            : std::numeric_limits<std::int64_t>::max();
    bool condition = condArg < 0 || *static_cast<const std::uint8_t*>(args[condArg]) != 0;
    const std::size_t carried = carriedTypes_.size();
    std::vector<Tensor> state;
    for (std::size_t n = 0; n < carried; ++n)
      state.push_back(viewOf(carriedTypes_[n], args[operands_.formalArg[2 + n]]).clone());
    const std::size_t scans = outputs_.size() - carried;
    std::vector<std::vector<Tensor>> scanned(scans);
    Tensor iteration = Tensor::allocate(ElementType::I64, iterType_.staticDims());
    Tensor conditionIn = Tensor::allocate(ElementType::Bool, condType_.staticDims());
    std::int64_t i = 0;
    for (; i < trips && condition; ++i) {
      static_cast<std::int64_t*>(iteration.rawData())[0] = i;
      static_cast<std::uint8_t*>(conditionIn.rawData())[0] = condition ? 1 : 0;
      std::vector<Tensor> inputs;
      inputs.push_back(iteration.view());
      inputs.push_back(conditionIn.view());
      for (Tensor& s : state)
        inputs.push_back(s.view());
      operands_.addCaptureViews(inputs, args);
      std::vector<Tensor> results = body_.run(inputs);
      condition = results[0].numElements() > 0 &&
                  *static_cast<const std::uint8_t*>(results[0].rawData()) != 0;
      for (std::size_t n = 0; n < carried; ++n) {
        if (results[1 + n].shape() != state[n].shape())
          throw Error(ErrorKind::Unsupported, name_ + ": loop-carried '" + carriedTypes_[n].name +
                                                  "' changes shape from " +
                                                  runtime::formatShape(state[n].shape()) + " to " +
                                                  runtime::formatShape(results[1 + n].shape()));
        state[n] = std::move(results[1 + n]);
      }
      for (std::size_t s = 0; s < scans; ++s)
        scanned[s].push_back(std::move(results[1 + carried + s]));
    }
    for (std::size_t n = 0; n < carried; ++n)
      if (operands_.outputArg[n] >= 0)
        writeOutput(std::move(state[n]), outputs_[n], args[operands_.outputArg[n]], name_);
    for (std::size_t s = 0; s < scans; ++s) {
      const std::size_t o = carried + s;
      if (operands_.outputArg[o] >= 0)
        writeOutput(stack(scanned[s], body_.outputType(1 + o)), outputs_[o],
                    args[operands_.outputArg[o]], name_);
    }
  }

private:
  // The per-iteration values of a scan output, stacked along a new first axis.
  static Tensor stack(const std::vector<Tensor>& values,
                      const std::pair<ElementType, std::vector<std::int64_t>>& perIteration) {
    std::vector<std::int64_t> shape = values.empty() ? perIteration.second : values.front().shape();
    const ElementType type = values.empty() ? perIteration.first : values.front().elementType();
    for (std::int64_t& d : shape)
      d = std::max<std::int64_t>(d, 0); // no iterations: an unknown dim is empty
    shape.insert(shape.begin(), static_cast<std::int64_t>(values.size()));
    Tensor out = Tensor::allocate(type, shape);
    std::byte* at = out.bytes().data();
    for (const Tensor& v : values) {
      if (v.shape() != values.front().shape())
        throw Error(ErrorKind::Unsupported, "a Loop scan output changes shape between iterations");
      if (v.byteSize() > 0)
        std::memcpy(at, v.rawData(), v.byteSize());
      at += v.byteSize();
    }
    return out;
  }

  Operands operands_;
  std::string name_;
  std::vector<ArgType> carriedTypes_;
  graph::TensorType iterType_, condType_;
  Body body_;
  std::vector<ArgType> outputs_;
};

// --- Scan ----------------------------------------------------------------------------------

class ScanCall final : public runtime::HostCall {
public:
  ScanCall(const Node& node, const target::Target& target,
           const std::shared_ptr<runtime::ThreadPool>& pool)
      : operands_(node), name_(node.describe()) {
    const std::int64_t m = node.attrInt("num_scan_inputs", -1);
    if (m < 1 || static_cast<std::size_t>(m) > operands_.formal.size())
      throw Error(ErrorKind::Invalid, "num_scan_inputs must be between 1 and the input count",
                  {{}, node.name, node.opType()});
    const std::size_t scanInputs = static_cast<std::size_t>(m);
    stateCount_ = operands_.formal.size() - scanInputs;
    const std::vector<std::int64_t> inAxes =
        node.attrInts("scan_input_axes", std::vector<std::int64_t>(scanInputs, 0));
    inDirections_ =
        node.attrInts("scan_input_directions", std::vector<std::int64_t>(scanInputs, 0));
    const std::size_t scanOutputs = operands_.outputs.size() - stateCount_;
    const std::vector<std::int64_t> outAxes =
        node.attrInts("scan_output_axes", std::vector<std::int64_t>(scanOutputs, 0));
    outDirections_ =
        node.attrInts("scan_output_directions", std::vector<std::int64_t>(scanOutputs, 0));
    if (inAxes.size() != scanInputs || inDirections_.size() != scanInputs ||
        outAxes.size() != scanOutputs || outDirections_.size() != scanOutputs)
      throw Error(ErrorKind::Invalid, "scan axes and directions must have one entry per scan value",
                  {{}, node.name, node.opType()});

    std::vector<graph::TensorType> formal;
    for (std::size_t i = 0; i < operands_.formal.size(); ++i) {
      const Value* v = operands_.formal[i];
      if (!v)
        throw Error(ErrorKind::Invalid, "input " + std::to_string(i) + " is missing",
                    {{}, node.name, node.opType()});
      ArgType a = argTypeOf(*v);
      if (i < stateCount_) {
        formal.push_back(v->type);
      } else {
        const std::size_t axis = normalizedAxis(node, inAxes[i - stateCount_], a.shape.size());
        inAxes_.push_back(axis);
        const std::int64_t length = a.shape[axis];
        if (length_ >= 0 && length != length_)
          throw Error(ErrorKind::Invalid, "scan inputs differ in sequence length",
                      {{}, node.name, node.opType()});
        length_ = length;
        formal.push_back(graph::TensorType::of(v->type.dtype, withoutAxis(a.shape, axis)));
      }
      inputTypes_.push_back(std::move(a));
    }
    body_ = Body(node, "body", formal, operands_, target, pool);
    if (body_.outputCount() != operands_.outputs.size())
      throw Error(ErrorKind::Invalid,
                  "the body gives " + std::to_string(body_.outputCount()) + " outputs; Scan has " +
                      std::to_string(operands_.outputs.size()),
                  {{}, node.name, node.opType()});
    for (std::size_t j = 0; j < operands_.outputs.size(); ++j) {
      const Value* v = operands_.outputs[j];
      outputs_.push_back(v ? argTypeOf(*v) : ArgType{});
      if (j >= stateCount_)
        outAxes_.push_back(
            normalizedAxis(node, outAxes[j - stateCount_], body_.outputType(j).second.size() + 1));
    }
  }

  void run(void** args) override {
    std::vector<Tensor> state;
    for (std::size_t n = 0; n < stateCount_; ++n)
      state.push_back(viewOf(inputTypes_[n], args[operands_.formalArg[n]]).clone());
    std::vector<Tensor> slices;
    for (std::size_t j = stateCount_; j < inputTypes_.size(); ++j)
      slices.push_back(Tensor::allocate(
          inputTypes_[j].type, withoutAxis(inputTypes_[j].shape, inAxes_[j - stateCount_])));
    const std::size_t scanOutputs = outputs_.size() - stateCount_;
    std::vector<Tensor> stacked(scanOutputs);
    for (std::int64_t t = 0; t < length_; ++t) {
      for (std::size_t j = 0; j < slices.size(); ++j) {
        const ArgType& in = inputTypes_[stateCount_ + j];
        const std::int64_t at = inDirections_[j] ? length_ - 1 - t : t;
        copySlice(static_cast<std::byte*>(args[operands_.formalArg[stateCount_ + j]]), in.shape,
                  inAxes_[j], at, slices[j].bytes().data(), runtime::elementSize(in.type), false);
      }
      std::vector<Tensor> inputs;
      for (Tensor& s : state)
        inputs.push_back(s.view());
      for (Tensor& s : slices)
        inputs.push_back(s.view());
      operands_.addCaptureViews(inputs, args);
      std::vector<Tensor> results = body_.run(inputs);
      for (std::size_t n = 0; n < stateCount_; ++n)
        state[n] = std::move(results[n]);
      for (std::size_t k = 0; k < scanOutputs; ++k) {
        Tensor& value = results[stateCount_ + k];
        if (stacked[k].numElements() == 0 && t == 0) {
          std::vector<std::int64_t> shape = value.shape();
          shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(outAxes_[k]), length_);
          stacked[k] = Tensor::allocate(value.elementType(), shape);
        }
        const std::int64_t at = outDirections_[k] ? length_ - 1 - t : t;
        copySlice(stacked[k].bytes().data(), stacked[k].shape(), outAxes_[k], at,
                  value.bytes().data(), runtime::elementSize(value.elementType()), true);
      }
    }
    for (std::size_t j = 0; j < outputs_.size(); ++j) {
      if (operands_.outputArg[j] < 0)
        continue;
      Tensor value = j < stateCount_ ? std::move(state[j]) : std::move(stacked[j - stateCount_]);
      writeOutput(std::move(value), outputs_[j], args[operands_.outputArg[j]], name_);
    }
  }

private:
  Operands operands_;
  std::string name_;
  std::size_t stateCount_ = 0;
  std::int64_t length_ = -1;
  std::vector<ArgType> inputTypes_; // state, then scan inputs
  std::vector<std::size_t> inAxes_, outAxes_;
  std::vector<std::int64_t> inDirections_, outDirections_;
  Body body_;
  std::vector<ArgType> outputs_;
};

} // namespace

std::shared_ptr<runtime::HostCall>
makeControlFlowCall(const graph::Node& node, const target::Target& target,
                    const std::shared_ptr<runtime::ThreadPool>& pool) {
  if (node.opType() == "If")
    return std::make_shared<IfCall>(node, target, pool);
  if (node.opType() == "Loop")
    return std::make_shared<LoopCall>(node, target, pool);
  if (node.opType() == "Scan")
    return std::make_shared<ScanCall>(node, target, pool);
  throw Error(ErrorKind::Internal, "not a control-flow op: " + node.describe());
}

} // namespace lathe::driver
