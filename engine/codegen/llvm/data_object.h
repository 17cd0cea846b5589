#pragma once
// Constant bytes as an object file for a target: an exported model's weights, linked into
// the program (in flash on a microcontroller) instead of being read from a file; and the
// code size of an object. No LLVM headers here.

#include "engine/target/target.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace lathe::codegen {

// An object file for `target` that defines `symbol` as a read-only array of `bytes`, aligned
// to `alignment` bytes. Throws lathe::Error on an unusable target.
std::string dataObject(const target::Target& target, const std::string& symbol,
                       std::string_view bytes, std::uint64_t alignment = 64);

// The bytes of machine code in an object file (its executable sections), 0 when it cannot be
// read. The object file itself is larger: symbols, relocations, attributes.
std::uint64_t objectCodeBytes(std::string_view object);

// The size in bytes of each function symbol an object file defines (empty when it cannot be
// read).
std::map<std::string, std::uint64_t> functionSizes(std::string_view object);

} // namespace lathe::codegen
