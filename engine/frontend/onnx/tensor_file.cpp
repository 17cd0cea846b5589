#include "engine/frontend/onnx/tensor_file.h"

#include "engine/frontend/onnx/tensor_proto.h"
#include "engine/support/diagnostics.h"

#include <fstream>
#include <onnx/onnx_pb.h>
#include <sstream>

namespace lathe::frontend {

NamedTensorData readTensorProtoFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::Io, "cannot open the tensor file", {path, {}, {}});
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes.str()))
    throw Error(ErrorKind::Invalid, "not a serialized ONNX TensorProto", {path, {}, {}});
  try {
    graph::TensorData data = takeTensorData(proto, "tensor '" + proto.name() + "'");
    return {proto.name(), std::move(data)};
  } catch (const Error& e) {
    throw e.within({path, {}, {}});
  }
}

} // namespace lathe::frontend
