#pragma once
// Element types of runtime tensors. Deliberately separate from graph::DType so the
// runtime does not depend on the graph IR; the short names ("f32", "i64", "bool", ...)
// are the same, so the executor converts with parseElementType(graph::dtypeName(t)).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace lathe::runtime {

enum class ElementType : std::uint8_t {
  F32,
  F64,
  F16,
  BF16,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  Bool,
};

// Every element type, in declaration order (for tests and tables).
inline constexpr ElementType kAllElementTypes[] = {
    ElementType::F32, ElementType::F64, ElementType::F16,  ElementType::BF16, ElementType::I8,
    ElementType::I16, ElementType::I32, ElementType::I64,  ElementType::U8,   ElementType::U16,
    ElementType::U32, ElementType::U64, ElementType::Bool,
};

std::string_view elementTypeName(ElementType type);
std::optional<ElementType> parseElementType(std::string_view name);
// Bytes per element; bool is stored as one byte holding 0 or 1.
std::size_t elementSize(ElementType type);
bool isFloatingPoint(ElementType type); // f16, bf16, f32, f64
bool isSignedInteger(ElementType type);
bool isUnsignedInteger(ElementType type);

// IEEE 754 binary16, stored as its bit pattern (C++20 has no std::float16_t).
struct Float16 {
  std::uint16_t bits = 0;
  static Float16 fromFloat(float value); // round to nearest even
  float toFloat() const;
};

// bfloat16: the upper half of an IEEE binary32, stored as its bit pattern.
struct BFloat16 {
  std::uint16_t bits = 0;
  static BFloat16 fromFloat(float value); // round to nearest even, NaN stays NaN
  float toFloat() const {
    const std::uint32_t wide = std::uint32_t(bits) << 16;
    float out;
    std::memcpy(&out, &wide, sizeof out);
    return out;
  }
};

// The element type a C++ type stands for; used by Tensor::data<T>() to check access.
template <class T>
struct ElementTypeOf;
template <>
struct ElementTypeOf<float> {
  static constexpr ElementType value = ElementType::F32;
};
template <>
struct ElementTypeOf<double> {
  static constexpr ElementType value = ElementType::F64;
};
template <>
struct ElementTypeOf<Float16> {
  static constexpr ElementType value = ElementType::F16;
};
template <>
struct ElementTypeOf<BFloat16> {
  static constexpr ElementType value = ElementType::BF16;
};
template <>
struct ElementTypeOf<std::int8_t> {
  static constexpr ElementType value = ElementType::I8;
};
template <>
struct ElementTypeOf<std::int16_t> {
  static constexpr ElementType value = ElementType::I16;
};
template <>
struct ElementTypeOf<std::int32_t> {
  static constexpr ElementType value = ElementType::I32;
};
template <>
struct ElementTypeOf<std::int64_t> {
  static constexpr ElementType value = ElementType::I64;
};
template <>
struct ElementTypeOf<std::uint8_t> {
  static constexpr ElementType value = ElementType::U8;
};
template <>
struct ElementTypeOf<std::uint16_t> {
  static constexpr ElementType value = ElementType::U16;
};
template <>
struct ElementTypeOf<std::uint32_t> {
  static constexpr ElementType value = ElementType::U32;
};
template <>
struct ElementTypeOf<std::uint64_t> {
  static constexpr ElementType value = ElementType::U64;
};
template <>
struct ElementTypeOf<bool> {
  static constexpr ElementType value = ElementType::Bool;
};

template <class T>
inline constexpr ElementType elementTypeOf = ElementTypeOf<T>::value;

} // namespace lathe::runtime
