#include "engine/runtime/executor.h"

#include "engine/runtime/memory_plan.h"
#include "engine/support/diagnostics.h"

#include <chrono>
#include <cstring>

namespace lathe::runtime {

std::uint64_t PlanSlot::byteSize() const {
  std::uint64_t n = elementSize(type);
  for (std::int64_t d : shape)
    n *= static_cast<std::uint64_t>(d);
  return n;
}

namespace {
std::uint64_t alignUp(std::uint64_t n) {
  return (n + 63) / 64 * 64;
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
} // namespace

Executor::Executor(ExecutionPlan plan, int threads)
    : Executor(std::move(plan), std::make_shared<ThreadPool>(threads)) {}

PlanLayout layOut(const ExecutionPlan& plan) {
  PlanLayout layout;
  layout.offsets.assign(plan.slots.size(), 0);
  for (std::size_t s = 0; s < plan.slots.size(); ++s)
    if (plan.slots[s].role == SlotRole::Constant) {
      layout.offsets[s] = layout.constantBytes;
      layout.constantBytes += alignUp(plan.slots[s].byteSize());
    }
  // Intermediates: live from the call that writes them to the last call that reads them.
  std::vector<std::optional<std::uint64_t>> bytes;
  for (const PlanSlot& slot : plan.slots)
    bytes.push_back(slot.role == SlotRole::Intermediate
                        ? std::optional<std::uint64_t>(slot.byteSize())
                        : std::nullopt);
  std::vector<const std::vector<int>*> args;
  for (const PlanCall& call : plan.calls)
    args.push_back(&call.args);
  const MemoryPlan memory = planMemory(lifetimeRequests(bytes, args));
  layout.arenaBytes = memory.peakBytes;
  layout.naiveArenaBytes = memory.naiveBytes;
  for (const BufferPlacement& p : memory.placements)
    layout.offsets[static_cast<std::size_t>(p.id)] = p.offset;
  return layout;
}

Executor::Executor(ExecutionPlan plan, std::shared_ptr<ThreadPool> pool)
    : plan_(std::move(plan)), pool_(std::move(pool)) {
  PlanLayout layout = layOut(plan_);
  offsets_ = std::move(layout.offsets);
  arenaBytes_ = layout.arenaBytes;
  naiveBytes_ = layout.naiveArenaBytes;
  constantBytes_ = layout.constantBytes;
  // Constants: one aligned block, copied once.
  constants_ =
      AlignedBuffer(static_cast<std::size_t>(std::max<std::uint64_t>(layout.constantBytes, 64)));
  for (std::size_t s = 0; s < plan_.slots.size(); ++s)
    if (plan_.slots[s].role == SlotRole::Constant && plan_.slots[s].byteSize() > 0) {
      LATHE_CHECK(plan_.slots[s].constantData,
                  "constant slot without data: " + plan_.slots[s].name);
      std::memcpy(constants_.data() + offsets_[s], plan_.slots[s].constantData,
                  plan_.slots[s].byteSize());
      // From here on the plan points at the executor's copy: whoever handed in the bytes
      // (a bundle's weights.bin) may release them.
      plan_.slots[s].constantData = constants_.data() + offsets_[s];
    }
  arena_ = AlignedBuffer(static_cast<std::size_t>(std::max<std::uint64_t>(arenaBytes_, 64)));
}

Executor::~Executor() = default;

std::vector<Tensor> Executor::run(std::span<const Tensor> inputs, CallObserver* observer) {
  if (inputs.size() != plan_.inputs.size())
    throw Error(ErrorKind::Invalid, "the model takes " + std::to_string(plan_.inputs.size()) +
                                        " inputs, got " + std::to_string(inputs.size()));
  std::vector<void*> address(plan_.slots.size(), nullptr);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const PlanSlot& slot = plan_.slots[plan_.inputs[i]];
    if (inputs[i].elementType() != slot.type || inputs[i].shape() != slot.shape)
      throw Error(ErrorKind::Invalid, "input '" + slot.name + "' must be " +
                                          std::string(elementTypeName(slot.type)) +
                                          shapeText(slot.shape) + ", got " +
                                          std::string(elementTypeName(inputs[i].elementType())) +
                                          shapeText(inputs[i].shape()));
    address[plan_.inputs[i]] = const_cast<void*>(inputs[i].rawData());
  }
  std::vector<Tensor> outputs;
  for (int o : plan_.outputs) {
    const PlanSlot& slot = plan_.slots[o];
    outputs.push_back(slot.dynamicShape ? Tensor() : Tensor::allocate(slot.type, slot.shape));
  }
  for (std::size_t o = 0; o < plan_.outputs.size(); ++o) {
    const PlanSlot& slot = plan_.slots[plan_.outputs[o]];
    if (slot.dynamicShape)
      address[plan_.outputs[o]] = &outputs[o];
    else if (slot.role == SlotRole::Output)
      address[plan_.outputs[o]] = outputs[o].rawData();
  }
  for (std::size_t s = 0; s < plan_.slots.size(); ++s) {
    if (plan_.slots[s].role == SlotRole::Constant)
      address[s] = constants_.data() + offsets_[s];
    else if (plan_.slots[s].role == SlotRole::Intermediate)
      address[s] = arena_.data() + offsets_[s];
  }

  // Restores the caller's pool also when a host call throws.
  struct PoolScope {
    ThreadPool* previous;
    ~PoolScope() { setCurrentThreadPool(previous); }
  } scope{setCurrentThreadPool(pool_.get())};
  std::vector<void*> args;
  for (std::size_t c = 0; c < plan_.calls.size(); ++c) {
    const PlanCall& call = plan_.calls[c];
    args.clear();
    for (int a : call.args)
      args.push_back(address[a]);
    const std::int64_t start = observer ? nowNs() : 0;
    if (call.host)
      call.host->run(args.data());
    else
      call.function(args.data());
    if (observer)
      observer->onCall(c, start, nowNs());
  }

  // Outputs that no kernel writes (a graph input or constant returned as is) are copied.
  for (std::size_t o = 0; o < plan_.outputs.size(); ++o) {
    const int s = plan_.outputs[o];
    if (plan_.slots[s].role != SlotRole::Output && !plan_.slots[s].dynamicShape &&
        outputs[o].byteSize() > 0)
      std::memcpy(outputs[o].rawData(), address[s], outputs[o].byteSize());
  }
  return outputs;
}

} // namespace lathe::runtime
