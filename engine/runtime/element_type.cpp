#include "engine/runtime/element_type.h"

#include <cmath>

namespace lathe::runtime {

namespace {

std::uint32_t floatBits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float floatFromBits(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

} // namespace

std::string_view elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  case ElementType::I8:
    return "i8";
  case ElementType::I16:
    return "i16";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::U8:
    return "u8";
  case ElementType::U16:
    return "u16";
  case ElementType::U32:
    return "u32";
  case ElementType::U64:
    return "u64";
  case ElementType::Bool:
    return "bool";
  }
  return "?";
}

std::optional<ElementType> parseElementType(std::string_view name) {
  for (ElementType type : kAllElementTypes)
    if (elementTypeName(type) == name)
      return type;
  return std::nullopt;
}

std::size_t elementSize(ElementType type) {
  switch (type) {
  case ElementType::F64:
  case ElementType::I64:
  case ElementType::U64:
    return 8;
  case ElementType::F32:
  case ElementType::I32:
  case ElementType::U32:
    return 4;
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::I16:
  case ElementType::U16:
    return 2;
  case ElementType::I8:
  case ElementType::U8:
  case ElementType::Bool:
    return 1;
  }
  return 0;
}

bool isFloatingPoint(ElementType type) {
  return type == ElementType::F32 || type == ElementType::F64 || type == ElementType::F16 ||
         type == ElementType::BF16;
}

bool isSignedInteger(ElementType type) {
  return type == ElementType::I8 || type == ElementType::I16 || type == ElementType::I32 ||
         type == ElementType::I64;
}

bool isUnsignedInteger(ElementType type) {
  return type == ElementType::U8 || type == ElementType::U16 || type == ElementType::U32 ||
         type == ElementType::U64;
}

// Branch-light conversions after Maratyszcza's FP16 library (fp16_ieee_from_fp32_value):
// the float multiply/add does the round-to-nearest-even, subnormals included.
Float16 Float16::fromFloat(float value) {
  const float scaleToInf = 0x1.0p+112f;
  const float scaleToZero = 0x1.0p-110f;
  float base = (std::fabs(value) * scaleToInf) * scaleToZero;

  const std::uint32_t w = floatBits(value);
  const std::uint32_t shl1W = w + w;
  const std::uint32_t sign = w & 0x80000000u;
  std::uint32_t bias = shl1W & 0xFF000000u;
  if (bias < 0x71000000u)
    bias = 0x71000000u;

  base = floatFromBits((bias >> 1) + 0x07800000u) + base;
  const std::uint32_t bits = floatBits(base);
  const std::uint32_t expBits = (bits >> 13) & 0x00007C00u;
  const std::uint32_t mantissaBits = bits & 0x00000FFFu;
  const std::uint32_t nonSign = expBits + mantissaBits;
  const std::uint32_t half = (sign >> 16) | (shl1W > 0xFF000000u ? 0x7E00u : nonSign);
  return Float16{static_cast<std::uint16_t>(half)};
}

float Float16::toFloat() const {
  const std::uint32_t w = std::uint32_t(bits) << 16;
  const std::uint32_t sign = w & 0x80000000u;
  const std::uint32_t twoW = w + w;

  const std::uint32_t expOffset = 0xE0u << 23;
  const float expScale = 0x1.0p-112f;
  const float normalized = floatFromBits((twoW >> 4) + expOffset) * expScale;

  const std::uint32_t magicMask = 126u << 23;
  const float magicBias = 0.5f;
  const float denormalized = floatFromBits((twoW >> 17) | magicMask) - magicBias;

  const std::uint32_t denormalizedCutoff = 1u << 27;
  const std::uint32_t result =
      sign | (twoW < denormalizedCutoff ? floatBits(denormalized) : floatBits(normalized));
  return floatFromBits(result);
}

BFloat16 BFloat16::fromFloat(float value) {
  const std::uint32_t bits = floatBits(value);
  // Rounding could carry a NaN's payload into infinity, so NaN keeps a quiet-NaN pattern.
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return BFloat16{static_cast<std::uint16_t>((bits >> 16) | 0x0040u)};
  const std::uint32_t roundingBias = 0x7FFFu + ((bits >> 16) & 1u);
  return BFloat16{static_cast<std::uint16_t>((bits + roundingBias) >> 16)};
}

} // namespace lathe::runtime
