#pragma once
// Runs the ONNX library's own steps (checker, version converter, shape inference) in a
// child process. These steps crash on some malformed models (found by fuzzing); in a
// child a crash or hang becomes a clear error instead of taking the application down.

#include <cstdint>
#include <functional>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace lathe::frontend {

struct LibraryStepsResult {
  onnx::ModelProto model; // checked, converted to the target opset if possible, with
                          // inferred shapes; large initializers have no data
  std::vector<std::string> warnings;
};

// `keepElements`: initializers with more elements lose their data before conversion
// (the caller keeps them). `progress(percent, stage)` is called on this thread and may
// throw to cancel (the child is then killed). Failures throw lathe::Error naming `path`.
LibraryStepsResult
runOnnxLibrarySteps(const onnx::ModelProto& model, std::int64_t sourceOpset,
                    std::int64_t targetOpset, std::int64_t minNativeOpset,
                    std::int64_t keepElements, bool tolerateUnknownOps, const std::string& path,
                    const std::function<void(int, const std::string&)>& progress);

} // namespace lathe::frontend
