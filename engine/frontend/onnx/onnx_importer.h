#pragma once
// ONNX -> graph IR. Uses the ONNX library to parse, check, convert older opsets and infer
// shapes, then builds a lathe::graph::Graph. Bad input throws lathe::Error naming the file,
// the node, the op and the reason.

#include "engine/graph/graph.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lathe::frontend {

struct ImportOptions {
  // Models at an older opset are converted to this one.
  std::int64_t targetOpset = 17;
  std::function<void(int percent, const std::string& stage)> onProgress;
  const std::atomic<bool>* cancel = nullptr; // checked between stages
  // Import a model whose nodes use ops Lathe does not know (or other op domains), so that
  // it can be looked at: the graph is marked (Graph::hasUnknownOps), those nodes are not
  // converted or checked by the ONNX checker, and compiling refuses them by name.
  bool allowUnknownOps = false;
};

struct ImportResult {
  std::unique_ptr<graph::Graph> graph;
  std::int64_t sourceOpset = 0;
  std::vector<std::string> warnings;
};

// Oldest and newest default-domain opset the importer accepts. Models from kMinNativeOpset
// on are brought to targetOpset node by node by Lathe's own converter (version_upgrade.h),
// which refuses any node it cannot convert exactly; older ones go through the ONNX
// library's version converter.
constexpr std::int64_t kMinOpset = 1;
constexpr std::int64_t kMinNativeOpset = 7;
constexpr std::int64_t kMaxOpset = 21; // 18 to 21 are brought down to 17 (version_downgrade.h)

ImportResult importOnnxFile(const std::string& path, const ImportOptions& options = {});

} // namespace lathe::frontend
