// Session::run's profile: building RunProfile from the profiler's events, and its writers.
#include "engine/api/profile_report.h"

#include "engine/profiler/kernel_rows.h"
#include "engine/profiler/report_writers.h"
#include "engine/support/diagnostics.h"

namespace lathe::api {

namespace {

profiler::KernelRow toProfilerRow(const KernelProfileRow& r) {
  return {r.kernel,  r.nodes,        r.calls,  r.totalMs,      r.meanMs,
          r.percent, r.flopsPerCall, r.gflops, r.percentOfPeak};
}

profiler::ReportContext contextOf(const RunReport& report) {
  const RunProfile& p = *report.profile;
  profiler::ReportContext c;
  c.runs = static_cast<int>(p.runsUs.size());
  c.threads = p.threads;
  for (const auto& [start, duration] : p.runsUs)
    c.wallMs += duration * 1e-3;
  c.peakGflops = p.peakGflops;
  c.peakIsa = p.peakIsa;
  c.droppedEvents = p.droppedEvents;
  return c;
}

} // namespace

RunProfile toRunProfile(const profiler::Profile& profile, double peakGflops,
                        const std::string& peakIsa) {
  RunProfile out;
  out.threads = profile.threads;
  out.peakGflops = peakGflops;
  out.peakIsa = peakIsa;
  out.droppedEvents = profile.droppedEvents;
  for (const profiler::CallInfo& c : profile.calls)
    out.calls.push_back({c.kernel, c.nodes, c.flops});
  for (const profiler::KernelRow& r : profiler::kernelRows(profile, peakGflops))
    out.rows.push_back({r.kernel, r.nodes, r.calls, r.totalMs, r.meanMs, r.percent, r.flopsPerCall,
                        r.gflops, r.percentOfPeak});
  const std::int64_t origin = profile.runs.empty() ? 0 : profile.runs.front().startNs;
  auto us = [](std::int64_t ns) { return static_cast<double>(ns) * 1e-3; };
  for (const profiler::RunSpan& r : profile.runs)
    out.runsUs.emplace_back(us(r.startNs - origin), us(r.endNs - r.startNs));
  for (const profiler::Event& e : profile.events) {
    TraceEvent t;
    t.call = e.call;
    if (e.call >= 0 && static_cast<std::size_t>(e.call) < profile.calls.size())
      t.kernel = profile.calls[static_cast<std::size_t>(e.call)].kernel;
    t.run = e.run;
    t.thread = e.thread;
    t.chunk = e.kind == profiler::EventKind::Chunk;
    t.startUs = us(e.startNs - origin);
    t.durationUs = us(e.endNs - e.startNs);
    t.firstIteration = e.begin;
    t.endIteration = e.end;
    t.iterations = e.total;
    out.events.push_back(std::move(t));
  }
  return out;
}

std::string formatProfile(const RunReport& report, const std::string& format, std::size_t maxRows) {
  if (!report.profile)
    return {};
  std::vector<profiler::KernelRow> rows;
  for (const KernelProfileRow& r : report.profile->rows)
    rows.push_back(toProfilerRow(r));
  if (format == "table")
    return profiler::formatKernelTable(rows, contextOf(report), maxRows);
  if (format == "csv")
    return profiler::kernelRowsCsv(rows);
  if (format == "json")
    return profiler::kernelRowsJson(rows, contextOf(report));
  throw Error(ErrorKind::Invalid, "unknown profile format '" + format + "' (table, csv, json)");
}

std::string profileChromeTrace(const RunReport& report) {
  if (!report.profile)
    return {};
  // Back to the profiler's structs, in ns from the first run (the trace's origin).
  const RunProfile& p = *report.profile;
  auto ns = [](double us) { return static_cast<std::int64_t>(us * 1e3 + 0.5); };
  profiler::Profile profile;
  profile.threads = p.threads;
  profile.droppedEvents = p.droppedEvents;
  for (const RunProfile::Call& c : p.calls)
    profile.calls.push_back({c.kernel, c.nodes, c.flops});
  for (const auto& [start, duration] : p.runsUs)
    profile.runs.push_back({ns(start), ns(start) + ns(duration)});
  for (const TraceEvent& e : p.events)
    profile.events.push_back({e.chunk ? profiler::EventKind::Chunk : profiler::EventKind::Call,
                              e.call, e.run, e.thread, ns(e.startUs),
                              ns(e.startUs) + ns(e.durationUs), e.firstIteration, e.endIteration,
                              e.iterations});
  return profiler::chromeTraceJson(profile);
}

} // namespace lathe::api
