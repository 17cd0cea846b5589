#pragma once
// A serialized TensorProto file (the ONNX backend tests' input_N.pb / output_N.pb).
#include "engine/graph/tensor_data.h"

#include <string>

namespace lathe::frontend {

struct NamedTensorData {
  std::string name;
  graph::TensorData data;
};

// Throws lathe::Error naming the file on unreadable or unsupported tensors.
NamedTensorData readTensorProtoFile(const std::string& path);

} // namespace lathe::frontend
