#pragma once
// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"): nothing links against
// it, so the same binaries run on machines without a GPU. No CUDA headers: the few types and
// entry points used are declared here as the driver's ABI defines them.

#include <string>

namespace lathe::runtime::cuda {

struct DriverProbe {
  bool usable = false; // the driver loaded, initialised and has at least one device
  std::string message; // what was found ("CUDA driver 12.4, 1 device: NVIDIA H100 ...")
                       // or why not ("no CUDA driver found: libcuda.so.1: cannot open ...")
};

// Loads and initialises the driver once per process; later calls return the same answer.
const DriverProbe& probeDriver();

// The driver's name for a CUresult ("CUDA_ERROR_STUB_LIBRARY"), or its number.
std::string resultName(int result);

} // namespace lathe::runtime::cuda
