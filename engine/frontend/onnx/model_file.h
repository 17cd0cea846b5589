#pragma once
// Reading an ONNX model file into its protobuf form, with the checks every reader needs.

#include <onnx/onnx_pb.h>
#include <string>

namespace lathe::frontend {

// The model in `path`, parsed; lathe::Error naming the file when it is missing, empty,
// 2 GiB or more, corrupt or without a graph. External data stays external.
onnx::ModelProto parseModelFile(const std::string& path);

} // namespace lathe::frontend
