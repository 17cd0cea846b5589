#pragma once
#include "engine/graph/dtype.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace lathe::graph {

// Constant tensor contents (initializers, attribute tensors). The bytes are shared and
// immutable, so copying a TensorData or cloning a graph never copies weights.
// An "elided" tensor knows its type but not its bytes (printed IR that left them out).
class TensorData {
public:
  TensorData() = default;
  // `bytes` must hold exactly numElements * dtypeSize bytes (checked).
  TensorData(DType dtype, std::vector<std::int64_t> dims, std::shared_ptr<const std::string> bytes);
  static TensorData elided(DType dtype, std::vector<std::int64_t> dims);

  template <typename T>
  static TensorData fromValues(DType dtype, std::vector<std::int64_t> dims,
                               const std::vector<T>& values) {
    auto bytes = std::make_shared<std::string>(values.size() * sizeof(T), '\0');
    if (!values.empty())
      std::memcpy(bytes->data(), values.data(), bytes->size());
    return TensorData(dtype, std::move(dims), std::move(bytes));
  }

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& dims() const { return dims_; }
  std::int64_t numElements() const;
  bool isElided() const { return !bytes_; }
  std::size_t byteSize() const { return bytes_ ? bytes_->size() : 0; }
  const std::byte* data() const {
    return bytes_ ? reinterpret_cast<const std::byte*>(bytes_->data()) : nullptr;
  }
  template <typename T>
  std::span<const T> values() const {
    return {reinterpret_cast<const T*>(data()), byteSize() / sizeof(T)};
  }
  // Element i converted to double / int64 (any dtype; f16/bf16 decoded).
  double elementAsDouble(std::int64_t i) const;
  std::int64_t elementAsInt(std::int64_t i) const;
  // Same dtype, dims and bytes.
  bool sameContents(const TensorData& other) const;
  // A stable 64-bit hash of dtype, dims and bytes (used by CSE and printing).
  std::uint64_t contentHash() const;

private:
  DType dtype_ = DType::Undefined;
  std::vector<std::int64_t> dims_;
  std::shared_ptr<const std::string> bytes_;
};

float halfToFloat(std::uint16_t h);
float bfloat16ToFloat(std::uint16_t b);

} // namespace lathe::graph
