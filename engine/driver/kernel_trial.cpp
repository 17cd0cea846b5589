#include "engine/driver/kernel_trial.h"

#include "engine/runtime/timing_stats.h"
#include "engine/support/diagnostics.h"
#include "engine/support/timer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>

namespace lathe::driver {

namespace {

const lowering::KernelCall& firstCallOf(const lowering::LoweredModel& lowered,
                                        const std::string& kernel) {
  const auto call = std::find_if(lowered.calls.begin(), lowered.calls.end(),
                                 [&](const auto& c) { return c.kernel == kernel; });
  if (call == lowered.calls.end())
    throw Error(ErrorKind::Invalid, "kernel " + kernel + " is never called");
  return *call;
}

} // namespace

KernelArguments::KernelArguments(const lowering::LoweredModel& lowered, const std::string& kernel)
    : KernelArguments(lowered, firstCallOf(lowered, kernel)) {}

KernelArguments::KernelArguments(const lowering::LoweredModel& lowered,
                                 const lowering::KernelCall& call) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int slotIndex : call.args) {
    const lowering::TensorSlot& slot = lowered.slots[slotIndex];
    if (slot.dynamicShape)
      throw Error(ErrorKind::Unsupported,
                  "kernel " + call.kernel + " writes a tensor of run-time shape");
    auto& bytes = storage_.emplace_back(static_cast<std::size_t>(slot.byteSize()) + 64, 0);
    auto* base = reinterpret_cast<unsigned char*>(
        (reinterpret_cast<std::uintptr_t>(bytes.data()) + 63) / 64 * 64);
    if (slot.constant)
      std::memcpy(base, slot.constant->data(), slot.constant->byteSize());
    else if (slot.dtype == graph::DType::F32)
      for (std::int64_t i = 0; i < slot.byteSize() / 4; ++i) {
        const float v = uniform(rng);
        std::memcpy(base + i * 4, &v, 4);
      }
    args_.push_back(base);
    sizes_.push_back(static_cast<std::size_t>(slot.byteSize()));
  }
}

double medianKernelMs(codegen::KernelFunction f, KernelArguments& arguments, int repeat,
                      const std::atomic<bool>* cancel) {
  f(arguments.args());
  std::vector<double> times;
  for (int r = 0; r < repeat && !(cancel && cancel->load()); ++r) {
    Stopwatch watch;
    f(arguments.args());
    times.push_back(watch.elapsedMs());
  }
  return runtime::computeTimingStats(times).median;
}

} // namespace lathe::driver
