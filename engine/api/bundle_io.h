#pragma once
// Internal to engine/api: writing compiled bundles and loading them back for running.
#include "engine/api/compiled_model.h"
#include "engine/api/session.h"

#include <memory>
#include <string>

namespace lathe::api {

// Compiles `lowered` for `target` to an object, links it and writes the bundle at `path`.
// With `dumpDir`, writes per kernel: .loop (loop IR), .ll (LLVM IR), .opt.ll, .s.
// `callFlops` (one per call, or empty) goes into the manifest for the profiler.
void writeCompiledBundle(const lowering::LoweredModel& lowered, const target::Target& target,
                         const std::string& modelPath, const std::string& path,
                         const std::string& dumpDir, const std::vector<double>& callFlops,
                         CompileReport& report);

// Loads a bundle written by writeCompiledBundle (for this machine) and prepares an executor.
std::unique_ptr<CompiledModel> loadCompiledBundle(const std::string& path, int threads);

} // namespace lathe::api
