#pragma once
// engine/api: the ONNX backend-test runner behind `lathe conformance`. A plain value type,
// like session.h.

#include <string>

namespace lathe::api {

// One ONNX backend test folder (model.onnx + test_data_set_*/input_N.pb, output_N.pb).
struct BackendTestResult {
  std::string status; // "pass", "fail", "skip" (unsupported)
  std::string message;
  double maxAbsDiff = 0;
};
// Imports, compiles and runs the folder's model on each data set and compares its outputs
// with the expected ones within atol + rtol * |expected|. `gpuSchedulesOnHost`: opened and
// compiled as for a CUDA GPU, run block by block on this CPU (CompileOptions).
BackendTestResult runBackendTest(const std::string& testDir, double rtol = 1e-3, double atol = 1e-5,
                                 bool gpuSchedulesOnHost = false);

} // namespace lathe::api
