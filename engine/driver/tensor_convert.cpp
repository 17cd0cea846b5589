#include "engine/driver/tensor_convert.h"

#include "engine/driver/compile_model.h"
#include "engine/support/diagnostics.h"

#include <cstring>
#include <memory>

namespace lathe::driver {

runtime::Tensor toTensor(const graph::TensorData& data) {
  runtime::Tensor t = runtime::Tensor::allocate(elementTypeOf(data.dtype()), data.dims());
  if (data.byteSize() > 0)
    std::memcpy(t.rawData(), data.data(), data.byteSize());
  return t;
}

graph::TensorData toTensorData(const runtime::Tensor& t) {
  const auto dtype = graph::parseDType(runtime::elementTypeName(t.elementType()));
  LATHE_CHECK(dtype.has_value(), "a runtime type without a graph type");
  auto bytes = std::make_shared<std::string>(static_cast<const char*>(t.rawData()), t.byteSize());
  return graph::TensorData(*dtype, t.shape(), std::move(bytes));
}

} // namespace lathe::driver
