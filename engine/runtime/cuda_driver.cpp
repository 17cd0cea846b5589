#include "engine/runtime/cuda_driver.h"

#include <dlfcn.h>

namespace lathe::runtime::cuda {

namespace {

using CuInit = int (*)(unsigned);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);

template <typename F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

DriverProbe probe() {
  DriverProbe p;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    p.message = std::string("no CUDA driver found: ") + (why ? why : "libcuda.so.1") +
                " (running on a GPU needs an NVIDIA GPU and its driver)";
    return p;
  }
  const auto init = symbol<CuInit>(library, "cuInit");
  const auto version = symbol<CuDriverGetVersion>(library, "cuDriverGetVersion");
  const auto count = symbol<CuDeviceGetCount>(library, "cuDeviceGetCount");
  const auto device = symbol<CuDeviceGet>(library, "cuDeviceGet");
  const auto name = symbol<CuDeviceGetName>(library, "cuDeviceGetName");
  if (!init || !version || !count || !device || !name) {
    p.message = "libcuda.so.1 lacks the driver API's entry points (cuInit, cuDeviceGetCount)";
    return p;
  }
  if (const int r = init(0); r != 0) {
    p.message = "the CUDA driver did not initialise: cuInit returned " + resultName(r) +
                (r == 34 ? " (this libcuda.so.1 is the toolkit's stub, not a driver)" : "") +
                (r == 100 ? " (no CUDA-capable device)" : "");
    return p;
  }
  int v = 0, devices = 0;
  version(&v);
  count(&devices);
  if (devices < 1) {
    p.message = "the CUDA driver found no device";
    return p;
  }
  char text[256] = {};
  int first = 0;
  if (device(&first, 0) == 0)
    name(text, sizeof text - 1, first);
  p.usable = true;
  p.message = "CUDA driver " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10) +
              ", " + std::to_string(devices) + (devices == 1 ? " device: " : " devices, first: ") +
              text;
  return p;
}

} // namespace

const DriverProbe& probeDriver() {
  static const DriverProbe p = probe();
  return p;
}

std::string resultName(int result) {
  switch (result) {
  case 0:
    return "CUDA_SUCCESS";
  case 1:
    return "CUDA_ERROR_INVALID_VALUE";
  case 2:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case 3:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case 34:
    return "CUDA_ERROR_STUB_LIBRARY";
  case 35:
    return "CUDA_ERROR_INSUFFICIENT_DRIVER";
  case 100:
    return "CUDA_ERROR_NO_DEVICE";
  case 101:
    return "CUDA_ERROR_INVALID_DEVICE";
  case 200:
    return "CUDA_ERROR_INVALID_IMAGE";
  case 209:
    return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case 218:
    return "CUDA_ERROR_INVALID_PTX";
  case 222:
    return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case 700:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case 701:
    return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case 702:
    return "CUDA_ERROR_LAUNCH_TIMEOUT";
  case 719:
    return "CUDA_ERROR_LAUNCH_FAILED";
  default:
    return "CUresult " + std::to_string(result);
  }
}

} // namespace lathe::runtime::cuda
