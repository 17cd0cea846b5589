#include "engine/frontend/onnx/expose_values.h"

#include "engine/frontend/onnx/model_file.h"
#include "engine/frontend/onnx/tensor_proto.h"
#include "engine/support/diagnostics.h"

#include <filesystem>
#include <fstream>
#include <unordered_set>

namespace lathe::frontend {

std::vector<std::string>
writeModelExposingValues(const std::string& modelPath,
                         const std::vector<std::pair<std::string, graph::DType>>& values,
                         const std::string& copyPath) {
  onnx::ModelProto model = parseModelFile(modelPath);
  onnx::GraphProto& g = *model.mutable_graph();
  const std::string modelDir = std::filesystem::path(modelPath).parent_path().string();
  for (auto& init : *g.mutable_initializer()) {
    try {
      inlineExternalData(init, modelDir, "initializer '" + init.name() + "'");
    } catch (const Error& e) {
      throw e.within({modelPath, {}, {}});
    }
  }
  std::unordered_set<std::string> produced, outputs;
  for (const auto& node : g.node())
    for (const std::string& out : node.output())
      if (!out.empty())
        produced.insert(out);
  for (const auto& out : g.output())
    outputs.insert(out.name());
  std::vector<std::string> available;
  for (const auto& [name, dtype] : values) {
    if (outputs.count(name)) {
      available.push_back(name);
      continue;
    }
    if (!produced.count(name) || dtype == graph::DType::Undefined)
      continue;
    onnx::ValueInfoProto& info = *g.add_output();
    info.set_name(name);
    info.mutable_type()->mutable_tensor_type()->set_elem_type(
        static_cast<int>(graph::onnxCodeOf(dtype)));
    outputs.insert(name);
    available.push_back(name);
  }
  if (model.ByteSizeLong() >= (std::size_t(1) << 31) - 1)
    throw Error(ErrorKind::Unsupported,
                "a copy with every value as an output would be 2 GiB or more (protobuf's limit)",
                {modelPath, {}, {}});
  std::ofstream file(copyPath, std::ios::binary | std::ios::trunc);
  if (!model.SerializeToOstream(&file) || !file.flush())
    throw Error(ErrorKind::Io, "cannot write '" + copyPath + "'", {modelPath, {}, {}});
  return available;
}

} // namespace lathe::frontend
