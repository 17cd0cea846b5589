#pragma once
// Writing compiled bundles and loading them back for running.
#include "engine/driver/compile_model.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace lathe::driver {

// Compiles `lowered` (described by `layout`, describeModel) for `target` to an object,
// links it and writes the bundle at `path`; returns its size in bytes. With `dumpDir`,
// writes per kernel: .loop (loop IR), .ll (LLVM IR), .opt.ll, .s. For a CUDA target the
// library is one PTX module (kernels.ptx) and the manifest lists each kernel's launches; the
// dump has .ptx and .ptxas.txt in place of .s. `code`, when given, gets each kernel's code.
std::uint64_t writeCompiledBundle(const lowering::LoweredModel& lowered,
                                  const exporter::BundleManifest& layout,
                                  const target::Target& target, const std::string& modelPath,
                                  const std::string& path, const std::string& dumpDir,
                                  std::vector<codegen::KernelCode>* code = nullptr);

// The model's constants packed one after the other, each 64-byte aligned, as weights.bin
// (and an export's weights.o) hold them; `placed(slot, offset)` is told where each went.
std::string packWeights(const lowering::LoweredModel& lowered,
                        const std::function<void(std::size_t, std::uint64_t)>& placed);

// Loads a bundle written by writeCompiledBundle (for this machine) and prepares an executor.
// The manifest is validated before the kernels' library is loaded.
std::unique_ptr<CompiledModel> loadCompiledBundle(const std::string& path, int threads);

} // namespace lathe::driver
