#include "engine/graph/dtype.h"

#include <array>
#include <utility>

namespace lathe::graph {
namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
};
constexpr std::array<DTypeInfo, 14> kTypes = {{
    {DType::Undefined, "?", 0},
    {DType::F32, "f32", 4},
    {DType::F64, "f64", 8},
    {DType::F16, "f16", 2},
    {DType::BF16, "bf16", 2},
    {DType::I8, "i8", 1},
    {DType::I16, "i16", 2},
    {DType::I32, "i32", 4},
    {DType::I64, "i64", 8},
    {DType::U8, "u8", 1},
    {DType::U16, "u16", 2},
    {DType::U32, "u32", 4},
    {DType::U64, "u64", 8},
    {DType::Bool, "bool", 1},
}};
} // namespace

std::string_view dtypeName(DType type) {
  return kTypes[static_cast<std::size_t>(type)].name;
}

std::size_t dtypeSize(DType type) {
  return kTypes[static_cast<std::size_t>(type)].size;
}

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeInfo& info : kTypes)
    if (info.name == name)
      return info.type;
  return std::nullopt;
}

bool isFloat(DType type) {
  return type == DType::F32 || type == DType::F64 || type == DType::F16 || type == DType::BF16;
}

bool isInteger(DType type) {
  switch (type) {
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
    return true;
  default:
    return false;
  }
}

namespace {
constexpr std::pair<std::int64_t, DType> kOnnxCodes[] = {
    {1, DType::F32},  {2, DType::U8},   {3, DType::I8},    {4, DType::U16},  {5, DType::I16},
    {6, DType::I32},  {7, DType::I64},  {9, DType::Bool},  {10, DType::F16}, {11, DType::F64},
    {12, DType::U32}, {13, DType::U64}, {16, DType::BF16},
};
} // namespace

std::optional<DType> dtypeFromOnnxCode(std::int64_t code) {
  for (const auto& [c, t] : kOnnxCodes)
    if (c == code)
      return t;
  return std::nullopt;
}

std::int64_t onnxCodeOf(DType type) {
  for (const auto& [c, t] : kOnnxCodes)
    if (t == type)
      return c;
  return 0;
}

} // namespace lathe::graph
