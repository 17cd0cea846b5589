#pragma once
// The compile flow as one straight line: constant-subgraph folding -> lowering with the
// default schedules -> replay of the given schedules -> code generation (in memory, or into
// a bundle) -> execution plan. The Session (engine/api) and control flow's subgraphs call
// compileModel(); a bundle written by it, or by an earlier run, is loaded by
// loadCompiledBundle (bundle_io.h).
#include "engine/codegen/llvm/compiler.h"
#include "engine/driver/export_module.h"
#include "engine/export/bundle.h"
#include "engine/export/bundle_manifest.h"
#include "engine/graph/graph.h"
#include "engine/lowering/lower_graph.h"
#include "engine/lowering/lowered_model.h"
#include "engine/runtime/executor.h"
#include "engine/schedule/schedule.h"
#include "engine/target/target.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lathe::driver {

// What runs: the kernels, the plan that calls them, and what they came from.
struct CompiledModel {
  // The lowering the code was generated from; null for a bundle opened from its file.
  std::shared_ptr<const lowering::LoweredModel> lowered;
  // The tensors and calls (each call's ONNX nodes and FLOP estimate) the plan was built from.
  exporter::BundleManifest layout;
  std::unique_ptr<codegen::JitKernels> jit;
  std::unique_ptr<runtime::Executor> executor;
  std::unique_ptr<exporter::LoadedBundle> bundle; // when loaded from a bundle
};

runtime::ElementType elementTypeOf(graph::DType dtype);

// What the default schedules may assume of `target` (its vector width).
lowering::LoweringOptions loweringOptions(const target::Target& target);

// A tuned schedule for a kernel (from tuning records): its steps, one per line, and the
// trials the search spent on the kernel's workload.
struct TunedTrace {
  std::string trace;
  int trials = 0;
};
// What tuning found for a kernel (by its default lowering), if anything.
using TunedLookup = std::function<std::optional<TunedTrace>(const loop::Kernel&)>;

// Lowers the graph, then replays on each kernel's nest as lowered one whole trace: the
// schedule in `schedules` (may be null) that names it, else the `tuned` trace for it, else
// its default trace. The traces go into LoweredModel::scheduleTraces, the nests they were
// replayed on into LoweredModel::unscheduled, and `tunedTrials` (when given) gets the
// trials per kernel (0: not tuned).
lowering::LoweredModel lowerModel(const graph::Graph& graph, const target::Target& target,
                                  const schedule::ScheduleSet* schedules,
                                  const TunedLookup& tuned = {},
                                  std::vector<int>* tunedTrials = nullptr);

struct CompileSettings {
  target::Target target = target::parseTarget("llvm");
  // The executor runs on `pool` when given (control flow's subgraphs share their parent's),
  // else on a pool of `threads` threads (0: one per core).
  int threads = 0;
  std::shared_ptr<runtime::ThreadPool> pool;
  bool keepText = false; // each kernel's LLVM IR, optimised IR and assembly
  const schedule::ScheduleSet* schedules = nullptr;
  TunedLookup tuned; // for kernels `schedules` does not name
  // Computes the constant subgraphs the pipeline could not fold once, here, on a copy of
  // the graph (CompileOutcome::folded). Off for graphs that have been folded already.
  bool foldConstants = true;
  // Writes a bundle there (for any target) instead of compiling in memory; a bundle for
  // this machine is loaded back to run. `dumpDir`: per-kernel files (dump_files.h).
  std::string bundlePath, dumpDir;
  // Writes an export for the C runtime there (export_module.h), its symbols named after
  // `exportName` (empty: the model file's name); nothing is compiled to run here then.
  std::string exportDir, exportName;
  std::string modelPath; // the model file, for the manifest and for messages
  // Lowers and schedules as for a CUDA target (plain nests, the GPU default traces), then
  // turns the bound loops into serial ones and compiles for `target`: every block and
  // thread runs in turn on the CPU, which checks a GPU schedule's arithmetic where there
  // is no GPU. Bound loops are independent, so the order does not change the result.
  bool gpuSchedulesOnHost = false;
  // Called at each stage (percent, name); a cancelled compile throws ErrorKind::Cancelled
  // at the next stage.
  std::function<void(int, const std::string&)> onStage;
  const std::atomic<bool>* cancel = nullptr;
};

struct CompileOutcome {
  // The graph after folding (null without CompileSettings::foldConstants: the lowering is
  // of the caller's graph, which its host calls point into).
  std::shared_ptr<const graph::Graph> folded;
  std::shared_ptr<const lowering::LoweredModel> lowered;
  std::vector<int> tunedTrials; // per kernel: the trials behind its tuned trace (0: none)
  // What runs here: null when the target is not this machine's.
  std::unique_ptr<CompiledModel> compiled;
  std::size_t foldedNodes = 0;
  double foldMilliseconds = 0, lowerMilliseconds = 0, codegenMilliseconds = 0;
  // The static memory plan: intermediates with and without reuse, and the weights.
  std::uint64_t arenaBytes = 0, naiveArenaBytes = 0, constantBytes = 0;
  std::uint64_t bundleBytes = 0;
  std::optional<ExportSummary> exported; // with CompileSettings::exportDir
  // For a target that does not run here, compiled with neither bundle nor export: each
  // kernel's code for that target (its size; its texts with keepText).
  std::vector<codegen::KernelCode> crossCode;
  // When nothing runs here: the plan's tensors (inputs, outputs, their types and shapes) and
  // calls, with no code or constants behind them.
  std::shared_ptr<const runtime::ExecutionPlan> layoutPlan;
};

// The checks a graph must pass to be compiled: every op known, every input static (the
// message says how to give shapes), at least one output. Throws lathe::Error naming `path`.
void requireCompilable(const graph::Graph& graph, const std::string& path);

// Compiles `graph` (which must pass requireCompilable) as `settings` say.
CompileOutcome compileModel(const graph::Graph& graph, const CompileSettings& settings);

} // namespace lathe::driver
