#pragma once
// TensorProto -> TensorData, including external data files. Internal to the importer.

#include "engine/graph/tensor_data.h"
#include "engine/graph/tensor_type.h"

#include <optional>
#include <string>

namespace onnx {
class TensorProto;
}

namespace lathe::frontend {

// Largest tensor the importer accepts (elements); larger ones are refused as absurd.
constexpr std::int64_t kMaxTensorElements = std::int64_t(1) << 34;

std::optional<graph::DType> dtypeFromOnnx(int onnxType);
const char* onnxTypeName(int onnxType);

// Replaces external data in `tensor` by the bytes it points to (raw_data). `modelDir` is
// the folder of the model file; locations outside it are refused. `what` names the
// tensor in messages.
void inlineExternalData(onnx::TensorProto& tensor, const std::string& modelDir,
                        const std::string& what);

// Takes the tensor's data out of the proto (moving raw_data, converting typed fields) and
// checks its size against the declared dims. The proto keeps its type and dims.
graph::TensorData takeTensorData(onnx::TensorProto& tensor, const std::string& what);

} // namespace lathe::frontend
