#include "engine/api/snapshot.h"

#include "engine/graph/op_table.h"
#include "engine/graph/printer.h"

namespace lathe::api {

TensorSummary summarizeValue(const graph::Value& value) {
  TensorSummary s;
  s.name = value.name();
  s.dtype = std::string(graph::dtypeName(value.type.dtype));
  s.rankKnown = value.type.hasRank();
  if (value.type.shape)
    for (const graph::Dim& d : *value.type.shape)
      s.dims.push_back(graph::toString(d));
  s.typeText = graph::toString(value.type);
  return s;
}

GraphSnapshot makeSnapshot(const graph::Graph& graph) {
  GraphSnapshot snap;
  snap.name = graph.name;
  snap.opset = graph.opsetVersion;
  for (const graph::Value* v : graph.inputs)
    snap.inputs.push_back(summarizeValue(*v));
  for (const graph::Value* v : graph.outputs)
    snap.outputs.push_back(summarizeValue(*v));
  for (const auto& v : graph.values()) {
    snap.values[v->name()] = summarizeValue(*v);
    if (v->isConstant())
      snap.constants.push_back({summarizeValue(*v), v->constant().byteSize()});
  }
  std::unordered_map<const graph::Node*, int> index;
  for (const auto& n : graph.nodes()) {
    NodeSummary ns;
    ns.name = n->name;
    ns.opType = n->opType();
    const graph::OpInfo* op = graph::findOp(n->domain(), n->opType());
    ns.category = op ? std::string(graph::categoryName(op->category)) : "other";
    ns.summary = op ? std::string(op->summary) : "";
    for (const graph::Value* in : n->inputs)
      ns.inputs.push_back(in ? in->name() : "");
    for (const graph::Value* out : n->outputs())
      ns.outputs.push_back(out ? out->name() : "");
    for (const auto& [key, attr] : n->attributes) {
      ns.attributes.push_back({key, graph::attrKindName(attr.kind()), graph::printAttribute(attr)});
      const std::vector<const graph::Graph*> bodies = attr.graphs();
      for (std::size_t b = 0; b < bodies.size(); ++b) {
        const std::string name =
            attr.kind() == graph::AttrKind::Graphs ? key + "[" + std::to_string(b) + "]" : key;
        ns.subgraphs.emplace_back(name,
                                  std::make_shared<const GraphSnapshot>(makeSnapshot(*bodies[b])));
      }
    }
    ns.group = n->group;
    ns.irLine = graph::printNode(*n);
    index[n.get()] = static_cast<int>(snap.nodes.size());
    snap.nodes.push_back(std::move(ns));
  }
  for (std::size_t g = 0; g < graph.groups().size(); ++g) {
    GroupSummary gs{graph.groups()[g].name, graph.groups()[g].pattern, {}};
    for (const graph::Node* n : graph.groupMembers(static_cast<int>(g)))
      gs.nodes.push_back(index.at(n));
    snap.groups.push_back(std::move(gs));
  }
  snap.irText = graph::printGraph(graph);
  return snap;
}

} // namespace lathe::api
