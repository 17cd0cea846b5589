// Fuzz target: the --input-shapes parser of the lathe command.
#include "app/cli/commands.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    lathe::cli::parseInputShapes(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const CLI::ValidationError&) {
  }
  return 0;
}
