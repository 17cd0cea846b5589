#pragma once
// Internal to engine/api: graph -> lowered kernels -> JIT -> executor.
#include "engine/codegen/llvm/compiler.h"
#include "engine/export/bundle.h"
#include "engine/graph/graph.h"
#include "engine/lowering/lower_graph.h"
#include "engine/lowering/lowered_model.h"
#include "engine/runtime/executor.h"
#include "engine/schedule/schedule.h"
#include "engine/target/target.h"

#include <memory>

namespace lathe::api {

struct CompiledModel {
  lowering::LoweredModel lowered;
  std::unique_ptr<codegen::JitKernels> jit;
  std::unique_ptr<runtime::Executor> executor;
  std::unique_ptr<exporter::LoadedBundle> bundle; // when loaded from a bundle
  double lowerMilliseconds = 0, codegenMilliseconds = 0;
};

runtime::ElementType elementTypeOf(graph::DType dtype);

// What the default schedules may assume of `target` (its vector width).
lowering::LoweringOptions loweringOptions(const target::Target& target);

// Lowers the graph with the default schedules, then replays `schedules` (may be null) on
// the kernels they name; their traces go into LoweredModel::scheduleTraces.
lowering::LoweredModel lowerModel(const graph::Graph& graph, const target::Target& target,
                                  const schedule::ScheduleSet* schedules);

// Lowers, compiles for the host and prepares an executor with `threads` threads.
std::unique_ptr<CompiledModel> compileForHost(const graph::Graph& graph,
                                              const target::Target& target, int threads,
                                              bool keepText,
                                              const schedule::ScheduleSet* schedules = nullptr);
// The same on an existing thread pool (control flow's subgraphs share their parent's).
std::unique_ptr<CompiledModel> compileWithPool(const graph::Graph& graph,
                                               const target::Target& target,
                                               std::shared_ptr<runtime::ThreadPool> pool,
                                               bool keepText,
                                               const schedule::ScheduleSet* schedules = nullptr);

} // namespace lathe::api
