// The text and JSON forms of schedule sets: round trips and syntax errors with lines.
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"

#include <gtest/gtest.h>

namespace lathe::schedule {
namespace {

const char* kText = R"(# a comment line
kernel fused_conv_relu_0:
  tile(y, x, 4, 16)   # blocks of 4x16
  reorder(x.o, y.i, x.i)
  vectorize(x.i)
kernel k54_gemm:
  parallel(n)
  cache_write(k)
  split(k, 8)
  fuse(a, b)
  unroll(k.i)
)";

std::string errorOf(const std::string& text, bool json = false) {
  try {
    json ? parseJson(text, "s.json") : parseText(text, "s.txt");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    return e.reason();
  }
  ADD_FAILURE() << "parsed: " << text;
  return {};
}

TEST(ScheduleIo, TextParsesStepsWithLines) {
  const ScheduleSet set = parseText(kText, "s.txt");
  ASSERT_EQ(set.schedules.size(), 2u);
  const Schedule& conv = set.schedules[0];
  EXPECT_EQ(conv.kernel, "fused_conv_relu_0");
  ASSERT_EQ(conv.steps.size(), 3u);
  EXPECT_EQ(conv.steps[0].primitive, Primitive::Tile);
  EXPECT_EQ(conv.steps[0].loops, (std::vector<std::string>{"y", "x"}));
  EXPECT_EQ(conv.steps[0].factors, (std::vector<std::int64_t>{4, 16}));
  EXPECT_EQ(conv.steps[0].line, 3);
  EXPECT_EQ(set.schedules[1].steps.size(), 5u);
  EXPECT_EQ(traceText(conv), "tile(y, x, 4, 16)\nreorder(x.o, y.i, x.i)\nvectorize(x.i)\n");
}

TEST(ScheduleIo, TextAndJsonRoundTrip) {
  const ScheduleSet set = parseText(kText, "s.txt");
  EXPECT_EQ(parseText(printText(set)).schedules, set.schedules);
  const std::string json = printJson(set);
  EXPECT_NE(json.find("\"primitive\": \"cache_write\""), std::string::npos) << json;
  EXPECT_EQ(parseJson(json).schedules, set.schedules);
}

TEST(ScheduleIo, SyntaxErrorsNameTheLine) {
  EXPECT_EQ(errorOf("kernel k:\n  splat(x, 4)\n").rfind("s.txt:2: unknown primitive 'splat'", 0),
            0u);
  EXPECT_EQ(errorOf("split(x, 4)\n").rfind("s.txt:1: a step before any", 0), 0u);
  EXPECT_EQ(errorOf("kernel k:\n\n  split(x)\n").rfind("s.txt:3: split takes 1 loop(s)", 0), 0u);
  EXPECT_EQ(errorOf("kernel k:\n  split(8, x)\n").rfind("s.txt:2: loop names come before", 0), 0u);
  EXPECT_EQ(errorOf("kernel k:\n  split(x, 4\n").rfind("s.txt:2: expected `kernel NAME:`", 0), 0u);
  EXPECT_EQ(errorOf("kernel k\n").rfind("s.txt:1: a kernel line reads", 0), 0u);
  EXPECT_EQ(errorOf("kernel k:\nkernel k:\n").rfind("s.txt:2: kernel k has a second", 0), 0u);
  EXPECT_EQ(errorOf("kernel k:\n  split(x, 4$)\n").rfind("s.txt:2: '4$' is neither", 0), 0u);
  // Factors are int64: a bigger one is refused, not wrapped.
  EXPECT_EQ(errorOf("kernel k:\n  split(x, 99999999999999999999)\n")
                .rfind("s.txt:2: the integer 99999999999999999999 is out of range", 0),
            0u);
}

TEST(ScheduleIo, JsonErrorsNameTheStep) {
  EXPECT_NE(errorOf("{", true).find("s.json: not valid JSON"), std::string::npos);
  EXPECT_NE(errorOf(R"({"kernels": []})", true).find("\"schedules\" array"), std::string::npos);
  EXPECT_NE(errorOf(R"({"schedules": [{"kernel": "k", "steps": [{"primitive": "spin"}]}]})", true)
                .find("schedules[0].steps[0]: unknown primitive 'spin'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"schedules": [{"kernel": "k", "steps": [{"primitive": "split",
      "loops": ["x"], "factors": [1.5]}]}]})",
                    true)
                .find("factors are integers"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"schedules": [{"kernel": "k", "steps": [{"primitive": "split",
      "loops": ["x"], "factors": [18446744073709551615]}]}]})",
                    true)
                .find("steps[0]: the factor 18446744073709551615 is out of range"),
            std::string::npos);
}

TEST(ScheduleIo, ReadFileTellsTheFormsApartAndReportsMissingFiles) {
  try {
    readFile("/nonexistent/schedule.txt");
    FAIL() << "read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
}

} // namespace
} // namespace lathe::schedule
