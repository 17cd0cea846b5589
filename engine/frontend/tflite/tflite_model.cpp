#include "engine/frontend/tflite/tflite_model.h"

#include "engine/graph/tensor_type.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <unordered_set>

namespace lathe::frontend::tflite {
namespace {

namespace fs = std::filesystem;
using graph::DType;
using lathe_tflite::TensorType;

std::optional<DType> dtypeOf(TensorType t) {
  switch (t) {
  case TensorType::FLOAT32:
    return DType::F32;
  case TensorType::FLOAT16:
    return DType::F16;
  case TensorType::FLOAT64:
    return DType::F64;
  case TensorType::INT8:
    return DType::I8;
  case TensorType::UINT8:
    return DType::U8;
  case TensorType::INT16:
    return DType::I16;
  case TensorType::UINT16:
    return DType::U16;
  case TensorType::INT32:
    return DType::I32;
  case TensorType::UINT32:
    return DType::U32;
  case TensorType::INT64:
    return DType::I64;
  case TensorType::UINT64:
    return DType::U64;
  case TensorType::BOOL:
    return DType::Bool;
  case TensorType::BFLOAT16:
    return DType::BF16;
  default:
    return std::nullopt;
  }
}

std::string typeName(TensorType t) {
  const char* name = lathe_tflite::EnumNameTensorType(t);
  return name && *name ? name : "type " + std::to_string(static_cast<int>(t));
}

} // namespace

std::string builtinName(lathe_tflite::BuiltinOperator op) {
  const char* name = lathe_tflite::EnumNameBuiltinOperator(op);
  return name && *name ? name : "builtin operator " + std::to_string(static_cast<int>(op));
}

TfliteModel::TfliteModel(std::string path) : path_(std::move(path)) {
  const ErrorLocation file{path_, {}, {}};
  std::error_code ec;
  if (!fs::is_regular_file(path_, ec))
    throw Error(ErrorKind::Io, fs::exists(path_, ec) ? "not a regular file" : "no such file", file);
  const auto size = fs::file_size(path_, ec);
  if (ec)
    throw Error(ErrorKind::Io, "cannot read the file size: " + ec.message(), file);
  if (size == 0)
    throw Error(ErrorKind::Invalid, "the file is empty", file);
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    throw Error(ErrorKind::Unsupported,
                "TFLite files of 2 GiB or more (weights outside the flatbuffer) are not supported",
                file);
  std::ifstream in(path_, std::ios::binary);
  bytes_.resize(size);
  if (!in.read(bytes_.data(), static_cast<std::streamsize>(size)))
    throw Error(ErrorKind::Io, "cannot read the file", file);

  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes_.data());
  if (size < 8 || !lathe_tflite::ModelBufferHasIdentifier(data))
    throw Error(ErrorKind::Invalid, "not a TFLite model (no \"TFL3\" identifier)", file);
  flatbuffers::Verifier::Options options;
  options.max_depth = 32;
  options.max_tables = 4'000'000;
  flatbuffers::Verifier verifier(data, bytes_.size(), options);
  if (!lathe_tflite::VerifyModelBuffer(verifier))
    throw Error(ErrorKind::Invalid,
                "the TFLite flatbuffer is corrupt (an offset or length points outside the file, "
                "or a table is malformed)",
                file);
  model_ = lathe_tflite::GetModel(data);
  if (model_->version() != 3)
    throw Error(ErrorKind::Unsupported,
                "TFLite schema version " + std::to_string(model_->version()) +
                    " (Lathe reads version 3)",
                file);
  const auto* subgraphs = model_->subgraphs();
  if (!subgraphs || subgraphs->size() == 0)
    throw Error(ErrorKind::Invalid, "the model has no subgraph", file);
  // Subgraph 0 is the model; the others run only when one of its operators calls them
  // (WHILE, IF, CALL_ONCE), and the importer refuses those operators by name.
  subgraph_ = subgraphs->Get(0);
  readTensors();
}

void TfliteModel::readTensors() {
  const auto* tensors = subgraph_->tensors();
  if (!tensors)
    throw Error(ErrorKind::Invalid, "the subgraph has no tensor table", {path_, {}, {}});
  const std::size_t bufferCount = model_->buffers() ? model_->buffers()->size() : 0;
  std::unordered_set<std::string> used;
  tensors_.reserve(tensors->size());
  for (std::size_t i = 0; i < tensors->size(); ++i) {
    const lathe_tflite::Tensor* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
    TensorInfo info;
    info.fileName = t->name() ? t->name()->str() : std::string();
    std::string name = info.fileName.empty() ? "tensor" + std::to_string(i) : info.fileName;
    if (used.count(name))
      name += "_" + std::to_string(i);
    used.insert(name);
    info.name = name;
    const ErrorLocation where{path_, info.fileName.empty() ? name : info.fileName, {}};
    const std::optional<DType> dtype = dtypeOf(t->type());
    if (!dtype)
      throw Error(ErrorKind::Unsupported,
                  "tensor " + std::to_string(i) + " has element type " + typeName(t->type()),
                  where);
    info.dtype = *dtype;
    if (t->sparsity())
      throw Error(ErrorKind::Unsupported, "sparse tensors are not supported", where);
    if (t->is_variable())
      throw Error(ErrorKind::Unsupported, "variable (stateful) tensors are not supported", where);
    if (t->shape())
      for (int d : *t->shape()) {
        if (d < 0)
          throw Error(ErrorKind::Invalid, "negative dimension " + std::to_string(d), where);
        info.shape.push_back(d);
      }
    if (t->shape_signature())
      for (int d : *t->shape_signature())
        info.dynamicDims = info.dynamicDims || d < 0;
    if (!graph::TensorType::of(info.dtype, info.shape).numElements())
      throw Error(ErrorKind::Invalid, "the shape's element count overflows", where);
    info.buffer = t->buffer();
    if (info.buffer >= bufferCount && info.buffer != 0)
      throw Error(ErrorKind::Invalid,
                  "buffer index " + std::to_string(info.buffer) +
                      " is out of range (the model has " + std::to_string(bufferCount) +
                      " buffers)",
                  where);
    if (const auto* q = t->quantization()) {
      if (q->details_type() != lathe_tflite::QuantizationDetails::NONE)
        throw Error(ErrorKind::Unsupported, "custom quantization is not supported", where);
      if (q->scale())
        for (float s : *q->scale())
          info.quant.scales.push_back(s);
      if (q->zero_point())
        for (std::int64_t z : *q->zero_point())
          info.quant.zeroPoints.push_back(z);
      info.quant.axis = q->quantized_dimension();
      if (info.quant.present()) {
        if (info.quant.zeroPoints.empty())
          info.quant.zeroPoints.assign(info.quant.scales.size(), 0);
        if (info.quant.zeroPoints.size() != info.quant.scales.size())
          throw Error(ErrorKind::Invalid,
                      std::to_string(info.quant.scales.size()) + " quantization scales but " +
                          std::to_string(info.quant.zeroPoints.size()) + " zero points",
                      where);
        for (float s : info.quant.scales)
          if (!(s > 0.0f) || !std::isfinite(s))
            throw Error(ErrorKind::Invalid,
                        "quantization scale " + std::to_string(s) + " is not a positive number",
                        where);
        if (!info.quant.perTensor() &&
            (info.quant.axis < 0 ||
             static_cast<std::size_t>(info.quant.axis) >= info.shape.size() ||
             info.shape[static_cast<std::size_t>(info.quant.axis)] !=
                 static_cast<std::int64_t>(info.quant.scales.size())))
          throw Error(ErrorKind::Invalid,
                      std::to_string(info.quant.scales.size()) +
                          " per-channel scales do not match dimension " +
                          std::to_string(info.quant.axis) + " of the tensor",
                      where);
      }
    }
    tensors_.push_back(std::move(info));
  }
}

const TensorInfo& TfliteModel::tensor(std::int64_t index, const std::string& what) const {
  if (index < 0 || static_cast<std::size_t>(index) >= tensors_.size())
    throw Error(ErrorKind::Invalid,
                what + " refers to tensor " + std::to_string(index) + " (the subgraph has " +
                    std::to_string(tensors_.size()) + ")",
                {path_, {}, {}});
  return tensors_[static_cast<std::size_t>(index)];
}

std::optional<graph::TensorData> TfliteModel::constantData(std::int64_t index) const {
  const TensorInfo& info = tensor(index, "a constant");
  if (info.buffer == 0 || !model_->buffers())
    return std::nullopt;
  const lathe_tflite::Buffer* buffer = model_->buffers()->Get(info.buffer);
  const ErrorLocation where{path_, info.name, {}};
  std::string bytes;
  if (buffer->data() && buffer->data()->size() > 0) {
    bytes.assign(reinterpret_cast<const char*>(buffer->data()->data()), buffer->data()->size());
  } else if (buffer->offset() > 1) {
    const std::uint64_t offset = buffer->offset(), size = buffer->size();
    if (offset > bytes_.size() || size > bytes_.size() - offset)
      throw Error(ErrorKind::Invalid,
                  "buffer " + std::to_string(info.buffer) + " lies outside the file (offset " +
                      std::to_string(offset) + ", size " + std::to_string(size) + ")",
                  where);
    bytes = bytes_.substr(offset, size);
  } else {
    return std::nullopt;
  }
  const auto count = graph::TensorType::of(info.dtype, info.shape).numElements();
  const std::uint64_t want = static_cast<std::uint64_t>(*count) * graph::dtypeSize(info.dtype);
  if (bytes.size() != want)
    throw Error(ErrorKind::Invalid,
                "buffer " + std::to_string(info.buffer) + " holds " + std::to_string(bytes.size()) +
                    " bytes; the tensor's shape and type need " + std::to_string(want),
                where);
  return graph::TensorData(info.dtype, info.shape,
                           std::make_shared<const std::string>(std::move(bytes)));
}

lathe_tflite::BuiltinOperator TfliteModel::opcode(const lathe_tflite::Operator& op,
                                                  std::size_t opIndex) const {
  const auto* codes = model_->operator_codes();
  const std::string where = "operator " + std::to_string(opIndex);
  if (!codes || op.opcode_index() >= codes->size())
    throw Error(ErrorKind::Invalid,
                where + " has operator code index " + std::to_string(op.opcode_index()) +
                    " (the model lists " + std::to_string(codes ? codes->size() : 0) + ")",
                {path_, {}, {}});
  const lathe_tflite::OperatorCode* code = codes->Get(op.opcode_index());
  // Codes above 127 live only in builtin_code; older files fill only the byte field.
  const int value =
      std::max<int>(code->deprecated_builtin_code(), static_cast<int>(code->builtin_code()));
  return static_cast<lathe_tflite::BuiltinOperator>(value);
}

std::string TfliteModel::customCode(const lathe_tflite::Operator& op) const {
  const lathe_tflite::OperatorCode* code = model_->operator_codes()->Get(op.opcode_index());
  return code->custom_code() ? code->custom_code()->str() : "(unnamed)";
}

} // namespace lathe::frontend::tflite
