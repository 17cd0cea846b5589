#include "engine/graph/tensor_data.h"

#include "engine/support/diagnostics.h"

#include <bit>

namespace lathe::graph {

static std::int64_t product(const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims)
    n *= d;
  return n;
}

TensorData::TensorData(DType dtype, std::vector<std::int64_t> dims,
                       std::shared_ptr<const std::string> bytes)
    : dtype_(dtype), dims_(std::move(dims)), bytes_(std::move(bytes)) {
  LATHE_CHECK(bytes_, "TensorData without bytes; use TensorData::elided");
  LATHE_CHECK(static_cast<std::int64_t>(bytes_->size()) ==
                  product(dims_) * static_cast<std::int64_t>(dtypeSize(dtype_)),
              "tensor byte size does not match its dims");
}

TensorData TensorData::elided(DType dtype, std::vector<std::int64_t> dims) {
  TensorData t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  return t;
}

std::int64_t TensorData::numElements() const {
  return product(dims_);
}

float halfToFloat(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: renormalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

float bfloat16ToFloat(std::uint16_t b) {
  return std::bit_cast<float>(std::uint32_t(b) << 16);
}

double TensorData::elementAsDouble(std::int64_t i) const {
  LATHE_CHECK(!isElided() && i >= 0 && i < numElements(), "element index out of range");
  switch (dtype_) {
  case DType::F32:
    return values<float>()[i];
  case DType::F64:
    return values<double>()[i];
  case DType::F16:
    return halfToFloat(values<std::uint16_t>()[i]);
  case DType::BF16:
    return bfloat16ToFloat(values<std::uint16_t>()[i]);
  case DType::I8:
    return values<std::int8_t>()[i];
  case DType::I16:
    return values<std::int16_t>()[i];
  case DType::I32:
    return values<std::int32_t>()[i];
  case DType::I64:
    return static_cast<double>(values<std::int64_t>()[i]);
  case DType::U8:
    return values<std::uint8_t>()[i];
  case DType::U16:
    return values<std::uint16_t>()[i];
  case DType::U32:
    return values<std::uint32_t>()[i];
  case DType::U64:
    return static_cast<double>(values<std::uint64_t>()[i]);
  case DType::Bool:
    return values<std::uint8_t>()[i] != 0;
  case DType::Undefined:
    break;
  }
  LATHE_CHECK(false, "element of undefined dtype");
  return 0;
}

std::int64_t TensorData::elementAsInt(std::int64_t i) const {
  switch (dtype_) {
  case DType::I64:
    return values<std::int64_t>()[i];
  case DType::U64:
    return static_cast<std::int64_t>(values<std::uint64_t>()[i]);
  case DType::I32:
    return values<std::int32_t>()[i];
  default:
    return static_cast<std::int64_t>(elementAsDouble(i));
  }
}

bool TensorData::sameContents(const TensorData& other) const {
  if (dtype_ != other.dtype_ || dims_ != other.dims_ || isElided() != other.isElided())
    return false;
  if (isElided())
    return false; // unknown contents never compare equal
  return bytes_ == other.bytes_ || *bytes_ == *other.bytes_;
}

std::uint64_t TensorData::contentHash() const {
  std::uint64_t h = 1469598103934665603ull; // FNV-1a
  auto mix = [&h](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  };
  mix(&dtype_, sizeof(dtype_));
  for (std::int64_t d : dims_)
    mix(&d, sizeof(d));
  if (bytes_)
    mix(bytes_->data(), bytes_->size());
  return h;
}

} // namespace lathe::graph
