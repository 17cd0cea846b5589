#include "engine/tuner/producers.h"

#include <algorithm>

namespace lathe::tuner {

namespace {

std::size_t inputCount(const lowering::LoweredModel& lowered, const std::string& kernel) {
  const auto k = std::find_if(lowered.kernels.begin(), lowered.kernels.end(),
                              [&](const loop::Kernel& x) { return x.name == kernel; });
  return k == lowered.kernels.end() ? 0 : k->inputs.size();
}

} // namespace

std::vector<ProducerCall> producersOf(const lowering::LoweredModel& lowered,
                                      const std::string& kernel) {
  const auto consumer = std::find_if(lowered.calls.begin(), lowered.calls.end(),
                                     [&](const auto& c) { return c.kernel == kernel; });
  if (consumer == lowered.calls.end())
    return {};
  const std::size_t consumerIndex = static_cast<std::size_t>(consumer - lowered.calls.begin());
  const std::size_t consumerInputs = std::min(inputCount(lowered, kernel), consumer->args.size());
  std::vector<ProducerCall> out;
  for (std::size_t in = 0; in < consumerInputs; ++in) {
    const int slot = consumer->args[in];
    // Floats only: a producer run on random activations could compute indices out of range.
    if (lowered.slots[slot].kind == lowering::SlotKind::Constant ||
        lowered.slots[slot].dtype != graph::DType::F32)
      continue;
    // The last call before the consumer that has the slot among its outputs.
    for (std::size_t c = consumerIndex; c-- > 0;) {
      const lowering::KernelCall& call = lowered.calls[c];
      // Control flow that touches the slot may have written it: no producer to run.
      if (call.kernel.empty()) {
        if (std::find(call.args.begin(), call.args.end(), slot) != call.args.end())
          break;
        continue;
      }
      const std::size_t first = std::min(inputCount(lowered, call.kernel), call.args.size());
      const auto written =
          std::find(call.args.begin() + static_cast<std::ptrdiff_t>(first), call.args.end(), slot);
      if (written == call.args.end())
        continue;
      auto p =
          std::find_if(out.begin(), out.end(), [&](const ProducerCall& x) { return x.call == c; });
      if (p == out.end())
        p = out.insert(out.end(), ProducerCall{c, {}});
      p->feeds.emplace_back(static_cast<std::size_t>(written - call.args.begin()), in);
      break;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ProducerCall& a, const ProducerCall& b) { return a.call < b.call; });
  return out;
}

} // namespace lathe::tuner
