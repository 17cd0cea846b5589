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
  // The target the model was compiled for, as the compile reported it (canonical form);
  // empty when it did not get that far.
  std::string compiledFor;
};
struct BackendTestOptions {
  double rtol = 1e-3, atol = 1e-5;
  // Opened and compiled as for a CUDA GPU, run block by block on this CPU (CompileOptions).
  bool gpuSchedulesOnHost = false;
  // The target compiled for; it must run in this process (runsInThisProcess), e.g.
  // "llvm -mcpu=x86-64" for the narrowest vectors an x86-64 has.
  std::string target = "llvm";
};
// Imports, compiles and runs the folder's model on each data set and compares its outputs
// with the expected ones within atol + rtol * |expected|.
BackendTestResult runBackendTest(const std::string& testDir,
                                 const BackendTestOptions& options = {});

} // namespace lathe::api
