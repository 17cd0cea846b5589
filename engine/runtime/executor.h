#pragma once
// Runs compiled kernels in order over a static memory plan. Knows nothing of graphs:
// it gets plain slots (tensors) and calls (kernel function + slot arguments).

#include "engine/runtime/host_call.h"
#include "engine/runtime/tensor.h"
#include "engine/runtime/thread_pool.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace lathe::runtime {

// Every kernel takes the base addresses of its parameters (inputs, then outputs).
using KernelFunction = void (*)(void** args);

enum class SlotRole { Input, Output, Constant, Intermediate };

struct PlanSlot {
  std::string name;
  SlotRole role = SlotRole::Intermediate;
  ElementType type = ElementType::F32;
  std::vector<std::int64_t> shape;
  const void* constantData = nullptr; // Constant slots: the bytes (the executor copies them
                                      // and its plan() then points at its copy)
  // An output whose shape only a host call knows (-1 dims in `shape`): the call gets a
  // Tensor* instead of an address and assigns the result.
  bool dynamicShape = false;
  std::uint64_t byteSize() const;
};

struct PlanCall {
  std::string kernel;
  KernelFunction function = nullptr;
  std::vector<int> args; // slot per kernel parameter
  // Set instead of `function` for control flow, which runs on the calling thread.
  std::shared_ptr<HostCall> host;
};

struct ExecutionPlan {
  std::vector<PlanSlot> slots;
  std::vector<PlanCall> calls;
  std::vector<int> inputs;  // slot per model input
  std::vector<int> outputs; // slot per model output
};

// Called after each kernel with its index and start/end times (steady clock, ns).
// Where an executor puts each slot: constants in one aligned block (offsets into it),
// intermediates in an arena where slots whose lifetimes do not overlap share bytes (offsets
// into that); inputs and outputs live in the caller's tensors (offset 0).
struct PlanLayout {
  std::vector<std::uint64_t> offsets; // per slot
  std::uint64_t constantBytes = 0;    // the constants' block, each aligned to 64 bytes
  std::uint64_t arenaBytes = 0;       // the arena
  std::uint64_t naiveArenaBytes = 0;  // the arena without reuse
};
PlanLayout layOut(const ExecutionPlan& plan);

struct CallObserver {
  virtual ~CallObserver() = default;
  virtual void onCall(std::size_t call, std::int64_t startNs, std::int64_t endNs) = 0;
};

class Executor {
public:
  // threads <= 0: one per core.
  Executor(ExecutionPlan plan, int threads = 0);
  // Shares `pool` (the executors of a model's subgraphs use their parent's).
  Executor(ExecutionPlan plan, std::shared_ptr<ThreadPool> pool);
  ~Executor();

  // Checks the inputs (count, element type, shape: lathe::Error naming the input) and
  // returns the outputs in plan order.
  std::vector<Tensor> run(std::span<const Tensor> inputs, CallObserver* observer = nullptr);

  const ExecutionPlan& plan() const { return plan_; }
  std::uint64_t arenaBytes() const { return arenaBytes_; }      // planned intermediates
  std::uint64_t naiveArenaBytes() const { return naiveBytes_; } // without reuse
  std::uint64_t constantBytes() const { return constantBytes_; }
  int threads() const { return pool_->threadCount(); }
  const std::shared_ptr<ThreadPool>& pool() const { return pool_; }

private:
  ExecutionPlan plan_;
  std::shared_ptr<ThreadPool> pool_;
  AlignedBuffer arena_;
  AlignedBuffer constants_;
  std::vector<std::uint64_t> offsets_; // per slot: offset in arena_ or constants_
  std::uint64_t arenaBytes_ = 0, naiveBytes_ = 0, constantBytes_ = 0;
};

} // namespace lathe::runtime
