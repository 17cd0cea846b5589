// Fuzz target: the schedule text parser.
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto set =
        lathe::schedule::parseText(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    lathe::schedule::parseText(lathe::schedule::printText(set), "fuzz-printed");
  } catch (const lathe::Error&) {
  }
  return 0;
}
