#include "engine/frontend/model_format.h"

#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/frontend/tflite/tflite_importer.h"
#ifdef LATHE_HAVE_TORCHSCRIPT
#include "engine/frontend/torchscript/torchscript_importer.h"
#endif
#include "engine/support/diagnostics.h"

#include <cstring>
#include <filesystem>
#include <fstream>

namespace lathe::frontend {

const char* modelFormatName(ModelFormat format) {
  switch (format) {
  case ModelFormat::Onnx:
    return "ONNX";
  case ModelFormat::Tflite:
    return "TFLite";
  case ModelFormat::TorchScript:
    return "TorchScript";
  }
  return "?";
}

ModelFormat detectModelFormat(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return ModelFormat::Onnx; // the ONNX importer says what is wrong with the path
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  in.read(head, sizeof head);
  if (in.gcount() == 8 && std::memcmp(head + 4, "TFL3", 4) == 0)
    return ModelFormat::Tflite;
  if (in.gcount() >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0)
    return ModelFormat::TorchScript;
  return ModelFormat::Onnx;
}

ImportResult importModelFile(const std::string& path, const ImportOptions& options) {
  switch (detectModelFormat(path)) {
  case ModelFormat::Tflite:
    return importTfliteFile(path, options);
  case ModelFormat::TorchScript:
#ifdef LATHE_HAVE_TORCHSCRIPT
    return importTorchScriptFile(path, options);
#else
    throw Error(ErrorKind::Unsupported,
                "this is a zip archive (a TorchScript model saved by torch.jit.save?); this "
                "build of Lathe has no TorchScript importer (configured with "
                "LATHE_TORCHSCRIPT=OFF): export the model to ONNX or TFLite",
                {path, {}, {}});
#endif
  case ModelFormat::Onnx:
    break;
  }
  return importOnnxFile(path, options);
}

} // namespace lathe::frontend
