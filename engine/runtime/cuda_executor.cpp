#include "engine/runtime/cuda_executor.h"

#include "engine/runtime/cuda_driver.h"
#include "engine/support/diagnostics.h"

#include <cstring>
#include <dlfcn.h>

namespace lathe::runtime::cuda {

namespace {

// The driver API's types as its ABI defines them: handles are pointers, device addresses
// 64-bit integers, results ints.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUevent = void*;
using CUstream = void*;

// CUjit_option values.
constexpr int kJitInfoLogBuffer = 3, kJitInfoLogBufferSize = 4, kJitErrorLogBuffer = 5,
              kJitErrorLogBufferSize = 6;

struct Api {
  CUresult (*deviceGet)(CUdevice*, int);
  CUresult (*primaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*primaryCtxRelease)(CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxSynchronize)();
  CUresult (*moduleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*memAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void*, std::size_t);
  CUresult (*memcpyDtoH)(void*, CUdeviceptr, std::size_t);
  CUresult (*memsetD8)(CUdeviceptr, unsigned char, std::size_t);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void**, void**);
  CUresult (*eventCreate)(CUevent*, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*eventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*eventDestroy)(CUevent);
};

template <typename F>
void bindSymbol(void* library, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  if (!slot)
    throw Error(ErrorKind::Unsupported,
                std::string("the CUDA driver lacks ") + name + " (a driver older than CUDA 11?)");
}

const Api& api() {
  static const Api table = [] {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library)
      throw Error(ErrorKind::Unsupported, probeDriver().message);
    Api a{};
    bindSymbol(library, "cuDeviceGet", a.deviceGet);
    bindSymbol(library, "cuDevicePrimaryCtxRetain", a.primaryCtxRetain);
    bindSymbol(library, "cuDevicePrimaryCtxRelease_v2", a.primaryCtxRelease);
    bindSymbol(library, "cuCtxSetCurrent", a.ctxSetCurrent);
    bindSymbol(library, "cuCtxSynchronize", a.ctxSynchronize);
    bindSymbol(library, "cuModuleLoadDataEx", a.moduleLoadDataEx);
    bindSymbol(library, "cuModuleUnload", a.moduleUnload);
    bindSymbol(library, "cuModuleGetFunction", a.moduleGetFunction);
    bindSymbol(library, "cuMemAlloc_v2", a.memAlloc);
    bindSymbol(library, "cuMemFree_v2", a.memFree);
    bindSymbol(library, "cuMemcpyHtoD_v2", a.memcpyHtoD);
    bindSymbol(library, "cuMemcpyDtoH_v2", a.memcpyDtoH);
    bindSymbol(library, "cuMemsetD8_v2", a.memsetD8);
    bindSymbol(library, "cuLaunchKernel", a.launchKernel);
    bindSymbol(library, "cuEventCreate", a.eventCreate);
    bindSymbol(library, "cuEventRecord", a.eventRecord);
    bindSymbol(library, "cuEventSynchronize", a.eventSynchronize);
    bindSymbol(library, "cuEventElapsedTime", a.eventElapsedTime);
    bindSymbol(library, "cuEventDestroy_v2", a.eventDestroy);
    return a;
  }();
  return table;
}

void check(CUresult r, const std::string& what) {
  if (r != 0)
    throw Error(ErrorKind::Internal, "CUDA: " + what + " failed: " + resultName(r));
}

} // namespace

struct GpuExecutor::State {
  const Api* a = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  std::string jitLog, deviceText;
  std::vector<CUdeviceptr> tensors;
  std::vector<std::vector<CUdeviceptr>> scratch;  // per kernel
  std::vector<std::vector<CUfunction>> functions; // per kernel, per launch
  std::vector<CUevent> events;                    // calls + 1
  GpuModuleSpec spec;

  ~State() {
    if (!a)
      return;
    for (CUevent e : events)
      a->eventDestroy(e);
    for (const auto& list : scratch)
      for (CUdeviceptr p : list)
        a->memFree(p);
    for (CUdeviceptr p : tensors)
      if (p)
        a->memFree(p);
    if (module)
      a->moduleUnload(module);
    if (context)
      a->primaryCtxRelease(device);
  }

  CUdeviceptr allocate(std::uint64_t bytes, const std::string& what) {
    CUdeviceptr p = 0;
    check(a->memAlloc(&p, bytes ? bytes : 1),
          "allocating " + std::to_string(bytes) + " bytes of device memory for " + what);
    return p;
  }
};

GpuExecutor::GpuExecutor(const GpuModuleSpec& spec) : state_(std::make_unique<State>()) {
  const DriverProbe& probe = probeDriver();
  if (!probe.usable)
    throw Error(ErrorKind::Unsupported, probe.message);
  State& s = *state_;
  s.a = &api();
  s.deviceText = probe.message;
  s.spec = spec;
  check(s.a->deviceGet(&s.device, 0), "cuDeviceGet");
  check(s.a->primaryCtxRetain(&s.context, s.device), "cuDevicePrimaryCtxRetain");
  check(s.a->ctxSetCurrent(s.context), "cuCtxSetCurrent");

  // The module, with the JIT's own words kept.
  std::vector<char> info(1 << 16, '\0'), errors(1 << 16, '\0');
  int options[] = {kJitInfoLogBuffer, kJitInfoLogBufferSize, kJitErrorLogBuffer,
                   kJitErrorLogBufferSize};
  void* values[] = {info.data(), reinterpret_cast<void*>(info.size() - 1), errors.data(),
                    reinterpret_cast<void*>(errors.size() - 1)};
  const CUresult loaded = s.a->moduleLoadDataEx(&s.module, s.spec.ptx.c_str(), 4, options, values);
  s.jitLog = std::string(info.data()) + std::string(errors.data());
  if (loaded != 0) {
    s.module = nullptr;
    throw Error(ErrorKind::Internal,
                "CUDA: the driver did not load the PTX (" + resultName(loaded) + "): " + s.jitLog);
  }
  for (const GpuKernelSpec& k : s.spec.kernels) {
    std::vector<CUfunction> fs;
    for (const GpuLaunchSpec& l : k.launches) {
      CUfunction f = nullptr;
      check(s.a->moduleGetFunction(&f, s.module, l.function.c_str()),
            "finding " + l.function + " in the module");
      fs.push_back(f);
    }
    s.functions.push_back(std::move(fs));
    std::vector<CUdeviceptr> buffers;
    for (std::uint64_t bytes : k.scratch)
      buffers.push_back(s.allocate(bytes, "a device buffer of " + k.name));
    s.scratch.push_back(std::move(buffers));
  }
  // Every tensor its own device memory; constants uploaded once.
  for (std::size_t t = 0; t < s.spec.tensors.size(); ++t) {
    const GpuTensorSpec& tensor = s.spec.tensors[t];
    s.tensors.push_back(s.allocate(tensor.bytes, "tensor #" + std::to_string(t)));
    if (tensor.constant)
      check(s.a->memcpyHtoD(s.tensors.back(), tensor.constant, tensor.bytes),
            "uploading the weights");
    else
      check(s.a->memsetD8(s.tensors.back(), 0, tensor.bytes ? tensor.bytes : 1), "cuMemsetD8");
  }
  s.events.resize(s.spec.calls.size() + 1, nullptr);
  for (CUevent& e : s.events)
    check(s.a->eventCreate(&e, 0), "cuEventCreate");
}

GpuExecutor::~GpuExecutor() = default;

std::vector<double> GpuExecutor::run(const std::vector<const void*>& inputs,
                                     const std::vector<void*>& outputs) {
  State& s = *state_;
  check(s.a->ctxSetCurrent(s.context), "cuCtxSetCurrent");
  if (inputs.size() != s.spec.inputs.size() || outputs.size() != s.spec.outputs.size())
    throw Error(ErrorKind::Internal, "CUDA run: wrong number of inputs or outputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto t = static_cast<std::size_t>(s.spec.inputs[i]);
    check(s.a->memcpyHtoD(s.tensors[t], inputs[i], s.spec.tensors[t].bytes), "copying input");
  }
  check(s.a->eventRecord(s.events[0], nullptr), "cuEventRecord");
  for (std::size_t c = 0; c < s.spec.calls.size(); ++c) {
    const GpuCallSpec& call = s.spec.calls[c];
    const auto k = static_cast<std::size_t>(call.kernel);
    const GpuKernelSpec& kernel = s.spec.kernels[k];
    std::vector<CUdeviceptr> args;
    for (int a : call.args)
      args.push_back(s.tensors[static_cast<std::size_t>(a)]);
    args.insert(args.end(), s.scratch[k].begin(), s.scratch[k].end());
    std::vector<void*> params;
    for (CUdeviceptr& p : args)
      params.push_back(&p);
    for (std::size_t l = 0; l < kernel.launches.size(); ++l) {
      const GpuLaunchSpec& launch = kernel.launches[l];
      const auto u = [](std::int64_t v) { return static_cast<unsigned>(v); };
      check(s.a->launchKernel(s.functions[k][l], u(launch.grid[0]), u(launch.grid[1]),
                              u(launch.grid[2]), u(launch.block[0]), u(launch.block[1]),
                              u(launch.block[2]), 0, nullptr, params.data(), nullptr),
            "launching " + launch.function);
    }
    check(s.a->eventRecord(s.events[c + 1], nullptr), "cuEventRecord");
  }
  check(s.a->ctxSynchronize(), "running the kernels");
  std::vector<double> times;
  for (std::size_t c = 0; c < s.spec.calls.size(); ++c) {
    float ms = 0;
    check(s.a->eventElapsedTime(&ms, s.events[c], s.events[c + 1]), "cuEventElapsedTime");
    times.push_back(ms);
  }
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const auto t = static_cast<std::size_t>(s.spec.outputs[o]);
    check(s.a->memcpyDtoH(outputs[o], s.tensors[t], s.spec.tensors[t].bytes), "copying output");
  }
  return times;
}

const std::string& GpuExecutor::jitLog() const {
  return state_->jitLog;
}

const std::string& GpuExecutor::device() const {
  return state_->deviceText;
}

} // namespace lathe::runtime::cuda
