#include "engine/profiler/report_writers.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace lathe::profiler {

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string s;
  for (const std::string& item : items)
    s += (s.empty() ? "" : separator) + item;
  return s;
}

std::string clipped(const std::string& text, std::size_t width) {
  if (text.size() <= width)
    return text;
  return text.substr(0, width - 3) + "...";
}

std::string number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Quotes a CSV field when it holds a separator, a quote or a line break (RFC 4180).
std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos)
    return text;
  std::string s = "\"";
  for (char c : text)
    s += c == '"' ? std::string("\"\"") : std::string(1, c);
  return s + "\"";
}

nlohmann::json orNull(double value) {
  return value < 0 ? nlohmann::json(nullptr) : nlohmann::json(value);
}

double micros(std::int64_t ns, std::int64_t origin) {
  return static_cast<double>(ns - origin) * 1e-3;
}

} // namespace

std::string formatKernelTable(std::span<const KernelRow> rows, const ReportContext& context,
                              std::size_t maxRows) {
  constexpr std::size_t kNameWidth = 44, kNodesWidth = 36;
  std::size_t nameWidth = 6, nodesWidth = 10;
  for (const KernelRow& row : rows) {
    nameWidth = std::max(nameWidth, std::min(row.kernel.size(), kNameWidth));
    nodesWidth = std::max(nodesWidth, std::min(joined(row.nodes, ",").size(), kNodesWidth));
  }
  std::string out;
  out += "Kernel profile: " + std::to_string(context.runs) + " runs, " +
         std::to_string(context.threads) + " threads, wall " + number("%.3f", context.wallMs) +
         " ms";
  if (context.peakGflops > 0)
    out += ", peak " + number("%.1f", context.peakGflops) + " GFLOP/s (" + context.peakIsa +
           " FMA benchmark)";
  out += "\n";
  if (context.droppedEvents > 0)
    out += "warning: " + std::to_string(context.droppedEvents) +
           " events were not recorded (buffers full)\n";
  char line[512];
  const int nw = static_cast<int>(nameWidth), dw = static_cast<int>(nodesWidth);
  std::snprintf(line, sizeof line, "%-*s  %-*s  %6s  %11s  %10s  %8s  %9s  %7s\n", nw, "kernel", dw,
                "ONNX nodes", "calls", "total (ms)", "mean (ms)", "% total", "GFLOP/s", "% peak");
  out += line;
  const std::size_t shown = maxRows > 0 ? std::min(maxRows, rows.size()) : rows.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const KernelRow& row = rows[i];
    const std::string gflops = row.gflops < 0 ? "-" : number("%.1f", row.gflops);
    const std::string peak = row.percentOfPeak < 0 ? "-" : number("%.1f", row.percentOfPeak);
    std::snprintf(line, sizeof line, "%-*s  %-*s  %6lld  %11.3f  %10.4f  %8.2f  %9s  %7s\n", nw,
                  clipped(row.kernel, kNameWidth).c_str(), dw,
                  clipped(joined(row.nodes, ","), kNodesWidth).c_str(),
                  static_cast<long long>(row.calls), row.totalMs, row.meanMs, row.percent,
                  gflops.c_str(), peak.c_str());
    out += line;
  }
  if (shown < rows.size()) {
    double totalMs = 0, percent = 0;
    long long calls = 0;
    for (std::size_t i = shown; i < rows.size(); ++i) {
      totalMs += rows[i].totalMs;
      percent += rows[i].percent;
      calls += rows[i].calls;
    }
    const std::string rest = "(" + std::to_string(rows.size() - shown) + " more kernels)";
    std::snprintf(line, sizeof line, "%-*s  %-*s  %6lld  %11.3f  %10s  %8.2f  %9s  %7s\n", nw,
                  rest.c_str(), dw, "", calls, totalMs, "", percent, "", "");
    out += line;
  }
  return out;
}

std::string kernelRowsCsv(std::span<const KernelRow> rows) {
  std::string out = "kernel,nodes,calls,total_ms,mean_ms,percent,flops_per_call,gflops,"
                    "percent_of_peak\n";
  for (const KernelRow& row : rows) {
    out += csvField(row.kernel) + "," + csvField(joined(row.nodes, ";")) + "," +
           std::to_string(row.calls) + "," + number("%.6f", row.totalMs) + "," +
           number("%.6f", row.meanMs) + "," + number("%.4f", row.percent) + "," +
           number("%.0f", row.flopsPerCall) + "," +
           (row.gflops < 0 ? "" : number("%.3f", row.gflops)) + "," +
           (row.percentOfPeak < 0 ? "" : number("%.3f", row.percentOfPeak)) + "\n";
  }
  return out;
}

std::string kernelRowsJson(std::span<const KernelRow> rows, const ReportContext& context) {
  nlohmann::json j{{"runs", context.runs},
                   {"threads", context.threads},
                   {"wall_ms", context.wallMs},
                   {"peak_gflops", context.peakGflops > 0 ? nlohmann::json(context.peakGflops)
                                                          : nlohmann::json(nullptr)},
                   {"peak_isa", context.peakIsa},
                   {"dropped_events", context.droppedEvents},
                   {"kernels", nlohmann::json::array()}};
  for (const KernelRow& row : rows)
    j["kernels"].push_back({{"kernel", row.kernel},
                            {"nodes", row.nodes},
                            {"calls", row.calls},
                            {"total_ms", row.totalMs},
                            {"mean_ms", row.meanMs},
                            {"percent", row.percent},
                            {"flops_per_call", row.flopsPerCall},
                            {"gflops", orNull(row.gflops)},
                            {"percent_of_peak", orNull(row.percentOfPeak)}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string chromeTraceJson(const Profile& profile) {
  std::int64_t origin = profile.runs.empty() ? 0 : profile.runs.front().startNs;
  if (profile.runs.empty() && !profile.events.empty())
    origin = std::min_element(profile.events.begin(), profile.events.end(),
                              [](const Event& a, const Event& b) { return a.startNs < b.startNs; })
                 ->startNs;
  constexpr int kPid = 1;
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", kPid},
                    {"tid", 0},
                    {"args", {{"name", "lathe run"}}}});
  for (int t = 0; t < profile.threads; ++t) {
    events.push_back(
        {{"name", "thread_name"},
         {"ph", "M"},
         {"pid", kPid},
         {"tid", t},
         {"args",
          {{"name", t == 0 ? std::string("caller (thread 0)") : "worker " + std::to_string(t)}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", t},
                      {"args", {{"sort_index", t}}}});
  }
  for (std::size_t r = 0; r < profile.runs.size(); ++r)
    events.push_back({{"name", "run " + std::to_string(r)},
                      {"cat", "run"},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", 0},
                      {"ts", micros(profile.runs[r].startNs, origin)},
                      {"dur", micros(profile.runs[r].endNs, profile.runs[r].startNs)},
                      {"args", {{"run", r}}}});
  for (const Event& e : profile.events) {
    const bool known = e.call >= 0 && static_cast<std::size_t>(e.call) < profile.calls.size();
    const CallInfo* info = known ? &profile.calls[static_cast<std::size_t>(e.call)] : nullptr;
    nlohmann::json args{{"call", e.call}, {"run", e.run}};
    if (e.kind == EventKind::Chunk && e.total > 0) {
      args["iterations"] = {e.begin, e.end};
      args["loop_iterations"] = e.total;
    }
    if (info) {
      args["nodes"] = info->nodes;
      if (info->flops > 0)
        args["flops"] = info->flops;
    }
    events.push_back({{"name", info ? info->kernel : std::string("(outside a kernel)")},
                      {"cat", e.kind == EventKind::Call ? "kernel" : "chunk"},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", e.thread},
                      {"ts", micros(e.startNs, origin)},
                      {"dur", micros(e.endNs, e.startNs)},
                      {"args", std::move(args)}});
  }
  nlohmann::json trace{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace lathe::profiler
