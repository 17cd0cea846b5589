#include "engine/driver/compile_model.h"

#include "engine/codegen/llvm/codegen.h"
#include "engine/codegen/nvptx/ptx_compiler.h"
#include "engine/driver/bundle_io.h"
#include "engine/driver/control_flow.h"
#include "engine/driver/execution_plan.h"
#include "engine/driver/fold_constant_subgraphs.h"
#include "engine/graph/op_table.h"
#include "engine/lowering/lower_graph.h"
#include "engine/profiler/kernel_flops.h"
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"
#include "engine/support/timer.h"

namespace lathe::driver {

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

// The GPU whose lowering and default schedules CompileSettings::gpuSchedulesOnHost runs.
constexpr const char* kGpuOnHostTarget = "cuda -arch=sm_90";

lowering::LoweringOptions loweringOptions(const target::Target& target) {
  lowering::LoweringOptions options;
  options.vectorBits = codegen::vectorBits(target);
  options.gpu = target.kind == target::Kind::Cuda;
  return options;
}

lowering::LoweredModel lowerModel(const graph::Graph& graph, const target::Target& target,
                                  const schedule::ScheduleSet* schedules, const TunedLookup& tuned,
                                  std::vector<int>* tunedTrials) {
  lowering::LoweredModel lowered = lowering::lowerGraph(graph, loweringOptions(target));
  if (target.kind == target::Kind::Cuda)
    for (loop::Kernel& k : lowered.kernels)
      k = schedule::withoutParallelLoops(k);
  if (tunedTrials)
    tunedTrials->assign(lowered.kernels.size(), 0);
  const bool scheduled = schedules && !schedules->empty();
  if (scheduled) {
    std::vector<std::string> names;
    for (const loop::Kernel& k : lowered.kernels)
      names.push_back(k.name);
    schedule::checkKernelsExist(*schedules, names);
  }
  lowered.scheduleTraces.assign(lowered.kernels.size(), {});
  lowered.unscheduled = lowered.kernels;
  for (std::size_t k = 0; k < lowered.kernels.size(); ++k) {
    loop::Kernel& kernel = lowered.kernels[k];
    const loop::Kernel& naive = lowered.unscheduled[k];
    // A schedule or a tuning record replaces the default trace: each is a whole trace
    // written against the nest as lowered.
    if (const schedule::Schedule* s = scheduled ? schedules->find(kernel.name) : nullptr) {
      kernel = schedule::apply(naive, *s, schedules->source);
      lowered.scheduleTraces[k] = schedule::traceText(*s);
      continue;
    }
    if (const std::optional<TunedTrace> t = tuned ? tuned(naive) : std::nullopt) {
      const schedule::Schedule steps =
          schedule::parseTrace(kernel.name, t->trace, "tuning records");
      if (!steps.steps.empty()) {
        // A record replays on the kernel it was measured on: a failure here is a record
        // that does not belong to this kernel, which the workload key should rule out.
        kernel = schedule::apply(naive, steps, "tuning records");
        lowered.scheduleTraces[k] = schedule::traceText(steps);
        if (tunedTrials)
          (*tunedTrials)[k] = t->trials;
        continue;
      }
    }
    if (target.kind == target::Kind::Cuda) {
      // The CPU lowering's trace (vectors, thread-pool tasks) means nothing on a GPU.
      lowered.scheduleTraces[k] = schedule::gpuDefaultTrace(naive, &kernel);
      continue;
    }
    if (!naive.defaultTrace.empty()) {
      // The lowering's own trace: a failure is a bug in that lowering, said as such.
      kernel = schedule::apply(naive, schedule::parseTrace(kernel.name, naive.defaultTrace),
                               "default trace of " + kernel.name);
      lowered.scheduleTraces[k] = naive.defaultTrace;
    }
  }
  return lowered;
}

namespace {

// A model opened to be looked at may use ops Lathe does not know: name them all.
void collectUnknownOps(const graph::Graph& g, std::vector<std::string>& found) {
  for (const auto& n : g.nodes()) {
    if (!graph::findOp(n->domain(), n->opType()))
      found.push_back("'" + n->name + "' (" +
                      (n->domain().empty() ? std::string() : n->domain() + "::") + n->opType() +
                      ")");
    for (const auto& [key, attr] : n->attributes)
      for (const graph::Graph* sub : attr.graphs())
        collectUnknownOps(*sub, found);
  }
}

void requireKnownOps(const graph::Graph& g, const std::string& path) {
  if (!g.hasUnknownOps)
    return;
  std::vector<std::string> found;
  collectUnknownOps(g, found);
  if (found.empty())
    return;
  std::string list;
  for (std::size_t i = 0; i < found.size() && i < 8; ++i)
    list += (i ? ", " : "") + found[i];
  if (found.size() > 8)
    list += " and " + std::to_string(found.size() - 8) + " more";
  throw Error(
      ErrorKind::Unsupported,
      std::to_string(found.size()) + (found.size() == 1 ? " node uses" : " nodes use") +
          " an op Lathe does not know, so the model can be looked at but not compiled: " + list,
      {path, {}, {}});
}

// Code generation needs static shapes: name every input that is not, and how to fix it.
// The symbols stay symbols: a made-up number would only move the failure elsewhere.
void requireStaticInputs(const graph::Graph& g) {
  std::string listed, example, symbols;
  for (const graph::Value* in : g.inputs) {
    if (in->type.isStatic())
      continue;
    listed += (listed.empty() ? "" : ", ") + in->name() + " " + graph::toString(in->type);
    std::string dims;
    if (in->type.hasRank())
      for (const graph::Dim& d : *in->type.shape) {
        const std::string text = graph::toString(d);
        dims += (dims.empty() ? "" : ",") + text;
        if (!d.isKnown() && (", " + symbols + ",").find(", " + text + ",") == std::string::npos)
          symbols += (symbols.empty() ? "" : ", ") + text;
      }
    example += (example.empty() ? "" : " ") + in->name() + ":[" + dims + "]";
  }
  if (!listed.empty())
    throw Error(
        ErrorKind::Invalid,
        "inputs with symbolic or unknown dims: " + listed + "; fix them with " +
            "--input-shapes \"" + example + "\" with numbers in place of " +
            (symbols.empty() ? std::string("the unknown ranks") : symbols) +
            " (or give the inputs: lathe run and lathe compile take the shapes, and integer "
            "scalars, of the arrays in --inputs FILE.npz)");
}

// The kernels and plan of `lowered`, compiled in memory for this machine.
std::unique_ptr<CompiledModel>
compileInMemory(std::shared_ptr<const lowering::LoweredModel> lowered,
                exporter::BundleManifest layout, const CompileSettings& settings) {
  auto compiled = std::make_unique<CompiledModel>();
  codegen::CodegenOptions options;
  options.target = settings.target;
  options.keepText = settings.keepText;
  compiled->jit = codegen::jitKernels(lowered->kernels, options);
  std::shared_ptr<runtime::ThreadPool> pool =
      settings.pool ? settings.pool : std::make_shared<runtime::ThreadPool>(settings.threads);
  std::vector<std::shared_ptr<runtime::HostCall>> hostCalls(lowered->calls.size());
  for (std::size_t c = 0; c < lowered->calls.size(); ++c)
    if (const graph::Node* node = lowered->calls[c].hostNode)
      hostCalls[c] = makeControlFlowCall(*node, settings.target, pool);
  const auto constant = [&](std::size_t slot, const exporter::BundleSlot&) -> const void* {
    const auto& data = lowered->slots[slot].constant;
    return data && !data->isElided() ? data->data() : nullptr;
  };
  compiled->executor = std::make_unique<runtime::Executor>(
      buildExecutionPlan(layout, constant, compiled->jit.get(), hostCalls), std::move(pool));
  compiled->layout = std::move(layout);
  compiled->lowered = std::move(lowered);
  return compiled;
}

} // namespace

void requireCompilable(const graph::Graph& graph, const std::string& path) {
  requireKnownOps(graph, path);
  requireStaticInputs(graph);
  if (graph.outputs.empty())
    throw Error(ErrorKind::Invalid, "the model has no outputs: there is nothing to compute",
                {path, {}, {}});
}

CompileOutcome compileModel(const graph::Graph& graph, const CompileSettings& settings) {
  CompileOutcome out;
  const auto stage = [&](int percent, const std::string& name) {
    if (settings.cancel && settings.cancel->load())
      throw Error(ErrorKind::Cancelled, "compile cancelled");
    if (settings.onStage)
      settings.onStage(percent, name);
  };
  // 1. Constant subgraphs the pipeline could not fold are computed once, here.
  const graph::Graph* source = &graph;
  if (settings.foldConstants) {
    stage(0, "folding constants");
    Stopwatch watch;
    std::shared_ptr<graph::Graph> folded = graph.clone();
    out.foldedNodes = foldConstantSubgraphs(*folded);
    out.foldMilliseconds = watch.elapsedMs();
    source = folded.get();
    out.folded = std::move(folded);
  }
  // 2. Lowering with the default schedules, then the given schedules replayed.
  stage(10, "lowering");
  Stopwatch watch;
  if (settings.gpuSchedulesOnHost) {
    lowering::LoweredModel gpu = lowerModel(*source, target::parseTarget(kGpuOnHostTarget),
                                            settings.schedules, settings.tuned, &out.tunedTrials);
    for (loop::Kernel& k : gpu.kernels)
      k = schedule::withSerialGpuLoops(k);
    out.lowered = std::make_shared<const lowering::LoweredModel>(std::move(gpu));
  } else {
    out.lowered = std::make_shared<const lowering::LoweredModel>(
        lowerModel(*source, settings.target, settings.schedules, settings.tuned, &out.tunedTrials));
  }
  out.lowerMilliseconds = watch.elapsedMs();
  std::vector<std::vector<std::string>> callNodes;
  for (const lowering::KernelCall& c : out.lowered->calls)
    callNodes.push_back(c.nodes);
  exporter::BundleManifest layout =
      describeModel(*out.lowered, profiler::estimateCallFlops(*source, callNodes));

  // 3. Code: in memory when it runs here and no bundle is asked for, else into the bundle
  // (a bundle for this machine is loaded back to run), or an object for another machine
  // kept only to be looked at.
  stage(20, "generating code");
  watch.restart();
  const bool host = codegen::runsOnHost(settings.target); // not x86-64-v4 code without AVX-512
  if (!settings.exportDir.empty()) {
    out.exported = writeExport(*out.lowered, layout, settings.target, settings.modelPath,
                               settings.exportDir, settings.exportName);
  } else if (host && settings.bundlePath.empty()) {
    out.compiled = compileInMemory(out.lowered, std::move(layout), settings);
  } else if (!settings.bundlePath.empty()) {
    out.bundleBytes =
        writeCompiledBundle(*out.lowered, layout, settings.target, settings.modelPath,
                            settings.bundlePath, settings.dumpDir, host ? nullptr : &out.crossCode);
    if (host) {
      out.compiled = loadCompiledBundle(settings.bundlePath, settings.threads);
      out.compiled->lowered = out.lowered;
    }
  } else {
    // Code for another machine, to look at: compiled to an object (or PTX) for it and kept
    // as text.
    codegen::CodegenOptions options;
    options.target = settings.target;
    options.keepText = settings.keepText;
    out.crossCode = settings.target.kind == target::Kind::Cuda
                        ? codegen::nvptx::compileToPtx(out.lowered->kernels, options).code
                        : codegen::compileToObject(out.lowered->kernels, options).code;
  }
  out.codegenMilliseconds = watch.elapsedMs();

  // 4. The memory plan, as the executor lays it out (also for code that runs elsewhere).
  if (out.compiled) {
    out.arenaBytes = out.compiled->executor->arenaBytes();
    out.naiveArenaBytes = out.compiled->executor->naiveArenaBytes();
    out.constantBytes = out.compiled->executor->constantBytes();
  } else {
    auto plan = std::make_shared<const runtime::ExecutionPlan>(buildExecutionPlan(
        layout, [](std::size_t, const exporter::BundleSlot&) { return nullptr; }, nullptr));
    const runtime::PlanLayout memory = runtime::layOut(*plan);
    out.layoutPlan = std::move(plan);
    out.arenaBytes = memory.arenaBytes;
    out.naiveArenaBytes = memory.naiveArenaBytes;
    out.constantBytes = memory.constantBytes;
  }
  return out;
}

} // namespace lathe::driver
