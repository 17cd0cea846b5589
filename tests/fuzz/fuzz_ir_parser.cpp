// Fuzz target: the graph IR text parser; what parses must print and parse back the same.
#include "engine/graph/parser.h"
#include "engine/graph/printer.h"
#include "engine/support/diagnostics.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto graph = lathe::graph::parseGraph(text, "fuzz");
    const std::string printed = lathe::graph::printGraph(*graph, {-1});
    auto again = lathe::graph::parseGraph(printed, "fuzz-printed");
    if (lathe::graph::printGraph(*again, {-1}) != printed)
      std::abort(); // printing and parsing must round-trip
  } catch (const lathe::Error&) {
  }
  return 0;
}
