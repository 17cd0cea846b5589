#pragma once
// Bare-metal exports (thumb*-none-eabi): the QEMU board an exported model's example is linked
// and run for, the Arm GNU toolchain's flags for the core, and the linker script.

#include <cstdint>
#include <optional>
#include <string>

namespace lathe::exporter {

struct BareBoard {
  std::string machine;                           // QEMU's -M name ("mps2-an505")
  std::string description;                       // "Arm MPS2+ with AN505 (Cortex-M33)"
  std::uint64_t flashOrigin = 0, flashBytes = 0; // where code and weights go (read only)
  std::uint64_t ramOrigin = 0, ramBytes = 0;     // stack, arena, scratch, inputs and outputs
  std::uint64_t stackBytes = 0;
};

// A triple's architecture, its first component ("thumbv6m-none-eabi" -> "thumbv6m").
std::string tripleArch(const std::string& triple);

// The core a bare-metal triple means when no -mcpu is given ("thumbv6m" -> "cortex-m0").
std::string defaultCortexM(const std::string& triple);

// The board for that core (by -mcpu, else by the triple's architecture), or nullopt when
// Lathe knows none: the export is then a static library only.
std::optional<BareBoard> boardFor(const std::string& triple, const std::string& cpu);

// arm-none-eabi-gcc's flags for the core: -mthumb -mcpu=... -mfloat-abi=hard for *eabihf
// triples (the kernels pass floats in VFP registers there), soft otherwise.
std::string bareCpuFlags(const std::string& triple, const std::string& cpu);

// link.ld: the vector table first in flash, .data copied from flash, the stack at the bottom
// of RAM (an overflow faults instead of overwriting the arena).
std::string linkerScript(const BareBoard& board, const std::string& modelName);

} // namespace lathe::exporter
