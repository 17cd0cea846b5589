#pragma once
// Work the executor runs on the calling thread between kernels: control flow (If, Loop,
// Scan), whose subgraphs run on executors of their own.

namespace lathe::runtime {

class HostCall {
public:
  virtual ~HostCall() = default;
  // `args` holds one address per argument slot, as a kernel gets them; for a slot whose
  // shape is known only at run time (PlanSlot::dynamicShape) it is a Tensor* to assign.
  virtual void run(void** args) = 0;
};

} // namespace lathe::runtime
