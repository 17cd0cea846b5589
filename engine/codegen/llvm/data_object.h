#pragma once
// Constant bytes as an object file for a target: an exported model's weights, linked into
// the program (in flash on a microcontroller) instead of being read from a file. No LLVM
// headers here.

#include "engine/target/target.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace lathe::codegen {

// An object file for `target` that defines `symbol` as a read-only array of `bytes`, aligned
// to `alignment` bytes. Throws lathe::Error on an unusable target.
std::string dataObject(const target::Target& target, const std::string& symbol,
                       std::string_view bytes, std::uint64_t alignment = 64);

} // namespace lathe::codegen
