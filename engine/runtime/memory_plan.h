#pragma once
// Static memory planning for a straight-line sequence of kernels.
//
// Every intermediate buffer gets an offset into one arena. Two buffers may share bytes only
// if their lifetimes (inclusive step ranges) are disjoint; a buffer whose last use is step s
// and one whose first use is step s are both live at s and never share bytes, because a
// kernel reads its inputs while it writes its outputs.
//
// Algorithm: "greedy by size" with best fit (Pisarchyk & Lee, "Efficient Memory Management
// for Deep Neural Net Inference", 2020; TFLite's GreedyMemoryPlanner places the same way,
// and ONNX Runtime's planner also reuses freed blocks best-fit):
//   1. sort the buffers by size, largest first (ties: earlier first use, then id);
//   2. for each buffer, look at the already placed buffers whose lifetimes overlap it,
//      ordered by offset, and collect the gaps between them (and below the first);
//   3. take the smallest gap that holds the buffer at its alignment; with none, place it
//      just above the highest of those overlapping buffers.
// If alignment padding makes that worse than giving every buffer its own slot (possible
// only with mixed large alignments), the plan without reuse is returned instead.
// Large buffers go first because they are the hard ones to fit; small ones then fill the
// holes between them. O(n^2 log n) for n buffers, fine for the thousands a model has.
//
// Arena layout: one block of peakBytes starting at an address aligned to `alignment`
// (the largest buffer alignment, at least 64); buffer i lives at base + placements[i].offset.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lathe::runtime {

struct BufferRequest {
  std::int64_t id = 0;         // the caller's handle; ids must be unique
  std::uint64_t bytes = 0;     // may be 0 (gets offset 0 and occupies nothing)
  std::int64_t firstUse = 0;   // first step that touches the buffer (it is written there)
  std::int64_t lastUse = 0;    // last step that touches it; >= firstUse
  std::uint64_t alignment = 0; // power of two or 0; values below 64 are raised to 64
};

struct BufferPlacement {
  std::int64_t id = 0;
  std::uint64_t offset = 0;
};

struct MemoryPlan {
  std::vector<BufferPlacement> placements; // one per request, in request order
  std::uint64_t peakBytes = 0;             // arena size
  std::uint64_t alignment = 64;            // the arena base must be aligned to this
  // For comparison: every buffer in its own slot, with alignment padding ...
  std::uint64_t naiveBytes = 0;
  // ... and the most bytes live at any one step, which no plan can beat.
  std::uint64_t lowerBoundBytes = 0;

  // The offset of the buffer with this id (an internal error if absent).
  std::uint64_t offsetOf(std::int64_t id) const;
};

// Bad requests (duplicate ids, lastUse < firstUse, alignment not a power of two) are
// internal errors: the executor builds them.
MemoryPlan planMemory(std::span<const BufferRequest> buffers);

// The requests of a sequence of calls: slot s is an intermediate of `bytes[s]` bytes (nullopt:
// not an intermediate, so not in the arena), alive from the first call whose arguments name
// it to the last. A slot no call uses gets no request. 64-byte aligned.
std::vector<BufferRequest> lifetimeRequests(const std::vector<std::optional<std::uint64_t>>& bytes,
                                            const std::vector<const std::vector<int>*>& callArgs);

// Checks a plan against its requests: every buffer placed once, aligned and inside the
// arena, and no two buffers with overlapping lifetimes sharing a byte. Returns a description
// of the first problem, or an empty string when the plan is valid.
std::string validateMemoryPlan(std::span<const BufferRequest> buffers, const MemoryPlan& plan);

} // namespace lathe::runtime
