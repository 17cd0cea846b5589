#pragma once
// Timing one kernel alone, outside its model: the Schedule panel's "try" compares a
// rescheduled kernel with its default on the model's own weights and random activations.
#include "engine/codegen/llvm/compiler.h"
#include "engine/lowering/lowered_model.h"

#include <atomic>
#include <span>
#include <string>
#include <vector>

namespace lathe::driver {

// Buffers for every parameter of the first call of `kernel`: constants hold their values,
// floats are uniform in [-1, 1), everything else is zero (valid as an index anywhere).
class KernelArguments {
public:
  KernelArguments(const lowering::LoweredModel& lowered, const std::string& kernel);
  // The same for one call (of a kernel, not of control flow) of `lowered`.
  KernelArguments(const lowering::LoweredModel& lowered, const lowering::KernelCall& call);
  void** args() { return args_.data(); }
  std::size_t size() const { return args_.size(); }
  // The bytes of parameter `i` (its tensor's size), as the last call left them.
  std::span<const unsigned char> buffer(std::size_t i) const {
    return {static_cast<const unsigned char*>(args_.at(i)), sizes_.at(i)};
  }

private:
  std::vector<std::vector<unsigned char>> storage_;
  std::vector<void*> args_;
  std::vector<std::size_t> sizes_;
};

// Median of `repeat` calls after one warm-up; stops early (returning what it has) when
// cancelled.
double medianKernelMs(codegen::KernelFunction f, KernelArguments& arguments, int repeat,
                      const std::atomic<bool>* cancel);

} // namespace lathe::driver
