#include "engine/api/compiled_model.h"

#include "engine/api/control_flow.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/lowering/lower_graph.h"
#include "engine/support/diagnostics.h"
#include "engine/support/timer.h"

namespace lathe::api {

runtime::ElementType elementTypeOf(graph::DType dtype) {
  using graph::DType;
  using runtime::ElementType;
  switch (dtype) {
  case DType::F32:
    return ElementType::F32;
  case DType::F64:
    return ElementType::F64;
  case DType::F16:
    return ElementType::F16;
  case DType::BF16:
    return ElementType::BF16;
  case DType::I8:
    return ElementType::I8;
  case DType::I16:
    return ElementType::I16;
  case DType::I32:
    return ElementType::I32;
  case DType::I64:
    return ElementType::I64;
  case DType::U8:
    return ElementType::U8;
  case DType::U16:
    return ElementType::U16;
  case DType::U32:
    return ElementType::U32;
  case DType::U64:
    return ElementType::U64;
  case DType::Bool:
    return ElementType::Bool;
  case DType::Undefined:
    break;
  }
  throw Error(ErrorKind::Unsupported, "a value of unknown element type");
}

lowering::LoweringOptions loweringOptions(const target::Target& target) {
  lowering::LoweringOptions options;
  options.vectorBits = codegen::vectorBits(target);
  return options;
}

lowering::LoweredModel lowerModel(const graph::Graph& graph, const target::Target& target,
                                  const schedule::ScheduleSet* schedules) {
  lowering::LoweredModel lowered = lowering::lowerGraph(graph, loweringOptions(target));
  if (!schedules || schedules->empty())
    return lowered;
  std::vector<std::string> names;
  for (const loop::Kernel& k : lowered.kernels)
    names.push_back(k.name);
  schedule::checkKernelsExist(*schedules, names);
  lowered.scheduleTraces.assign(lowered.kernels.size(), {});
  for (std::size_t k = 0; k < lowered.kernels.size(); ++k)
    if (const schedule::Schedule* s = schedules->find(lowered.kernels[k].name)) {
      lowered.kernels[k] = schedule::apply(lowered.kernels[k], *s, schedules->source);
      lowered.scheduleTraces[k] = schedule::traceText(*s);
    }
  return lowered;
}

std::unique_ptr<CompiledModel> compileForHost(const graph::Graph& graph,
                                              const target::Target& target, int threads,
                                              bool keepText,
                                              const schedule::ScheduleSet* schedules) {
  return compileWithPool(graph, target, std::make_shared<runtime::ThreadPool>(threads), keepText,
                         schedules);
}

std::unique_ptr<CompiledModel> compileWithPool(const graph::Graph& graph,
                                               const target::Target& target,
                                               std::shared_ptr<runtime::ThreadPool> pool,
                                               bool keepText,
                                               const schedule::ScheduleSet* schedules) {
  auto compiled = std::make_unique<CompiledModel>();
  Stopwatch watch;
  compiled->lowered = lowerModel(graph, target, schedules);
  compiled->lowerMilliseconds = watch.elapsedMs();
  watch.restart();
  codegen::CodegenOptions options;
  options.target = target;
  options.keepText = keepText;
  compiled->jit = codegen::jitKernels(compiled->lowered.kernels, options);
  compiled->codegenMilliseconds = watch.elapsedMs();

  runtime::ExecutionPlan plan;
  for (const lowering::TensorSlot& s : compiled->lowered.slots) {
    runtime::PlanSlot p;
    p.name = s.name;
    p.type = elementTypeOf(s.dtype);
    p.shape = s.shape;
    p.dynamicShape = s.dynamicShape;
    switch (s.kind) {
    case lowering::SlotKind::Input:
      p.role = runtime::SlotRole::Input;
      break;
    case lowering::SlotKind::Output:
      p.role = runtime::SlotRole::Output;
      break;
    case lowering::SlotKind::Constant:
      p.role = runtime::SlotRole::Constant;
      p.constantData = s.constant->data();
      if (s.constant->isElided())
        throw Error(ErrorKind::Invalid, "constant '" + s.name + "' has no data");
      break;
    case lowering::SlotKind::Intermediate:
      p.role = runtime::SlotRole::Intermediate;
      break;
    }
    plan.slots.push_back(std::move(p));
  }
  for (const lowering::KernelCall& c : compiled->lowered.calls) {
    if (c.hostNode) {
      plan.calls.push_back(
          {c.nodes.front(), nullptr, c.args, makeControlFlowCall(*c.hostNode, target, pool)});
      continue;
    }
    plan.calls.push_back({c.kernel, compiled->jit->function(c.kernel), c.args, nullptr});
  }
  plan.inputs = compiled->lowered.inputs;
  plan.outputs = compiled->lowered.outputs;
  compiled->executor = std::make_unique<runtime::Executor>(std::move(plan), std::move(pool));
  return compiled;
}

} // namespace lathe::api
