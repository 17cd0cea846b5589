#include "engine/runtime/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

namespace lathe::runtime {

namespace {

std::size_t roundUp(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// SplitMix64: tiny, fast, and the same sequence on every compiler, unlike <random>'s
// distributions whose algorithms the standard leaves open.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // k * 2^(1-bits) - 1 for a random k in [0, 2^bits): uniform in [-1, 1) and exactly
  // representable in a float type with `bits` bits of precision (so no rounding up to 1).
  double nextSigned(int bits) {
    const std::uint64_t k = next() >> (64 - bits);
    return std::ldexp(static_cast<double>(k), 1 - bits) - 1.0;
  }
};

template <class T, class Fn>
void fillWith(Tensor& tensor, Fn&& make) {
  for (T& value : tensor.values<T>())
    value = make();
}

template <class T>
void summarizeInto(std::span<const T> values, TensorSummary& out, double& sum,
                   std::int64_t& finite) {
  for (const T& raw : values) {
    double value;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
      value = raw.toFloat();
    else
      value = static_cast<double>(raw);
    if (std::isnan(value)) {
      ++out.nanCount;
      continue;
    }
    if (std::isinf(value)) {
      ++out.infCount;
      continue;
    }
    if (finite == 0 || value < out.min)
      out.min = value;
    if (finite == 0 || value > out.max)
      out.max = value;
    sum += value;
    ++finite;
  }
}

// Calls fn(T{}) with T the C++ type of `type`; keeps the per-type switches in one place.
template <class Fn>
decltype(auto) dispatch(ElementType type, Fn&& fn) {
  switch (type) {
  case ElementType::F32:
    return fn(float{});
  case ElementType::F64:
    return fn(double{});
  case ElementType::F16:
    return fn(Float16{});
  case ElementType::BF16:
    return fn(BFloat16{});
  case ElementType::I8:
    return fn(std::int8_t{});
  case ElementType::I16:
    return fn(std::int16_t{});
  case ElementType::I32:
    return fn(std::int32_t{});
  case ElementType::I64:
    return fn(std::int64_t{});
  case ElementType::U8:
    return fn(std::uint8_t{});
  case ElementType::U16:
    return fn(std::uint16_t{});
  case ElementType::U32:
    return fn(std::uint32_t{});
  case ElementType::U64:
    return fn(std::uint64_t{});
  case ElementType::Bool:
    return fn(bool{});
  }
  LATHE_CHECK(false, "unknown element type");
  return fn(float{});
}

} // namespace

AlignedBuffer::AlignedBuffer(std::size_t bytes, std::size_t alignment) : size_(bytes) {
  LATHE_CHECK(alignment != 0 && (alignment & (alignment - 1)) == 0,
              "alignment must be a power of two");
  if (alignment < kTensorAlignment)
    alignment = kTensorAlignment;
  // Padded to whole lines (at least one) so that even an empty buffer has an address.
  const std::size_t padded = roundUp(bytes == 0 ? 1 : bytes, alignment);
  void* raw = ::operator new(padded, std::align_val_t(alignment));
  std::memset(raw, 0, padded);
  storage_ = std::unique_ptr<std::byte[], Free>(static_cast<std::byte*>(raw), Free{alignment});
}

void AlignedBuffer::Free::operator()(std::byte* p) const {
  ::operator delete(p, std::align_val_t(alignment));
}

std::int64_t elementCount(std::span<const std::int64_t> shape) {
  std::int64_t count = 1;
  for (std::int64_t dim : shape) {
    LATHE_CHECK(dim >= 0, "negative dimension in " + formatShape(shape));
    LATHE_CHECK(dim == 0 || count <= std::numeric_limits<std::int64_t>::max() / dim,
                "element count overflows in " + formatShape(shape));
    count *= dim;
  }
  return count;
}

std::string formatShape(std::span<const std::int64_t> shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

Tensor Tensor::allocate(ElementType type, std::vector<std::int64_t> shape) {
  Tensor tensor;
  tensor.type_ = type;
  tensor.numElements_ = elementCount(shape);
  tensor.shape_ = std::move(shape);
  const std::size_t limit = std::numeric_limits<std::size_t>::max() / 2 / elementSize(type);
  LATHE_CHECK(static_cast<std::uint64_t>(tensor.numElements_) <= limit,
              "tensor too large: " + formatShape(tensor.shape_));
  tensor.owned_ = AlignedBuffer(tensor.byteSize());
  tensor.data_ = tensor.owned_.data();
  return tensor;
}

Tensor Tensor::view(ElementType type, std::vector<std::int64_t> shape, void* data) {
  Tensor tensor;
  tensor.type_ = type;
  tensor.numElements_ = elementCount(shape);
  tensor.shape_ = std::move(shape);
  LATHE_CHECK(data != nullptr || tensor.numElements_ == 0, "null data for a non-empty view");
  LATHE_CHECK(reinterpret_cast<std::uintptr_t>(data) % elementSize(type) == 0,
              "view data is not aligned to its element size");
  tensor.data_ = data;
  return tensor;
}

Tensor::Tensor(Tensor&& other) noexcept
    : type_(other.type_), shape_(std::exchange(other.shape_, {0})),
      numElements_(std::exchange(other.numElements_, 0)),
      data_(std::exchange(other.data_, nullptr)), owned_(std::move(other.owned_)) {
  other.type_ = ElementType::F32;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this == &other)
    return *this;
  type_ = std::exchange(other.type_, ElementType::F32);
  shape_ = std::exchange(other.shape_, {0});
  numElements_ = std::exchange(other.numElements_, 0);
  data_ = std::exchange(other.data_, nullptr);
  owned_ = std::move(other.owned_);
  return *this;
}

Tensor Tensor::clone() const {
  Tensor copy = allocate(type_, shape_);
  if (byteSize() > 0)
    std::memcpy(copy.data_, data_, byteSize());
  return copy;
}

Tensor Tensor::view() {
  return view(type_, shape_, data_);
}

bool Tensor::isAligned(std::size_t alignment) const {
  return reinterpret_cast<std::uintptr_t>(data_) % alignment == 0;
}

void Tensor::checkAccess(ElementType requested) const {
  LATHE_CHECK(requested == type_, std::string("tensor of ") + std::string(elementTypeName(type_)) +
                                      " accessed as " + std::string(elementTypeName(requested)));
}

void Tensor::fillZeros() {
  if (byteSize() > 0)
    std::memset(data_, 0, byteSize());
}

void Tensor::fillOnes() {
  dispatch(type_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
      fillWith<T>(*this, [] { return T::fromFloat(1.0f); });
    else
      fillWith<T>(*this, [] { return T(1); });
  });
}

void Tensor::fillRandom(std::uint64_t seed) {
  SplitMix64 rng{seed};
  dispatch(type_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Float16>)
      fillWith<T>(*this, [&] { return T::fromFloat(static_cast<float>(rng.nextSigned(11))); });
    else if constexpr (std::is_same_v<T, BFloat16>)
      fillWith<T>(*this, [&] { return T::fromFloat(static_cast<float>(rng.nextSigned(8))); });
    else if constexpr (std::is_same_v<T, float>)
      fillWith<T>(*this, [&] { return static_cast<float>(rng.nextSigned(24)); });
    else if constexpr (std::is_same_v<T, double>)
      fillWith<T>(*this, [&] { return rng.nextSigned(53); });
    else if constexpr (std::is_same_v<T, bool>)
      fillWith<T>(*this, [&] { return (rng.next() >> 63) != 0; });
    else if constexpr (std::is_signed_v<T>)
      fillWith<T>(*this, [&] { return static_cast<T>(static_cast<int>(rng.next() >> 60) - 8); });
    else
      fillWith<T>(*this, [&] { return static_cast<T>(rng.next() >> 60); });
  });
}

void Tensor::fillFrom(const std::function<double()>& next) {
  dispatch(type_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
      fillWith<T>(*this, [&] { return T::fromFloat(static_cast<float>(next())); });
    else if constexpr (std::is_same_v<T, bool>)
      fillWith<T>(*this, [&] { return next() != 0; });
    else
      fillWith<T>(*this, [&] { return static_cast<T>(next()); });
  });
}

double Tensor::elementAsDouble(std::int64_t i) const {
  LATHE_CHECK(i >= 0 && i < numElements_, "element index out of range");
  return dispatch(type_, [&](auto tag) -> double {
    using T = decltype(tag);
    const T& value = static_cast<const T*>(data_)[i];
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
      return value.toFloat();
    else
      return static_cast<double>(value);
  });
}

std::string describe(const Tensor& tensor) {
  return std::string(elementTypeName(tensor.elementType())) + formatShape(tensor.shape());
}

bool bitwiseEqual(const Tensor& a, const Tensor& b) {
  if (a.elementType() != b.elementType() || a.shape() != b.shape())
    return false;
  return a.byteSize() == 0 || std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
}

TensorSummary summarize(const Tensor& tensor) {
  TensorSummary out;
  out.count = tensor.numElements();
  double sum = 0;
  std::int64_t finite = 0;
  dispatch(tensor.elementType(), [&](auto tag) {
    using T = decltype(tag);
    summarizeInto<T>(tensor.values<T>(), out, sum, finite);
  });
  if (finite == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out.min = out.max = out.mean = nan;
  } else {
    out.mean = sum / static_cast<double>(finite);
  }
  return out;
}

std::vector<std::pair<std::int64_t, double>> largest(const Tensor& tensor, int k) {
  std::vector<std::pair<std::int64_t, double>> all;
  if (k <= 0)
    return all;
  for (std::int64_t i = 0; i < tensor.numElements(); ++i)
    if (const double v = tensor.elementAsDouble(i); !std::isnan(v))
      all.emplace_back(i, v);
  const auto n =
      static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(k), all.size()));
  std::partial_sort(all.begin(), all.begin() + n, all.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  all.resize(static_cast<std::size_t>(n));
  return all;
}

std::string formatSummary(const TensorSummary& summary) {
  char text[160];
  std::snprintf(text, sizeof text, "min %.6g max %.6g mean %.6g", summary.min, summary.max,
                summary.mean);
  std::string out = text;
  if (summary.nanCount > 0 || summary.infCount > 0) {
    out += " (" + std::to_string(summary.nanCount) + " NaN, " + std::to_string(summary.infCount) +
           " inf)";
  }
  return out;
}

} // namespace lathe::runtime
