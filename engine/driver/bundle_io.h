#pragma once
// Writing compiled bundles and loading them back for running.
#include "engine/driver/compile_model.h"

#include <cstdint>
#include <memory>
#include <string>

namespace lathe::driver {

// Compiles `lowered` (described by `layout`, describeModel) for `target` to an object,
// links it and writes the bundle at `path`; returns its size in bytes. With `dumpDir`,
// writes per kernel: .loop (loop IR), .ll (LLVM IR), .opt.ll, .s.
std::uint64_t writeCompiledBundle(const lowering::LoweredModel& lowered,
                                  const exporter::BundleManifest& layout,
                                  const target::Target& target, const std::string& modelPath,
                                  const std::string& path, const std::string& dumpDir);

// Loads a bundle written by writeCompiledBundle (for this machine) and prepares an executor.
// The manifest is validated before the kernels' library is loaded.
std::unique_ptr<CompiledModel> loadCompiledBundle(const std::string& path, int threads);

} // namespace lathe::driver
