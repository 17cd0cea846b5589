#include "engine/frontend/onnx/onnx_importer.h"

#include "engine/frontend/onnx/graph_builder.h"
#include "engine/frontend/onnx/model_file.h"
#include "engine/frontend/onnx/onnx_sandbox.h"
#include "engine/frontend/onnx/tensor_proto.h"
#include "engine/frontend/onnx/version_downgrade.h"
#include "engine/graph/op_table.h"
#include "engine/graph/verifier.h"
#include "engine/support/diagnostics.h"

#include <filesystem>
#include <onnx/onnx_pb.h>
#include <unordered_map>
#include <unordered_set>

namespace lathe::frontend {

namespace fs = std::filesystem;

namespace {

// Initializers larger than this are moved out of the proto before conversion and shape
// inference so those steps never copy weights; smaller ones (shapes, axes) stay for
// shape inference's data propagation.
constexpr std::int64_t kKeepInProtoElements = 64;

std::int64_t defaultOpset(const onnx::ModelProto& model, const std::string& path) {
  std::int64_t opset = -1;
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx")
      opset = imp.version();
  if (opset < 0) {
    std::string domains;
    for (const auto& imp : model.opset_import())
      domains += (domains.empty() ? "'" : ", '") + imp.domain() + "'";
    throw Error(ErrorKind::Unsupported,
                "the model uses only other op domains (" + domains +
                    "); Lathe supports the default ONNX domain",
                {path, {}, {}});
  }
  if (opset < kMinOpset || opset > kMaxOpset)
    throw Error(ErrorKind::Unsupported,
                "opset " + std::to_string(opset) + " (Lathe reads opsets " +
                    std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")",
                {path, {}, {}});
  return opset;
}

std::string nodeLabel(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? "#" + std::to_string(index) : node.name();
}

// Refuses ops Lathe does not know before the ONNX checker gives a less helpful message;
// with `unknown`, lists them instead ("Op (node)").
void checkOpsKnown(const onnx::GraphProto& g, const std::string& path, std::int64_t opset,
                   std::vector<std::string>* unknown) {
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& node = g.node(i);
    const ErrorLocation where{path, nodeLabel(node, i), node.op_type()};
    const bool otherDomain = !node.domain().empty() && node.domain() != "ai.onnx";
    // Ops removed from the standard that the version converter rewrites (Scatter-9/10
    // becomes ScatterElements) are fine before conversion.
    const bool convertedAway =
        node.op_type() == "Scatter" || (opset > 17 && expressedByOpset17Ops(node.op_type()));
    if (otherDomain || (!graph::findOp(node.op_type()) && !convertedAway)) {
      if (unknown)
        unknown->push_back((otherDomain ? node.domain() + "::" : std::string()) + node.op_type() +
                           " (" + nodeLabel(node, i) + ")");
      else if (otherDomain)
        throw Error(ErrorKind::Unsupported,
                    "op domain '" + node.domain() + "' (only the default ONNX domain is supported)",
                    where);
      else
        throw Error(ErrorKind::Unsupported, "op '" + node.op_type() + "' is not supported", where);
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g())
        checkOpsKnown(attr.g(), path, opset, unknown);
      for (const auto& sub : attr.graphs())
        checkOpsKnown(sub, path, opset, unknown);
    }
  }
}

void checkValueTypes(const onnx::GraphProto& g, const std::string& path) {
  auto check = [&](const onnx::ValueInfoProto& vi, const char* role) {
    if (!vi.has_type())
      return;
    if (!vi.type().has_tensor_type())
      throw Error(ErrorKind::Unsupported,
                  std::string(role) + " '" + vi.name() +
                      "' is not a tensor (sequences, maps and optionals are not supported)",
                  {path, {}, {}});
    const auto& tt = vi.type().tensor_type();
    if (!dtypeFromOnnx(tt.elem_type()))
      throw Error(ErrorKind::Unsupported,
                  std::string(role) + " '" + vi.name() + "' has element type " +
                      onnxTypeName(tt.elem_type()),
                  {path, {}, {}});
  };
  for (const auto& vi : g.input()) {
    check(vi, "input");
    // Checked here, before shape inference can truncate huge dims.
    if (!vi.type().tensor_type().has_shape())
      continue;
    std::int64_t elements = 1;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value())
        continue;
      const std::int64_t v = d.dim_value();
      if (v < 0 || v > kMaxTensorElements || (v > 0 && elements > kMaxTensorElements / v))
        throw Error(ErrorKind::Invalid,
                    "input '" + vi.name() + "' has an absurd shape (dimension " +
                        std::to_string(v) + "; at most 2^34 elements are accepted)",
                    {path, {}, {}});
      elements *= v;
    }
  }
  for (const auto& vi : g.output())
    check(vi, "output");
}

} // namespace

ImportResult importOnnxFile(const std::string& path, const ImportOptions& options) {
  auto progress = [&](int percent, const std::string& stage) {
    reportImportProgress(options, path, percent, stage);
  };
  const ErrorLocation fileOnly{path, {}, {}};
  ImportResult result;

  progress(0, "parsing");
  onnx::ModelProto model = parseModelFile(path);
  result.sourceOpset = defaultOpset(model, path);
  std::vector<std::string> unknownOps;
  checkOpsKnown(model.graph(), path, result.sourceOpset,
                options.allowUnknownOps ? &unknownOps : nullptr);
  checkValueTypes(model.graph(), path);
  // Scan-8 has a batch axis that Scan-9 dropped; the ONNX version converter drops it from the
  // graph's inputs too, so the converted model no longer takes the original's inputs.
  if (result.sourceOpset < 9)
    for (const auto& n : model.graph().node())
      if (n.op_type() == "Scan")
        throw Error(ErrorKind::Unsupported,
                    "Scan from opset 8 (with a batch axis) is not supported; re-export the model "
                    "with opset 9 or later",
                    {path, n.name(), n.op_type()});

  progress(20, "loading weights");
  const std::string modelDir = fs::path(path).parent_path().string();
  auto* graphProto = model.mutable_graph();
  for (auto& init : *graphProto->mutable_initializer()) {
    try {
      inlineExternalData(init, modelDir, "initializer '" + init.name() + "'");
    } catch (const Error& e) {
      throw e.within(fileOnly);
    }
  }
  if (graphProto->sparse_initializer_size() > 0)
    throw Error(ErrorKind::Unsupported, "sparse initializers", fileOnly);

  // Weights stay here; the child that runs the ONNX library's steps drops its copy of
  // them, so conversion and inference only copy structure.
  LibraryStepsResult steps = runOnnxLibrarySteps(
      model, result.sourceOpset, options.targetOpset, kMinNativeOpset, kKeepInProtoElements,
      !unknownOps.empty(), path, [&](int percent, const std::string& stage) {
        if (percent >= 0)
          progress(percent, stage);
        else if (options.cancel && options.cancel->load())
          throw Error(ErrorKind::Cancelled, "cancelled", fileOnly);
      });
  result.warnings = std::move(steps.warnings);
  if (!unknownOps.empty()) {
    std::string list;
    for (std::size_t i = 0; i < unknownOps.size() && i < 8; ++i)
      list += (i ? ", " : "") + unknownOps[i];
    if (unknownOps.size() > 8)
      list += " and " + std::to_string(unknownOps.size() - 8) + " more";
    result.warnings.push_back("ops Lathe does not know: " + list +
                              "; the model can be looked at, not compiled");
  }

  std::unordered_map<std::string, graph::TensorData> weights;
  for (auto& init : *graphProto->mutable_initializer()) {
    std::int64_t n = 1;
    for (std::int64_t d : init.dims())
      n *= std::max<std::int64_t>(d, 0);
    if (n <= kKeepInProtoElements)
      continue;
    try {
      weights.emplace(init.name(), takeTensorData(init, "initializer '" + init.name() + "'"));
    } catch (const Error& e) {
      throw e.within(fileOnly);
    }
  }
  model = std::move(steps.model);

  progress(80, "building graph");
  try {
    result.graph = buildGraph(model, std::move(weights));
  } catch (const Error& e) {
    throw e.within(fileOnly);
  }
  result.graph->hasUnknownOps = !unknownOps.empty();
  if (result.graph->name.empty())
    result.graph->name = fs::path(path).stem().string();
  graph::verifyGraphOrThrow(*result.graph, path);
  progress(100, "imported");
  return result;
}

} // namespace lathe::frontend
