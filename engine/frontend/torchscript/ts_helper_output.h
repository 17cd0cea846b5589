#pragma once
// Reading back the helper's graph (lathe-torchscript-import): the text IR with its larger
// constants elided, and their bytes from the binary file beside it. Header-only: the client
// and the fuzz target use it, and neither needs libtorch.

#include "engine/frontend/torchscript/ts_constants_io.h"
#include "engine/graph/parser.h"
#include "engine/support/diagnostics.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace lathe::frontend::torchscript {

// Throws Internal (naming `path`) when the text does not parse, the constants file does not
// read or does not fit the text's types, or anything stays elided.
inline std::unique_ptr<graph::Graph>
readHelperGraph(std::string_view text, std::string_view constants, const std::string& path) {
  const ErrorLocation file{path, {}, {}};
  const auto bytes = readConstants(constants, path);
  const graph::ElidedConstantSource source =
      [&](const std::string& name, graph::DType dtype,
          const std::vector<std::int64_t>& dims) -> std::optional<graph::TensorData> {
    auto it = bytes.find(name);
    if (it == bytes.end())
      return std::nullopt;
    std::int64_t count = 1;
    for (std::int64_t d : dims)
      if (d < 0 || __builtin_mul_overflow(count, d, &count))
        count = -1;
    if (count < 0 ||
        it->second->size() != static_cast<std::size_t>(count) * graph::dtypeSize(dtype))
      throw Error(ErrorKind::Internal,
                  "the TorchScript importer's constant '" + name + "' has " +
                      std::to_string(it->second->size()) + " bytes for its type",
                  file);
    return graph::TensorData(dtype, dims, it->second);
  };
  std::unique_ptr<graph::Graph> g;
  try {
    g = graph::parseGraph(text, path, source);
  } catch (const Error& e) {
    throw Error(ErrorKind::Internal,
                "the TorchScript importer's graph does not parse: " + e.reason(), file);
  }
  // Nothing may stay elided: a constant without bytes would compute with nothing.
  for (const graph::Value* v : g->constants())
    if (v->constant().isElided())
      throw Error(ErrorKind::Internal,
                  "the TorchScript importer left constant '" + v->name() + "' without its bytes",
                  file);
  for (const auto& n : g->nodes())
    for (const auto& [key, attr] : n->attributes)
      if (attr.is<graph::TensorData>() && attr.as<graph::TensorData>().isElided())
        throw Error(ErrorKind::Internal,
                    "the TorchScript importer left attribute '" + key + "' of " + n->describe() +
                        " without its bytes",
                    file);
  return g;
}

} // namespace lathe::frontend::torchscript
