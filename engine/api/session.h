#pragma once
// engine/api: the only engine header that app/ and views/ include. Everything here is a
// plain value type; a Session does the work and hands back immutable snapshots.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lathe::api {

struct TensorSummary {
  std::string name;
  std::string dtype;             // "f32", "i64", ... ("?" when unknown)
  std::vector<std::string> dims; // "1", "N" (symbolic), "?" (unknown); empty for scalars
  bool rankKnown = true;
  std::string typeText; // "f32[1,3,224,224]"
};

struct AttributeSummary {
  std::string name;
  std::string kind; // "int", "ints", "float", "tensor", "graph", ...
  std::string text; // printed value, large tensors elided
};

struct NodeSummary {
  std::string name; // ONNX node name (may be empty)
  std::string opType;
  std::string category;             // "convolution", "matmul", "elementwise", "normalization",
                                    // "reduction", "data movement", "control flow", or "other"
  std::string summary;              // one line from the op table
  std::vector<std::string> inputs;  // value names, "" for an absent optional input
  std::vector<std::string> outputs; // value names, "" for an absent optional output
  std::vector<AttributeSummary> attributes;
  int group = -1;     // index into GraphSnapshot::groups, -1 if not fused
  std::string irLine; // the node as one line of IR
};

struct ConstantSummary {
  TensorSummary tensor;
  std::uint64_t bytes = 0;
};

struct GroupSummary {
  std::string name;       // kernel name
  std::string pattern;    // "Conv+Add+Relu"
  std::vector<int> nodes; // indices into GraphSnapshot::nodes
};

// One graph as the views see it. Values are looked up by name in `values`.
struct GraphSnapshot {
  std::string name;
  std::int64_t opset = 0;
  std::vector<TensorSummary> inputs;
  std::vector<TensorSummary> outputs;
  std::vector<ConstantSummary> constants;
  std::vector<NodeSummary> nodes; // topological order
  std::vector<GroupSummary> groups;
  std::map<std::string, TensorSummary> values; // every value by name
  std::string irText;                          // printed IR, large constants elided
};

struct PassRecord {
  std::string name;        // "fold-batchnorm"
  std::string description; // one line from the pass table
  double milliseconds = 0;
  bool changed = false;
  std::string irBefore;
  std::string irAfter;
  std::shared_ptr<const GraphSnapshot> graphAfter;
};

struct ModelReport {
  std::string path;
  double importMilliseconds = 0;
  double pipelineMilliseconds = 0;
  std::uint64_t peakResidentBytes = 0; // of this process after import
  std::int64_t sourceOpset = 0;        // the model's own opset (the graph may be converted)
  std::vector<std::string> warnings;   // e.g. "kept opset 9: the version converter failed"
  GraphSnapshot imported;              // right after import
  std::vector<PassRecord> passes;      // in pipeline order (empty if not run)
  GraphSnapshot final;                 // after the last pass
};

struct Failure {
  std::string kind;    // "invalid", "unsupported", "io", "internal", "cancelled"
  std::string message; // complete, e.g. "model.onnx: node 'conv1' (Conv): ..."
  std::string file, node, op, reason;
};

struct Progress {
  int percent = 0;   // 0..100
  std::string stage; // "parsing", "shape inference", "pass fold-batchnorm", ...
};

struct OpenOptions {
  bool runPipeline = true;
  // Called from the worker thread doing the work.
  std::function<void(const Progress&)> onProgress;
  // Polled between stages; when it becomes true the call fails with kind "cancelled".
  const std::atomic<bool>* cancel = nullptr;
};

struct OpenResult {
  std::shared_ptr<const ModelReport> report; // set on success
  std::optional<Failure> failure;            // set on failure
  bool ok() const { return report != nullptr; }
};

// Names and descriptions of the default pipeline's passes, in order.
struct PassInfoSummary {
  std::string name, description;
};
std::vector<PassInfoSummary> defaultPipeline();

// Op table rows, for legends and docs.
struct OpInfoSummary {
  std::string name, category, summary;
  std::string fusion;          // "anchor", "elementwise" or "opaque"
  std::string inputs, outputs; // arity: "1", "2 to 3", "1 or more"
};
std::vector<OpInfoSummary> knownOps();

// A Session may be used from any one thread at a time; results are immutable and may
// be shared across threads.
class Session {
public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Imports an ONNX model and (by default) runs the default graph pipeline.
  // Never throws: errors come back in OpenResult::failure.
  OpenResult openModel(const std::string& path, const OpenOptions& options = {});
};

} // namespace lathe::api
