#include "engine/frontend/onnx/tensor_proto.h"

#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <onnx/onnx_pb.h>

namespace lathe::frontend {

namespace fs = std::filesystem;
using graph::DType;

std::optional<DType> dtypeFromOnnx(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::INT16:
    return DType::I16;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::UINT8:
    return DType::U8;
  case onnx::TensorProto::UINT16:
    return DType::U16;
  case onnx::TensorProto::UINT32:
    return DType::U32;
  case onnx::TensorProto::UINT64:
    return DType::U64;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  default:
    return std::nullopt;
  }
}

const char* onnxTypeName(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::UNDEFINED:
    return "undefined";
  case onnx::TensorProto::STRING:
    return "string";
  case onnx::TensorProto::COMPLEX64:
    return "complex64";
  case onnx::TensorProto::COMPLEX128:
    return "complex128";
  default:
    break;
  }
  auto dt = dtypeFromOnnx(onnxType);
  return dt ? graph::dtypeName(*dt).data() : "unknown";
}

namespace {

[[noreturn]] void invalid(const std::string& what, const std::string& reason) {
  throw Error(ErrorKind::Invalid, what + ": " + reason);
}

std::int64_t checkedElementCount(const onnx::TensorProto& t, const std::string& what) {
  std::int64_t n = 1;
  for (std::int64_t d : t.dims()) {
    if (d < 0)
      invalid(what, "negative dimension " + std::to_string(d));
    if (d != 0 && n > kMaxTensorElements / d)
      invalid(what, "absurd size (more than 2^34 elements)");
    n *= d;
  }
  return n;
}

// Copies a repeated numeric field into bytes of the target element type.
template <typename Target, typename Field>
std::shared_ptr<std::string> packField(const Field& field) {
  auto bytes = std::make_shared<std::string>(field.size() * sizeof(Target), '\0');
  char* out = bytes->data();
  for (const auto& v : field) {
    const Target t = static_cast<Target>(v);
    std::memcpy(out, &t, sizeof t);
    out += sizeof t;
  }
  return bytes;
}

} // namespace

void inlineExternalData(onnx::TensorProto& tensor, const std::string& modelDir,
                        const std::string& what) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
    return;
  std::string location;
  std::int64_t offset = 0, length = -1;
  for (const auto& entry : tensor.external_data()) {
    try {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset")
        offset = std::stoll(entry.value());
      else if (entry.key() == "length")
        length = std::stoll(entry.value());
    } catch (const std::exception&) {
      invalid(what,
              "external data field '" + entry.key() + "' is not a number: '" + entry.value() + "'");
    }
  }
  if (location.empty())
    invalid(what, "external data has no location");
  const fs::path rel(location);
  if (rel.is_absolute())
    invalid(what, "external data location '" + location +
                      "' is an absolute path; it must be relative to the model's folder");
  for (const auto& part : rel)
    if (part == "..")
      invalid(what, "external data location '" + location + "' escapes the model's folder");
  const fs::path base = fs::weakly_canonical(fs::path(modelDir.empty() ? "." : modelDir));
  const fs::path file = fs::weakly_canonical(base / rel);
  // Symbolic links may still lead outside: compare the resolved paths.
  auto [mismatch, _] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (mismatch != base.end())
    invalid(what, "external data location '" + location + "' resolves outside the model's folder");
  std::error_code ec;
  const auto fileSize = fs::file_size(file, ec);
  if (ec || !fs::is_regular_file(file))
    throw Error(ErrorKind::Io, what + ": cannot read external data file '" + file.string() + "'");
  if (offset < 0 || static_cast<std::uint64_t>(offset) > fileSize)
    invalid(what, "external data offset " + std::to_string(offset) + " is past the end of '" +
                      location + "'");
  if (length < 0)
    length = static_cast<std::int64_t>(fileSize) - offset;
  if (static_cast<std::uint64_t>(offset + length) > fileSize)
    invalid(what, "external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
                      ") runs past the end of '" + location + "' (" + std::to_string(fileSize) +
                      " bytes)");
  const std::int64_t expected = checkedElementCount(tensor, what) *
                                static_cast<std::int64_t>(graph::dtypeSize(
                                    dtypeFromOnnx(tensor.data_type()).value_or(DType::Undefined)));
  if (expected != length)
    invalid(what, "external data holds " + std::to_string(length) + " bytes but the tensor needs " +
                      std::to_string(expected));
  std::ifstream in(file, std::ios::binary);
  std::string* raw = tensor.mutable_raw_data();
  raw->resize(static_cast<std::size_t>(length));
  in.seekg(offset);
  if (!in.read(raw->data(), length))
    throw Error(ErrorKind::Io, what + ": reading external data from '" + location + "' failed");
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
}

graph::TensorData takeTensorData(onnx::TensorProto& tensor, const std::string& what) {
  const auto dtype = dtypeFromOnnx(tensor.data_type());
  if (!dtype)
    throw Error(ErrorKind::Unsupported,
                what + ": element type " + onnxTypeName(tensor.data_type()) + " is not supported");
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    invalid(what, "external data was not resolved");
  const std::int64_t count = checkedElementCount(tensor, what);
  const std::size_t esize = graph::dtypeSize(*dtype);
  std::vector<std::int64_t> dims(tensor.dims().begin(), tensor.dims().end());

  std::shared_ptr<std::string> bytes;
  std::int64_t have = -1; // elements present in the typed field
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != static_cast<std::size_t>(count) * esize)
      invalid(what, "raw_data holds " + std::to_string(tensor.raw_data().size()) + " bytes but " +
                        graph::toString(graph::TensorType::of(*dtype, dims)) + " needs " +
                        std::to_string(count * esize));
    bytes = std::make_shared<std::string>(std::move(*tensor.mutable_raw_data()));
    tensor.clear_raw_data();
  } else {
    switch (*dtype) {
    case DType::F32:
      have = tensor.float_data_size();
      bytes = packField<float>(tensor.float_data());
      break;
    case DType::F64:
      have = tensor.double_data_size();
      bytes = packField<double>(tensor.double_data());
      break;
    case DType::I64:
      have = tensor.int64_data_size();
      bytes = packField<std::int64_t>(tensor.int64_data());
      break;
    case DType::U32:
      have = tensor.uint64_data_size();
      bytes = packField<std::uint32_t>(tensor.uint64_data());
      break;
    case DType::U64:
      have = tensor.uint64_data_size();
      bytes = packField<std::uint64_t>(tensor.uint64_data());
      break;
    case DType::I32:
      have = tensor.int32_data_size();
      bytes = packField<std::int32_t>(tensor.int32_data());
      break;
    case DType::I16:
      have = tensor.int32_data_size();
      bytes = packField<std::int16_t>(tensor.int32_data());
      break;
    case DType::I8:
      have = tensor.int32_data_size();
      bytes = packField<std::int8_t>(tensor.int32_data());
      break;
    case DType::U16:
    case DType::F16:
    case DType::BF16:
      have = tensor.int32_data_size();
      bytes = packField<std::uint16_t>(tensor.int32_data());
      break;
    case DType::U8:
    case DType::Bool:
      have = tensor.int32_data_size();
      bytes = packField<std::uint8_t>(tensor.int32_data());
      break;
    case DType::Undefined:
      break;
    }
    if (have != count)
      invalid(what, "holds " + std::to_string(have) + " values but its dims need " +
                        std::to_string(count));
    tensor.clear_float_data();
    tensor.clear_double_data();
    tensor.clear_int32_data();
    tensor.clear_int64_data();
    tensor.clear_uint64_data();
  }
  if (*dtype == DType::Bool) // normalise to 0/1
    for (char& c : *bytes)
      c = c != 0;
  return graph::TensorData(*dtype, std::move(dims), std::move(bytes));
}

} // namespace lathe::frontend
