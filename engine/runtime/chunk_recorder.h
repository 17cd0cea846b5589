#pragma once
// Start/end times of the pieces of loops a ThreadPool runs, one lane per pool thread, for
// the profiler (engine/profiler). Installed on a pool with ThreadPool::setChunkRecorder.
//
// Recording never allocates: each lane is a buffer sized up front; a piece that finds its
// lane full is counted as dropped. Lane i is written only by pool thread i (thread 0: the
// submitting thread, under the pool's submit lock; thread i > 0: worker i), so lanes need
// no locks. Read or resize the lanes only while no loop runs on the pool.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace lathe::runtime {

// Steady-clock nanoseconds, the clock of CallObserver and ChunkEvent.
std::int64_t steadyNowNs();

struct ChunkEvent {
  std::int64_t startNs = 0, endNs = 0;
  std::int64_t begin = 0, end = 0; // the iterations the piece ran
  std::int64_t total = 0;          // iterations of the whole loop, [0, total)
};

class ChunkRecorder {
public:
  // `threads`: lanes (a pool's threadCount()); `capacity`: events per lane.
  ChunkRecorder(int threads, std::size_t capacity);
  ~ChunkRecorder();
  ChunkRecorder(const ChunkRecorder&) = delete;
  ChunkRecorder& operator=(const ChunkRecorder&) = delete;

  int threads() const { return static_cast<int>(lanes_.size()); }
  // Called by the pool around each chunk; never allocates.
  void record(int thread, const ChunkEvent& event) noexcept {
    Lane& lane = *lanes_[static_cast<std::size_t>(thread)];
    if (lane.count == lane.events.size()) {
      ++lane.dropped;
      return;
    }
    lane.events[lane.count++] = event;
  }

  std::span<const ChunkEvent> events(int thread) const;
  std::size_t dropped() const; // over all lanes
  std::size_t capacity() const;
  // Grows every lane to hold at least `capacity` events (allocates: call between runs).
  void reserve(std::size_t capacity);
  void clear();

private:
  // Own cache lines: neighbouring lanes are written by different threads at the same time.
  struct alignas(64) Lane {
    std::vector<ChunkEvent> events; // sized, not reserved: count says how many are used
    std::size_t count = 0;
    std::size_t dropped = 0;
  };
  std::vector<std::unique_ptr<Lane>> lanes_;
};

} // namespace lathe::runtime
