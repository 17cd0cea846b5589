#pragma once
// Runs a compiled CUDA module through the driver API (cuda_driver.h, loaded with dlopen): the
// PTX is loaded once (the driver's JIT log kept), every tensor gets device memory, constants
// are uploaded once, and each call's launches run in order on the default stream with events
// around each call for its time. No CUDA headers.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lathe::runtime::cuda {

struct GpuLaunchSpec {
  std::string function; // entry function in the PTX
  std::array<std::int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
};

struct GpuKernelSpec {
  std::string name;
  std::vector<GpuLaunchSpec> launches;
  std::vector<std::uint64_t> scratch; // device buffers passed after the call's arguments
};

struct GpuCallSpec {
  int kernel = 0;        // index into GpuModuleSpec::kernels
  std::vector<int> args; // tensors, in the kernel's parameter order
};

struct GpuTensorSpec {
  std::uint64_t bytes = 0;
  const void* constant = nullptr; // uploaded once when not null
};

struct GpuModuleSpec {
  std::string ptx;
  std::vector<GpuKernelSpec> kernels;
  std::vector<GpuTensorSpec> tensors;
  std::vector<GpuCallSpec> calls;
  std::vector<int> inputs, outputs;
};

class GpuExecutor {
public:
  // Throws lathe::Error (Unsupported) without a usable driver, (Internal) with the driver's
  // error name and, for a module the driver refuses, its JIT log.
  explicit GpuExecutor(const GpuModuleSpec& spec);
  ~GpuExecutor();
  GpuExecutor(const GpuExecutor&) = delete;
  GpuExecutor& operator=(const GpuExecutor&) = delete;

  // Copies the inputs (spec.inputs order) in, runs every call, copies the outputs out.
  // Returns each call's time in milliseconds (CUDA events), the copies not included.
  std::vector<double> run(const std::vector<const void*>& inputs,
                          const std::vector<void*>& outputs);
  const std::string& jitLog() const;
  const std::string& device() const; // "CUDA driver 12.4, 1 device: NVIDIA H100 ..."

private:
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace lathe::runtime::cuda
