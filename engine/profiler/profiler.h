#pragma once
// Records a model's runs: the executor reports each kernel call (CallObserver) and the
// thread pool each chunk of its parallel loops (ChunkRecorder), into buffers sized before
// the timed runs so recording allocates nothing.
//
//   Profiler profiler(executor.pool(), executor.plan().calls.size(), runs);
//   profiler.beginRun(); executor.run(inputs, &profiler); profiler.endRun();  // warm-up
//   profiler.resetForRuns(runs);
//   for (...) { profiler.beginRun(); executor.run(inputs, &profiler); profiler.endRun(); }
//   Profile profile = profiler.finish(calls);

#include "engine/profiler/profile.h"
#include "engine/runtime/chunk_recorder.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/thread_pool.h"

#include <cstdint>
#include <vector>

namespace lathe::profiler {

class Profiler final : public runtime::CallObserver {
public:
  // Installs itself on `pool` (one recorder per pool at a time) until finish() or destruction.
  Profiler(runtime::ThreadPool& pool, std::size_t callsPerRun, int runs);
  ~Profiler() override;
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  void beginRun();
  void endRun();
  void onCall(std::size_t call, std::int64_t startNs, std::int64_t endNs) override;

  // Forgets everything recorded and makes room for `runs` runs like the ones recorded so
  // far (call it after a warm-up run, so the timed runs never fill a buffer).
  void resetForRuns(int runs);

  // Stops recording and returns the events; `calls` describes the plan's calls.
  Profile finish(std::vector<CallInfo> calls);

private:
  struct CallRecord {
    std::int64_t call, startNs, endNs;
  };
  void detach();

  runtime::ThreadPool* pool_;
  runtime::ChunkRecorder chunks_;
  std::vector<CallRecord> callRecords_; // reserved up front; full: dropped
  std::vector<RunSpan> runs_;
  std::size_t droppedCalls_ = 0;
  std::int64_t runStartNs_ = 0;
};

} // namespace lathe::profiler
