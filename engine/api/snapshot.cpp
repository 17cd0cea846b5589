#include "engine/api/snapshot.h"

#include "engine/graph/op_table.h"
#include "engine/graph/printer.h"

#include <iterator>
#include <set>
#include <unordered_map>

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

namespace {

// The category an operator's node is drawn with: its weightiest member's.
int categoryRank(const std::string& category) {
  static const char* const order[] = {"convolution",  "matmul",      "normalization", "reduction",
                                      "control flow", "elementwise", "data movement"};
  for (int i = 0; i < static_cast<int>(std::size(order)); ++i)
    if (category == order[i])
      return i;
  return static_cast<int>(std::size(order));
}

} // namespace

GraphSnapshot makeAuthoredSnapshot(const GraphSnapshot& imported,
                                   const std::vector<frontend::AuthoredOp>& ops,
                                   const std::string& format) {
  GraphSnapshot snap;
  snap.name = imported.name;
  snap.opset = imported.opset;
  snap.inputs = imported.inputs;
  snap.outputs = imported.outputs;
  snap.constants = imported.constants;
  snap.values = imported.values;
  snap.irText = imported.irText;

  const int nodeCount = static_cast<int>(imported.nodes.size());
  std::vector<int> owner(imported.nodes.size(), -1);
  for (std::size_t k = 0; k < ops.size(); ++k)
    for (std::size_t n : ops[k].nodes)
      if (n < imported.nodes.size() && owner[n] < 0)
        owner[n] = static_cast<int>(k);
  // Who reads each value: a node (its owner, or -1 - index when unowned); graph outputs read
  // from outside every op.
  std::unordered_map<std::string, std::vector<int>> readers;
  for (int n = 0; n < nodeCount; ++n)
    for (const std::string& in : imported.nodes[n].inputs)
      if (!in.empty())
        readers[in].push_back(owner[n] >= 0 ? owner[n] : -1 - n);
  std::set<std::string> graphOutputs;
  for (const TensorSummary& t : imported.outputs)
    graphOutputs.insert(t.name);

  std::vector<bool> emitted(ops.size(), false);
  for (int n = 0; n < nodeCount; ++n) {
    const int k = owner[n];
    if (k < 0) {
      NodeSummary copy = imported.nodes[n];
      copy.group = -1;
      snap.nodes.push_back(std::move(copy));
      continue;
    }
    if (emitted[k])
      continue;
    emitted[k] = true;
    const frontend::AuthoredOp& op = ops[k];
    NodeSummary ns;
    ns.name = op.name;
    ns.opType = op.opType;
    ns.source = op.location;
    ns.category = "other";
    std::set<std::string> produced, listedInputs;
    std::string chain;
    for (std::size_t m : op.nodes) {
      if (m >= imported.nodes.size() || owner[m] != k)
        continue;
      const NodeSummary& member = imported.nodes[m];
      ns.importedNodes.push_back(static_cast<int>(m));
      if (categoryRank(member.category) < categoryRank(ns.category))
        ns.category = member.category;
      for (const std::string& in : member.inputs)
        if (!in.empty() && !produced.count(in) && listedInputs.insert(in).second)
          ns.inputs.push_back(in);
      for (const std::string& out : member.outputs) {
        if (out.empty())
          continue;
        produced.insert(out);
        bool readOutside = graphOutputs.count(out) != 0;
        if (auto it = readers.find(out); it != readers.end())
          for (int r : it->second)
            readOutside = readOutside || r != k;
        if (readOutside)
          ns.outputs.push_back(out);
      }
      chain += (chain.empty() ? "" : " \u2192 ") + member.opType;
      ns.irLine += (ns.irLine.empty() ? "" : "\n") + member.irLine;
    }
    ns.summary = "Imported as " + chain + " (" + format + ")";
    for (const auto& [key, text] : op.attributes)
      ns.attributes.push_back({key, "option", text});
    snap.nodes.push_back(std::move(ns));
  }
  return snap;
}

} // namespace lathe::api
