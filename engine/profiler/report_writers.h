#pragma once
// The per-kernel table as text, CSV and JSON, and a profile as a Chrome trace (JSON that
// chrome://tracing and Perfetto open).

#include "engine/profiler/profile.h"

#include <span>
#include <string>

namespace lathe::profiler {

// What the table was measured over, printed above it and stored in the JSON.
struct ReportContext {
  int runs = 0;
  int threads = 0;
  double wallMs = 0;     // the runs' wall time, summed
  double peakGflops = 0; // <= 0: unknown
  std::string peakIsa;   // "avx512", "avx2", "scalar"
  std::size_t droppedEvents = 0;
};

// Aligned columns with units in the headers; GFLOP/s and % of peak are "-" when unknown.
// maxRows > 0 keeps the first rows and sums up the rest in one line.
std::string formatKernelTable(std::span<const KernelRow> rows, const ReportContext& context,
                              std::size_t maxRows = 0);
// Header line, then one line per row; nodes joined with ';'; unknown numbers left empty.
std::string kernelRowsCsv(std::span<const KernelRow> rows);
// {"runs", "threads", "wall_ms", "peak_gflops", "kernels": [...]}; unknown numbers are null.
std::string kernelRowsJson(std::span<const KernelRow> rows, const ReportContext& context);
// Trace Event Format: an "X" event per call (cat "kernel", on tid 0) and per chunk (cat
// "chunk", on its thread's tid), one per run (cat "run"), thread_name metadata; ts and dur in
// µs from the first run's start.
std::string chromeTraceJson(const Profile& profile);

} // namespace lathe::profiler
