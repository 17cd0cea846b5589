#pragma once
// ONNX -> graph IR. Uses the ONNX library to parse, check, convert older opsets and infer
// shapes, then builds a lathe::graph::Graph. Bad input throws lathe::Error naming the file,
// the node, the op and the reason.

#include "engine/frontend/import_result.h"

#include <cstdint>
#include <string>

namespace lathe::frontend {

// Oldest and newest default-domain opset the importer accepts. Models from kMinNativeOpset
// on are brought to targetOpset node by node by Lathe's own converter (version_upgrade.h),
// which refuses any node it cannot convert exactly; older ones go through the ONNX
// library's version converter.
constexpr std::int64_t kMinOpset = 1;
constexpr std::int64_t kMinNativeOpset = 7;
constexpr std::int64_t kMaxOpset = 21; // 18 to 21 are brought down to 17 (version_downgrade.h)

ImportResult importOnnxFile(const std::string& path, const ImportOptions& options = {});

} // namespace lathe::frontend
