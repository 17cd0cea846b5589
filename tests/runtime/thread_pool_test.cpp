#include "engine/runtime/runtime_abi.h"
#include "engine/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lathe::runtime {
namespace {

// The pieces a loop over [0, n) is cut into: min(n, threads) chunks, each in up to
// kPiecesPerChunk pieces.
std::int64_t expectedPieces(std::int64_t n, int threads) {
  if (n <= 0)
    return 0;
  const std::int64_t chunks = std::min<std::int64_t>(n, threads);
  std::int64_t pieces = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t size = n / chunks + (c < n % chunks ? 1 : 0);
    pieces += std::min<std::int64_t>(size, ThreadPool::kPiecesPerChunk);
  }
  return pieces;
}

// Runs a loop over [0, n) and checks that every index was visited exactly once, by pieces
// that are contiguous and non-empty, as many as the chunking gives.
void expectCoversExactlyOnce(ThreadPool& pool, std::int64_t n) {
  std::vector<std::atomic<int>> visits(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  std::atomic<int> pieces{0};
  std::atomic<bool> emptyPiece{false};
  pool.parallelFor(n, [&](std::int64_t begin, std::int64_t end) {
    if (begin >= end)
      emptyPiece = true;
    ++pieces;
    for (std::int64_t i = begin; i < end; ++i)
      visits[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
  });
  for (std::int64_t i = 0; i < n; ++i)
    ASSERT_EQ(visits[static_cast<std::size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
  EXPECT_FALSE(emptyPiece) << "n=" << n;
  const std::int64_t expected = pool.threadCount() == 1 || n == 1
                                    ? std::min<std::int64_t>(n, 1)
                                    : expectedPieces(n, pool.threadCount());
  EXPECT_EQ(pieces.load(), expected) << "n=" << n;
}

TEST(ThreadPool, DefaultsToTheMachine) {
  ThreadPool pool;
  EXPECT_EQ(pool.threadCount(), ThreadPool::defaultThreadCount());
  EXPECT_GE(pool.threadCount(), 1);
}

TEST(ThreadPool, CoversUnevenAndSmallRanges) {
  for (int threads : {1, 2, 3, 4, 7, 16}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threadCount(), threads);
    for (std::int64_t n : {0, 1, 2, 3, 5, 7, 15, 16, 17, 100, 1001, 4099})
      expectCoversExactlyOnce(pool, n);
  }
}

TEST(ThreadPool, ZeroAndNegativeNeverCallTheBody) {
  ThreadPool pool(4);
  bool called = false;
  pool.parallelFor(0, [&](std::int64_t, std::int64_t) { called = true; });
  pool.parallelFor(-5, [&](std::int64_t, std::int64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ThreadPool, ChunksAreCutIntoOrderedPieces) {
  ThreadPool pool(4);
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  std::mutex mutex;
  pool.parallelFor(42, [&](std::int64_t begin, std::int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    ranges.push_back({begin, end});
  });
  std::sort(ranges.begin(), ranges.end());
  // Chunks of 11, 11, 10, 10; each in four pieces, the longer ones first.
  const std::vector<std::pair<std::int64_t, std::int64_t>> expected = {
      {0, 3},   {3, 6},   {6, 9},   {9, 11},  {11, 14}, {14, 17}, {17, 20}, {20, 22},
      {22, 25}, {25, 28}, {28, 30}, {30, 32}, {32, 35}, {35, 38}, {38, 40}, {40, 42}};
  EXPECT_EQ(ranges, expected);
}

TEST(ThreadPool, CallingThreadRunsTheFirstPiece) {
  ThreadPool pool(4);
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 100; ++round) {
    std::atomic<bool> firstOnCaller{false};
    pool.parallelFor(16, [&](std::int64_t begin, std::int64_t) {
      if (begin == 0)
        firstOnCaller = std::this_thread::get_id() == caller;
    });
    ASSERT_TRUE(firstOnCaller);
  }
}

TEST(ThreadPool, FreeThreadsTakeOverASlowThreadsPieces) {
  // The caller's first piece blocks until the other threads have run every other piece,
  // its own chunk's included: the loop finishes only because they take them over.
  ThreadPool pool(2);
  std::atomic<int> done{0};
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> byWorkerInCallerChunk{0};
  pool.parallelFor(8, [&](std::int64_t begin, std::int64_t end) {
    if (begin == 0) {
      while (done.load() < 7)
        std::this_thread::yield();
      return;
    }
    if (begin < 4 && std::this_thread::get_id() != caller)
      ++byWorkerInCallerChunk;
    done += static_cast<int>(end - begin);
  });
  EXPECT_EQ(done.load(), 7);
  EXPECT_EQ(byWorkerInCallerChunk.load(), 3);
}

TEST(ThreadPool, ManySmallCalls) {
  ThreadPool pool(4);
  std::mt19937 rng(7);
  std::int64_t expected = 0;
  std::atomic<std::int64_t> sum{0};
  for (int call = 0; call < 20000; ++call) {
    const std::int64_t n = rng() % 9; // includes 0 and n < threads
    expected += n * (n - 1) / 2;
    pool.parallelFor(n, [&](std::int64_t begin, std::int64_t end) {
      std::int64_t local = 0;
      for (std::int64_t i = begin; i < end; ++i)
        local += i;
      sum.fetch_add(local, std::memory_order_relaxed);
    });
  }
  EXPECT_EQ(sum.load(), expected);
}

// Holds the caller's first piece until another thread has run a piece, so that workers
// certainly take part in the loop.
class WaitForAWorker {
public:
  explicit WaitForAWorker(std::thread::id caller) : caller_(caller) {}
  void onPiece(std::int64_t begin) {
    if (std::this_thread::get_id() != caller_)
      workerRan_ = true;
    else if (begin == 0)
      while (!workerRan_.load())
        std::this_thread::yield();
  }

private:
  std::thread::id caller_;
  std::atomic<bool> workerRan_{false};
};

TEST(ThreadPool, ResultsWrittenByWorkersAreVisibleAfterReturn) {
  ThreadPool pool(4);
  std::vector<std::int64_t> out(1000); // plain, non-atomic writes
  for (int round = 0; round < 200; ++round) {
    WaitForAWorker wait(std::this_thread::get_id());
    std::atomic<int> byWorkers{0};
    pool.parallelFor(static_cast<std::int64_t>(out.size()), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i)
        out[static_cast<std::size_t>(i)] = i * round;
      if (b != 0)
        byWorkers += 1;
      wait.onPiece(b);
    });
    for (std::size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], static_cast<std::int64_t>(i) * round);
    ASSERT_GT(byWorkers.load(), 0);
  }
}

TEST(ThreadPool, ExceptionFromAWorkerReachesTheCaller) {
  ThreadPool pool(4);
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 100; ++round) {
    std::atomic<int> finished{0};
    std::atomic<bool> thrown{false}, thrownOnCaller{false};
    // The caller's first piece waits for the throw, so a worker runs the throwing piece.
    try {
      pool.parallelFor(8, [&](std::int64_t begin, std::int64_t) {
        if (begin == 0) {
          while (!thrown.load())
            std::this_thread::yield();
        } else if (begin == 6) {
          thrownOnCaller = std::this_thread::get_id() == caller;
          thrown = true;
          throw std::runtime_error("chunk " + std::to_string(begin));
        }
        ++finished;
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "chunk 6");
    }
    EXPECT_EQ(finished.load(), 7); // the other pieces ran to the end
    EXPECT_FALSE(thrownOnCaller.load());
  }
  expectCoversExactlyOnce(pool, 100); // still usable
}

TEST(ThreadPool, CallerSleepsUntilASlowWorkerFinishes) {
  // A worker's piece outlasts the caller's polling, so the caller sleeps on the gate and
  // the worker's leaving must wake it.
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 5; ++round) {
    std::atomic<bool> workerStarted{false};
    std::atomic<int> sum{0};
    pool.parallelFor(2, [&](std::int64_t begin, std::int64_t end) {
      if (begin == 0) {
        while (!workerStarted.load()) // the worker has joined and runs piece 1
          std::this_thread::yield();
      } else if (std::this_thread::get_id() != caller) {
        workerStarted = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      sum += static_cast<int>(end - begin);
    });
    EXPECT_EQ(sum.load(), 2);
  }
}

TEST(ThreadPool, ExceptionFromTheCallerChunkAndFromAll) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.parallelFor(3,
                                [](std::int64_t begin, std::int64_t) {
                                  if (begin == 0)
                                    throw std::logic_error("caller");
                                }),
               std::logic_error);
  for (int round = 0; round < 100; ++round) {
    try {
      pool.parallelFor(100, [](std::int64_t begin, std::int64_t) {
        throw std::runtime_error(std::to_string(begin));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what == "0" || what == "34" || what == "67") << what;
    }
  }
  // A serial (n == 1) loop throws straight through.
  EXPECT_THROW(pool.parallelFor(1, [](std::int64_t, std::int64_t) { throw 42; }), int);
  expectCoversExactlyOnce(pool, 10);
}

TEST(ThreadPool, NestedLoopsRunSeriallyWithoutDeadlock) {
  ThreadPool pool(4);
  std::atomic<std::int64_t> total{0};
  std::atomic<bool> nestedWasSerial{true};
  pool.parallelFor(8, [&](std::int64_t begin, std::int64_t end) {
    EXPECT_TRUE(inParallelRegion());
    for (std::int64_t i = begin; i < end; ++i) {
      const std::thread::id self = std::this_thread::get_id();
      pool.parallelFor(10, [&](std::int64_t b, std::int64_t e) {
        if (std::this_thread::get_id() != self || b != 0 || e != 10)
          nestedWasSerial = false;
        total += e - b;
      });
    }
  });
  EXPECT_FALSE(inParallelRegion());
  EXPECT_TRUE(nestedWasSerial);
  EXPECT_EQ(total.load(), 80);

  // Nested into another pool, and an exception from the nested loop.
  ThreadPool other(2);
  EXPECT_THROW(pool.parallelFor(4,
                                [&](std::int64_t, std::int64_t) {
                                  other.parallelFor(4, [](std::int64_t b, std::int64_t e) {
                                    if (b == 0 && e == 4) // one serial chunk
                                      throw std::out_of_range("nested");
                                  });
                                }),
               std::out_of_range);
}

TEST(ThreadPool, ConcurrentCallersAreSerialised) {
  ThreadPool pool(3);
  std::atomic<int> inside{0};
  std::atomic<int> maxInside{0};
  std::atomic<std::int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int call = 0; call < 500; ++call) {
        pool.parallelFor(6, [&](std::int64_t begin, std::int64_t end) {
          const int now = ++inside;
          int seen = maxInside.load();
          while (now > seen && !maxInside.compare_exchange_weak(seen, now)) {
          }
          sum += end - begin;
          --inside;
        });
      }
    });
  }
  for (std::thread& t : callers)
    t.join();
  EXPECT_EQ(sum.load(), 4 * 500 * 6);
  EXPECT_LE(maxInside.load(), 3); // never two loops' chunks at once beyond the pool size
}

TEST(ThreadPool, ConstructAndDestroyRepeatedly) {
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(1 + i % 5);
    if (i % 2 == 0)
      expectCoversExactlyOnce(pool, i);
  }
}

// --- the C ABI -------------------------------------------------------------------------

struct SumClosure {
  std::atomic<std::int64_t> sum{0};
  std::atomic<int> calls{0};
};

void sumBody(std::int64_t begin, std::int64_t end, void* closure) {
  auto& c = *static_cast<SumClosure*>(closure);
  ++c.calls;
  for (std::int64_t i = begin; i < end; ++i)
    c.sum += i;
}

void throwingBody(std::int64_t begin, std::int64_t, void*) {
  if (begin > 0)
    throw std::runtime_error("from generated code");
}

TEST(ParallelForAbi, SerialWithoutACurrentPool) {
  ASSERT_EQ(currentThreadPool(), nullptr);
  SumClosure c;
  EXPECT_EQ(lathe_parallel_for(100, sumBody, &c), LATHE_PARALLEL_FOR_OK);
  EXPECT_EQ(c.sum.load(), 4950);
  EXPECT_EQ(c.calls.load(), 1);
  EXPECT_EQ(lathe_parallel_for(0, sumBody, &c), LATHE_PARALLEL_FOR_OK);
  EXPECT_EQ(c.calls.load(), 1);
  EXPECT_EQ(lathe_parallel_for(-1, sumBody, &c), LATHE_PARALLEL_FOR_INVALID_ARGUMENT);
  EXPECT_EQ(lathe_parallel_for(4, nullptr, &c), LATHE_PARALLEL_FOR_INVALID_ARGUMENT);
}

TEST(ParallelForAbi, UsesTheCurrentPoolAndRestoresIt) {
  ThreadPool pool(4);
  {
    ScopedCurrentThreadPool scope(&pool);
    EXPECT_EQ(currentThreadPool(), &pool);
    SumClosure c;
    EXPECT_EQ(lathe_parallel_for(1000, sumBody, &c), LATHE_PARALLEL_FOR_OK);
    EXPECT_EQ(c.sum.load(), 499500);
    EXPECT_EQ(c.calls.load(), 4 * ThreadPool::kPiecesPerChunk); // 4 chunks, each in pieces
  }
  EXPECT_EQ(currentThreadPool(), nullptr);
}

TEST(ParallelForAbi, DestroyingTheCurrentPoolUnsetsIt) {
  auto pool = std::make_unique<ThreadPool>(2);
  setCurrentThreadPool(pool.get());
  pool.reset();
  EXPECT_EQ(currentThreadPool(), nullptr);
  SumClosure c;
  EXPECT_EQ(lathe_parallel_for(10, sumBody, &c), LATHE_PARALLEL_FOR_OK);
  EXPECT_EQ(c.calls.load(), 1);
}

TEST(ParallelForAbi, BodyExceptionBecomesAReturnCode) {
  ThreadPool pool(4);
  ScopedCurrentThreadPool scope(&pool);
  EXPECT_EQ(takeParallelForError(), nullptr);
  EXPECT_EQ(lathe_parallel_for(8, throwingBody, nullptr), LATHE_PARALLEL_FOR_BODY_FAILED);
  std::exception_ptr error = takeParallelForError();
  ASSERT_NE(error, nullptr);
  EXPECT_THROW(std::rethrow_exception(error), std::runtime_error);
  EXPECT_EQ(takeParallelForError(), nullptr); // taken
  SumClosure c;
  EXPECT_EQ(lathe_parallel_for(10, sumBody, &c), LATHE_PARALLEL_FOR_OK);
  EXPECT_EQ(c.sum.load(), 45);
}

struct NestedClosure {
  std::atomic<std::int64_t> inner{0};
};

void innerBody(std::int64_t begin, std::int64_t end, void* closure) {
  static_cast<NestedClosure*>(closure)->inner += end - begin;
}

void outerBody(std::int64_t begin, std::int64_t end, void* closure) {
  for (std::int64_t i = begin; i < end; ++i)
    if (lathe_parallel_for(16, innerBody, closure) != LATHE_PARALLEL_FOR_OK)
      std::abort();
}

TEST(ParallelForAbi, NestedCallsFromGeneratedCode) {
  ThreadPool pool(4);
  ScopedCurrentThreadPool scope(&pool);
  NestedClosure c;
  for (int round = 0; round < 200; ++round)
    ASSERT_EQ(lathe_parallel_for(6, outerBody, &c), LATHE_PARALLEL_FOR_OK);
  EXPECT_EQ(c.inner.load(), 200 * 6 * 16);
}

} // namespace
} // namespace lathe::runtime
