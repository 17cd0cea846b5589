#pragma once
// What a profiled run leaves behind: plain structs, filled by Profiler (profiler.h) and
// read by the table and the writers (kernel_rows.h, report_writers.h).

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::profiler {

// One call of the execution plan (Profile::calls is indexed by call).
struct CallInfo {
  std::string kernel;             // kernel name (control flow: the node's name)
  std::vector<std::string> nodes; // the ONNX nodes it computes
  double flops = 0;               // floating-point operations per call; 0 when unknown
};

enum class EventKind {
  Call,  // a whole kernel call, on the thread that ran the plan (thread 0)
  Chunk, // one chunk of a parallel loop inside a call, on the pool thread that ran it
};

struct Event {
  EventKind kind = EventKind::Call;
  int call = -1;  // index into Profile::calls; -1 for a chunk outside every call
  int run = 0;    // index into Profile::runs
  int thread = 0; // pool thread: 0 is the calling thread, i > 0 is worker i
  std::int64_t startNs = 0, endNs = 0; // steady clock
  // Chunks: the iterations [begin, end) of a parallel loop of `total` iterations (0 for calls).
  std::int64_t begin = 0, end = 0, total = 0;
};

struct RunSpan {
  std::int64_t startNs = 0, endNs = 0;
};

struct Profile {
  std::vector<CallInfo> calls;
  // Call events in time order, then chunk events by thread and time.
  std::vector<Event> events;
  std::vector<RunSpan> runs; // the timed runs, in order
  int threads = 1;
  std::size_t droppedEvents = 0; // recorded when buffers were full (0 unless a run grew)
};

// One row of the per-kernel table.
struct KernelRow {
  std::string kernel;
  std::vector<std::string> nodes;
  std::int64_t calls = 0;
  double totalMs = 0, meanMs = 0;
  double percent = 0;        // of the summed time of every kernel
  double flopsPerCall = 0;   // 0 when unknown
  double gflops = -1;        // achieved GFLOP/s; negative when the FLOPs are unknown
  double percentOfPeak = -1; // of the measured peak; negative when unknown
};

} // namespace lathe::profiler
