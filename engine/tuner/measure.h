#pragma once
// Measuring a candidate schedule in a child process, so that generated code that crashes,
// hangs or runs away with memory costs one record, never the tuner (or the window that runs
// it). The child compiles the default kernel and the candidate for this machine, runs both
// on the same arguments (the model's weights, seeded random activations), checks that the
// candidate computes what the default does, and times both: one warm-up call, then
// `repeat` calls each after a cache flush and a run of the kernels that write its inputs in
// the model, the two alternating (as in a model, weights are not in cache and the inputs
// are where their producers left them; alternating, what else the machine does falls on
// both alike), medians and spread.

#include "engine/loop_ir/ir.h"
#include "engine/lowering/lowered_model.h"
#include "engine/target/target.h"
#include "engine/tuner/producers.h"

#include <memory>
#include <string>
#include <vector>

namespace lathe::codegen {
class JitKernels;
using KernelFunction = void (*)(void** args);
} // namespace lathe::codegen

namespace lathe::tuner {

struct MeasureOptions {
  int repeat = 20;
  int threads = 1;
  double timeoutSeconds = 20; // the whole child: compiles, runs and timing
  // Outputs match when |candidate - default| <= atol + rtol * (|default| + the largest
  // |default| of that output) (f32; other types must be equal bit for bit). Reordered sums
  // round differently.
  double rtol = 1e-4, atol = 1e-5;
  // Flush the caches before each timed call (see measure.cpp); off for tests that only
  // need a time.
  bool flushCaches = true;
  // After each flush, run the kernels that write the kernel's inputs in the model (the
  // default schedules, on the same threads; producers.h), so that the timed call finds its
  // inputs where the model leaves them, not in memory.
  bool warmInputs = true;
};

struct Measurement {
  std::string error; // empty when it ran and matched
  double medianMs = 0, p10Ms = 0, p90Ms = 0;
  double defaultMedianMs = 0;
  bool ok() const { return error.empty(); }
};

// A record is applied only for a clear win over the default it was timed next to: a few per
// cent is within the noise of one measurement.
inline constexpr double kClearWin = 0.97;
inline bool clearWin(double medianMs, double defaultMedianMs) {
  return defaultMedianMs > 0 && medianMs > 0 && medianMs < kClearWin * defaultMedianMs;
}

// Of two measurements of one candidate, the one less in its favour (the larger time against
// its default), or the failed one. A new best is measured twice: on a shared machine one
// lucky measurement otherwise decides what compiles.
Measurement lessFavourable(const Measurement& a, const Measurement& b);

// The default kernel and (with warmInputs) the producers of its inputs, compiled once: each
// child forked to measure a candidate inherits the code instead of compiling it again (at
// 2 threads on ResNet-50 that was two of a child's three compiles).
class Baseline {
public:
  // `reference` (a kernel of `lowered`) must outlive this. Throws lathe::Error when the code
  // cannot be compiled.
  Baseline(const lowering::LoweredModel& lowered, const loop::Kernel& reference,
           const target::Target& target, bool warmInputs);
  ~Baseline();
  Baseline(const Baseline&) = delete;
  Baseline& operator=(const Baseline&) = delete;

  const loop::Kernel& reference() const { return *reference_; }
  const std::vector<ProducerCall>& producers() const { return producers_; }
  codegen::KernelFunction function(const std::string& name) const;

private:
  const loop::Kernel* reference_;
  std::vector<ProducerCall> producers_;
  std::unique_ptr<codegen::JitKernels> code_;
};

// `reference` and `candidate` are the same kernel of `lowered` (by name) before and after a
// schedule; `lowered` gives its arguments (its first call). Never throws for what the child
// does; the error says: "crashed (signal 11, SIGSEGV)", "timed out after 20 s", "wrong
// result: output 0 element 17 is 1.5, the default gives 1.25", or the compile's message.
// This one compiles the default in the child too.
Measurement measureInChild(const lowering::LoweredModel& lowered, const loop::Kernel& reference,
                           const loop::Kernel& candidate, const target::Target& target,
                           const MeasureOptions& options);
// The same with the default compiled before; its producers run whatever
// options.warmInputs says (the baseline was made with or without them).
Measurement measureInChild(const lowering::LoweredModel& lowered, const Baseline& baseline,
                           const loop::Kernel& candidate, const target::Target& target,
                           const MeasureOptions& options);

} // namespace lathe::tuner
