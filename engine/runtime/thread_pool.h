#pragma once
// A fixed-size thread pool for data-parallel loops, and the process-wide "current pool"
// that generated code reaches through lathe_parallel_for (runtime_abi.h).
//
// Thread-safety:
//  - parallelFor may be called from any thread. Calls from different outside threads on
//    the same pool are serialised (one loop at a time; the pool is sized for the machine,
//    so running two loops side by side would only oversubscribe it).
//  - A parallelFor issued while this thread is already running a chunk of any pool's loop
//    (a worker, or the caller inside its own chunk) runs serially on that thread.
//  - The pool must outlive every parallelFor on it; destroying it while a loop runs is a bug.
//    Destroying the current pool resets the current pool to none (loops then run serially).
//  - The current pool is an atomic pointer: setting it while kernels run is allowed, but
//    loops that already loaded the old pool keep using it, so the old pool must outlive
//    them. The executor sets it once (ScopedCurrentThreadPool) around running a module.

#include "engine/runtime/chunk_recorder.h"
#include "engine/runtime/runtime_abi.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace lathe::runtime {

class ThreadPool {
public:
  // The body of a loop over [begin, end); the same shape as the C ABI's.
  using RangeFn = void (*)(std::int64_t begin, std::int64_t end, void* closure);

  // `threads` counts the calling thread, which always runs a share of the loop: a pool
  // of N starts N - 1 workers. 0 means defaultThreadCount().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // std::thread::hardware_concurrency(), at least 1.
  static int defaultThreadCount();
  int threadCount() const { return threadCount_; }

  // Runs body over [0, n): [0, n) is cut into min(n, threadCount()) contiguous chunks whose
  // sizes differ by at most one, thread i owns chunk i (the calling thread chunk 0), and each
  // chunk is cut into up to kPiecesPerChunk contiguous pieces, one body call each. A thread
  // runs its own chunk's pieces in order, then takes the pieces other threads have not yet
  // started: threads of equal speed keep their static chunk (mostly the same rows for
  // thread i), and a slower thread (a busy core) hands the tail of its chunk to the others;
  // a worker that wakes after the others have claimed every piece sits the loop out. Returns when
  // every piece has finished. Allocates nothing. If pieces throw, the other pieces still run to the
  // end and the first exception caught is rethrown here. n <= 0 does nothing.
  static constexpr int kPiecesPerChunk = 4;
  void parallelFor(std::int64_t n, RangeFn body, void* closure);

  // Same with a callable fn(int64_t begin, int64_t end); no std::function, no allocation.
  template <class Fn>
  void parallelFor(std::int64_t n, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    parallelFor(
        n,
        [](std::int64_t begin, std::int64_t end, void* closure) {
          (*static_cast<F*>(closure))(begin, end);
        },
        const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
  }

  // Records the start and end of every piece of the loops submitted after this call, in the
  // lane of the thread that ran it (null stops). Loops that run serially (one thread, n == 1,
  // nested) are not recorded. The recorder needs threadCount() lanes and must outlive the loops
  // using it. Off, the cost is one relaxed load per loop and one branch per chunk.
  void setChunkRecorder(ChunkRecorder* recorder);

private:
  struct Worker {
    std::thread thread;
  };

  // A chunk's next unclaimed piece, on a cache line of its own.
  struct alignas(64) Cursor {
    std::atomic<int> next{0};
  };

  static constexpr std::uint64_t kGateJoined = 0xFFFF, kGateClosed = 1u << 16;
  static constexpr int kGateTagShift = 17;

  void workerLoop(Worker& self, int index);
  // Joins the loop tagged `tag` unless the caller has closed it (or moved on); true if joined.
  bool join(std::uint64_t tag);
  // Chunk `chunk` of the loop in flight: its first iteration, size and number of pieces.
  struct ChunkSpan {
    std::int64_t first, size;
    int pieces;
  };
  ChunkSpan chunkSpan(int chunk) const;
  // Thread `index`'s share of the loop: its own chunk's pieces, then what is left of the
  // others'.
  void runShare(int index) noexcept;
  void runPiece(int thread, int chunk, int piece) noexcept;
  void publishLoop(int chunks);

  const int threadCount_;
  std::vector<std::unique_ptr<Worker>> workers_; // workers_[i] runs chunk i + 1
  std::mutex submitMutex_;                       // one loop at a time

  // The loop in flight; written by the submitter before it bumps generation_ (release),
  // which publishes it to the workers.
  std::int64_t n_ = 0;
  int chunks_ = 0;
  RangeFn body_ = nullptr;
  void* closure_ = nullptr;
  ChunkRecorder* loopRecorder_ = nullptr; // recorder_ as the loop in flight saw it
  std::unique_ptr<Cursor[]> cursors_;     // one per chunk, reset by the submitter

  // Workers wait for a new loop by watching loopWord_ (polling briefly, then sleeping in
  // atomic wait). The word holds the loop's generation in its high bits and its chunk count
  // in the low chunkBits_, so a worker learns from one load whether it has a chunk.
  //
  // A worker takes part in a loop only by joining it through gate_: the loop's tag (the
  // word's generation bits) in bits 17 and up, a "closed" bit 16, and the number of joined
  // workers in the low 16 bits. Once the caller has claimed or run every piece it closes
  // the gate and waits only for the workers that joined (they are running pieces). A worker
  // that wakes late (a descheduled core) finds the gate closed or re-tagged and touches
  // nothing of the loop, so the caller never waits for a thread that has no work.
  const int chunkBits_;
  std::uint32_t generation_ = 0; // submitter's count of loops; only under submitMutex_
  std::atomic<std::uint32_t> loopWord_{0};
  std::atomic<std::uint64_t> gate_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_; // written once per loop, by whoever sets failed_ first
  std::atomic<bool> stopping_{false};
  std::atomic<ChunkRecorder*> recorder_{nullptr};
};

// True while this thread runs a chunk of some pool's parallelFor (where nested loops
// run serially).
bool inParallelRegion();

// The pool lathe_parallel_for uses; null (the default) means loops run serially.
// Returns the previous pool. The pointer does not own the pool.
ThreadPool* setCurrentThreadPool(ThreadPool* pool);
ThreadPool* currentThreadPool();

// Sets the current pool for a scope and restores the previous one.
class ScopedCurrentThreadPool {
public:
  explicit ScopedCurrentThreadPool(ThreadPool* pool) : previous_(setCurrentThreadPool(pool)) {}
  ~ScopedCurrentThreadPool() { setCurrentThreadPool(previous_); }
  ScopedCurrentThreadPool(const ScopedCurrentThreadPool&) = delete;
  ScopedCurrentThreadPool& operator=(const ScopedCurrentThreadPool&) = delete;

private:
  ThreadPool* previous_;
};

// The exception from the last lathe_parallel_for on this thread that returned
// LATHE_PARALLEL_FOR_BODY_FAILED, cleared by the call; null if none. The executor calls it
// when a kernel reports failure, and rethrows what it gets.
std::exception_ptr takeParallelForError();

} // namespace lathe::runtime
