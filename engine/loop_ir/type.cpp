#include "engine/loop_ir/type.h"

#include "engine/support/diagnostics.h"

namespace lathe::loop {

namespace {

bool validBits(TypeCode code, int bits) {
  switch (code) {
  case TypeCode::Int:
  case TypeCode::UInt:
    return bits == 8 || bits == 16 || bits == 32 || bits == 64;
  case TypeCode::Float:
    return bits == 16 || bits == 32 || bits == 64;
  case TypeCode::Bool:
    return bits == 1;
  }
  return false;
}

} // namespace

Type::Type(TypeCode code, int bits, int lanes) : code_(code) {
  LATHE_CHECK(validBits(code, bits), "invalid bit width " + std::to_string(bits));
  LATHE_CHECK(lanes >= 1 && lanes <= 65535, "invalid lane count " + std::to_string(lanes));
  bits_ = static_cast<std::uint8_t>(bits);
  lanes_ = static_cast<std::uint16_t>(lanes);
}

std::string Type::toString() const {
  if (!valid())
    return "<invalid>";
  std::string out;
  switch (code_) {
  case TypeCode::Int:
    out = "i" + std::to_string(bits_);
    break;
  case TypeCode::UInt:
    out = "u" + std::to_string(bits_);
    break;
  case TypeCode::Float:
    out = "f" + std::to_string(bits_);
    break;
  case TypeCode::Bool:
    out = "bool";
    break;
  }
  if (lanes_ > 1)
    out += "x" + std::to_string(lanes_);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Type& type) {
  return os << type.toString();
}

} // namespace lathe::loop
