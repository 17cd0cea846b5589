#pragma once
// Runtime tensors: a dense, C-order (row-major) block of elements of one type.
//
// A Tensor either owns its storage (Tensor::allocate) or is a non-owning view into memory
// that someone else keeps alive (Tensor::view, typically a slice of the executor's arena).
// Owned storage starts on a kTensorAlignment boundary and is padded with zero bytes to a
// multiple of it, so generated code may use aligned vector loads and read (never write)
// up to the end of the last 64-byte line.
//
// Tensors are move-only: copying element data is explicit (clone) because activations can
// be large. Moving an owning tensor keeps its data pointer, so views of it stay valid.

#include "engine/runtime/element_type.h"
#include "engine/support/diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace lathe::runtime {

// Alignment of owned tensor storage and of every buffer in a memory plan's arena:
// one cache line, and enough for AVX-512 aligned loads.
inline constexpr std::size_t kTensorAlignment = 64;

// Owned, aligned, zero-initialised bytes; the building block of tensors and arenas.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  // `bytes` may be 0; `alignment` must be a power of two, at least kTensorAlignment is used.
  explicit AlignedBuffer(std::size_t bytes, std::size_t alignment = kTensorAlignment);
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : storage_(std::move(other.storage_)), size_(std::exchange(other.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    storage_ = std::move(other.storage_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  std::byte* data() { return storage_.get(); }
  const std::byte* data() const { return storage_.get(); }
  std::size_t size() const { return size_; }

private:
  struct Free {
    std::size_t alignment;
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> storage_{nullptr, Free{kTensorAlignment}};
  std::size_t size_ = 0;
};

// Number of elements of `shape` (1 for a scalar); an internal error on negative dims or
// overflow, so callers that read shapes from files validate them first.
std::int64_t elementCount(std::span<const std::int64_t> shape);
// "[2,3,4]"; "[]" for a scalar.
std::string formatShape(std::span<const std::int64_t> shape);

class Tensor {
public:
  // An f32 tensor of shape [0]: zero elements, no storage.
  Tensor() : shape_{0} {}

  // Owned, aligned storage filled with zeros.
  static Tensor allocate(ElementType type, std::vector<std::int64_t> shape);
  // A non-owning view of `data`, which must hold elementCount(shape) elements, stay alive
  // as long as the view is used and be aligned to the element size. Null only when empty.
  static Tensor view(ElementType type, std::vector<std::int64_t> shape, void* data);

  // A moved-from tensor is the default (empty) tensor.
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  // A deep copy with owned storage (also of a view).
  Tensor clone() const;
  // A non-owning view of this tensor's elements (valid while this tensor's storage lives).
  Tensor view();

  ElementType elementType() const { return type_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t numElements() const { return numElements_; }
  std::size_t byteSize() const {
    return static_cast<std::size_t>(numElements_) * elementSize(type_);
  }
  bool ownsStorage() const { return owned_.data() != nullptr; }
  // True when the first element sits on an `alignment`-byte boundary.
  bool isAligned(std::size_t alignment = kTensorAlignment) const;

  void* rawData() { return data_; }
  const void* rawData() const { return data_; }
  std::span<std::byte> bytes() { return {static_cast<std::byte*>(data_), byteSize()}; }
  std::span<const std::byte> bytes() const {
    return {static_cast<const std::byte*>(data_), byteSize()};
  }

  // Typed access; T must match the element type (an internal error otherwise).
  template <class T>
  T* data() {
    checkAccess(elementTypeOf<T>);
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data() const {
    checkAccess(elementTypeOf<T>);
    return static_cast<const T*>(data_);
  }
  template <class T>
  std::span<T> values() {
    return {data<T>(), static_cast<std::size_t>(numElements_)};
  }
  template <class T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<std::size_t>(numElements_)};
  }

  void fillZeros();
  void fillOnes();
  // Deterministic for a given seed on every platform (own generator, not <random>
  // distributions): floats uniform in [-1, 1), signed ints in [-8, 8), unsigned ints
  // in [0, 16), bools 0 or 1. Small integers keep index-like inputs and sums in range.
  void fillRandom(std::uint64_t seed);
  // Each element, in order, from next() converted to the element type (bool: nonzero).
  void fillFrom(const std::function<double()>& next);

  // The element at flat index `i` widened to double (any element type).
  double elementAsDouble(std::int64_t i) const;

private:
  void checkAccess(ElementType requested) const;

  ElementType type_ = ElementType::F32;
  std::vector<std::int64_t> shape_;
  std::int64_t numElements_ = 0;
  void* data_ = nullptr;
  AlignedBuffer owned_; // empty for views
};

// "f32[2,3]".
std::string describe(const Tensor& tensor);
// Same element type, shape and bytes (so NaNs with equal bits compare equal).
bool bitwiseEqual(const Tensor& a, const Tensor& b);

// Statistics for display. min/max/mean cover the finite elements only; NaN and infinity are
// counted apart so that one bad value does not hide the range of the rest. With no finite
// element min, max and mean are NaN. Integers and bools are summarised as numbers too.
struct TensorSummary {
  std::int64_t count = 0;
  std::int64_t nanCount = 0;
  std::int64_t infCount = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
};

TensorSummary summarize(const Tensor& tensor);
// The `k` largest elements (NaN ignored) as (flat index, value), largest first; ties keep
// the lower index first.
std::vector<std::pair<std::int64_t, double>> largest(const Tensor& tensor, int k);
// "min -0.998 max 0.997 mean 0.0123 (2 NaN, 1 inf)".
std::string formatSummary(const TensorSummary& summary);

} // namespace lathe::runtime
