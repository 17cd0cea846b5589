#include "engine/frontend/onnx/version_upgrade.h"

#include "engine/frontend/onnx/version_adapters.h"

#include <onnx/defs/schema.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace lathe::frontend {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::OpSchema;
using onnx::TensorProto;

namespace {

const OpSchema* schemaAt(const std::string& op, std::int64_t opset) {
  return onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), "");
}

std::string versioned(const std::string& op, std::int64_t version) {
  return op + "-" + std::to_string(version);
}

const char* optionName(OpSchema::FormalParameterOption o) {
  switch (o) {
  case OpSchema::Single:
    return "required";
  case OpSchema::Optional:
    return "optional";
  case OpSchema::Variadic:
    return "variadic";
  }
  return "?";
}

// The formal inputs or outputs of two versions: same names in the same places, and
// everything the new one adds optional.
void checkParams(const UpgradeContext& c, const OpSchema& from, const OpSchema& to,
                 const std::vector<OpSchema::FormalParameter>& fromP,
                 const std::vector<OpSchema::FormalParameter>& toP, int used, const char* what) {
  const std::string fromName = versioned(c.node.op_type(), from.since_version());
  const std::string toName = versioned(c.node.op_type(), to.since_version());
  const std::size_t n = std::max(fromP.size(), toP.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= toP.size()) {
      if (static_cast<int>(i) < used)
        c.refuse(toName + " has no " + what + " " + std::to_string(i) + " ('" + fromP[i].GetName() +
                 "' of " + fromName + ")");
      continue;
    }
    if (i >= fromP.size()) {
      if (toP[i].GetOption() == OpSchema::Single)
        c.refuse(toName + " needs " + what + " '" + toP[i].GetName() + "' that " + fromName +
                 " does not have");
      continue;
    }
    if (fromP[i].GetName() != toP[i].GetName())
      c.refuse(std::string(what) + " " + std::to_string(i) + " is '" + fromP[i].GetName() +
               "' in " + fromName + " but '" + toP[i].GetName() + "' in " + toName);
    const auto fo = fromP[i].GetOption(), to_ = toP[i].GetOption();
    if ((fo == OpSchema::Variadic) != (to_ == OpSchema::Variadic) ||
        (fo == OpSchema::Optional && to_ == OpSchema::Single))
      c.refuse(std::string(what) + " '" + toP[i].GetName() + "' is " + optionName(fo) + " in " +
               fromName + " but " + optionName(to_) + " in " + toName);
  }
}

int usedCount(const google::protobuf::RepeatedPtrField<std::string>& names) {
  int n = 0;
  for (int i = 0; i < names.size(); ++i)
    if (!names[i].empty())
      n = i + 1;
  return n;
}

// A step whose new schema only adds optional attributes, inputs and outputs. Attributes
// whose default changed are written out with the old default so the node keeps its meaning.
void additiveStep(UpgradeContext& c, const OpSchema& from, const OpSchema& to) {
  NodeProto& n = c.node;
  const std::string fromName = versioned(n.op_type(), from.since_version());
  const std::string toName = versioned(n.op_type(), to.since_version());
  for (const AttributeProto& a : n.attribute()) {
    auto it = to.attributes().find(a.name());
    if (it == to.attributes().end())
      c.refuse("attribute '" + a.name() + "' of " + fromName + " does not exist in " + toName);
    if (it->second.type != a.type())
      c.refuse("attribute '" + a.name() + "' has another type in " + toName);
  }
  for (const auto& [name, attr] : from.attributes()) {
    if (hasAttribute(n, name))
      continue;
    auto it = to.attributes().find(name);
    if (it == to.attributes().end()) {
      if (attr.default_value.type() != AttributeProto::UNDEFINED)
        c.refuse("attribute '" + name + "' (absent here, so its default applies) was removed in " +
                 toName);
      continue;
    }
    if (attr.default_value.type() != AttributeProto::UNDEFINED &&
        !sameAttributeValue(attr.default_value, it->second.default_value)) {
      AttributeProto* kept = n.add_attribute();
      *kept = attr.default_value;
      kept->set_name(name);
    }
  }
  for (const auto& [name, attr] : to.attributes())
    if (attr.required && !from.attributes().count(name))
      c.refuse(toName + " requires attribute '" + name + "' that " + fromName + " does not have");
  checkParams(c, from, to, from.inputs(), to.inputs(), usedCount(n.input()), "input");
  checkParams(c, from, to, from.outputs(), to.outputs(), usedCount(n.output()), "output");
}

class Upgrader {
public:
  Upgrader(onnx::ModelProto& model, std::int64_t source, std::int64_t target, bool tolerate)
      : model_(model), source_(source), target_(target), tolerateUnknown_(tolerate) {}

  void run() {
    collectModelNames(model_.graph(), names_, used_);
    upgradeGraph(*model_.mutable_graph(), nullptr);
    setDefaultOpset(model_, target_);
  }

private:
  void upgradeGraph(onnx::GraphProto& g, const ValueScope* parent) {
    ValueScope scope;
    scope.parent = parent;
    for (const auto& vi : g.input())
      scope.note(vi);
    for (const auto& vi : g.value_info())
      scope.note(vi);
    for (const auto& vi : g.output())
      scope.note(vi);
    for (const auto& t : g.initializer())
      scope.note(t.name(), t);
    std::vector<NodeProto> nodes;
    nodes.reserve(static_cast<std::size_t>(g.node_size()));
    for (auto& node : *g.mutable_node()) {
      for (auto& a : *node.mutable_attribute()) {
        if (a.has_g())
          upgradeGraph(*a.mutable_g(), &scope);
        for (auto& sub : *a.mutable_graphs())
          upgradeGraph(sub, &scope);
      }
      if (node.op_type() == "Constant" && node.output_size() == 1)
        for (const auto& a : node.attribute())
          if (a.name() == "value" && a.has_t())
            scope.note(node.output(0), a.t());
      upgradeNode(std::move(node), scope, nodes);
    }
    g.clear_node();
    for (auto& n : nodes)
      *g.add_node() = std::move(n);
  }

  void upgradeNode(NodeProto node, const ValueScope& scope, std::vector<NodeProto>& out) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      out.push_back(std::move(node));
      return;
    }
    UpgradeContext c{node, scope, names_, used_, {}, {}};
    const OpSchema* schema = schemaAt(node.op_type(), source_);
    if (!schema && tolerateUnknown_) {
      out.push_back(std::move(node));
      return;
    }
    if (!schema)
      c.refuse("op '" + node.op_type() + "' does not exist at opset " + std::to_string(source_));
    std::int64_t version = schema->since_version();
    if (keepsItsOwnForm(c, version)) {
      appendWithNeighbours(c, std::move(node), out);
      return;
    }
    if (node.op_type() == "Scatter") { // Scatter-9 is ScatterElements-11 under its old name
      node.set_op_type("ScatterElements");
      version = 11;
    }
    while (true) {
      std::int64_t next = -1;
      for (std::int64_t o = version + 1; o <= target_ && next < 0; ++o)
        if (const OpSchema* s = schemaAt(node.op_type(), o); s && s->since_version() > version)
          next = s->since_version();
      if (next < 0)
        break;
      const OpSchema* from = schemaAt(node.op_type(), version);
      const OpSchema* to = schemaAt(node.op_type(), next);
      if (const StepAdapter adapter = findStepAdapter(node.op_type(), next))
        adapter(c);
      else if (const char* why = semanticChange(node.op_type(), next))
        c.refuse(versioned(node.op_type(), version) + " cannot be converted to " +
                 versioned(node.op_type(), next) + ": " + why);
      else
        additiveStep(c, *from, *to);
      version = next;
    }
    if (const OpSchema* s = schemaAt(node.op_type(), target_); !s || s->Deprecated())
      c.refuse(versioned(node.op_type(), version) + " has no form at opset " +
               std::to_string(target_));
    appendWithNeighbours(c, std::move(node), out);
  }

  onnx::ModelProto& model_;
  std::int64_t source_;
  std::int64_t target_;
  bool tolerateUnknown_;
  std::unordered_set<std::string> names_;
  std::unordered_set<std::string> used_;
};

} // namespace

void upgradeNodesToOpset(onnx::ModelProto& model, std::int64_t sourceOpset,
                         std::int64_t targetOpset, bool tolerateUnknownOps) {
  Upgrader(model, sourceOpset, targetOpset, tolerateUnknownOps).run();
}

} // namespace lathe::frontend
