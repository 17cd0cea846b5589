#pragma once
// The helper process hands the bytes of the graph's larger constants (weights) back in a
// binary file beside the text IR, which prints them as `elided`: printing 25 million floats as
// text and parsing them back took most of a ResNet-50's import. The file is a magic line
// and then, per constant, its name's length (uint32, little-endian), the name, the byte count
// (uint64) and the bytes. Header-only: the helper and the client both use it.

#include "engine/graph/graph.h"
#include "engine/support/diagnostics.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>

namespace lathe::frontend::torchscript {

inline constexpr std::string_view kConstantsMagic = "lathe-constants 1\n";
// Constants with more elements than this travel in the binary file.
inline constexpr std::int64_t kInlineElements = 16;

inline void writeConstants(std::ostream& out, const graph::Graph& g) {
  out << kConstantsMagic;
  for (const graph::Value* v : g.constants()) {
    const graph::TensorData& data = v->constant();
    if (data.numElements() <= kInlineElements || data.isElided())
      continue;
    const auto nameSize = static_cast<std::uint32_t>(v->name().size());
    const auto byteCount = static_cast<std::uint64_t>(data.byteSize());
    char header[12];
    std::memcpy(header, &nameSize, 4);
    out.write(header, 4).write(v->name().data(), nameSize);
    std::memcpy(header, &byteCount, 8);
    out.write(header, 8).write(reinterpret_cast<const char*>(data.data()),
                               static_cast<std::streamsize>(byteCount));
  }
}

// Constant name -> its bytes. Throws Internal (naming `path`) when the file does not read.
inline std::unordered_map<std::string, std::shared_ptr<const std::string>>
readConstants(std::string_view bytes, const std::string& path) {
  auto bad = [&](const std::string& why) {
    throw Error(ErrorKind::Internal, "the TorchScript importer's constants file " + why,
                {path, {}, {}});
  };
  if (bytes.substr(0, kConstantsMagic.size()) != kConstantsMagic)
    bad("does not start as one");
  std::unordered_map<std::string, std::shared_ptr<const std::string>> constants;
  std::size_t pos = kConstantsMagic.size();
  while (pos < bytes.size()) {
    std::uint32_t nameSize = 0;
    std::uint64_t byteCount = 0;
    if (bytes.size() - pos < 4)
      bad("is cut short");
    std::memcpy(&nameSize, bytes.data() + pos, 4);
    pos += 4;
    if (bytes.size() - pos < nameSize)
      bad("is cut short");
    std::string name(bytes.substr(pos, nameSize));
    pos += nameSize;
    if (bytes.size() - pos < 8)
      bad("is cut short");
    std::memcpy(&byteCount, bytes.data() + pos, 8);
    pos += 8;
    if (bytes.size() - pos < byteCount)
      bad("is cut short in constant '" + name + "'");
    auto data = std::make_shared<const std::string>(bytes.substr(pos, byteCount));
    pos += byteCount;
    if (!constants.emplace(std::move(name), std::move(data)).second)
      bad("lists a constant twice");
  }
  return constants;
}

} // namespace lathe::frontend::torchscript
