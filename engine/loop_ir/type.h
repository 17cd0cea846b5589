#pragma once
// The value type of a loop IR expression: a scalar code, a bit width and a vector width.

#include <cstdint>
#include <ostream>
#include <string>

namespace lathe::loop {

enum class TypeCode : std::uint8_t { Int, UInt, Float, Bool };

// A scalar (lanes == 1) or a vector (lanes > 1) of one element kind.
// Valid widths: Int/UInt 8, 16, 32, 64; Float 16 (IEEE half), 32, 64; Bool 1.
// A default-constructed Type is invalid (lanes == 0) and is rejected by every make().
class Type {
public:
  Type() = default;
  Type(TypeCode code, int bits, int lanes = 1); // LATHE_CHECKs the combination

  TypeCode code() const { return code_; }
  int bits() const { return bits_; }
  int lanes() const { return lanes_; }
  bool valid() const { return lanes_ > 0; }

  bool isInt() const { return code_ == TypeCode::Int; }
  bool isUInt() const { return code_ == TypeCode::UInt; }
  bool isFloat() const { return code_ == TypeCode::Float; }
  bool isBool() const { return code_ == TypeCode::Bool; }
  bool isIntOrUInt() const { return isInt() || isUInt(); }
  bool isScalar() const { return lanes_ == 1; }
  bool isVector() const { return lanes_ > 1; }

  // The same element kind with another vector width.
  Type withLanes(int lanes) const { return Type(code_, bits_, lanes); }
  Type element() const { return withLanes(1); }
  // Bytes one element occupies in memory; a Bool is stored as one byte (0 or 1), like ONNX.
  int bytes() const { return bits_ == 1 ? 1 : bits_ / 8; }

  // "f32", "i64x8", "bool", "boolx4", "u8".
  std::string toString() const;

  bool operator==(const Type&) const = default;

private:
  TypeCode code_ = TypeCode::Int;
  std::uint8_t bits_ = 0;
  std::uint16_t lanes_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Type& type);

inline Type f16(int lanes = 1) {
  return Type(TypeCode::Float, 16, lanes);
}
inline Type f32(int lanes = 1) {
  return Type(TypeCode::Float, 32, lanes);
}
inline Type f64(int lanes = 1) {
  return Type(TypeCode::Float, 64, lanes);
}
inline Type i8(int lanes = 1) {
  return Type(TypeCode::Int, 8, lanes);
}
inline Type i16(int lanes = 1) {
  return Type(TypeCode::Int, 16, lanes);
}
inline Type i32(int lanes = 1) {
  return Type(TypeCode::Int, 32, lanes);
}
inline Type i64(int lanes = 1) {
  return Type(TypeCode::Int, 64, lanes);
}
inline Type u8(int lanes = 1) {
  return Type(TypeCode::UInt, 8, lanes);
}
inline Type u16(int lanes = 1) {
  return Type(TypeCode::UInt, 16, lanes);
}
inline Type u32(int lanes = 1) {
  return Type(TypeCode::UInt, 32, lanes);
}
inline Type u64(int lanes = 1) {
  return Type(TypeCode::UInt, 64, lanes);
}
inline Type boolean(int lanes = 1) {
  return Type(TypeCode::Bool, 1, lanes);
}

// Loop variables, loop bounds, buffer shapes/strides and Load/Store indices are all of this
// type (vectors of it for vector indices), so index arithmetic never mixes widths.
inline Type indexType(int lanes = 1) {
  return i64(lanes);
}

} // namespace lathe::loop
