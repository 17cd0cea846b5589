#pragma once
// Internal to the TFLite importer: a .tflite file read, verified and bounds-checked. Every
// index the file holds (tensors, buffers, operator codes) is checked before use; problems
// throw lathe::Error naming the file.

#include "engine/graph/tensor_data.h"
#include "tflite_schema_generated.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lathe::frontend::tflite {

// A tensor's quantization: one scale and zero point (per tensor) or one per slice along
// `axis` (per channel). Absent (empty scales) for float tensors.
struct Quant {
  std::vector<float> scales;
  std::vector<std::int64_t> zeroPoints;
  int axis = 0;
  bool present() const { return !scales.empty(); }
  bool perTensor() const { return scales.size() == 1; }
  bool operator==(const Quant&) const = default;
};

struct TensorInfo {
  std::string fileName; // as the file names it (may be empty or repeated)
  std::string name;     // unique within the graph
  graph::DType dtype = graph::DType::Undefined;
  std::vector<std::int64_t> shape;
  bool dynamicDims = false; // shape_signature has -1s (the file's shape is used)
  Quant quant;
  std::uint32_t buffer = 0;
};

class TfliteModel {
public:
  // Reads and verifies `path`; refuses what Lathe cannot import as a whole (several
  // subgraphs, sparse or variable tensors, string tensors).
  explicit TfliteModel(std::string path);

  const std::string& path() const { return path_; }
  const lathe_tflite::SubGraph& subgraph() const { return *subgraph_; }
  std::size_t tensorCount() const { return tensors_.size(); }
  // Checked: `index` must name a tensor; `what` says who refers to it for the message.
  const TensorInfo& tensor(std::int64_t index, const std::string& what) const;
  // The tensor's constant contents, or nullopt when its buffer is empty (a computed tensor).
  std::optional<graph::TensorData> constantData(std::int64_t index) const;
  // The builtin operator of `op` (checked); custom operators are refused by their name.
  lathe_tflite::BuiltinOperator opcode(const lathe_tflite::Operator& op, std::size_t opIndex) const;
  // The name of a CUSTOM operator's code ("(unnamed)" when the file gives none).
  std::string customCode(const lathe_tflite::Operator& op) const;

private:
  void readTensors();

  std::string path_;
  std::string bytes_;
  const lathe_tflite::Model* model_ = nullptr;
  const lathe_tflite::SubGraph* subgraph_ = nullptr;
  std::vector<TensorInfo> tensors_;
};

// "CONV_2D", or "builtin operator 151" for a code outside the schema.
std::string builtinName(lathe_tflite::BuiltinOperator op);

} // namespace lathe::frontend::tflite
