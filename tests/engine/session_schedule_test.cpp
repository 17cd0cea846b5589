// api::Session with schedules: a whole compile replaying a schedule set, and one kernel's
// schedule tried, compiled alone and timed next to the default (the Schedule panel's path).
#include "engine/api/session.h"

#include <gtest/gtest.h>
#include <string>

namespace {

using lathe::api::CompileOptions;
using lathe::api::KernelScheduleOptions;
using lathe::api::Session;

const std::string kSample = std::string(LATHE_MODEL_DIR) + "/sample_cnn.onnx";

// The sample's elementwise tail kernel and its three loops, outermost first.
struct Tail {
  std::string kernel;
  std::vector<std::string> loops;
};

Tail findTail(const lathe::api::CompileReport& report) {
  for (const auto& k : report.kernels)
    if (k.name.rfind("fused_add_mul", 0) == 0) {
      Tail tail{k.name, {}};
      for (std::size_t at = 0; (at = k.loopIr.find("for (", at)) != std::string::npos; at += 5)
        tail.loops.push_back(k.loopIr.substr(at + 5, k.loopIr.find(',', at) - at - 5));
      return tail;
    }
  return {};
}

TEST(SessionSchedule, CompileReplaysScheduleTextAndReportsTheTrace) {
  Session session;
  ASSERT_TRUE(session.openModel(kSample).ok());
  const auto plain = session.compile();
  ASSERT_TRUE(plain.ok());
  const Tail tail = findTail(*plain.report);
  ASSERT_GE(tail.loops.size(), 3u); // channel (blocks), rows, columns (channels in a block)
  CompileOptions options;
  options.scheduleText = "kernel " + tail.kernel + ":\n  split(" + tail.loops.back() +
                         ", 4)\n  vectorize(" + tail.loops.back() + ".i)\n";
  const auto scheduled = session.compile(options);
  ASSERT_TRUE(scheduled.ok()) << scheduled.failure->message;
  for (const auto& k : scheduled.report->kernels)
    if (k.name == tail.kernel) {
      EXPECT_EQ(k.schedule,
                "split(" + tail.loops.back() + ", 4)\nvectorize(" + tail.loops.back() + ".i)\n");
      EXPECT_NE(k.loopIr.find("ramp("), std::string::npos) << k.loopIr;
    } else {
      EXPECT_TRUE(k.schedule.empty() || k.schedule == k.defaultTrace) << k.name;
    }
  options.scheduleText = "kernel " + tail.kernel + ":\n  vectorize(" + tail.loops[0] + ")\n";
  const auto refused = session.compile(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.failure->message.find("schedule:2: kernel " + tail.kernel), std::string::npos)
      << refused.failure->message;
}

TEST(SessionSchedule, TryKernelScheduleCompilesAndTimesOneKernel) {
  Session session;
  ASSERT_TRUE(session.openModel(kSample).ok());
  KernelScheduleOptions options;
  options.kernel = "anything";
  EXPECT_NE(session.tryKernelSchedule(options).failure->message.find("compile the model first"),
            std::string::npos);
  const auto compiled = session.compile();
  ASSERT_TRUE(compiled.ok());
  const Tail tail = findTail(*compiled.report);
  ASSERT_GE(tail.loops.size(), 3u); // channel (blocks), rows, columns (channels in a block)
  options.kernel = tail.kernel;
  options.repeat = 5;
  options.steps = "fuse(" + tail.loops[0] + ", " + tail.loops[1] + ")\n\n  parallel(" +
                  tail.loops[0] + "." + tail.loops[1] + ".fused)  # rows\nvectorize(" +
                  tail.loops.back() + ")\n";
  const auto tried = session.tryKernelSchedule(options);
  ASSERT_TRUE(tried.ok()) << tried.failure->message;
  const auto& r = *tried.report;
  EXPECT_NE(r.loopIr.find("parallel for (" + tail.loops[0] + "." + tail.loops[1] + ".fused"),
            std::string::npos)
      << r.loopIr;
  EXPECT_EQ(r.defaultLoopIr.find("parallel for"), std::string::npos) << r.defaultLoopIr;
  EXPECT_NE(r.assembly.find(tail.kernel), std::string::npos);
  EXPECT_GT(r.medianMs, 0);
  EXPECT_GT(r.defaultMedianMs, 0);
  EXPECT_EQ(r.trace.find("# rows"), std::string::npos) << r.trace;

  // A refused step names its line in the panel's text.
  options.steps = "split(" + tail.loops.back() + ", 4)\nvectorize(" + tail.loops[1] + ")\n";
  const auto refused = session.tryKernelSchedule(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failedLine, 2);
  EXPECT_NE(refused.failure->message.find("innermost"), std::string::npos)
      << refused.failure->message;
  options.steps = "split(x, 4)\nsplat(y)\n";
  const auto typo = session.tryKernelSchedule(options);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.failedLine, 2);
  EXPECT_NE(typo.failure->message.find("line 2: unknown primitive 'splat'"), std::string::npos)
      << typo.failure->message;
}

} // namespace
