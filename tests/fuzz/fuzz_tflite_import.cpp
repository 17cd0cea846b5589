// Fuzz target: TFLite import (the flatbuffer verifier, Lathe's bounds checks on every index,
// the operator translations, shape inference and the check against declared shapes). A
// refusal is lathe::Error; anything else (a crash, another exception, a hang) is a bug.
#include "engine/frontend/tflite/tflite_importer.h"
#include "engine/support/diagnostics.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = lathe::fuzz::writeInput(data, size, ".tflite");
  try {
    lathe::frontend::importTfliteFile(path);
  } catch (const lathe::Error&) {
  }
  return 0;
}
