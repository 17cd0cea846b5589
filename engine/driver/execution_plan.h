#pragma once
// One way from a compiled model to what the executor runs. A lowered model is first
// described as a bundle's manifest records it (its tensors, kernels' parameters and calls);
// the plan is then built from that description, whether the code was just generated in
// memory or loaded from a bundle file, so both run through the same checks and layout.
#include "engine/codegen/llvm/compiler.h"
#include "engine/export/bundle_manifest.h"
#include "engine/lowering/lowered_model.h"
#include "engine/runtime/executor.h"

#include <functional>
#include <memory>
#include <vector>

namespace lathe::driver {

// The manifest's view of `lowered`: slots (a dim known only at run time is -1), kernel
// signatures, calls with their ONNX nodes and `callFlops` (one per call, or empty: 0),
// inputs and outputs. A control-flow call names its node as `kernel`. Target, library and
// seals are left for the bundle writer.
exporter::BundleManifest describeModel(const lowering::LoweredModel& lowered,
                                       const std::vector<double>& callFlops);

// Where a constant slot's bytes are (slot index and its description).
using ConstantSource = std::function<const void*(std::size_t, const exporter::BundleSlot&)>;

// The plan of `layout`: element types and roles parsed, sizes checked against shapes,
// constants from `constants`, each call's function from `kernels`, or its host call when
// `hostCalls` has one at its index. Without `kernels` the plan is one to lay out memory
// with (runtime::layOut), not to run, and constants may be null.
runtime::ExecutionPlan
buildExecutionPlan(const exporter::BundleManifest& layout, const ConstantSource& constants,
                   const codegen::JitKernels* kernels,
                   const std::vector<std::shared_ptr<runtime::HostCall>>& hostCalls = {},
                   const std::string& source = {});

} // namespace lathe::driver
