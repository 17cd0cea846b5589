#pragma once
// Internal to npy.cpp and npz.cpp: the .npy encoding over a byte stream, so that .npy
// files and .npz members are decoded straight into tensor storage without a staging copy.

#include "engine/runtime/tensor.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lathe::runtime::detail {

class ByteSource {
public:
  virtual ~ByteSource() = default;
  // Reads up to `bytes` bytes; returns fewer only at the end of the data.
  virtual std::size_t read(void* destination, std::size_t bytes) = 0;
};

// Where a decode happens, for error messages.
struct NpyContext {
  std::string file;
  std::string array; // empty for a plain .npy file
};

[[noreturn]] void failNpy(const NpyContext& where, ErrorKind kind, const std::string& reason);

// The header of one .npy stream, which is left at the first data byte.
struct NpyHeaderInfo {
  ElementType type = ElementType::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t dataBytes = 0;
  std::uint64_t headerBytes = 0; // magic, version, length and the header dict
  std::string descr;             // as written, for messages
};
NpyHeaderInfo readNpyHeader(ByteSource& in, std::optional<std::uint64_t> totalBytes,
                            const NpyContext& where);

// Decodes one .npy stream. `totalBytes`, when known, bounds allocations before any data is
// read, so a corrupt header cannot ask for terabytes.
// maxDataBytes: refuse (before reading the data) an array whose data would be larger.
Tensor readNpyStream(ByteSource& in, std::optional<std::uint64_t> totalBytes,
                     const NpyContext& where,
                     std::optional<std::uint64_t> maxDataBytes = std::nullopt);

// A tensor ready to be written: header bytes, then `data`.
struct EncodedNpy {
  std::string header;
  Tensor widened; // the f32 copy of a bf16 tensor; empty otherwise
  std::span<const std::byte> data;
};

EncodedNpy encodeNpyParts(const Tensor& tensor);

} // namespace lathe::runtime::detail
