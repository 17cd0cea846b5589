// Session files (.lathe): what is saved comes back, paths are kept relative to the file, a
// changed or missing model is said, and malformed files are refused naming the field.
#include "engine/api/session_file.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

namespace lathe::api {
namespace {

namespace fs = std::filesystem;

class SessionFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lathe_session_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
    model_ = (dir_ / "models" / "m.onnx").string();
    write(model_, "not really a model, but bytes to hash");
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  std::string path(const char* name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::string model_;
};

TEST_F(SessionFileTest, WhatIsSavedComesBack) {
  WorkbenchSession s;
  s.model = model_;
  s.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
  s.inputShapes = {{"x", {2, 3, 8, 8}}};
  s.fill = "ones";
  s.threads = 2;
  s.repeat = 25;
  s.profile = true;
  s.schedules = "kernel k0:\n  vectorize(i)\n";
  s.tuningRecords = (dir_ / "models" / "records.json").string();
  auto run = std::make_shared<RunReport>();
  run->latenciesMs = {3.0, 1.0, 2.0};
  run->threads = 2;
  run->outputs.push_back({"y", "f32", {1, 10}, -1.5, 2.5, 0.25, {{3, 2.5}, {7, 1.0}}});
  s.pinnedRun = run;
  s.layout = "AAAA";
  ASSERT_TRUE(writeSessionFile(path("a.lathe"), s).ok());

  // Paths relative to the session file's folder.
  std::ifstream in(path("a.lathe"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"models/m.onnx\""), std::string::npos) << text;

  const SessionFileResult r = readSessionFile(path("a.lathe"));
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_TRUE(r.modelChange.empty()) << r.modelChange;
  const WorkbenchSession& b = *r.session;
  EXPECT_EQ(fs::path(b.model), fs::path(model_).lexically_normal());
  EXPECT_EQ(b.target, s.target);
  EXPECT_EQ(b.inputShapes, s.inputShapes);
  EXPECT_EQ(b.fill, "ones");
  EXPECT_EQ(b.threads, 2);
  EXPECT_EQ(b.repeat, 25);
  EXPECT_TRUE(b.profile);
  EXPECT_EQ(b.schedules, s.schedules);
  EXPECT_EQ(fs::path(b.tuningRecords), fs::path(s.tuningRecords).lexically_normal());
  EXPECT_EQ(b.layout, "AAAA");
  ASSERT_TRUE(b.pinnedRun);
  EXPECT_EQ(b.pinnedRun->latenciesMs, run->latenciesMs);
  EXPECT_DOUBLE_EQ(b.pinnedRun->medianMs, 2.0);
  ASSERT_EQ(b.pinnedRun->outputs.size(), 1u);
  EXPECT_EQ(b.pinnedRun->outputs[0].top, run->outputs[0].top);
  EXPECT_EQ(b.pinnedRun->outputs[0].shape, run->outputs[0].shape);

  // The folder moved whole: still found.
  const fs::path moved = dir_.string() + "_moved";
  fs::remove_all(moved);
  fs::rename(dir_, moved);
  const SessionFileResult m = readSessionFile((moved / "a.lathe").string());
  fs::rename(moved, dir_);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m.modelChange.empty()) << m.modelChange;
}

TEST_F(SessionFileTest, AChangedOrMissingModelIsSaid) {
  WorkbenchSession s;
  s.model = model_;
  ASSERT_TRUE(writeSessionFile(path("a.lathe"), s).ok());
  write(model_, "other bytes");
  SessionFileResult r = readSessionFile(path("a.lathe"));
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.modelChange.find("m.onnx has changed"), std::string::npos) << r.modelChange;
  fs::remove(model_);
  r = readSessionFile(path("a.lathe"));
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.modelChange.find("missing"), std::string::npos) << r.modelChange;
}

TEST_F(SessionFileTest, MalformedFilesAreRefusedByField) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"", "not a JSON object"},
      {"[1, 2]", "not a JSON object"},
      {R"({"format": "something-else", "version": 1})", "not a Lathe session"},
      {R"({"format": "lathe-session", "version": 99, "model": "m.onnx"})", "newer Lathe"},
      {R"({"format": "lathe-session", "version": 1})", "\"model\""},
      {R"({"format": "lathe-session", "version": 1, "model": 5})", "\"model\" must be a string"},
      {R"({"format": "lathe-session", "version": 1, "model": "m", "threads": -3})",
       "\"threads\" must be between"},
      {R"({"format": "lathe-session", "version": 1, "model": "m", "fill": "nan"})", "\"fill\""},
      {R"({"format": "lathe-session", "version": 1, "model": "m", "input_shapes": {"x": [1, -2]}})",
       "non-negative integer dims"},
      {R"({"format": "lathe-session", "version": 1, "model": "m", "pinned_run": {"outputs": [{"top": [[1]]}]}})",
       "[index, value]"},
  };
  for (const auto& c : cases) {
    write(path("bad.lathe"), c.text);
    const SessionFileResult r = readSessionFile(path("bad.lathe"));
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.failure->message.find(c.expected), std::string::npos)
        << c.text << " -> " << r.failure->message;
    EXPECT_NE(r.failure->message.find("bad.lathe"), std::string::npos) << r.failure->message;
  }
  EXPECT_FALSE(readSessionFile(path("no_such.lathe")).ok());
}

TEST_F(SessionFileTest, AFailedWriteKeepsThePreviousFile) {
  WorkbenchSession s;
  s.model = model_;
  ASSERT_TRUE(writeSessionFile(path("a.lathe"), s).ok());
  const WriteResult r = writeSessionFile((dir_ / "no_folder" / "a.lathe").string(), s);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(readSessionFile(path("a.lathe")).ok());
}

} // namespace
} // namespace lathe::api
