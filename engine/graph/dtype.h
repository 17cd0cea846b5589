#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lathe::graph {

// Element types the engine represents. ONNX types outside this list (string,
// complex) are refused by the importer.
enum class DType : std::uint8_t {
  Undefined,
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

// Short name used by the printer: f32, i64, bool, ...
std::string_view dtypeName(DType type);
std::optional<DType> parseDType(std::string_view name);
// Bytes per element (bool is stored as one byte).
std::size_t dtypeSize(DType type);
bool isFloat(DType type);
bool isInteger(DType type); // signed or unsigned, not bool
// ONNX TensorProto.DataType codes (used by Cast's `to`, ConstantOfShape, ...).
std::optional<DType> dtypeFromOnnxCode(std::int64_t code);
std::int64_t onnxCodeOf(DType type);

} // namespace lathe::graph
