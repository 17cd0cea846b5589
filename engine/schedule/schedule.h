#pragma once
// Schedules as data: a schedule is a list of primitive steps (primitives.def lists them:
// split, tile, reorder, fuse, vectorize, unroll, parallel, cache_write, register_tile,
// compute_inline, compute_at, pack) replayed, in order, on a kernel's loop nest.
//
// Loops are named by their loop variable: names are unique within a kernel (ir.h), and the
// loops a step creates get derived names (split(x, 8) makes x.o and x.i; fuse(a, b) makes
// a.b.fused), so a trace written against `lathe compile --dump` output replays on a fresh
// lowering of the same model. Each primitive checks its arguments and the legality of the
// rewrite, and throws lathe::Error (kind Invalid) naming the kernel, the step and the
// reason; it never produces code that computes something else.
//
// Text form (schedule_text.cpp), one kernel block per kernel, one step per line:
//   # comment
//   kernel fused_conv_relu_0:
//     split(x, 8)
//     vectorize(x.i)
// JSON form (schedule_json.cpp):
//   {"schedules": [{"kernel": "fused_conv_relu_0",
//                   "steps": [{"primitive": "split", "loops": ["x"], "factors": [8]}]}]}

#include "engine/loop_ir/ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lathe::schedule {

// One per row of primitives.def, whose comments say what each does.
enum class Primitive : std::uint8_t {
#define PRIMITIVE(name, spelling, loops, factors, example, apply) name,
#include "engine/schedule/primitives.def"
};

// The spelling in schedules ("split", "cache_write", ...).
const char* primitiveName(Primitive primitive);
// Every primitive, in enum order (for help texts and parsers).
const std::vector<Primitive>& allPrimitives();

// The primitive spelled `name`, if any.
std::optional<Primitive> primitiveFromName(const std::string& name);

// How many loop (or buffer) names and integer factors a primitive takes; loops < 0 means
// "two or more".
struct Signature {
  int loops;
  int factors;
};
Signature signatureOf(Primitive primitive);

struct Step {
  Primitive primitive = Primitive::Split;
  std::vector<std::string> loops;
  std::vector<std::int64_t> factors;
  int line = 0; // where the step was read from (text form), 0 when unknown

  bool operator==(const Step& other) const {
    return primitive == other.primitive && loops == other.loops && factors == other.factors;
  }
};

// The steps for one kernel, by the kernel's name.
struct Schedule {
  std::string kernel;
  std::vector<Step> steps;

  bool operator==(const Schedule&) const = default;
};

// Schedules for the kernels of one model; at most one per kernel.
struct ScheduleSet {
  std::string source; // the file it was read from, for messages; may be empty
  std::vector<Schedule> schedules;

  const Schedule* find(const std::string& kernel) const;
  bool empty() const { return schedules.empty(); }
};

// Throws lathe::Error (Invalid) "WHERE: split takes 1 loop(s) then 1 integer(s), as in
// split(x, 8)" when the step's argument counts do not fit its primitive.
void checkSignature(const Step& step, const std::string& where);

// "split(x, 8)", "reorder(y.o, x.o, y.i, x.i)".
std::string toString(const Step& step);
// One step per line, each ending in '\n'; nothing for an empty schedule.
std::string traceText(const Schedule& schedule);

// Replays every step on the kernel, then simplifies it. Throws lathe::Error (Invalid) for a
// step that does not apply, with the file (when known), the line, the kernel and the reason.
// With `refused`, the index of the step refused is stored there before the throw.
loop::Kernel apply(const loop::Kernel& kernel, const Schedule& schedule,
                   const std::string& source = {}, std::size_t* refused = nullptr);

// The default schedule of `kernel` (its nest as lowered) for a CUDA GPU, as a trace: in each
// top-level loop nest, the longest run of outer loops whose iterations are independent is
// fused, split into blocks of kGpuBlockThreads threads and bound to blockIdx.x/threadIdx.x
// (one block when fewer). A nest with no such loop runs on one thread.
inline constexpr std::int64_t kGpuBlockThreads = 256;
// `scheduled`, when given, gets the kernel with the trace replayed (it is, while the trace is
// found: the independence proofs are not made twice).
std::string gpuDefaultTrace(const loop::Kernel& kernel, loop::Kernel* scheduled = nullptr);
// `kernel` with the parallel loops its lowering marked made serial: the nest GPU traces
// replay on (the lowering's parallel loops are CPU thread-pool tasks).
loop::Kernel withoutParallelLoops(const loop::Kernel& kernel);
// `kernel` with its loops bound to blocks and threads made serial loops over the same
// range, barriers dropped and shared buffers on the stack: a GPU schedule that runs on a
// CPU, each block and thread in turn (the loops bound to threads one after another, which
// is what the barriers between them guarantee).
loop::Kernel withSerialGpuLoops(const loop::Kernel& kernel);

// Checks that every schedule names one of `kernels` (a typo would otherwise do nothing).
void checkKernelsExist(const ScheduleSet& set, const std::vector<std::string>& kernels);

} // namespace lathe::schedule
