// The profiler on a real executor and thread pool: per-thread chunk events, call events,
// how they nest, and per-kernel totals against the runs' wall time.
#include "engine/profiler/kernel_rows.h"
#include "engine/profiler/peak_flops.h"
#include "engine/profiler/profiler.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/runtime_abi.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>

namespace lathe::profiler {
namespace {

using runtime::ChunkEvent;
using runtime::ChunkRecorder;
using runtime::ThreadPool;

constexpr std::int64_t kElements = 64;

void spinFor(std::int64_t ns) {
  const std::int64_t until = runtime::steadyNowNs() + ns;
  while (runtime::steadyNowNs() < until) {
  }
}

// Doubles its input in a parallel loop, spinning 100 µs per chunk so chunks are measurable.
void doubleKernel(void** args) {
  lathe_parallel_for(
      kElements,
      [](std::int64_t begin, std::int64_t end, void* closure) {
        void** a = static_cast<void**>(closure);
        for (std::int64_t i = begin; i < end; ++i)
          static_cast<float*>(a[1])[i] = 2 * static_cast<const float*>(a[0])[i];
        spinFor(100'000);
      },
      args);
}

// Adds one, serially, taking 300 µs.
void addOneKernel(void** args) {
  for (std::int64_t i = 0; i < kElements; ++i)
    static_cast<float*>(args[1])[i] = static_cast<const float*>(args[0])[i] + 1;
  spinFor(300'000);
}

runtime::ExecutionPlan twoKernelPlan() {
  runtime::ExecutionPlan plan;
  plan.slots = {{"x", runtime::SlotRole::Input, runtime::ElementType::F32, {kElements}},
                {"t", runtime::SlotRole::Intermediate, runtime::ElementType::F32, {kElements}},
                {"y", runtime::SlotRole::Output, runtime::ElementType::F32, {kElements}}};
  plan.calls = {{"double", doubleKernel, {0, 1}, nullptr},
                {"add_one", addOneKernel, {1, 2}, nullptr},
                {"double", doubleKernel, {2, 1}, nullptr}};
  plan.inputs = {0};
  plan.outputs = {2};
  return plan;
}

std::vector<CallInfo> twoKernelCalls() {
  return {{"double", {"Mul_0"}, 2.0 * kElements},
          {"add_one", {"Add_1"}, 0},
          {"double", {"Mul_2"}, 2.0 * kElements}};
}

// A warm-up run and `runs` timed ones, as Session::run does them.
Profile profileRuns(runtime::Executor& executor, int runs) {
  const runtime::Tensor x = runtime::Tensor::allocate(runtime::ElementType::F32, {kElements});
  Profiler profiler(*executor.pool(), executor.plan().calls.size(), runs);
  profiler.beginRun();
  executor.run({&x, 1}, &profiler);
  profiler.endRun();
  profiler.resetForRuns(runs);
  for (int r = 0; r < runs; ++r) {
    profiler.beginRun();
    executor.run({&x, 1}, &profiler);
    profiler.endRun();
  }
  return profiler.finish(twoKernelCalls());
}

TEST(ChunkRecorder, PoolRecordsEveryPieceOnTheThreadThatRanIt) {
  ThreadPool pool(4);
  ChunkRecorder recorder(pool.threadCount(), 64);
  pool.setChunkRecorder(&recorder);
  for (int loop = 0; loop < 5; ++loop)
    pool.parallelFor(10, [](std::int64_t, std::int64_t) {});
  pool.parallelFor(1, [](std::int64_t, std::int64_t) {}); // serial: not a chunk
  pool.setChunkRecorder(nullptr);
  pool.parallelFor(10, [](std::int64_t, std::int64_t) {}); // after removal: not recorded
  // 10 iterations in 4 chunks (3, 3, 2, 2), each cut into pieces of one iteration.
  std::size_t events = 0;
  std::vector<int> visits(10, 0);
  for (int t = 0; t < 4; ++t)
    for (const ChunkEvent& e : recorder.events(t)) {
      ++events;
      EXPECT_EQ(e.end - e.begin, 1);
      EXPECT_EQ(e.total, 10); // the whole loop's iterations: what the timeline links to code
      EXPECT_LE(e.startNs, e.endNs);
      ++visits[static_cast<std::size_t>(e.begin)];
    }
  EXPECT_EQ(events, 50u);
  EXPECT_EQ(visits, std::vector<int>(10, 5));
  // The calling thread always runs iteration 0.
  int firstOnCaller = 0;
  for (const ChunkEvent& e : recorder.events(0))
    firstOnCaller += e.begin == 0;
  EXPECT_EQ(firstOnCaller, 5);
  EXPECT_EQ(recorder.dropped(), 0u);
}

TEST(ChunkRecorder, CountsWhatDoesNotFitInsteadOfGrowing) {
  ThreadPool pool(2);
  ChunkRecorder recorder(pool.threadCount(), 3);
  pool.setChunkRecorder(&recorder);
  for (int loop = 0; loop < 5; ++loop)
    pool.parallelFor(2, [](std::int64_t, std::int64_t) {});
  pool.setChunkRecorder(nullptr);
  // Ten pieces; a lane keeps three.
  EXPECT_LE(recorder.events(0).size(), 3u);
  EXPECT_LE(recorder.events(1).size(), 3u);
  EXPECT_EQ(recorder.events(0).size() + recorder.events(1).size() + recorder.dropped(), 10u);
  EXPECT_GE(recorder.dropped(), 4u);
  recorder.clear();
  EXPECT_EQ(recorder.events(0).size(), 0u);
  EXPECT_EQ(recorder.dropped(), 0u);
}

TEST(ChunkRecorder, NeedsALanePerPoolThread) {
  ThreadPool pool(4);
  ChunkRecorder recorder(2, 8);
  EXPECT_ANY_THROW(pool.setChunkRecorder(&recorder));
}

TEST(Profiler, RecordsEveryCallAndChunkPerThread) {
  constexpr int kRuns = 3, kThreads = 4;
  runtime::Executor executor(twoKernelPlan(), kThreads);
  const Profile profile = profileRuns(executor, kRuns);
  EXPECT_EQ(profile.threads, kThreads);
  ASSERT_EQ(profile.runs.size(), static_cast<std::size_t>(kRuns));
  EXPECT_EQ(profile.droppedEvents, 0u);

  std::map<int, std::vector<Event>> chunksByThread;
  std::vector<Event> calls;
  for (const Event& e : profile.events) {
    EXPECT_LE(e.startNs, e.endNs);
    EXPECT_GE(e.run, 0);
    EXPECT_LT(e.run, kRuns);
    if (e.kind == EventKind::Call) {
      EXPECT_EQ(e.thread, 0);
      calls.push_back(e);
    } else {
      chunksByThread[e.thread].push_back(e);
    }
  }
  // Every call of every timed run (the warm-up is forgotten), in plan order.
  ASSERT_EQ(calls.size(), 3u * kRuns);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].call, static_cast<int>(i % 3));
    EXPECT_EQ(calls[i].run, static_cast<int>(i / 3));
    const RunSpan& run = profile.runs[static_cast<std::size_t>(calls[i].run)];
    EXPECT_GE(calls[i].startNs, run.startNs);
    EXPECT_LE(calls[i].endNs, run.endNs);
    if (i > 0) {
      EXPECT_LE(calls[i - 1].endNs, calls[i].startNs) << "calls overlap";
    }
  }
  // Two parallel calls per run, each cut into kThreads chunks of kPiecesPerChunk pieces,
  // run by whichever thread got to them first.
  std::size_t pieces = 0;
  for (auto& [thread, chunks] : chunksByThread) {
    EXPECT_GE(thread, 0);
    EXPECT_LT(thread, kThreads);
    pieces += chunks.size();
    std::sort(chunks.begin(), chunks.end(),
              [](const Event& a, const Event& b) { return a.startNs < b.startNs; });
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      if (i > 0) {
        EXPECT_LE(chunks[i - 1].endNs, chunks[i].startNs) << "thread " << thread << " overlaps";
      }
      // Each chunk lies inside a "double" call and took at least its 100 µs of spinning.
      ASSERT_TRUE(chunks[i].call == 0 || chunks[i].call == 2) << chunks[i].call;
      EXPECT_GE(chunks[i].endNs - chunks[i].startNs, 100'000);
      const auto owner = std::find_if(calls.begin(), calls.end(), [&](const Event& c) {
        return c.call == chunks[i].call && c.run == chunks[i].run;
      });
      ASSERT_NE(owner, calls.end());
      EXPECT_GE(chunks[i].startNs, owner->startNs);
      EXPECT_LE(chunks[i].endNs, owner->endNs);
    }
  }
  EXPECT_EQ(pieces, 2u * kRuns * kThreads * ThreadPool::kPiecesPerChunk);
}

TEST(Profiler, KernelTotalsAreConsistentWithWallTime) {
  constexpr int kRuns = 4;
  runtime::Executor executor(twoKernelPlan(), 2);
  const Profile profile = profileRuns(executor, kRuns);
  const std::vector<KernelRow> rows = kernelRows(profile, 100.0);
  ASSERT_EQ(rows.size(), 2u); // "double" twice per run is one row
  const double wall = runWallMs(profile);
  double total = 0, percent = 0;
  for (const KernelRow& row : rows) {
    total += row.totalMs;
    percent += row.percent;
    EXPECT_NEAR(row.meanMs * static_cast<double>(row.calls), row.totalMs, 1e-9);
  }
  EXPECT_LE(total, wall);
  EXPECT_GE(total, 0.8 * wall) << "the kernels spin; the executor's own time is small";
  EXPECT_GE(wall, kRuns * 0.5); // at least 2 x 100 µs + 300 µs per run
  EXPECT_NEAR(percent, 100.0, 1e-9);
  EXPECT_GE(rows[0].totalMs, rows[1].totalMs);

  const KernelRow& twice = rows[0].kernel == "double" ? rows[0] : rows[1];
  const KernelRow& once = rows[0].kernel == "double" ? rows[1] : rows[0];
  EXPECT_EQ(twice.calls, 2 * kRuns);
  EXPECT_EQ(twice.nodes, (std::vector<std::string>{"Mul_0", "Mul_2"}));
  EXPECT_EQ(once.calls, kRuns);
  EXPECT_GE(once.meanMs, 0.3);
  EXPECT_DOUBLE_EQ(twice.flopsPerCall, 2.0 * kElements);
  EXPECT_NEAR(twice.gflops, 2.0 * kElements * 2 * kRuns / (twice.totalMs * 1e-3) * 1e-9, 1e-12);
  EXPECT_NEAR(twice.percentOfPeak, twice.gflops, 1e-9); // peak 100 GFLOP/s
  EXPECT_LT(once.gflops, 0);                            // no FLOPs known: shown as "-"
  EXPECT_LT(once.percentOfPeak, 0);
}

TEST(Profiler, SerialPoolHasOnlyTheCallingThread) {
  runtime::Executor executor(twoKernelPlan(), 1);
  const Profile profile = profileRuns(executor, 2);
  EXPECT_EQ(profile.threads, 1);
  for (const Event& e : profile.events)
    EXPECT_EQ(e.kind, EventKind::Call); // one-thread loops run inline: no chunks
  EXPECT_EQ(profile.events.size(), 6u);
}

TEST(Profiler, DetachesFromThePool) {
  runtime::Executor executor(twoKernelPlan(), 2);
  {
    profileRuns(executor, 1);
  }
  // A later plain run must not touch the destroyed profiler's buffers (ASan/valgrind would
  // catch it; here it must at least run).
  const runtime::Tensor x = runtime::Tensor::allocate(runtime::ElementType::F32, {kElements});
  EXPECT_EQ(executor.run({&x, 1}).size(), 1u);
}

TEST(PeakFlops, MeasuresOnceAndCaches) {
  const double first = measurePeakGflops(1);
  EXPECT_GT(first, 0.1); // any CPU of this century
  EXPECT_LT(first, 1e5); // one core is not a supercomputer
  EXPECT_EQ(measurePeakGflops(1), first);
  const std::string isa = peakFlopsIsa();
  EXPECT_TRUE(isa == "avx512" || isa == "avx2" || isa == "scalar") << isa;
}

} // namespace
} // namespace lathe::profiler
