#include "engine/graph/graph.h"

#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <unordered_set>

namespace lathe::graph {

namespace {

// LATHE_RECORD_ATTRIBUTES=FILE: each (op, attribute) that a rule looks up is appended to
// FILE once per process. The conformance tests use it to check that every attribute the
// ONNX schema defines is either read or listed in engine/graph/op_attributes.def.
void recordAttributeRead(const std::string& op, const std::string& key) {
  static const char* path = std::getenv("LATHE_RECORD_ATTRIBUTES");
  if (!path)
    return;
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mutex);
  if (!seen.insert(op + " " + key).second)
    return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s %s\n", op.c_str(), key.c_str());
    std::fclose(f);
  }
}

} // namespace

bool Node::hasAttribute(const std::string& key) const {
  recordAttributeRead(opType(), key);
  return attributes.count(key) != 0;
}

const Attribute* Node::findAttribute(const std::string& key) const {
  recordAttributeRead(opType(), key);
  auto it = attributes.find(key);
  return it == attributes.end() ? nullptr : &it->second;
}

std::int64_t Node::attrInt(const std::string& key, std::int64_t fallback) const {
  const Attribute* a = findAttribute(key);
  return a && a->is<std::int64_t>() ? a->as<std::int64_t>() : fallback;
}

float Node::attrFloat(const std::string& key, float fallback) const {
  const Attribute* a = findAttribute(key);
  return a && a->is<float>() ? a->as<float>() : fallback;
}

std::string Node::attrString(const std::string& key, const std::string& fallback) const {
  const Attribute* a = findAttribute(key);
  return a && a->is<std::string>() ? a->as<std::string>() : fallback;
}

std::vector<std::int64_t> Node::attrInts(const std::string& key,
                                         const std::vector<std::int64_t>& fallback) const {
  const Attribute* a = findAttribute(key);
  return a && a->is<std::vector<std::int64_t>>() ? a->as<std::vector<std::int64_t>>() : fallback;
}

std::size_t Node::capturedInputCount() const {
  const Attribute* a = findAttribute(kCapturesAttribute);
  return a && a->is<std::vector<std::string>>() ? a->as<std::vector<std::string>>().size() : 0;
}

std::string Node::describe() const {
  return name.empty() ? "(" + opType_ + ")" : name + " (" + opType_ + ")";
}

Value* Graph::newValue(const std::string& valueName, ValueKind kind) {
  LATHE_CHECK(!valueName.empty(), "values need a name");
  LATHE_CHECK(!valueByName_.count(valueName), "duplicate value name '" + valueName + "'");
  auto value = std::make_unique<Value>();
  value->name_ = valueName;
  value->kind_ = kind;
  Value* raw = value.get();
  values_.push_back(std::move(value));
  valueByName_[valueName] = raw;
  return raw;
}

Value* Graph::addInput(const std::string& valueName, TensorType type) {
  Value* v = newValue(valueName, ValueKind::Input);
  v->type = std::move(type);
  inputs.push_back(v);
  return v;
}

Value* Graph::addConstant(const std::string& valueName, TensorData data) {
  Value* v = newValue(valueName, ValueKind::Constant);
  v->type = TensorType::of(data.dtype(), data.dims());
  v->constant_ = std::move(data);
  return v;
}

Value* Graph::addCapture(const std::string& valueName, TensorType type) {
  Value* v = newValue(valueName, ValueKind::Capture);
  v->type = std::move(type);
  return v;
}

void Graph::captureToInput(Value* capture) {
  LATHE_CHECK(capture && capture->kind_ == ValueKind::Capture,
              "captureToInput on a value that is not a capture");
  capture->kind_ = ValueKind::Input;
  inputs.push_back(capture);
}

Value* Graph::findValue(const std::string& valueName) const {
  auto it = valueByName_.find(valueName);
  return it == valueByName_.end() ? nullptr : it->second;
}

std::string Graph::uniqueName(const std::string& base) const {
  if (!valueByName_.count(base))
    return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!valueByName_.count(candidate))
      return candidate;
  }
}

std::vector<Value*> Graph::constants() const {
  std::vector<Value*> out;
  for (const auto& v : values_)
    if (v->isConstant())
      out.push_back(v.get());
  return out;
}

Node* Graph::createNode(const std::string& opType, std::vector<Value*> nodeInputs,
                        const std::vector<std::string>& outputNames, const std::string& domain) {
  auto node = std::make_unique<Node>();
  node->opType_ = opType;
  node->domain_ = domain;
  node->inputs = std::move(nodeInputs);
  for (std::size_t i = 0; i < outputNames.size(); ++i) {
    if (outputNames[i].empty()) {
      node->outputs_.push_back(nullptr);
      continue;
    }
    Value* out = newValue(outputNames[i], ValueKind::NodeOutput);
    out->producer_ = node.get();
    out->producerIndex_ = static_cast<int>(i);
    node->outputs_.push_back(out);
  }
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  return raw;
}

Node* Graph::addNode(const std::string& opType, std::vector<Value*> nodeInputs,
                     const std::vector<std::string>& outputNames, const std::string& domain) {
  return createNode(opType, std::move(nodeInputs), outputNames, domain);
}

Node* Graph::insertNodeBefore(Node* before, const std::string& opType,
                              std::vector<Value*> nodeInputs,
                              const std::vector<std::string>& outputNames) {
  const std::size_t at = indexOf(before);
  Node* node = createNode(opType, std::move(nodeInputs), outputNames, {});
  std::rotate(nodes_.begin() + at, nodes_.end() - 1, nodes_.end());
  return node;
}

std::size_t Graph::indexOf(const Node* node) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].get() == node)
      return i;
  LATHE_CHECK(false, "node is not in this graph");
  return 0;
}

bool Graph::isGraphOutput(const Value* value) const {
  return std::find(outputs.begin(), outputs.end(), value) != outputs.end();
}

std::unordered_map<const Value*, std::vector<Use>> Graph::computeUses() const {
  std::unordered_map<const Value*, std::vector<Use>> uses;
  for (const auto& node : nodes_)
    for (std::size_t i = 0; i < node->inputs.size(); ++i)
      if (node->inputs[i])
        uses[node->inputs[i]].push_back({node.get(), i});
  return uses;
}

void Graph::replaceAllUsesWith(Value* from, Value* to) {
  for (const auto& node : nodes_)
    for (Value*& in : node->inputs)
      if (in == from)
        in = to;
  for (Value*& out : outputs)
    if (out == from)
      out = to;
}

void Graph::swapOutputs(Node* a, std::size_t ia, Node* b, std::size_t ib) {
  std::swap(a->outputs_.at(ia), b->outputs_.at(ib));
  if (Value* v = a->outputs_[ia]) {
    v->producer_ = a;
    v->producerIndex_ = static_cast<int>(ia);
  }
  if (Value* v = b->outputs_[ib]) {
    v->producer_ = b;
    v->producerIndex_ = static_cast<int>(ib);
  }
}

void Graph::removeNodes(const std::vector<Node*>& dead) {
  if (dead.empty())
    return;
  std::unordered_set<const Node*> deadSet(dead.begin(), dead.end());
  std::erase_if(nodes_, [&](const std::unique_ptr<Node>& n) { return deadSet.count(n.get()); });
  // Outputs of removed nodes lose their producer; pruning drops the unused ones.
  for (const auto& v : values_)
    if (v->producer_ && deadSet.count(v->producer_)) {
      v->producer_ = nullptr;
      v->producerIndex_ = -1;
    }
  pruneUnusedValues();
}

void Graph::pruneUnusedValues() {
  std::unordered_set<const Value*> live(inputs.begin(), inputs.end());
  live.insert(outputs.begin(), outputs.end());
  for (const auto& node : nodes_) {
    live.insert(node->inputs.begin(), node->inputs.end());
    live.insert(node->outputs_.begin(), node->outputs_.end());
  }
  for (const auto& v : values_)
    if (!live.count(v.get()))
      valueByName_.erase(v->name_);
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) { return !live.count(v.get()); });
}

bool Graph::sortTopologically() {
  // Units are single nodes or whole fused groups; a unit is ready once every value it
  // consumes from outside itself is available.
  std::unordered_map<const Value*, std::size_t> producerUnit;
  std::vector<std::vector<Node*>> units;
  std::unordered_map<int, std::size_t> unitOfGroup;
  for (const auto& node : nodes_) {
    std::size_t unit;
    if (node->group >= 0 && unitOfGroup.count(node->group)) {
      unit = unitOfGroup[node->group];
    } else {
      unit = units.size();
      units.emplace_back();
      if (node->group >= 0)
        unitOfGroup[node->group] = unit;
    }
    units[unit].push_back(node.get());
    for (Value* out : node->outputs_)
      if (out)
        producerUnit[out] = unit;
  }
  std::vector<std::vector<std::size_t>> successors(units.size());
  std::vector<std::size_t> pending(units.size(), 0);
  for (std::size_t u = 0; u < units.size(); ++u) {
    std::unordered_set<std::size_t> preds;
    for (Node* node : units[u])
      for (Value* in : node->inputs) {
        auto it = in ? producerUnit.find(in) : producerUnit.end();
        if (it != producerUnit.end() && it->second != u)
          preds.insert(it->second);
      }
    pending[u] = preds.size();
    for (std::size_t p : preds)
      successors[p].push_back(u);
  }
  // Kahn's algorithm, always taking the earliest ready unit so the order stays stable.
  std::vector<std::size_t> order;
  std::vector<bool> done(units.size(), false);
  std::vector<std::size_t> ready;
  for (std::size_t u = 0; u < units.size(); ++u)
    if (pending[u] == 0)
      ready.push_back(u);
  while (!ready.empty()) {
    auto it = std::min_element(ready.begin(), ready.end());
    const std::size_t u = *it;
    ready.erase(it);
    order.push_back(u);
    for (std::size_t s : successors[u])
      if (--pending[s] == 0)
        ready.push_back(s);
  }
  if (order.size() != units.size())
    return false;
  // Within a unit, nodes must also be in dependency order; they already were in the
  // original order relative to each other, which is kept.
  std::unordered_map<const Node*, std::unique_ptr<Node>> owned;
  for (auto& n : nodes_)
    owned[n.get()] = std::move(n);
  nodes_.clear();
  for (std::size_t u : order)
    for (Node* n : units[u])
      nodes_.push_back(std::move(owned[n]));
  return true;
}

int Graph::addGroup(FusedGroup group) {
  groups_.push_back(std::move(group));
  return static_cast<int>(groups_.size()) - 1;
}

std::vector<Node*> Graph::groupMembers(int group) const {
  std::vector<Node*> members;
  for (const auto& n : nodes_)
    if (n->group == group)
      members.push_back(n.get());
  return members;
}

void Graph::clearGroups() {
  groups_.clear();
  for (auto& n : nodes_)
    n->group = -1;
}

std::unique_ptr<Graph> Graph::clone(std::int64_t elideAbove) const {
  auto copy = std::make_unique<Graph>();
  copy->name = name;
  copy->opsetVersion = opsetVersion;
  copy->hasUnknownOps = hasUnknownOps;
  copy->groups_ = groups_;
  std::unordered_map<const Value*, Value*> map;
  // Values first (in creation order) so the clone keeps the same value order.
  for (const auto& v : values_) {
    if (v->kind_ == ValueKind::NodeOutput)
      continue;
    Value* c = copy->newValue(v->name_, v->kind_);
    c->type = v->type;
    c->constant_ = v->constant_;
    if (c->constant_ && elideAbove >= 0 && c->constant_->numElements() > elideAbove)
      c->constant_ = TensorData::elided(c->constant_->dtype(), c->constant_->dims());
    map[v.get()] = c;
  }
  for (const Value* in : inputs)
    copy->inputs.push_back(map.at(in));
  for (const auto& n : nodes_) {
    std::vector<Value*> ins;
    for (Value* in : n->inputs)
      ins.push_back(in ? map.at(in) : nullptr);
    std::vector<std::string> outNames;
    for (Value* out : n->outputs_)
      outNames.push_back(out ? out->name_ : std::string());
    Node* c = copy->createNode(n->opType_, std::move(ins), outNames, n->domain_);
    c->name = n->name;
    c->attributes = n->attributes; // subgraphs are shared; passes replace, never mutate them
    c->group = n->group;
    for (std::size_t i = 0; i < outNames.size(); ++i)
      if (n->outputs_[i]) {
        c->outputs_[i]->type = n->outputs_[i]->type;
        map[n->outputs_[i]] = c->outputs_[i];
      }
  }
  for (const Value* out : outputs)
    copy->outputs.push_back(map.at(out));
  return copy;
}

} // namespace lathe::graph
