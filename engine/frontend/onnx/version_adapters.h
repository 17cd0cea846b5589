#pragma once
// The per-op adapters of Lathe's opset converter (version_upgrade.h): each one rewrites a
// node of an op's older schema into the next schema version's form with the same meaning.

#include <cstdint>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace lathe::frontend {

// Element types and ranks that shape inference recorded, by value name, through the
// enclosing graphs.
struct ValueScope {
  const ValueScope* parent = nullptr;
  std::unordered_map<std::string, int> elemType; // onnx::TensorProto::DataType
  std::unordered_map<std::string, int> rank;

  void note(const onnx::ValueInfoProto& vi);
  void note(const std::string& name, const onnx::TensorProto& t);
  int typeOf(const std::string& name) const; // 0 when unknown
  int rankOf(const std::string& name) const; // -1 when unknown
};

// One node being upgraded, and the nodes it needs before and after it.
struct UpgradeContext {
  onnx::NodeProto& node;
  const ValueScope& scope;
  std::unordered_set<std::string>& names;      // every name in the model, for fresh ones
  const std::unordered_set<std::string>& used; // values some node or graph output reads
  std::vector<onnx::NodeProto> before;
  std::vector<onnx::NodeProto> after;

  [[noreturn]] void refuse(const std::string& reason) const;
  std::string fresh(const std::string& what);
  // A Constant node before this one; returns its output.
  std::string constant(const std::string& what, const onnx::TensorProto& value);
  std::string constInts(const std::string& what, const std::vector<std::int64_t>& values);
  // A scalar of the element type of value `like` (through CastLike when that is unknown).
  std::string scalarLike(const std::string& what, double value, const std::string& like);
  // Adds a node before or after this one.
  onnx::NodeProto& emit(std::vector<onnx::NodeProto>& where, const std::string& op,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  bool outputUsed(int index) const;
};

// Every value and node name of `g` and its subgraphs (for fresh names), and the values some
// node or graph output reads.
void collectModelNames(const onnx::GraphProto& g, std::unordered_set<std::string>& names,
                       std::unordered_set<std::string>& used);
// Appends the nodes the context added before the node, the node, and those after it.
void appendWithNeighbours(UpgradeContext& c, onnx::NodeProto node,
                          std::vector<onnx::NodeProto>& out);
void setDefaultOpset(onnx::ModelProto& model, std::int64_t version);

bool hasAttribute(const onnx::NodeProto& n, const std::string& name);
// Whether two attributes hold the same value (their names and doc strings aside).
bool sameAttributeValue(onnx::AttributeProto a, onnx::AttributeProto b);
// Removes the attribute and returns it.
std::optional<onnx::AttributeProto> takeAttribute(onnx::NodeProto& n, const std::string& name);

// Rewrites a node into the form of `op` at the version that the table gives for `op`.
using StepAdapter = void (*)(UpgradeContext&);
StepAdapter findStepAdapter(const std::string& op, std::int64_t toVersion);

// Old forms that Lathe's lowering runs by their own version's rules, left as they are.
// May rewrite the node into the newest of those forms (Upsample-7 into Upsample-9).
bool keepsItsOwnForm(UpgradeContext& c, std::int64_t version);

// Why the step to `toVersion` changes the meaning of an unchanged-looking node, or null.
const char* semanticChange(const std::string& op, std::int64_t toVersion);

} // namespace lathe::frontend
