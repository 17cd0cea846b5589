#pragma once
// NumPy .npy and .npz files: model inputs, reference outputs and dumped intermediates.
//
// .npy: format versions 1.0, 2.0 and 3.0 are read; 1.0 is written (2.0 only when the header
// would not fit), with the header padded so the data starts on a 64-byte boundary, as
// numpy does. Little-endian, C order only: fortran_order, big-endian data and dtypes
// without a runtime element type (strings, objects, structured, complex, datetime) are
// refused. numpy has no bfloat16, so bf16 tensors are written as f32 (exact widening).
//
// .npz: a zip of NAME.npy members, read through libzip. Members may be STORED (numpy.savez)
// or DEFLATE-compressed (numpy.savez_compressed); written members are STORED, like savez.
//
// Errors: a malformed or unsupported file is lathe::Error kind Invalid whose location names
// the file and whose reason names the array ("array 'x': ..."); a file that cannot be
// opened, read or written is kind Io.

#include "engine/runtime/tensor.h"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::runtime {

Tensor readNpy(const std::filesystem::path& path);
void writeNpy(const std::filesystem::path& path, const Tensor& tensor);

// The same on a memory buffer; `source` names the buffer in errors.
Tensor decodeNpy(std::span<const std::byte> bytes, const std::string& source = "<memory>");
std::vector<std::byte> encodeNpy(const Tensor& tensor);

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Every array, in archive order, named without the ".npy" suffix.
std::vector<NamedTensor> readNpz(const std::filesystem::path& path);
// One array by name (Invalid if absent); the others are not decompressed. With
// maxDataBytes, an array whose data is larger is refused before it is inflated.
Tensor readNpzArray(const std::filesystem::path& path, std::string_view name,
                    std::optional<std::uint64_t> maxDataBytes = std::nullopt);
// Array names in archive order, without reading any data.
std::vector<std::string> listNpz(const std::filesystem::path& path);
// Name, element type and shape of every array, in archive order, from each member's
// header only: no array data is read or inflated.
struct ArrayInfo {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<std::int64_t> shape;
};
std::vector<ArrayInfo> describeNpz(const std::filesystem::path& path);
// Names must be unique and non-empty; to save tensors owned elsewhere, pass views
// (Tensor::view()). Replaces the file only once the archive is complete.
void writeNpz(const std::filesystem::path& path, std::span<const NamedTensor> arrays);

} // namespace lathe::runtime
