#include "engine/runtime/memory_plan.h"

#include "engine/runtime/tensor.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_set>
#include <utility>

namespace lathe::runtime {

namespace {

std::uint64_t alignUp(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Requested alignments below the tensor alignment are raised to it, so every buffer starts
// on its own cache line and vector code may read to the end of its last line.
std::uint64_t effectiveAlignment(const BufferRequest& buffer) {
  return std::max<std::uint64_t>(buffer.alignment, kTensorAlignment);
}

bool lifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.firstUse <= b.lastUse && b.firstUse <= a.lastUse;
}

std::string describeBuffer(const BufferRequest& buffer, std::uint64_t offset) {
  return "buffer " + std::to_string(buffer.id) + " (steps " + std::to_string(buffer.firstUse) +
         ".." + std::to_string(buffer.lastUse) + ", bytes [" + std::to_string(offset) + ", " +
         std::to_string(offset + buffer.bytes) + "))";
}

void checkRequests(std::span<const BufferRequest> buffers) {
  std::unordered_set<std::int64_t> ids;
  for (const BufferRequest& buffer : buffers) {
    LATHE_CHECK(ids.insert(buffer.id).second,
                "duplicate buffer id " + std::to_string(buffer.id) + " in memory plan request");
    LATHE_CHECK(buffer.firstUse <= buffer.lastUse,
                "buffer " + std::to_string(buffer.id) + " is last used before its first use");
    LATHE_CHECK((buffer.alignment & (buffer.alignment - 1)) == 0,
                "buffer " + std::to_string(buffer.id) + " alignment is not a power of two");
  }
}

// The most bytes live at any one step: a sweep over lifetime starts and ends.
std::uint64_t maxLiveBytes(std::span<const BufferRequest> buffers) {
  std::vector<std::pair<std::int64_t, std::int64_t>> events; // (step, +bytes or -bytes)
  events.reserve(buffers.size() * 2);
  for (const BufferRequest& buffer : buffers) {
    const auto bytes = static_cast<std::int64_t>(buffer.bytes);
    events.emplace_back(buffer.firstUse, bytes);
    events.emplace_back(buffer.lastUse + 1, -bytes); // free after its last step
  }
  std::sort(events.begin(), events.end()); // at equal steps frees (negative) come first
  std::int64_t live = 0;
  std::int64_t peak = 0;
  for (const auto& [step, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return static_cast<std::uint64_t>(peak);
}

// Every buffer in its own slot, stacked from the most to the least aligned (so padding is
// minimal): the arena a planner without reuse would need.
std::vector<BufferPlacement> layOutWithoutReuse(std::span<const BufferRequest> buffers,
                                                std::uint64_t& arenaBytes) {
  std::vector<std::size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return effectiveAlignment(buffers[a]) > effectiveAlignment(buffers[b]);
  });
  std::vector<BufferPlacement> placements(buffers.size());
  std::uint64_t end = 0;
  for (std::size_t index : order) {
    placements[index].id = buffers[index].id;
    if (buffers[index].bytes == 0)
      continue;
    placements[index].offset = alignUp(end, effectiveAlignment(buffers[index]));
    end = placements[index].offset + buffers[index].bytes;
  }
  arenaBytes = alignUp(end, kTensorAlignment);
  return placements;
}

} // namespace

std::uint64_t MemoryPlan::offsetOf(std::int64_t id) const {
  for (const BufferPlacement& placement : placements)
    if (placement.id == id)
      return placement.offset;
  LATHE_CHECK(false, "no buffer " + std::to_string(id) + " in the memory plan");
  return 0;
}

std::vector<BufferRequest> lifetimeRequests(const std::vector<std::optional<std::uint64_t>>& bytes,
                                            const std::vector<const std::vector<int>*>& callArgs) {
  std::vector<std::int64_t> first(bytes.size(), -1), last(bytes.size(), -1);
  for (std::size_t c = 0; c < callArgs.size(); ++c)
    for (int a : *callArgs[c]) {
      const auto s = static_cast<std::size_t>(a);
      if (first[s] < 0)
        first[s] = static_cast<std::int64_t>(c);
      last[s] = static_cast<std::int64_t>(c);
    }
  std::vector<BufferRequest> requests;
  for (std::size_t s = 0; s < bytes.size(); ++s)
    if (bytes[s] && first[s] >= 0)
      requests.push_back({static_cast<std::int64_t>(s), *bytes[s], first[s], last[s], 64});
  return requests;
}

MemoryPlan planMemory(std::span<const BufferRequest> buffers) {
  checkRequests(buffers);
  MemoryPlan plan;
  plan.placements.resize(buffers.size());

  std::vector<std::size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const BufferRequest& x = buffers[a];
    const BufferRequest& y = buffers[b];
    if (x.bytes != y.bytes)
      return x.bytes > y.bytes;
    if (x.firstUse != y.firstUse)
      return x.firstUse < y.firstUse;
    return x.id < y.id;
  });

  std::vector<std::size_t> placed;      // request indices, in placement order
  std::vector<std::size_t> overlapping; // reused for every buffer
  placed.reserve(buffers.size());
  overlapping.reserve(buffers.size());
  std::uint64_t peak = 0;

  for (std::size_t index : order) {
    const BufferRequest& buffer = buffers[index];
    const std::uint64_t alignment = effectiveAlignment(buffer);
    plan.alignment = std::max(plan.alignment, alignment);
    plan.placements[index].id = buffer.id;
    if (buffer.bytes == 0)
      continue; // occupies nothing; offset 0

    overlapping.clear();
    for (std::size_t other : placed)
      if (lifetimesOverlap(buffer, buffers[other]))
        overlapping.push_back(other);
    std::sort(overlapping.begin(), overlapping.end(), [&](std::size_t a, std::size_t b) {
      return plan.placements[a].offset < plan.placements[b].offset;
    });

    // Gaps lie between the end of everything below (prevEnd) and the next buffer's start;
    // live buffers may overlap each other in memory, hence the running maximum.
    std::uint64_t prevEnd = 0;
    std::optional<std::uint64_t> best;
    std::uint64_t bestGap = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t other : overlapping) {
      const std::uint64_t otherOffset = plan.placements[other].offset;
      const std::uint64_t start = alignUp(prevEnd, alignment);
      if (otherOffset > prevEnd && start + buffer.bytes <= otherOffset &&
          otherOffset - prevEnd < bestGap) {
        best = start;
        bestGap = otherOffset - prevEnd;
      }
      prevEnd = std::max(prevEnd, otherOffset + buffers[other].bytes);
    }
    const std::uint64_t offset = best ? *best : alignUp(prevEnd, alignment);
    plan.placements[index].offset = offset;
    peak = std::max(peak, offset + buffer.bytes);
    placed.push_back(index);
  }

  // Whole lines, so reading to the end of the last buffer's last line stays in the arena.
  plan.peakBytes = alignUp(peak, kTensorAlignment);
  plan.lowerBoundBytes = maxLiveBytes(buffers);
  // Alignment padding can, in contrived cases (a large buffer with a small alignment below
  // a page-aligned one), make greedy placement worse than no reuse at all; never be worse.
  std::vector<BufferPlacement> separate = layOutWithoutReuse(buffers, plan.naiveBytes);
  if (plan.peakBytes > plan.naiveBytes) {
    plan.placements = std::move(separate);
    plan.peakBytes = plan.naiveBytes;
  }
  return plan;
}

std::string validateMemoryPlan(std::span<const BufferRequest> buffers, const MemoryPlan& plan) {
  if (plan.placements.size() != buffers.size())
    return "plan has " + std::to_string(plan.placements.size()) + " placements for " +
           std::to_string(buffers.size()) + " buffers";
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const BufferRequest& buffer = buffers[i];
    const std::uint64_t offset = plan.placements[i].offset;
    if (plan.placements[i].id != buffer.id)
      return "placement " + std::to_string(i) + " is for buffer " +
             std::to_string(plan.placements[i].id) + ", expected " + std::to_string(buffer.id);
    if (buffer.bytes == 0)
      continue;
    const std::uint64_t alignment = effectiveAlignment(buffer);
    if (offset % alignment != 0 || plan.alignment % alignment != 0)
      return describeBuffer(buffer, offset) + " is not aligned to " + std::to_string(alignment);
    if (offset + buffer.bytes > plan.peakBytes)
      return describeBuffer(buffer, offset) + " ends beyond the arena of " +
             std::to_string(plan.peakBytes) + " bytes";
  }
  // Sorted by offset, each buffer only needs comparing with those that start before its end.
  std::vector<std::size_t> byOffset(buffers.size());
  std::iota(byOffset.begin(), byOffset.end(), 0);
  std::sort(byOffset.begin(), byOffset.end(), [&](std::size_t a, std::size_t b) {
    return plan.placements[a].offset < plan.placements[b].offset;
  });
  for (std::size_t i = 0; i < byOffset.size(); ++i) {
    const BufferRequest& a = buffers[byOffset[i]];
    const std::uint64_t aOffset = plan.placements[byOffset[i]].offset;
    if (a.bytes == 0)
      continue;
    for (std::size_t j = i + 1; j < byOffset.size(); ++j) {
      const BufferRequest& b = buffers[byOffset[j]];
      const std::uint64_t bOffset = plan.placements[byOffset[j]].offset;
      if (bOffset >= aOffset + a.bytes)
        break;
      if (b.bytes > 0 && lifetimesOverlap(a, b))
        return describeBuffer(a, aOffset) + " and " + describeBuffer(b, bOffset) +
               " are live at the same step and share memory";
    }
  }
  return "";
}

} // namespace lathe::runtime
