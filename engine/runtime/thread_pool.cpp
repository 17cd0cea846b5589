#include "engine/runtime/thread_pool.h"

#include "engine/support/diagnostics.h"

#include <algorithm>
#include <utility>

#ifdef __linux__
#include <sched.h>
#endif

namespace lathe::runtime {

namespace {

// >0 while this thread runs a chunk; workers hold it for their whole life.
thread_local int tlsRegionDepth = 0;

struct RegionGuard {
  RegionGuard() { ++tlsRegionDepth; }
  ~RegionGuard() { --tlsRegionDepth; }
  RegionGuard(const RegionGuard&) = delete;
  RegionGuard& operator=(const RegionGuard&) = delete;
};

std::atomic<ThreadPool*> gCurrentPool{nullptr};
thread_local std::exception_ptr tlsParallelForError;

// Start of chunk i when [0, n) is cut into `chunks` near-equal parts; written so that
// i * n cannot overflow for any n.
std::int64_t chunkBegin(std::int64_t n, int chunks, int i) {
  const std::int64_t base = n / chunks;
  const std::int64_t extra = n % chunks; // the first `extra` chunks get one more
  return i * base + std::min<std::int64_t>(i, extra);
}

} // namespace

ThreadPool::ThreadPool(int threads) : threadCount_(threads > 0 ? threads : defaultThreadCount()) {
  workers_.reserve(static_cast<std::size_t>(threadCount_ - 1));
  try {
    for (int i = 1; i < threadCount_; ++i) {
      Worker& worker = *workers_.emplace_back(std::make_unique<Worker>());
      worker.thread = std::thread([this, &worker, i] { workerLoop(worker, i); });
    }
  } catch (...) {
    // Joins the workers that did start; the destructor does not run for a failed constructor.
    stopping_ = true;
    for (auto& worker : workers_) {
      if (!worker->thread.joinable())
        continue;
      worker->start.release();
      worker->thread.join();
    }
    throw;
  }
}

ThreadPool::~ThreadPool() {
  // A dangling current pool would crash the next kernel; no pool means serial loops.
  ThreadPool* self = this;
  gCurrentPool.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
  stopping_ = true; // published to each worker by the release below
  for (auto& worker : workers_)
    worker->start.release();
  for (auto& worker : workers_)
    worker->thread.join();
}

int ThreadPool::defaultThreadCount() {
#ifdef __linux__
  // The affinity mask, not the machine: under taskset or a container CPU set it is smaller.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

void ThreadPool::workerLoop(Worker& self, int index) {
  RegionGuard region; // a worker only ever runs chunks, so nested loops stay serial
  while (true) {
    self.start.acquire();
    if (stopping_)
      return;
    runChunk(index);
    // acq_rel chains every worker's writes (results, error_) to the last one, whose
    // release of done_ hands them to the submitter.
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      done_.release();
  }
}

void ThreadPool::runChunk(int index) noexcept {
  const std::int64_t begin = chunkBegin(n_, chunks_, index);
  const std::int64_t end = chunkBegin(n_, chunks_, index + 1);
  ChunkRecorder* const recorder = loopRecorder_;
  const std::int64_t startNs = recorder ? steadyNowNs() : 0;
  try {
    body_(begin, end, closure_);
  } catch (...) {
    if (!failed_.exchange(true, std::memory_order_relaxed))
      error_ = std::current_exception();
  }
  if (recorder)
    recorder->record(index, {startNs, steadyNowNs(), begin, end});
}

void ThreadPool::setChunkRecorder(ChunkRecorder* recorder) {
  LATHE_CHECK(!recorder || recorder->threads() >= threadCount_,
              "a chunk recorder needs a lane per pool thread");
  recorder_.store(recorder, std::memory_order_relaxed);
}

void ThreadPool::parallelFor(std::int64_t n, RangeFn body, void* closure) {
  if (n <= 0)
    return;
  // Nested loops run inline: waiting for workers that are busy running our caller's
  // loop would deadlock, and they are all busy anyway.
  if (threadCount_ == 1 || n == 1 || tlsRegionDepth > 0) {
    body(0, n, closure);
    return;
  }

  std::lock_guard<std::mutex> lock(submitMutex_);
  const int chunks = static_cast<int>(std::min<std::int64_t>(n, threadCount_));
  n_ = n;
  chunks_ = chunks;
  body_ = body;
  closure_ = closure;
  // Published to the workers with the loop by the start semaphores below.
  loopRecorder_ = recorder_.load(std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  pending_.store(chunks - 1, std::memory_order_relaxed);
  for (int i = 1; i < chunks; ++i)
    workers_[static_cast<std::size_t>(i - 1)]->start.release();
  {
    RegionGuard region;
    runChunk(0);
  }
  done_.acquire();

  if (failed_.load(std::memory_order_relaxed)) {
    std::exception_ptr error = std::move(error_);
    error_ = nullptr;
    std::rethrow_exception(error);
  }
}

bool inParallelRegion() {
  return tlsRegionDepth > 0;
}

ThreadPool* setCurrentThreadPool(ThreadPool* pool) {
  return gCurrentPool.exchange(pool, std::memory_order_acq_rel);
}

ThreadPool* currentThreadPool() {
  return gCurrentPool.load(std::memory_order_acquire);
}

std::exception_ptr takeParallelForError() {
  return std::exchange(tlsParallelForError, nullptr);
}

} // namespace lathe::runtime

extern "C" int lathe_parallel_for(int64_t n, lathe_parallel_body body, void* closure) {
  using namespace lathe::runtime;
  if (n < 0 || body == nullptr)
    return LATHE_PARALLEL_FOR_INVALID_ARGUMENT;
  // Generated frames may have no unwind tables, so nothing may propagate through here.
  try {
    if (ThreadPool* pool = currentThreadPool())
      pool->parallelFor(n, body, closure);
    else if (n > 0)
      body(0, n, closure);
    return LATHE_PARALLEL_FOR_OK;
  } catch (...) {
    tlsParallelForError = std::current_exception();
    return LATHE_PARALLEL_FOR_BODY_FAILED;
  }
}
