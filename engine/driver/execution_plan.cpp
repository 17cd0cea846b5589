#include "engine/driver/execution_plan.h"

#include "engine/loop_ir/ir_operators.h"
#include "engine/support/checked_int.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::driver {

namespace {

const char* roleName(lowering::SlotKind kind) {
  switch (kind) {
  case lowering::SlotKind::Input:
    return "input";
  case lowering::SlotKind::Output:
    return "output";
  case lowering::SlotKind::Constant:
    return "constant";
  case lowering::SlotKind::Intermediate:
    return "intermediate";
  }
  return "?";
}

runtime::SlotRole roleFromName(const std::string& role, const std::string& source) {
  if (role == "input")
    return runtime::SlotRole::Input;
  if (role == "output")
    return runtime::SlotRole::Output;
  if (role == "constant")
    return runtime::SlotRole::Constant;
  if (role == "intermediate")
    return runtime::SlotRole::Intermediate;
  throw Error(ErrorKind::Invalid, "unknown tensor role '" + role + "' in the manifest",
              {source, {}, {}});
}

// The bytes a kernel parameter spans: (the last element's flat index + 1) elements.
std::uint64_t parameterBytes(const loop::Kernel& kernel, const loop::Buffer& buffer) {
  std::optional<std::int64_t> last = 0;
  for (int i = 0; i < buffer.rank(); ++i) {
    const std::optional<std::int64_t> extent = loop::asConstInt(buffer.shape()[i]);
    const std::optional<std::int64_t> stride = loop::asConstInt(buffer.strides()[i]);
    LATHE_CHECK(extent && stride && *extent >= 0 && *stride >= 0,
                "kernel " + kernel.name + " parameter " + buffer.name() +
                    " has a shape or strides that are not constant");
    if (*extent == 0)
      return 0;
    const std::optional<std::int64_t> step = checkedMul(*extent - 1, *stride);
    last = step && last ? checkedAdd(*last, *step) : std::nullopt;
  }
  const auto bytes = last ? checkedMul(*last + 1, buffer.elementType().bytes()) : std::nullopt;
  LATHE_CHECK(bytes, "kernel " + kernel.name + " parameter " + buffer.name() + " overflows");
  return static_cast<std::uint64_t>(*bytes);
}

// What each kernel's code reads and writes, for checking the calls when a bundle is loaded.
exporter::BundleKernel kernelSignature(const loop::Kernel& kernel) {
  exporter::BundleKernel signature{kernel.name, {}};
  for (const loop::Buffer& b : kernel.inputs)
    signature.params.push_back({"input", b.elementType().toString(), parameterBytes(kernel, b)});
  for (const loop::Buffer& b : kernel.outputs)
    signature.params.push_back({"output", b.elementType().toString(), parameterBytes(kernel, b)});
  return signature;
}

} // namespace

exporter::BundleManifest describeModel(const lowering::LoweredModel& lowered,
                                       const std::vector<double>& callFlops) {
  exporter::BundleManifest layout;
  for (const lowering::TensorSlot& s : lowered.slots) {
    exporter::BundleSlot b;
    b.name = s.name;
    b.role = roleName(s.kind);
    b.dtype = std::string(graph::dtypeName(s.dtype));
    b.shape = s.shape;
    b.bytes = s.dynamicShape ? 0 : static_cast<std::uint64_t>(s.byteSize());
    layout.slots.push_back(std::move(b));
  }
  for (const loop::Kernel& k : lowered.kernels)
    layout.kernels.push_back(kernelSignature(k));
  for (std::size_t i = 0; i < lowered.calls.size(); ++i) {
    const lowering::KernelCall& c = lowered.calls[i];
    layout.calls.push_back({c.hostNode ? c.nodes.front() : c.kernel, c.args, c.nodes,
                            i < callFlops.size() ? callFlops[i] : 0});
  }
  layout.inputs = lowered.inputs;
  layout.outputs = lowered.outputs;
  return layout;
}

runtime::ExecutionPlan
buildExecutionPlan(const exporter::BundleManifest& layout, const ConstantSource& constants,
                   const codegen::JitKernels* kernels,
                   const std::vector<std::shared_ptr<runtime::HostCall>>& hostCalls,
                   const std::string& source) {
  runtime::ExecutionPlan plan;
  for (std::size_t i = 0; i < layout.slots.size(); ++i) {
    const exporter::BundleSlot& s = layout.slots[i];
    runtime::PlanSlot p;
    p.name = s.name;
    p.role = roleFromName(s.role, source);
    const auto type = runtime::parseElementType(s.dtype);
    if (!type)
      throw Error(ErrorKind::Invalid, "unknown element type '" + s.dtype + "'", {source, {}, {}});
    p.type = *type;
    p.shape = s.shape;
    p.dynamicShape = std::any_of(s.shape.begin(), s.shape.end(), [](auto d) { return d < 0; });
    if (!p.dynamicShape && p.byteSize() != s.bytes)
      throw Error(ErrorKind::Invalid, "tensor '" + s.name + "' has an inconsistent size",
                  {source, {}, {}});
    if (p.role == runtime::SlotRole::Constant) {
      p.constantData = constants(i, s);
      if (!p.constantData && s.bytes > 0 && kernels)
        throw Error(ErrorKind::Invalid, "constant '" + s.name + "' has no data", {source, {}, {}});
    }
    plan.slots.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < layout.calls.size(); ++i) {
    const exporter::BundleCall& c = layout.calls[i];
    if (i < hostCalls.size() && hostCalls[i])
      plan.calls.push_back({c.kernel, nullptr, c.args, hostCalls[i]});
    else
      plan.calls.push_back(
          {c.kernel, kernels ? kernels->function(c.kernel) : nullptr, c.args, nullptr});
  }
  plan.inputs = layout.inputs;
  plan.outputs = layout.outputs;
  return plan;
}

} // namespace lathe::driver
