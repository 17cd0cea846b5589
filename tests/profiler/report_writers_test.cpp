// The per-kernel table as text, CSV and JSON, and the Chrome trace, on a hand-made profile.
#include "engine/profiler/kernel_rows.h"
#include "engine/profiler/report_writers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace lathe::profiler {
namespace {

// Two runs of conv (1 ms, 2 chunks on threads 0 and 1) then relu (0.25 ms, serial).
Profile sampleProfile() {
  Profile p;
  p.threads = 2;
  p.calls = {{"fused_conv_relu_0", {"conv0", "relu0"}, 2e9}, {"k1_pool", {"pool,1"}, 0}};
  constexpr std::int64_t ms = 1'000'000, base = 5'000'000'000;
  for (int r = 0; r < 2; ++r) {
    const std::int64_t t = base + r * 10 * ms;
    p.runs.push_back({t, t + 2 * ms});
    p.events.push_back({EventKind::Call, 0, r, 0, t, t + ms});
    p.events.push_back({EventKind::Call, 1, r, 0, t + ms, t + ms + ms / 4});
    p.events.push_back({EventKind::Chunk, 0, r, 0, t + 10, t + ms - 10});
    p.events.push_back({EventKind::Chunk, 0, r, 1, t + 20, t + ms - 20});
  }
  return p;
}

ReportContext sampleContext(const Profile& p) {
  return {2, p.threads, runWallMs(p), 4000.0, "avx2", 0};
}

TEST(KernelRows, SumsCallsPerKernelByTime) {
  const Profile p = sampleProfile();
  const std::vector<KernelRow> rows = kernelRows(p, 4000.0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel, "fused_conv_relu_0");
  EXPECT_EQ(rows[0].calls, 2);
  EXPECT_DOUBLE_EQ(rows[0].totalMs, 2.0);
  EXPECT_DOUBLE_EQ(rows[0].meanMs, 1.0);
  EXPECT_DOUBLE_EQ(rows[0].percent, 80.0);
  EXPECT_DOUBLE_EQ(rows[0].gflops, 2000.0); // 2 GFLOP per 1 ms call
  EXPECT_DOUBLE_EQ(rows[0].percentOfPeak, 50.0);
  EXPECT_DOUBLE_EQ(rows[1].percent, 20.0);
  EXPECT_LT(rows[1].gflops, 0);
  EXPECT_DOUBLE_EQ(runWallMs(p), 4.0);
}

TEST(ReportWriters, TableHasUnitsAndDashesForUnknownFlops) {
  const Profile p = sampleProfile();
  const std::vector<KernelRow> rows = kernelRows(p, 4000.0);
  const std::string table = formatKernelTable(rows, sampleContext(p));
  for (const char* header :
       {"kernel", "ONNX nodes", "calls", "total (ms)", "mean (ms)", "% total", "GFLOP/s", "% peak"})
    EXPECT_NE(table.find(header), std::string::npos) << header << "\n" << table;
  EXPECT_NE(table.find("peak 4000.0 GFLOP/s (avx2"), std::string::npos) << table;
  std::istringstream lines(table);
  std::string line, conv, pool;
  while (std::getline(lines, line)) {
    if (line.rfind("fused_conv_relu_0", 0) == 0)
      conv = line;
    if (line.rfind("k1_pool", 0) == 0)
      pool = line;
  }
  EXPECT_NE(conv.find("conv0,relu0"), std::string::npos) << conv;
  EXPECT_NE(conv.find("2000.0"), std::string::npos) << conv;
  EXPECT_NE(conv.find("50.0"), std::string::npos) << conv;
  EXPECT_EQ(pool.substr(pool.size() - 1), "-") << pool;
  EXPECT_LT(table.find("fused_conv_relu_0"), table.find("k1_pool")) << "sorted by time";
  const std::string limited = formatKernelTable(rows, sampleContext(p), 1);
  EXPECT_EQ(limited.find("k1_pool"), std::string::npos);
  EXPECT_NE(limited.find("(1 more kernels)"), std::string::npos) << limited;
}

TEST(ReportWriters, CsvQuotesFieldsAndLeavesUnknownsEmpty) {
  const Profile p = sampleProfile();
  const std::string csv = kernelRowsCsv(kernelRows(p, 4000.0));
  EXPECT_EQ(csv,
            "kernel,nodes,calls,total_ms,mean_ms,percent,flops_per_call,gflops,percent_of_peak\n"
            "fused_conv_relu_0,conv0;relu0,2,2.000000,1.000000,80.0000,2000000000,2000.000,"
            "50.000\n"
            "k1_pool,\"pool,1\",2,0.500000,0.250000,20.0000,0,,\n");
}

TEST(ReportWriters, JsonHasTheRowsAndNullsForUnknowns) {
  const Profile p = sampleProfile();
  const auto j = nlohmann::json::parse(kernelRowsJson(kernelRows(p, 4000.0), sampleContext(p)));
  EXPECT_EQ(j["runs"], 2);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_DOUBLE_EQ(j["wall_ms"].get<double>(), 4.0);
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][0]["kernel"], "fused_conv_relu_0");
  EXPECT_EQ(j["kernels"][0]["nodes"], nlohmann::json({"conv0", "relu0"}));
  EXPECT_DOUBLE_EQ(j["kernels"][0]["gflops"].get<double>(), 2000.0);
  EXPECT_TRUE(j["kernels"][1]["gflops"].is_null());
  EXPECT_TRUE(j["kernels"][1]["percent_of_peak"].is_null());
}

TEST(ReportWriters, ChromeTraceHasAnXEventPerCallAndChunkAndThreadNames) {
  const Profile p = sampleProfile();
  const auto j = nlohmann::json::parse(chromeTraceJson(p));
  const auto& events = j["traceEvents"];
  int kernels = 0, chunks = 0, runs = 0;
  std::set<int> named, chunkThreads;
  for (const auto& e : events) {
    EXPECT_EQ(e["pid"], 1);
    if (e["ph"] == "M" && e["name"] == "thread_name")
      named.insert(e["tid"].get<int>());
    if (e["ph"] != "X")
      continue;
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    if (e["cat"] == "kernel") {
      ++kernels;
      EXPECT_EQ(e["tid"], 0);
      EXPECT_TRUE(e["args"].contains("nodes"));
    } else if (e["cat"] == "chunk") {
      ++chunks;
      chunkThreads.insert(e["tid"].get<int>());
      EXPECT_EQ(e["name"], "fused_conv_relu_0");
    } else if (e["cat"] == "run") {
      ++runs;
    }
  }
  EXPECT_EQ(kernels, 4);
  EXPECT_EQ(chunks, 4);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(named, (std::set<int>{0, 1}));
  EXPECT_EQ(chunkThreads, (std::set<int>{0, 1}));
  // Times are µs from the first run: the second run's conv starts at 10 ms.
  bool found = false;
  for (const auto& e : events)
    if (e["ph"] == "X" && e["cat"] == "kernel" && e["args"]["run"] == 1 && e["args"]["call"] == 0) {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 10'000.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1'000.0);
      found = true;
    }
  EXPECT_TRUE(found);
}

} // namespace
} // namespace lathe::profiler
