#include "engine/profiler/kernel_rows.h"

#include <algorithm>
#include <map>

namespace lathe::profiler {

std::vector<KernelRow> kernelRows(const Profile& profile, double peakGflops) {
  std::map<std::string, KernelRow> byName;
  std::map<std::string, double> flops; // summed over the kernel's calls
  double total = 0;
  for (const Event& e : profile.events) {
    if (e.kind != EventKind::Call || e.call < 0 ||
        static_cast<std::size_t>(e.call) >= profile.calls.size())
      continue;
    const CallInfo& info = profile.calls[static_cast<std::size_t>(e.call)];
    KernelRow& row = byName[info.kernel];
    if (row.calls == 0) {
      row.kernel = info.kernel;
      row.nodes = info.nodes;
    }
    for (const std::string& node : info.nodes) // a kernel called from several places
      if (std::find(row.nodes.begin(), row.nodes.end(), node) == row.nodes.end())
        row.nodes.push_back(node);
    const double ms = static_cast<double>(e.endNs - e.startNs) * 1e-6;
    ++row.calls;
    row.totalMs += ms;
    flops[info.kernel] += info.flops;
    total += ms;
  }
  std::vector<KernelRow> rows;
  for (auto& [name, row] : byName) {
    row.meanMs = row.totalMs / static_cast<double>(row.calls);
    row.percent = total > 0 ? 100.0 * row.totalMs / total : 0;
    const double f = flops[name];
    row.flopsPerCall = f / static_cast<double>(row.calls);
    if (f > 0 && row.totalMs > 0) {
      row.gflops = f / (row.totalMs * 1e-3) * 1e-9;
      if (peakGflops > 0)
        row.percentOfPeak = 100.0 * row.gflops / peakGflops;
    }
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
    return a.totalMs != b.totalMs ? a.totalMs > b.totalMs : a.kernel < b.kernel;
  });
  return rows;
}

double runWallMs(const Profile& profile) {
  double ms = 0;
  for (const RunSpan& r : profile.runs)
    ms += static_cast<double>(r.endNs - r.startNs) * 1e-6;
  return ms;
}

} // namespace lathe::profiler
