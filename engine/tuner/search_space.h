#pragma once
// The schedules the tuner tries on a kernel: knobs opened on its default loop nest, drawn at
// random and kept only when they replay (schedule::apply accepts them), so every candidate
// is a legal trace. The knobs, per loop of the default nest:
//   - a serial loop with no parallel loop around or inside it: parallel, alone or after a
//     split into chunks (coarser or finer work per task than the default's loops);
//   - an innermost serial loop of constant extent: unroll (extent <= 32), vectorize
//     (2..64), or split by 4, 8 or 16 then vectorize the inner loop;
//   - a loop with one serial loop inside: reorder the two (loop order).
// A kernel with a default trace (loop::Kernel::defaultTrace) also has its trace's knobs
// opened: each split step of it may take another factor (tile sizes, rows and vectors of a
// register tile), or one of the kernel's traceVariants (other tiles and task orders the
// lowering ranks next) may replace it whole. The knobs above then apply to the loops the
// default trace makes, after it. A candidate combines up to three knobs on distinct loops or steps;
// its trace is the whole trace, replayed on the nest as lowered.

#include "engine/loop_ir/ir.h"
#include "engine/schedule/schedule.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace lathe::tuner {

struct LoopInfo {
  std::string name;
  std::int64_t extent = -1; // -1: not constant
  loop::ForKind kind = loop::ForKind::Serial;
  int depth = 0;          // loops around it
  bool innermost = false; // no loop inside
  bool insideParallel = false;
  bool containsParallel = false;
  std::string onlyChild; // the one serial loop that is its whole body, if any
};

// The loops of `kernel`, outermost first in program order.
std::vector<LoopInfo> loopsOf(const loop::Kernel& kernel);

// Every single-knob step list the rules above give for `kernel` (unchecked).
std::vector<std::vector<schedule::Step>> knobsOf(const loop::Kernel& kernel);

// A knob: steps appended after the default trace, or (replaces >= 0) the one step that
// takes the place of that step of it, or (variant >= 0) that one of the kernel's
// traceVariants in place of the whole default trace (then knobs that replace a step of the
// default do not apply). `key` is what two knobs of one candidate may not share.
struct Knob {
  std::vector<schedule::Step> steps;
  int replaces = -1;
  std::string key;
  int variant = -1;
};
// The knobs of `kernel`'s default trace `defaults`: another factor for each of its splits
// (a divisor of the loop's extent when it is known).
std::vector<Knob> traceKnobsOf(const loop::Kernel& kernel, const schedule::Schedule& defaults);

// A legal candidate: the knobs (indices into knobsOf) it combines, its steps and the kernel
// they give.
struct Candidate {
  std::vector<std::size_t> knobs;
  schedule::Schedule schedule;
  std::string trace;
  loop::Kernel scheduled;
};

// Up to `count` distinct legal candidates for `kernel` (the nest as lowered) with its
// default trace `defaults` (null: none), none equal to a trace in `seen` (which gains
// them). Each is a random combination of one to three knobs or, when `parents` are given,
// half of the time a mutation of one of them: a knob replaced, added or dropped. Each is
// replayed to check it.
std::vector<Candidate> sampleCandidates(const loop::Kernel& kernel, int count, std::mt19937& rng,
                                        std::vector<std::string>& seen,
                                        const std::vector<std::vector<std::size_t>>& parents = {},
                                        const schedule::Schedule* defaults = nullptr);

// The schedules of sampleCandidates without parents.
std::vector<schedule::Schedule> sampleSchedules(const loop::Kernel& kernel, int count,
                                                std::mt19937& rng, std::vector<std::string>& seen,
                                                const schedule::Schedule* defaults = nullptr);

} // namespace lathe::tuner
