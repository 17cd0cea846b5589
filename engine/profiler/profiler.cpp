#include "engine/profiler/profiler.h"

#include <algorithm>

namespace lathe::profiler {

namespace {
constexpr std::size_t kSlack = 256;

// Chunk events per pool thread and plan call before any run has shown how many it needs: a
// thread may run every piece of a loop.
std::size_t initialChunksPerCall(const runtime::ThreadPool& pool) {
  return runtime::ThreadPool::kPiecesPerChunk * static_cast<std::size_t>(pool.threadCount());
}
} // namespace

Profiler::Profiler(runtime::ThreadPool& pool, std::size_t callsPerRun, int runs)
    : pool_(&pool),
      chunks_(pool.threadCount(), callsPerRun * initialChunksPerCall(pool) *
                                          static_cast<std::size_t>(std::max(runs, 1)) +
                                      kSlack) {
  callRecords_.reserve(callsPerRun * static_cast<std::size_t>(std::max(runs, 1)) + kSlack);
  runs_.reserve(static_cast<std::size_t>(std::max(runs, 1)) + 1);
  pool.setChunkRecorder(&chunks_);
}

Profiler::~Profiler() {
  detach();
}

void Profiler::detach() {
  if (pool_)
    pool_->setChunkRecorder(nullptr);
  pool_ = nullptr;
}

void Profiler::beginRun() {
  runStartNs_ = runtime::steadyNowNs();
}

void Profiler::endRun() {
  runs_.push_back({runStartNs_, runtime::steadyNowNs()});
}

void Profiler::onCall(std::size_t call, std::int64_t startNs, std::int64_t endNs) {
  if (callRecords_.size() == callRecords_.capacity()) {
    ++droppedCalls_; // never reallocate while kernels run
    return;
  }
  callRecords_.push_back({static_cast<std::int64_t>(call), startNs, endNs});
}

void Profiler::resetForRuns(int runs) {
  const std::size_t seen = std::max<std::size_t>(runs_.size(), 1);
  std::size_t perRun = 0;
  for (int t = 0; t < chunks_.threads(); ++t)
    perRun = std::max(perRun, (chunks_.events(t).size() + seen - 1) / seen);
  const std::size_t want = static_cast<std::size_t>(std::max(runs, 1));
  chunks_.reserve(perRun * want + kSlack);
  chunks_.clear();
  const std::size_t callsPerRun = (callRecords_.size() + seen - 1) / seen;
  callRecords_.clear();
  callRecords_.reserve(callsPerRun * want + kSlack);
  runs_.clear();
  runs_.reserve(want + 1);
  droppedCalls_ = 0;
}

Profile Profiler::finish(std::vector<CallInfo> calls) {
  detach();
  Profile profile;
  profile.calls = std::move(calls);
  profile.threads = chunks_.threads();
  profile.runs = runs_;
  profile.droppedEvents = droppedCalls_ + chunks_.dropped();

  // The run an event falls in (runs are in time order); the last run for stragglers.
  auto runOf = [&](std::int64_t t) {
    auto it = std::upper_bound(runs_.begin(), runs_.end(), t,
                               [](std::int64_t v, const RunSpan& r) { return v < r.startNs; });
    return it == runs_.begin() ? 0 : static_cast<int>(it - runs_.begin()) - 1;
  };
  for (const CallRecord& r : callRecords_)
    profile.events.push_back(
        {EventKind::Call, static_cast<int>(r.call), runOf(r.startNs), 0, r.startNs, r.endNs});

  // A chunk belongs to the call whose span contains it: calls run one after another on the
  // calling thread, and a parallel loop ends before the kernel that started it returns.
  for (int t = 0; t < chunks_.threads(); ++t)
    for (const runtime::ChunkEvent& c : chunks_.events(t)) {
      Event e{EventKind::Chunk, -1,    runOf(c.startNs), t, c.startNs, c.endNs,
              c.begin,          c.end, c.total};
      auto it = std::upper_bound(callRecords_.begin(), callRecords_.end(), c.startNs,
                                 [](std::int64_t v, const CallRecord& r) { return v < r.startNs; });
      if (it != callRecords_.begin() && c.endNs <= std::prev(it)->endNs)
        e.call = static_cast<int>(std::prev(it)->call);
      profile.events.push_back(e);
    }
  return profile;
}

} // namespace lathe::profiler
