#include "engine/driver/fold_constant_subgraphs.h"

#include "engine/driver/compile_model.h"
#include "engine/support/diagnostics.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace lathe::driver {
namespace {

using graph::Node;
using graph::Value;

bool hasSubgraph(const Node& n) {
  for (const auto& [key, attr] : n.attributes)
    if (attr.is<graph::GraphPtr>() || attr.is<std::vector<graph::GraphPtr>>())
      return true;
  return false;
}

// Ops whose result is not a function of their inputs.
bool isRandom(const Node& n) {
  const std::string& op = n.opType();
  return op.rfind("Random", 0) == 0 || op == "Bernoulli" || op == "Multinomial" ||
         (op == "Dropout" && n.input(2));
}

} // namespace

std::size_t foldConstantSubgraphs(graph::Graph& g) {
  // Nodes computable now: every present input is a constant or comes from such a node.
  std::unordered_set<const Value*> known;
  std::vector<Node*> foldable;
  for (const auto& v : g.values())
    if (v->isConstant() && !v->constant().isElided())
      known.insert(v.get());
  for (const auto& n : g.nodes()) {
    // Graph outputs keep their producers so that they keep their names.
    bool ok = n->domain().empty() && !hasSubgraph(*n) && !isRandom(*n);
    for (const Value* out : n->outputs())
      ok = ok && !(out && g.isGraphOutput(out));
    for (const Value* in : n->inputs)
      ok = ok && (!in || known.count(in));
    for (const Value* out : n->outputs())
      ok = ok && (!out || out->type.isStatic());
    if (!ok)
      continue;
    foldable.push_back(n.get());
    for (const Value* out : n->outputs())
      if (out)
        known.insert(out);
  }
  if (foldable.empty())
    return 0;

  // The values the rest of the graph needs from the folded nodes.
  std::unordered_set<const Node*> folded(foldable.begin(), foldable.end());
  std::vector<Value*> results;
  std::unordered_set<const Value*> resultSet;
  auto need = [&](Value* v) {
    if (v && v->producer() && folded.count(v->producer()) && resultSet.insert(v).second)
      results.push_back(v);
  };
  for (const auto& n : g.nodes())
    if (!folded.count(n.get()))
      for (Value* in : n->inputs)
        need(in);
  if (results.empty()) // nothing uses them: dead code, left to the pipeline
    return 0;

  // A small graph with just the folded nodes, compiled and run once.
  graph::Graph sub;
  sub.name = g.name + "_constants";
  sub.opsetVersion = g.opsetVersion;
  std::unordered_map<const Value*, Value*> map;
  for (Node* n : foldable) {
    std::vector<Value*> ins;
    for (Value* in : n->inputs) {
      if (!in) {
        ins.push_back(nullptr);
        continue;
      }
      if (!map.count(in)) // a constant of the outer graph
        map[in] = sub.addConstant(in->name(), in->constant());
      ins.push_back(map.at(in));
    }
    std::vector<std::string> names;
    for (Value* out : n->outputs())
      names.push_back(out ? out->name() : std::string());
    Node* copy = sub.addNode(n->opType(), std::move(ins), names);
    copy->name = n->name;
    copy->attributes = n->attributes;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (Value* out = n->outputs()[i]) {
        copy->outputs()[i]->type = out->type;
        map[out] = copy->outputs()[i];
      }
  }
  for (Value* r : results)
    sub.outputs.push_back(map.at(r));

  CompileSettings settings;
  settings.foldConstants = false; // `sub` is what is folded
  const auto compiled = compileModel(sub, settings).compiled;
  const std::vector<runtime::Tensor> values = compiled->executor->run({});
  LATHE_CHECK(values.size() == results.size(), "constant subgraph output count");

  // Swap each result for a constant of the same name, then drop the folded nodes.
  std::vector<Value*> replacements;
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto bytes = std::make_shared<std::string>(values[i].byteSize(), '\0');
    if (!bytes->empty())
      std::memcpy(bytes->data(), values[i].rawData(), bytes->size());
    graph::TensorData data(results[i]->type.dtype, results[i]->type.staticDims(), std::move(bytes));
    Value* c = g.addConstant(g.uniqueName(results[i]->name() + "_folded"), std::move(data));
    g.replaceAllUsesWith(results[i], c);
  }
  g.removeNodes(foldable);
  return foldable.size();
}

} // namespace lathe::driver
