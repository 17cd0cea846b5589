#pragma once
// Copies between the graph's constant tensors (graph::TensorData) and
// the runtime's (runtime::Tensor), element types mapped one to one.
#include "engine/graph/tensor_data.h"
#include "engine/runtime/tensor.h"

namespace lathe::driver {

runtime::Tensor toTensor(const graph::TensorData& data);
graph::TensorData toTensorData(const runtime::Tensor& t);

} // namespace lathe::driver
