#pragma once
#include <cstdint>

namespace lathe {

// Peak resident set size of this process in bytes (VmHWM), 0 if unknown.
std::uint64_t peakResidentBytes();

} // namespace lathe
