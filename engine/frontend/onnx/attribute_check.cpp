#include "engine/frontend/onnx/attribute_check.h"

#include "engine/frontend/onnx/version_adapters.h"
#include "engine/frontend/onnx/version_upgrade.h"
#include "engine/graph/op_table.h"

#include <onnx/defs/schema.h>

namespace lathe::frontend {
namespace {

bool atDefault(const onnx::AttributeProto& a, const onnx::OpSchema::Attribute& schema) {
  if (schema.default_value.type() == onnx::AttributeProto::UNDEFINED)
    return false;
  return sameAttributeValue(a, schema.default_value);
}

void checkGraph(const onnx::GraphProto& g, std::int64_t opset) {
  for (const onnx::NodeProto& node : g.node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g())
        checkGraph(a.g(), opset);
      for (const auto& sub : a.graphs())
        checkGraph(sub, opset);
    }
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      continue;
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
    if (!schema)
      continue; // the importer refuses ops that Lathe does not know
    const std::string op = node.op_type() + "-" + std::to_string(schema->since_version());
    const std::string label =
        !node.name().empty() ? node.name()
                             : (node.output_size() > 0 ? "producing '" + node.output(0) + "'" : "");
    for (const onnx::AttributeProto& a : node.attribute()) {
      auto it = schema->attributes().find(a.name());
      if (it == schema->attributes().end())
        throw NodeRefusal(label, node.op_type(),
                          op + " has no attribute '" + a.name() + "' (at opset " +
                              std::to_string(opset) + ")");
      const graph::UnreadAttribute* unread = graph::findUnreadAttribute(node.op_type(), a.name());
      if (unread && unread->use == graph::AttributeUse::Unsupported && !atDefault(a, it->second))
        throw NodeRefusal(label, node.op_type(),
                          op + " attribute '" + a.name() + "' is not supported (" +
                              std::string(unread->reason) + ")");
    }
  }
}

} // namespace

void checkAttributesHonoured(const onnx::ModelProto& model, std::int64_t opset) {
  checkGraph(model.graph(), opset);
}

} // namespace lathe::frontend
