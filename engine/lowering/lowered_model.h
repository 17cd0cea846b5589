#pragma once
// The result of lowering a graph: kernels (loop IR) and the calls that run them over
// tensor slots. The executor (engine/runtime) and the module exporter read it.

#include "engine/graph/graph.h"
#include "engine/graph/tensor_data.h"
#include "engine/loop_ir/ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lathe::lowering {

enum class SlotKind { Input, Output, Constant, Intermediate };

// One tensor the model reads or writes: a graph input or output, a weight, or a temporary.
struct TensorSlot {
  std::string name; // the graph value's name
  SlotKind kind = SlotKind::Intermediate;
  graph::DType dtype = graph::DType::F32;
  std::vector<std::int64_t> shape;
  std::optional<graph::TensorData> constant; // for kind == Constant
  // A model output whose shape is known only at run time (a Loop's scan output): `shape`
  // has -1 there and only the control-flow call that produces it may write it.
  bool dynamicShape = false;
  std::int64_t byteSize() const;
};

struct KernelCall {
  std::string kernel;             // index into LoweredModel::kernels by name
  std::vector<int> args;          // slot per kernel parameter (inputs, then outputs)
  std::vector<std::string> nodes; // the ONNX nodes it computes (provenance)
  // Control flow (If, Loop, Scan) runs on the host, not as a kernel: `kernel` is empty and
  // this is the node (valid while the lowered graph lives); `args` are its present inputs
  // (captured values included), then its present outputs.
  const graph::Node* hostNode = nullptr;
};

struct LoweredModel {
  std::vector<TensorSlot> slots;
  std::vector<loop::Kernel> kernels;
  std::vector<KernelCall> calls; // in execution order
  std::vector<int> inputs;       // slots of the graph inputs, in graph order
  std::vector<int> outputs;      // slots of the graph outputs, in graph order
  // Per kernel (empty, or one per kernel): the schedule trace replayed on it, as text
  // (its default trace, a schedule's steps or a tuning record's).
  std::vector<std::string> scheduleTraces;
  // Per kernel (empty, or one per kernel): the loop nest as lowered, before that trace;
  // schedules, tuning records and the tuner's candidates replay on it.
  std::vector<loop::Kernel> unscheduled;

  const loop::Kernel& unscheduledKernel(std::size_t k) const {
    return k < unscheduled.size() ? unscheduled[k] : kernels[k];
  }
};

} // namespace lathe::lowering
