// Fuzz target: ONNX import (parsing, the library's checks in their child process, Lathe's
// opset conversion, the graph builder and verifier). A refusal is lathe::Error; anything
// else (a crash, another exception, a hang) is a bug.
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/support/diagnostics.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = lathe::fuzz::writeInput(data, size, ".onnx");
  try {
    lathe::frontend::importOnnxFile(path);
  } catch (const lathe::Error&) {
  }
  return 0;
}
