#pragma once
// What every importer takes and gives: options (progress, cancel) and the graph it built.

#include "engine/frontend/authored_ops.h"
#include "engine/graph/graph.h"
#include "engine/support/diagnostics.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lathe::frontend {

// The formats Lathe reads; a file's format is decided by its contents (model_format.h).
enum class ModelFormat { Onnx, Tflite, TorchScript };

// "ONNX", "TFLite", "TorchScript".
const char* modelFormatName(ModelFormat format);

struct ImportOptions {
  // Models at an older opset are converted to this one (ONNX).
  std::int64_t targetOpset = 17;
  std::function<void(int percent, const std::string& stage)> onProgress;
  const std::atomic<bool>* cancel = nullptr; // checked between stages
  // Import a model whose nodes use ops Lathe does not know (or other op domains), so that
  // it can be looked at: the graph is marked (Graph::hasUnknownOps), those nodes are not
  // converted or checked by the ONNX checker, and compiling refuses them by name (ONNX).
  bool allowUnknownOps = false;
  // Shapes of the model's inputs by name, for formats that record none (TorchScript).
  std::map<std::string, std::vector<std::int64_t>> inputShapes;
  // Their element types where known (an input file's arrays); f32 otherwise.
  std::map<std::string, graph::DType> inputTypes;
};

struct ImportResult {
  std::unique_ptr<graph::Graph> graph;
  ModelFormat format = ModelFormat::Onnx;
  // The model's own default-domain opset (ONNX); for other formats the opset of the graph
  // the importer built.
  std::int64_t sourceOpset = 0;
  std::vector<std::string> warnings;
  // Formats that translate (TFLite, TorchScript): the file's operators and the nodes each
  // became, so that the graph can be shown as authored. Empty for ONNX.
  std::vector<AuthoredOp> authored;
};

// Reports an importer's progress; throws lathe::Error (Cancelled, naming `path`) once the
// options' cancel flag is set.
inline void reportImportProgress(const ImportOptions& options, const std::string& path, int percent,
                                 const std::string& stage) {
  if (options.cancel && options.cancel->load())
    throw Error(ErrorKind::Cancelled, "cancelled", {path, {}, {}});
  if (options.onProgress)
    options.onProgress(percent, stage);
}

} // namespace lathe::frontend
