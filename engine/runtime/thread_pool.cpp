#include "engine/runtime/thread_pool.h"

#include "engine/support/diagnostics.h"

#include <algorithm>
#include <bit>
#include <chrono>
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

// How long an idle thread keeps polling for the next loop (and the submitter for the end of
// one) before it sleeps: kernels follow each other within microseconds, and waking a
// sleeping thread costs tens of them per loop, more than many kernels take.
constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` for up to kSpin; false if it did not become true in that time.
template <class Ready>
bool spinUntil(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    if (ready())
      return true;
    cpuRelax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline)
      return false;
  }
}

} // namespace

// Bits of the loop word that hold a loop's chunk count (at most threadCount).
static int chunkBitsFor(int threadCount) {
  LATHE_CHECK(threadCount <= 0xFFFF, "a thread pool holds at most 65535 threads");
  return std::bit_width(static_cast<unsigned>(threadCount));
}

ThreadPool::ThreadPool(int threads)
    : threadCount_(threads > 0 ? threads : defaultThreadCount()),
      cursors_(std::make_unique<Cursor[]>(static_cast<std::size_t>(threadCount_))),
      chunkBits_(chunkBitsFor(threadCount_)) {
  workers_.reserve(static_cast<std::size_t>(threadCount_ - 1));
  try {
    for (int i = 1; i < threadCount_; ++i) {
      Worker& worker = *workers_.emplace_back(std::make_unique<Worker>());
      worker.thread = std::thread([this, &worker, i] { workerLoop(worker, i); });
    }
  } catch (...) {
    // Joins the workers that did start; the destructor does not run for a failed constructor.
    stopping_.store(true, std::memory_order_relaxed);
    publishLoop(0);
    for (auto& worker : workers_)
      if (worker->thread.joinable())
        worker->thread.join();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  // A dangling current pool would crash the next kernel; no pool means serial loops.
  ThreadPool* self = this;
  gCurrentPool.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
  stopping_.store(true, std::memory_order_relaxed); // published by the release below
  publishLoop(0);
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

void ThreadPool::workerLoop(Worker&, int index) {
  RegionGuard region; // a worker only ever runs chunks, so nested loops stay serial
  const std::uint32_t chunkMask = (1u << chunkBits_) - 1;
  std::uint32_t seen = 0;
  while (true) {
    if (!spinUntil([&] { return loopWord_.load(std::memory_order_acquire) != seen; }))
      loopWord_.wait(seen, std::memory_order_acquire);
    // A worker may see only a later loop than the one it slept through, and may find a
    // loop already finished without it: only the word and the gate decide whether it takes
    // part, and it reads nothing else of a loop it has not joined.
    seen = loopWord_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_relaxed))
      return;
    if (static_cast<std::uint32_t>(index) >= (seen & chunkMask))
      continue; // this loop has fewer chunks than the pool has threads
    if (!join(seen >> chunkBits_))
      continue; // the caller already finished the loop without this worker
    runShare(index);
    // acq_rel chains every worker's writes (results, error_) to the caller, which waits for
    // the joined count to reach 0 after closing the gate.
    const std::uint64_t before = gate_.fetch_sub(1, std::memory_order_acq_rel);
    if ((before & kGateClosed) != 0 && (before & kGateJoined) == 1)
      gate_.notify_one();
  }
}

bool ThreadPool::join(std::uint64_t tag) {
  std::uint64_t gate = gate_.load(std::memory_order_acquire);
  while ((gate >> kGateTagShift) == tag && (gate & kGateClosed) == 0)
    if (gate_.compare_exchange_weak(gate, gate + 1, std::memory_order_acq_rel,
                                    std::memory_order_acquire))
      return true;
  return false;
}

ThreadPool::ChunkSpan ThreadPool::chunkSpan(int chunk) const {
  const std::int64_t first = chunkBegin(n_, chunks_, chunk);
  const std::int64_t size = chunkBegin(n_, chunks_, chunk + 1) - first;
  return {first, size, static_cast<int>(std::min<std::int64_t>(size, kPiecesPerChunk))};
}

void ThreadPool::runShare(int index) noexcept {
  // Pieces are claimed one at a time from each chunk's cursor, so the owner and the threads
  // that finish early never run the same piece; the owner starts first on its own chunk.
  for (int k = 0; k < chunks_; ++k) {
    const int chunk = (index + k) % chunks_;
    const int pieces = chunkSpan(chunk).pieces;
    for (int piece; (piece = cursors_[static_cast<std::size_t>(chunk)].next.fetch_add(
                         1, std::memory_order_relaxed)) < pieces;)
      runPiece(index, chunk, piece);
  }
}

void ThreadPool::runPiece(int thread, int chunk, int piece) noexcept {
  const ChunkSpan span = chunkSpan(chunk);
  const std::int64_t begin = span.first + chunkBegin(span.size, span.pieces, piece);
  const std::int64_t end = span.first + chunkBegin(span.size, span.pieces, piece + 1);
  ChunkRecorder* const recorder = loopRecorder_;
  const std::int64_t startNs = recorder ? steadyNowNs() : 0;
  try {
    body_(begin, end, closure_);
  } catch (...) {
    if (!failed_.exchange(true, std::memory_order_acq_rel))
      error_ = std::current_exception();
  }
  if (recorder)
    recorder->record(thread, {startNs, steadyNowNs(), begin, end, n_});
}

void ThreadPool::publishLoop(int chunks) {
  ++generation_; // wraps; a worker compares words for inequality only
  const std::uint32_t word = (generation_ << chunkBits_) | static_cast<std::uint32_t>(chunks);
  // Release: a worker that joins through the gate (even one that read an older word whose
  // tag wrapped around to this one) sees this loop's fields.
  gate_.store(static_cast<std::uint64_t>(word >> chunkBits_) << kGateTagShift,
              std::memory_order_release);
  loopWord_.store(word, std::memory_order_release);
  loopWord_.notify_all();
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
  // Published to the workers with the loop by publishLoop's release store.
  loopRecorder_ = recorder_.load(std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  // The calling thread's first piece is claimed before the loop is published: it always
  // runs iteration 0.
  for (int c = 0; c < chunks; ++c)
    cursors_[static_cast<std::size_t>(c)].next.store(c == 0 ? 1 : 0, std::memory_order_relaxed);
  publishLoop(chunks); // opens the gate under the loop's tag
  {
    RegionGuard region;
    runPiece(0, 0, 0);
    runShare(0);
  }
  // Every piece is claimed: close the gate and wait for the workers that joined.
  const std::uint64_t gate = gate_.fetch_or(kGateClosed, std::memory_order_acq_rel);
  auto joined = [this] { return gate_.load(std::memory_order_acquire) & kGateJoined; };
  if ((gate & kGateJoined) != 0 && !spinUntil([&] { return joined() == 0; }))
    for (std::uint64_t now; ((now = gate_.load(std::memory_order_acquire)) & kGateJoined) != 0;)
      gate_.wait(now, std::memory_order_acquire);

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
