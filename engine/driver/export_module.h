#pragma once
// `lathe export`: a compiled model as a folder a person can build and deploy on its target
// with the standalone C runtime (runtime/c): the kernels' and weights' objects, model.h /
// model.c, the runtime's sources, an example program, a Makefile and a README.
#include "engine/export/bundle_manifest.h"
#include "engine/lowering/lowered_model.h"
#include "engine/target/target.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lathe::driver {

struct ExportedFile {
  std::string name;
  std::string description;
  std::uint64_t bytes = 0;
};

struct ExportSummary {
  std::string folder;
  std::string triple;
  std::vector<ExportedFile> files;
  std::uint64_t codeBytes = 0; // machine code in kernels.o
  // Per kernel, in plan order: its name and the bytes of its functions' machine code.
  std::vector<std::pair<std::string, std::uint64_t>> kernelCodeBytes;
  std::uint64_t weightBytes = 0;  // the weights linked in
  std::uint64_t arenaBytes = 0;   // the arena a run needs
  std::uint64_t scratchBytes = 0; // kernels' temporaries, static where there is no heap
  std::uint64_t ioBytes = 0;      // inputs and outputs, each rounded up to 64 bytes
  // Bare metal: the board the example is linked for, its memory, and the stack it gets.
  std::string board; // "mps2-an505: Arm MPS2+ with AN505 (Cortex-M33)", or ""
  std::uint64_t boardFlashBytes = 0, boardRamBytes = 0, stackBytes = 0;
  std::string buildCommand; // in the folder: how to build the example ("make")
  std::string runCommand;   // how to run it on this machine, or "" (no emulator known)
};

// Writes the export of `lowered` (described by `layout`, describeModel) for `target` into
// `folder` (created if missing; files of the same names are replaced). `name` is the C
// identifier its symbols start with (empty: from the model file's name). Throws lathe::Error:
// Unsupported for control flow, shapes known only at run time and targets without a way to
// build; Io for a folder that cannot be written.
ExportSummary writeExport(const lowering::LoweredModel& lowered,
                          const exporter::BundleManifest& layout, const target::Target& target,
                          const std::string& modelPath, const std::string& folder,
                          const std::string& name);

} // namespace lathe::driver
