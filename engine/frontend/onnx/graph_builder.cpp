#include "engine/frontend/onnx/graph_builder.h"

#include "engine/frontend/onnx/tensor_proto.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <onnx/onnx_pb.h>
#include <unordered_set>

namespace lathe::frontend {
namespace {

using graph::Dim;
using graph::TensorType;

// Largest single dimension accepted; beyond it a shape is certainly hostile.
constexpr std::int64_t kMaxDim = std::int64_t(1) << 34;

class Builder {
public:
  explicit Builder(std::unordered_map<std::string, graph::TensorData> weights)
      : weights_(std::move(weights)) {}

  std::unique_ptr<graph::Graph> build(onnx::GraphProto& proto, std::int64_t opset) {
    auto g = std::make_unique<graph::Graph>();
    g->opsetVersion = opset;
    fill(*g, proto, /*topLevel=*/true);
    bindEmptyInputs(*g);
    return g;
  }

private:
  // An input with no elements has nothing to read at run time: everything about it is in its
  // type. Its uses read an empty constant instead, so ops that need compile-time operands
  // (an empty `axes`, say) see one; the input itself stays, unused, in the signature.
  static void bindEmptyInputs(graph::Graph& g) {
    for (graph::Value* in : std::vector<graph::Value*>(g.inputs)) {
      if (!in->type.isStatic() || in->type.dtype == graph::DType::Undefined)
        continue;
      const std::vector<std::int64_t> dims = in->type.staticDims();
      if (std::find(dims.begin(), dims.end(), 0) == dims.end())
        continue;
      graph::Value* empty = g.addConstant(
          g.uniqueName(in->name() + "_empty"),
          graph::TensorData(in->type.dtype, dims, std::make_shared<const std::string>()));
      g.replaceAllUsesWith(in, empty);
    }
  }

  TensorType convertType(const onnx::TypeProto& type, const std::string& what) {
    TensorType t;
    if (!type.has_tensor_type())
      throw Error(ErrorKind::Unsupported, what + " is not a tensor");
    const auto& tt = type.tensor_type();
    if (tt.elem_type() != onnx::TensorProto::UNDEFINED) {
      auto dt = dtypeFromOnnx(tt.elem_type());
      if (!dt)
        throw Error(ErrorKind::Unsupported,
                    what + " has element type " + onnxTypeName(tt.elem_type()));
      t.dtype = *dt;
    }
    if (!tt.has_shape())
      return t;
    t.shape.emplace();
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0 || d.dim_value() > kMaxDim)
          throw Error(ErrorKind::Invalid,
                      what + " has an absurd dimension " + std::to_string(d.dim_value()));
        t.shape->push_back(Dim::known(d.dim_value()));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        t.shape->push_back(Dim::symbolic(d.dim_param()));
      } else {
        t.shape->push_back(Dim::unknown());
      }
    }
    return t;
  }

  void checkInputShape(const TensorType& t, const std::string& name) {
    if (!t.shape)
      return;
    std::int64_t n = 1;
    for (const Dim& d : *t.shape) {
      if (!d.isKnown())
        continue;
      if (d.value > 0 && n > kMaxTensorElements / d.value)
        throw Error(ErrorKind::Invalid, "input '" + name + "' has an absurd shape " + toString(t) +
                                            " (more than 2^34 elements)");
      n *= d.value;
    }
  }

  graph::Attribute convertAttribute(onnx::AttributeProto& a, const std::string& what) {
    using AP = onnx::AttributeProto;
    if (!a.ref_attr_name().empty())
      throw Error(ErrorKind::Unsupported, what + " refers to a function attribute");
    switch (a.type()) {
    case AP::FLOAT:
      return {a.f()};
    case AP::INT:
      return {static_cast<std::int64_t>(a.i())};
    case AP::STRING:
      return {a.s()};
    case AP::TENSOR:
      return {takeTensorData(*a.mutable_t(), what)};
    case AP::GRAPH:
      return {subgraph(*a.mutable_g())};
    case AP::FLOATS:
      return {std::vector<float>(a.floats().begin(), a.floats().end())};
    case AP::INTS:
      return {std::vector<std::int64_t>(a.ints().begin(), a.ints().end())};
    case AP::STRINGS:
      return {std::vector<std::string>(a.strings().begin(), a.strings().end())};
    case AP::TENSORS: {
      std::vector<graph::TensorData> ts;
      for (auto& t : *a.mutable_tensors())
        ts.push_back(takeTensorData(t, what));
      return {std::move(ts)};
    }
    case AP::GRAPHS: {
      std::vector<graph::GraphPtr> gs;
      for (auto& sub : *a.mutable_graphs())
        gs.push_back(subgraph(sub));
      return {std::move(gs)};
    }
    default:
      throw Error(ErrorKind::Unsupported,
                  what + " has attribute type " + AP::AttributeType_Name(a.type()));
    }
  }

  graph::GraphPtr subgraph(onnx::GraphProto& proto) {
    auto g = std::make_shared<graph::Graph>();
    g->opsetVersion = scopes_.back()->opsetVersion;
    fill(*g, proto, /*topLevel=*/false);
    return g;
  }

  // A value visible from the graph being built: its own, or one of an enclosing graph
  // (which becomes a capture).
  graph::Value* lookup(graph::Graph& g, const std::string& name) {
    if (graph::Value* v = g.findValue(name))
      return v;
    for (auto it = scopes_.rbegin() + 1; it != scopes_.rend(); ++it)
      if (graph::Value* outer = (*it)->findValue(name))
        return g.addCapture(name, outer->type);
    return nullptr;
  }

  void fill(graph::Graph& g, onnx::GraphProto& proto, bool topLevel) {
    scopes_.push_back(&g);
    g.name = proto.name();
    std::unordered_map<std::string, const onnx::TypeProto*> types;
    for (const auto& vi : proto.value_info())
      types[vi.name()] = &vi.type();
    for (const auto& vi : proto.output())
      types[vi.name()] = &vi.type();

    std::unordered_set<std::string> initializerNames;
    for (const auto& init : proto.initializer())
      initializerNames.insert(init.name());
    for (const auto& vi : proto.input()) {
      if (initializerNames.count(vi.name()))
        continue; // an initializer listed as input (IR < 4): a constant here
      if (g.findValue(vi.name()))
        throw Error(ErrorKind::Invalid, "input '" + vi.name() + "' is declared twice");
      TensorType t = convertType(vi.type(), "input '" + vi.name() + "'");
      if (topLevel)
        checkInputShape(t, vi.name());
      g.addInput(vi.name(), std::move(t));
    }
    for (auto& init : *proto.mutable_initializer()) {
      if (g.findValue(init.name()))
        throw Error(ErrorKind::Invalid, "initializer '" + init.name() + "' is declared twice");
      auto it = topLevel ? weights_.find(init.name()) : weights_.end();
      if (it != weights_.end()) {
        g.addConstant(init.name(), std::move(it->second));
        weights_.erase(it);
      } else {
        g.addConstant(init.name(), takeTensorData(init, "initializer '" + init.name() + "'"));
      }
    }

    for (int i = 0; i < proto.node_size(); ++i) {
      onnx::NodeProto& np = *proto.mutable_node(i);
      const std::string label =
          np.name().empty() ? np.op_type() + "_" + std::to_string(i) : np.name();
      try {
        addNode(g, np, label, types);
      } catch (const Error& e) {
        throw e.within({{}, label, np.op_type()});
      }
    }
    for (const auto& vi : proto.output()) {
      graph::Value* v = lookup(g, vi.name());
      if (!v)
        throw Error(ErrorKind::Invalid, "graph output '" + vi.name() + "' is never produced");
      g.outputs.push_back(v);
    }
    scopes_.pop_back();
  }

  void addNode(graph::Graph& g, onnx::NodeProto& np, const std::string& label,
               const std::unordered_map<std::string, const onnx::TypeProto*>& types) {
    std::vector<graph::Value*> inputs;
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      graph::Value* v = lookup(g, in);
      if (!v)
        throw Error(ErrorKind::Invalid,
                    "input '" + in +
                        "' is not a graph input, an initializer or the output of an "
                        "earlier node");
      inputs.push_back(v);
    }
    std::vector<std::string> outputs(np.output().begin(), np.output().end());
    for (const std::string& out : outputs)
      if (!out.empty() && g.findValue(out))
        throw Error(ErrorKind::Invalid, "output '" + out + "' is already defined elsewhere");
    std::map<std::string, graph::Attribute> attributes;
    for (auto& a : *np.mutable_attribute())
      attributes.emplace(a.name(), convertAttribute(a, "attribute '" + a.name() + "'"));

    // Values a subgraph reads from enclosing graphs become extra inputs of this node, named
    // by its "captures" attribute: graph passes then see them as uses (DCE keeps them alive,
    // CSE and folding may replace them) and the runtime passes them in by position.
    std::vector<std::string> captured;
    for (const auto& [key, attr] : attributes)
      for (const graph::Graph* sub : attr.graphs())
        for (const auto& v : sub->values())
          if (v->kind() == graph::ValueKind::Capture &&
              std::find(captured.begin(), captured.end(), v->name()) == captured.end())
            captured.push_back(v->name());
    for (const std::string& name : captured)
      inputs.push_back(lookup(g, name));
    if (!captured.empty())
      attributes.emplace(graph::kCapturesAttribute, graph::Attribute{captured});

    graph::Node* node = g.addNode(np.op_type(), std::move(inputs), outputs,
                                  np.domain() == "ai.onnx" ? "" : np.domain());
    node->name = label;
    node->attributes = std::move(attributes);
    for (graph::Value* out : node->outputs()) {
      if (!out)
        continue;
      auto it = types.find(out->name());
      if (it != types.end() && it->second->has_tensor_type())
        out->type = convertType(*it->second, "output '" + out->name() + "'");
    }
  }

  std::unordered_map<std::string, graph::TensorData> weights_;
  std::vector<graph::Graph*> scopes_;
};

std::int64_t defaultDomainOpset(const onnx::ModelProto& model) {
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx")
      return imp.version();
  return 0;
}

} // namespace

std::unique_ptr<graph::Graph>
buildGraph(onnx::ModelProto& model, std::unordered_map<std::string, graph::TensorData> weights) {
  Builder builder(std::move(weights));
  return builder.build(*model.mutable_graph(), defaultDomainOpset(model));
}

} // namespace lathe::frontend
