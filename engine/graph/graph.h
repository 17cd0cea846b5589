#pragma once
// The graph IR: a Graph owns Values and Nodes; nodes are kept in topological order.
// Nodes may belong to a fused group (a run of consecutive nodes that lowers to one kernel).

#include "engine/graph/attribute.h"
#include "engine/graph/tensor_type.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace lathe::graph {

class Node;

enum class ValueKind {
  Input,      // graph input
  Constant,   // initializer / constant with data
  NodeOutput, // produced by a node
  Capture,    // in a subgraph: a value of an enclosing graph, referenced by name
};

class Value {
public:
  const std::string& name() const { return name_; }
  ValueKind kind() const { return kind_; }
  Node* producer() const { return producer_; }
  int producerIndex() const { return producerIndex_; }
  bool isConstant() const { return kind_ == ValueKind::Constant; }
  const TensorData& constant() const { return *constant_; }

  TensorType type;

private:
  friend class Graph;
  std::string name_;
  ValueKind kind_ = ValueKind::NodeOutput;
  Node* producer_ = nullptr;
  int producerIndex_ = -1;
  std::optional<TensorData> constant_;
};

class Node {
public:
  const std::string& opType() const { return opType_; }
  const std::string& domain() const { return domain_; } // empty for the default ONNX domain
  std::string name;
  // Optional inputs/outputs that are absent are nullptr.
  std::vector<Value*> inputs;
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(std::size_t i = 0) const { return outputs_.at(i); }
  std::map<std::string, Attribute> attributes;
  int group = -1; // index into Graph::groups(), -1 when not fused

  Value* input(std::size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  bool hasAttribute(const std::string& key) const;
  const Attribute* findAttribute(const std::string& key) const;
  std::int64_t attrInt(const std::string& key, std::int64_t fallback) const;
  float attrFloat(const std::string& key, float fallback) const;
  std::string attrString(const std::string& key, const std::string& fallback) const;
  std::vector<std::int64_t> attrInts(const std::string& key,
                                     const std::vector<std::int64_t>& fallback = {}) const;
  // Inputs after the ONNX ones that carry values captured by subgraphs (kCapturesAttribute).
  std::size_t capturedInputCount() const;
  // "name (Op)" or "(Op)" for messages.
  std::string describe() const;

private:
  friend class Graph;
  std::string opType_;
  std::string domain_;
  std::vector<Value*> outputs_;
};

// A set of nodes fused into one kernel: an anchor op plus its elementwise epilogue.
struct FusedGroup {
  std::string name;    // kernel name, e.g. "fused_conv_add_relu_3"
  std::string pattern; // op types joined by '+', e.g. "Conv+Add+Relu"
};

struct Use {
  Node* node;
  std::size_t inputIndex;
};

class Graph {
public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name;
  std::int64_t opsetVersion = 17; // of the default ONNX domain
  // Opened to be looked at although some nodes use ops Lathe does not know (the verifier
  // then accepts them; compiling refuses them by name).
  bool hasUnknownOps = false;
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;

  // --- values ---
  Value* addInput(const std::string& name, TensorType type);
  Value* addConstant(const std::string& name, TensorData data);
  Value* addCapture(const std::string& name, TensorType type = {});
  // Turns a capture into a graph input appended to `inputs`: a subgraph compiled on its
  // own receives the captured values as arguments.
  void captureToInput(Value* capture);
  Value* findValue(const std::string& name) const;
  // A name not used by any value yet, derived from `base`.
  std::string uniqueName(const std::string& base) const;
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  std::vector<Value*> constants() const;

  // --- nodes ---
  // Appends a node; outputs are created from `outputNames` (an empty name = absent output).
  Node* addNode(const std::string& opType, std::vector<Value*> inputs,
                const std::vector<std::string>& outputNames, const std::string& domain = {});
  // Same, but the node is placed right before `before` in the node order.
  Node* insertNodeBefore(Node* before, const std::string& opType, std::vector<Value*> inputs,
                         const std::vector<std::string>& outputNames);
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  std::size_t indexOf(const Node* node) const;
  // Removes nodes (their outputs must be unused by then); values left unused are dropped.
  void removeNodes(const std::vector<Node*>& dead);
  // Redirects every use of `from` (node inputs and graph outputs) to `to`.
  void replaceAllUsesWith(Value* from, Value* to);
  // Exchanges output slot `ia` of node `a` with slot `ib` of node `b` (producers updated):
  // lets a node take over another's output value, keeping its name and its uses.
  void swapOutputs(Node* a, std::size_t ia, Node* b, std::size_t ib);
  // Drops values that nothing produces, uses or exports (except graph inputs).
  void pruneUnusedValues();
  std::unordered_map<const Value*, std::vector<Use>> computeUses() const;
  bool isGraphOutput(const Value* value) const;

  // Reorders nodes topologically, keeping each fused group's nodes consecutive.
  // Returns false (and leaves the order alone) if there is a cycle.
  bool sortTopologically();

  // --- fused groups ---
  int addGroup(FusedGroup group);
  const std::vector<FusedGroup>& groups() const { return groups_; }
  std::vector<Node*> groupMembers(int group) const;
  void clearGroups();

  // A deep copy; constant bytes are shared, not copied. With `elideAbove` >= 0, constants
  // with more elements than that keep their type but not their bytes (cheap snapshots that
  // do not keep replaced weights alive).
  std::unique_ptr<Graph> clone(std::int64_t elideAbove = -1) const;

private:
  Value* newValue(const std::string& name, ValueKind kind);
  Node* createNode(const std::string& opType, std::vector<Value*> inputs,
                   const std::vector<std::string>& outputNames, const std::string& domain);

  std::vector<std::unique_ptr<Value>> values_;
  std::unordered_map<std::string, Value*> valueByName_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<FusedGroup> groups_;
};

} // namespace lathe::graph
