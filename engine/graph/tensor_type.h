#pragma once
#include "engine/graph/dtype.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lathe::graph {

// One dimension: a known extent, a named symbol ("N", "seq"), or unknown.
struct Dim {
  std::int64_t value = -1; // >= 0 when known
  std::string symbol;      // non-empty when symbolic

  static Dim known(std::int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim unknown() { return Dim{}; }

  bool isKnown() const { return value >= 0; }
  bool isSymbolic() const { return value < 0 && !symbol.empty(); }
  bool operator==(const Dim&) const = default;
};

// Element type plus shape; the shape is absent when even the rank is unknown.
struct TensorType {
  DType dtype = DType::Undefined;
  std::optional<std::vector<Dim>> shape;

  static TensorType of(DType dtype, const std::vector<std::int64_t>& dims);

  bool hasRank() const { return shape.has_value(); }
  std::size_t rank() const { return shape ? shape->size() : 0; }
  bool isStatic() const; // rank and all dims known
  // Product of dims when static; nullopt otherwise or on overflow.
  std::optional<std::int64_t> numElements() const;
  std::vector<std::int64_t> staticDims() const; // requires isStatic()

  bool operator==(const TensorType&) const = default;
};

// "f32[1,3,224,224]", "i64[]" (scalar), "f32[N,?,8]", "f32[*]" (unknown rank), "?" (unknown).
std::string toString(const TensorType& type);
std::string toString(const Dim& dim);

} // namespace lathe::graph
