#pragma once
// Which importer reads a file: decided by its contents, not its name.

#include "engine/frontend/import_result.h"

#include <optional>
#include <string>

namespace lathe::frontend {

// TFLite: a flatbuffer with the "TFL3" identifier at byte 4. TorchScript: a zip archive
// (torch.jit.save). Anything else is taken for ONNX (a protobuf has no magic number).
// Throws lathe::Error (Io) when the file cannot be read.
ModelFormat detectModelFormat(const std::string& path);

// Imports `path` with the importer for its format.
ImportResult importModelFile(const std::string& path, const ImportOptions& options = {});

} // namespace lathe::frontend
