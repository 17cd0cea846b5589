#pragma once
// A serialized TensorProto file (the ONNX backend tests' input_N.pb / output_N.pb).
#include <string>

#include "engine/graph/tensor_data.h"

namespace lathe::frontend {

struct NamedTensorData {
  std::string name;
  graph::TensorData data;
};

// Throws lathe::Error naming the file on unreadable or unsupported tensors.
NamedTensorData readTensorProtoFile(const std::string& path);

} // namespace lathe::frontend
