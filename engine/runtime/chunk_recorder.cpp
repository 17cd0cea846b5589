#include "engine/runtime/chunk_recorder.h"

#include <algorithm>
#include <chrono>

namespace lathe::runtime {

std::int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ChunkRecorder::ChunkRecorder(int threads, std::size_t capacity) {
  for (int i = 0; i < std::max(threads, 1); ++i) {
    lanes_.push_back(std::make_unique<Lane>());
    lanes_.back()->events.resize(capacity);
  }
}

ChunkRecorder::~ChunkRecorder() = default;

std::span<const ChunkEvent> ChunkRecorder::events(int thread) const {
  const Lane& lane = *lanes_.at(static_cast<std::size_t>(thread));
  return {lane.events.data(), lane.count};
}

std::size_t ChunkRecorder::dropped() const {
  std::size_t n = 0;
  for (const auto& lane : lanes_)
    n += lane->dropped;
  return n;
}

std::size_t ChunkRecorder::capacity() const {
  return lanes_.front()->events.size();
}

void ChunkRecorder::reserve(std::size_t capacity) {
  for (auto& lane : lanes_)
    if (lane->events.size() < capacity)
      lane->events.resize(capacity);
}

void ChunkRecorder::clear() {
  for (auto& lane : lanes_) {
    lane->count = 0;
    lane->dropped = 0;
  }
}

} // namespace lathe::runtime
