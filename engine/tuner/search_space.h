#pragma once
// The schedules the tuner tries on a kernel: knobs opened on its default loop nest, drawn at
// random and kept only when they replay (schedule::apply accepts them), so every candidate
// is a legal trace. The knobs, per loop of the default nest:
//   - a serial loop with no parallel loop around or inside it: parallel, alone or after a
//     split into chunks (coarser or finer work per task than the default's loops);
//   - an innermost serial loop of constant extent: unroll (extent <= 32), vectorize
//     (2..64), or split by 4, 8 or 16 then vectorize the inner loop;
//   - a loop with one serial loop inside: reorder the two (loop order).
// A candidate combines up to three knobs on distinct loops.

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

// A legal candidate: the knobs (indices into knobsOf) it combines, its steps and the kernel
// they give.
struct Candidate {
  std::vector<std::size_t> knobs;
  schedule::Schedule schedule;
  std::string trace;
  loop::Kernel scheduled;
};

// Up to `count` distinct legal candidates for `kernel`, none equal to a trace in `seen`
// (which gains them). Each is a random combination of one to three knobs or, when
// `parents` are given, half of the time a mutation of one of them: a knob replaced, added
// or dropped. Each is replayed to check it.
std::vector<Candidate> sampleCandidates(const loop::Kernel& kernel, int count, std::mt19937& rng,
                                        std::vector<std::string>& seen,
                                        const std::vector<std::vector<std::size_t>>& parents = {});

// The schedules of sampleCandidates without parents.
std::vector<schedule::Schedule> sampleSchedules(const loop::Kernel& kernel, int count,
                                                std::mt19937& rng, std::vector<std::string>& seen);

} // namespace lathe::tuner
