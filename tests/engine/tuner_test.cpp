// engine/tuner: records round trip and matching, workload keys, legal candidates that compute
// what the default does, and a child process that survives candidates that crash or hang.
#include "engine/api/session.h"
#include "engine/driver/compile_model.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/graph/parser.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/pipeline/pass_manager.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"
#include "engine/tuner/cost_model.h"
#include "engine/tuner/features.h"
#include "engine/tuner/measure.h"
#include "engine/tuner/producers.h"
#include "engine/tuner/records.h"
#include "engine/tuner/search_space.h"
#include "engine/tuner/tuner.h"
#include "engine/tuner/workload.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>
#include <unistd.h>

namespace {

using namespace lathe;
namespace fs = std::filesystem;

lowering::LoweredModel lowerSample(const std::string& model = "sample_cnn.onnx") {
  auto imported = frontend::importOnnxFile(std::string(LATHE_MODEL_DIR) + "/" + model);
  pipeline::PassManager pm;
  pm.addPasses(pipeline::defaultPipeline());
  pm.run(*imported.graph);
  return driver::lowerModel(*imported.graph, target::parseTarget("llvm"), nullptr);
}

fs::path tempFile(const std::string& name) {
  return fs::temp_directory_path() / ("lathe_tuner_" + std::to_string(::getpid()) + "_" + name);
}

tuner::TuningRecord record(const std::string& workload, double ms, int threads = 1) {
  tuner::TuningRecord r;
  r.workload = workload;
  r.kernel = "k1";
  r.machine = {"llvm", "znver4", threads};
  r.trace = "split(i, 8)\nvectorize(i.i)\n";
  r.medianMs = ms;
  r.p10Ms = ms * 0.9;
  r.p90Ms = ms * 1.1;
  r.defaultMedianMs = 2 * ms;
  r.time = "2026-12-03T20:00:00Z";
  r.version = "0.1";
  return r;
}

TEST(TunerRecords, RoundTripAndMatchOnlyTheirMachine) {
  const tuner::TuningRecord r = record("abc", 1.5);
  const tuner::TuningRecord back = tuner::parseJsonLine(tuner::toJsonLine(r), "f", 1);
  EXPECT_EQ(back.workload, r.workload);
  EXPECT_EQ(back.machine, r.machine);
  EXPECT_EQ(back.trace, r.trace);
  EXPECT_EQ(back.medianMs, r.medianMs);
  EXPECT_EQ(back.defaultMedianMs, r.defaultMedianMs);
  EXPECT_TRUE(back.ok());

  tuner::RecordDatabase db;
  db.add(record("abc", 3.0));
  db.add(record("abc", 2.0));
  tuner::TuningRecord failed = record("abc", 0);
  failed.error = "crashed (signal 11, SIGSEGV)";
  db.add(failed);
  db.add(record("abc", 0.5, 2)); // another thread count
  tuner::TuningRecord otherCpu = record("abc", 0.1);
  otherCpu.machine.cpu = "skylake";
  db.add(otherCpu);
  const tuner::MachineKey here{"llvm", "znver4", 1};
  ASSERT_TRUE(db.best("abc", here));
  EXPECT_EQ(db.best("abc", here)->medianMs, 2.0);
  EXPECT_EQ(db.trials("abc", here), 3);
  EXPECT_FALSE(db.best("other", here));
  EXPECT_FALSE(db.best("abc", {"llvm -mcpu=x86-64", "znver4", 1}));
  EXPECT_EQ(db.otherMachines(here).size(), 2u);
}

TEST(TunerRecords, TheBestIsTheClearestWinOverItsOwnDefault) {
  // Two trials minutes apart on a shared machine: the second ran while everything was
  // faster, its default too. By median alone it would be the best, and, no clear win over
  // the default timed next to it, nothing would apply; against their own defaults the first
  // is the real gain.
  tuner::TuningRecord gain = record("abc", 0.90);
  gain.defaultMedianMs = 1.00;
  tuner::TuningRecord drift = record("abc", 0.85);
  drift.trace = "split(i, 4)\n";
  drift.defaultMedianMs = 0.80;
  tuner::RecordDatabase db;
  db.add(drift);
  db.add(gain);
  const tuner::TuningRecord* best = db.best("abc", {"llvm", "znver4", 1});
  ASSERT_TRUE(best);
  EXPECT_EQ(best->trace, gain.trace);
  EXPECT_DOUBLE_EQ(tuner::relativeTime(*best), 0.9);
  EXPECT_TRUE(tuner::clearWin(best->medianMs, best->defaultMedianMs));
}

TEST(TunerRecords, FilesAppendResumeAndNameBadLines) {
  const fs::path path = tempFile("records.jsonl");
  fs::remove(path);
  EXPECT_TRUE(tuner::readRecords(path.string()).empty()) << "a missing file has no records";
  tuner::appendRecord(path.string(), record("a", 1));
  tuner::appendRecord(path.string(), record("b", 2));
  EXPECT_EQ(tuner::readRecords(path.string()).size(), 2u);
  // A run killed half-way through a line: the line is skipped, with a warning.
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"workload": "c", "tar)";
  }
  std::vector<std::string> warnings;
  EXPECT_EQ(tuner::readRecords(path.string(), &warnings).size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(":3: an unfinished last record"), std::string::npos) << warnings[0];
  // A bad line in the middle is an error naming the file, the line and the field.
  {
    std::ofstream out(path, std::ios::app);
    out << "\n"
        << R"({"workload": "d", "target": "llvm", "cpu": "x", "threads": "two", "trace": ""})"
        << "\n";
  }
  try {
    tuner::readRecords(path.string());
    FAIL() << "a bad record was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ":3:"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

// The check in the model vetoes a best that was slower there: every good record of that
// workload and machine before the veto is set aside (the default applies), records after it
// count again, and other workloads and machines are untouched.
TEST(TunerRecords, AVetoSetsAsideTheRecordsBeforeIt) {
  tuner::RecordDatabase db;
  db.add(record("abc", 0.5));
  db.add(record("other", 0.5));
  db.add(record("abc", 0.5, 2)); // two threads
  tuner::TuningRecord veto = record("abc", 0);
  veto.error = std::string(tuner::kInModelVeto) + "0.2 ms against the default's 0.1 ms";
  veto.medianMs = veto.defaultMedianMs = 0;
  EXPECT_TRUE(tuner::isVeto(veto));
  EXPECT_FALSE(tuner::isVeto(record("abc", 1)));
  db.add(veto);
  const tuner::MachineKey one{"llvm", "znver4", 1}, two{"llvm", "znver4", 2};
  EXPECT_EQ(db.best("abc", one), nullptr) << "the vetoed workload keeps its default";
  EXPECT_NE(db.best("other", one), nullptr);
  EXPECT_NE(db.best("abc", two), nullptr);
  tuner::TuningRecord later = record("abc", 0.8);
  later.trace = "split(i, 4)\n";
  db.add(later);
  ASSERT_NE(db.best("abc", one), nullptr);
  EXPECT_EQ(db.best("abc", one)->trace, later.trace) << "a record after the veto counts";
  // The file summary agrees, and does not count the veto as a trial.
  const fs::path path = tempFile("veto.jsonl");
  fs::remove(path);
  for (const tuner::TuningRecord& r : db.records())
    tuner::appendRecord(path.string(), r);
  api::Failure failure;
  const auto summary = api::summarizeRecords(path.string(), &failure);
  ASSERT_TRUE(summary) << failure.message;
  for (const auto& w : summary->workloads)
    if (w.workload == "abc" && w.machine.threads == 1) {
      EXPECT_EQ(w.trials, 2);
      EXPECT_EQ(w.vetoes, 1);
      EXPECT_EQ(w.bestTrace, later.trace);
    }
  fs::remove(path);
}

// A veto of one trace sets aside that trace's records only: the next best applies.
TEST(TunerRecords, ATraceVetoSetsAsideOnlyItsTrace) {
  tuner::RecordDatabase db;
  tuner::TuningRecord fast = record("abc", 0.4), slower = record("abc", 0.6);
  fast.trace = "split(i, 16)\n";
  slower.trace = "split(i, 4)\n";
  db.add(fast);
  db.add(slower);
  db.add(record("abc", 0.5, 2)); // two threads, same trace as the veto below
  const tuner::MachineKey one{"llvm", "znver4", 1}, two{"llvm", "znver4", 2};
  ASSERT_EQ(db.best("abc", one)->trace, fast.trace);
  tuner::TuningRecord veto = fast;
  veto.error = std::string(tuner::kInModelTraceVeto) + "0.2 ms against the default's 0.1 ms";
  veto.medianMs = veto.defaultMedianMs = 0;
  EXPECT_TRUE(tuner::isVeto(veto));
  EXPECT_TRUE(tuner::isTraceVeto(veto));
  db.add(veto);
  ASSERT_NE(db.best("abc", one), nullptr);
  EXPECT_EQ(db.best("abc", one)->trace, slower.trace) << "the next best applies";
  EXPECT_NE(db.best("abc", two), nullptr) << "another machine is untouched";
  // The same trace measured again after the veto counts again.
  tuner::TuningRecord again = fast;
  again.medianMs = 0.3;
  db.add(again);
  EXPECT_EQ(db.best("abc", one)->medianMs, 0.3);
  // A veto of every trace ends it: the default applies.
  tuner::TuningRecord all = veto;
  all.error = std::string(tuner::kInModelVeto) + "0.2 ms against the default's 0.1 ms";
  EXPECT_FALSE(tuner::isTraceVeto(all));
  db.add(all);
  EXPECT_EQ(db.best("abc", one), nullptr);
  EXPECT_EQ(db.trials("abc", one), 3) << "vetoes are not trials";
}

// Two files tuned at different times: each best is weighed against the default timed next to
// it, not against the other file's raw median.
TEST(TunerRecords, ComparisonsWeighEachBestAgainstItsOwnDefault) {
  const fs::path a = tempFile("compare_a.jsonl"), b = tempFile("compare_b.jsonl");
  fs::remove(a);
  fs::remove(b);
  // "quiet": A's best 1.0 ms against a default of 2.0 (2x); B, on a quieter machine, timed
  // 0.9 ms against a default of 0.91 (no clear win): A is the better trace.
  tuner::TuningRecord quietA = record("quiet", 1.0), quietB = record("quiet", 0.9);
  quietB.defaultMedianMs = 0.91;
  quietB.trace = "parallel(i)\n";
  tuner::appendRecord(a.string(), quietA);
  tuner::appendRecord(b.string(), quietB);
  // "same": both 2x; "onlyB" is in B only.
  tuner::appendRecord(a.string(), record("same", 1.0));
  tuner::appendRecord(b.string(), record("same", 1.5));
  tuner::appendRecord(b.string(), record("onlyB", 1.0));
  api::Failure failure;
  const auto comparison = api::compareRecords(a.string(), b.string(), &failure);
  ASSERT_TRUE(comparison) << failure.message;
  std::map<std::string, const api::RecordsComparison::Row*> rows;
  for (const auto& r : comparison->rows)
    rows[r.workload] = &r;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows["quiet"]->winner(), 'A') << "raw medians would pick B (0.9 < 1.0 ms)";
  EXPECT_NEAR(rows["quiet"]->speedupBvsA(), 0.5, 1e-9);
  EXPECT_EQ(rows["same"]->winner(), '=');
  EXPECT_EQ(rows["onlyB"]->winner(), 'b');
  EXPECT_EQ(rows["onlyB"]->speedupBvsA(), 0);
  fs::remove(a);
  fs::remove(b);
}

// The scheduler's priority: the share of time, the last gain, and a hope that shrinks with
// the rounds spent, so that a large kernel whose knobs stopped paying yields to the others.
TEST(TunerScheduler, RoundsGoByShareWhenNothingImprovesAndToGainsWhenSomethingDoes) {
  // A kernel with 10x the time and 100 rounds without a gain yields to one with 2 rounds.
  EXPECT_LT(tuner::taskPriority(10, 0, 100), tuner::taskPriority(1, 0, 2));
  EXPECT_GT(tuner::taskPriority(10, 0, 3), tuner::taskPriority(1, 0, 3));
  EXPECT_GT(tuner::taskPriority(1, 0.2, 50), tuner::taskPriority(1, 0, 50));
  // The scheduler's choice over 900 rounds with no gains anywhere: rounds in proportion to
  // the share of time (before, the largest took nearly all of them).
  const std::vector<double> shares = {0.5, 0.3, 0.15, 0.05};
  std::vector<int> rounds(shares.size(), 0);
  for (int r = 0; r < 900; ++r) {
    std::size_t next = 0;
    for (std::size_t t = 1; t < shares.size(); ++t)
      if (tuner::taskPriority(shares[t], 0, rounds[t]) >
          tuner::taskPriority(shares[next], 0, rounds[next]))
        next = t;
    ++rounds[next];
  }
  for (std::size_t t = 0; t < shares.size(); ++t)
    EXPECT_NEAR(rounds[t], 900 * shares[t], 2) << "workload " << t;
}

TEST(TunerWorkload, SameComputationSameKeyOtherShapesOtherKey) {
  const auto lowered = lowerSample();
  ASSERT_GE(lowered.kernels.size(), 2u);
  loop::Kernel renamed = lowered.kernels[0];
  renamed.name = "another_name_9";
  EXPECT_EQ(tuner::workloadKey(renamed), tuner::workloadKey(lowered.kernels[0]));
  EXPECT_EQ(tuner::workloadKey(lowered.kernels[0]).size(), 16u);
  std::set<std::string> keys;
  for (const auto& k : lowered.kernels)
    keys.insert(tuner::workloadKey(k));
  EXPECT_GT(keys.size(), 1u);
}

TEST(TunerSearch, CandidatesReplayAndComputeWhatTheDefaultDoes) {
  const auto lowered = lowerSample("conv_bn_relu.onnx");
  std::mt19937 rng(3);
  int measured = 0;
  for (const loop::Kernel& k : lowered.kernels) {
    std::vector<std::string> seen;
    for (const schedule::Schedule& s : tuner::sampleSchedules(k, 3, rng, seen)) {
      const loop::Kernel scheduled = schedule::apply(k, s); // legal: never throws
      tuner::MeasureOptions options;
      options.repeat = 1;
      const auto m =
          tuner::measureInChild(lowered, k, scheduled, target::parseTarget("llvm"), options);
      EXPECT_TRUE(m.ok()) << k.name << ": " << schedule::traceText(s) << m.error;
      EXPECT_GT(m.medianMs, 0);
      ++measured;
    }
  }
  EXPECT_GT(measured, 0) << "the space has candidates";
}

// `scheduled` in place of kernel `index` of `lowered`, run once in a child process next to
// the kernel as compiled (measureInChild compares their outputs).
tuner::Measurement measuredOnce(const lowering::LoweredModel& lowered, std::size_t index,
                                const loop::Kernel& scheduled) {
  tuner::MeasureOptions options;
  options.repeat = 1;
  return tuner::measureInChild(lowered, lowered.kernels[index], scheduled,
                               target::parseTarget("llvm"), options);
}

// Kernels with a default trace (matrix products): the trace's split factors are knobs too,
// every candidate is a whole trace replayed on the nest as lowered, and each computes what
// the default does (measureInChild compares the outputs).
TEST(TunerSearch, DefaultTraceKnobsReplayOnTheNestAndMatchTheDefault) {
  const auto lowered = lowerSample("matmul_zoo.onnx");
  std::mt19937 rng(5);
  int traced = 0, measured = 0, replaced = 0;
  for (std::size_t index = 0; index < lowered.kernels.size(); ++index) {
    const loop::Kernel& naive = lowered.unscheduledKernel(index);
    if (naive.defaultTrace.empty())
      continue;
    ++traced;
    const schedule::Schedule defaults = schedule::parseTrace(naive.name, naive.defaultTrace);
    EXPECT_FALSE(tuner::traceKnobsOf(naive, defaults).empty()) << naive.name;
    std::vector<std::string> seen;
    for (const auto& c : tuner::sampleCandidates(naive, 4, rng, seen, {}, &defaults)) {
      EXPECT_NO_THROW(schedule::apply(naive, c.schedule)) << c.trace;
      replaced +=
          c.schedule.steps.size() >= defaults.steps.size() &&
          !std::equal(defaults.steps.begin(), defaults.steps.end(), c.schedule.steps.begin());
      const auto m = measuredOnce(lowered, index, c.scheduled);
      EXPECT_TRUE(m.ok()) << naive.name << ": " << c.trace << m.error;
      ++measured;
    }
  }
  EXPECT_GT(traced, 0) << "matmul_zoo has kernels lowered with a default trace";
  EXPECT_GT(measured, 0);
  EXPECT_GT(replaced, 0) << "some candidates change the default trace's factors";
}

// Row reductions: the count of partial results (rfactor) is a knob of their default trace;
// the candidates replay and agree with the default within the tolerance of a reordered sum.
TEST(TunerSearch, ReductionKnobsReplayAndMatchTheDefault) {
  auto g = graph::parseGraph("graph @rows opset 17 {\n  input %x: f32[256,100]\n"
                             "  %s: f32[256,100] = Softmax(%x)\n"
                             "  %m: f32[256,1] = ReduceMean(%s) {axes = [1]}\n"
                             "  output %m\n}\n",
                             "rows.lir");
  const auto lowered = driver::lowerModel(*g, target::parseTarget("llvm"), nullptr);
  std::mt19937 rng(7);
  int traced = 0, otherCounts = 0;
  for (std::size_t index = 0; index < lowered.kernels.size(); ++index) {
    const loop::Kernel& naive = lowered.unscheduledKernel(index);
    if (naive.defaultTrace.find("rfactor(") == std::string::npos)
      continue;
    ++traced;
    const schedule::Schedule defaults = schedule::parseTrace(naive.name, naive.defaultTrace);
    std::vector<std::string> seen;
    for (const auto& c : tuner::sampleCandidates(naive, 12, rng, seen, {}, &defaults)) {
      for (const schedule::Step& st : c.schedule.steps)
        otherCounts +=
            st.primitive == schedule::Primitive::Rfactor &&
            naive.defaultTrace.find(schedule::traceText(schedule::Schedule{naive.name, {st}})) ==
                std::string::npos;
      const auto m = measuredOnce(lowered, index, c.scheduled);
      EXPECT_TRUE(m.ok()) << naive.name << ": " << c.trace << m.error;
    }
  }
  EXPECT_EQ(traced, 2) << "the softmax and the mean take partial results";
  EXPECT_GT(otherCounts, 0) << "some candidates keep another count of partial results";
}

// Blocked convolutions also offer the lowering's next-ranked tiles and the other task order
// as whole-trace variants: each replays on the nest as lowered, differs from the default,
// and computes what the default does; the sampler draws them.
TEST(TunerSearch, ConvTraceVariantsReplayAndMatchTheDefault) {
  // The direct blocked convs, the Winograd ones (whose variants tile the products and keep
  // the transforms' steps), and NCHW convs with too few channels to block (conv_zoo).
  for (const char* model :
       {"nchwc_zoo.onnx", "winograd_zoo.onnx", "depthwise_zoo.onnx", "conv_zoo.onnx"}) {
    SCOPED_TRACE(model);
    const auto lowered = lowerSample(model);
    std::mt19937 rng(7);
    int withVariants = 0, measured = 0, drawn = 0;
    for (std::size_t index = 0; index < lowered.kernels.size(); ++index) {
      const loop::Kernel& naive = lowered.unscheduledKernel(index);
      if (naive.traceVariants.empty())
        continue;
      ++withVariants;
      std::set<std::string> distinct{naive.defaultTrace};
      for (std::size_t v = 0; v < naive.traceVariants.size(); ++v) {
        const std::string& text = naive.traceVariants[v];
        EXPECT_TRUE(distinct.insert(text).second) << naive.name << " repeats a trace:\n" << text;
        loop::Kernel scheduled;
        ASSERT_NO_THROW(scheduled = schedule::apply(naive, schedule::parseTrace(naive.name, text)))
            << naive.name << ":\n"
            << text;
        if (v % 8 != 0) // compiling each one is slow; every eighth is run and compared
          continue;
        const auto m = measuredOnce(lowered, index, scheduled);
        EXPECT_TRUE(m.ok()) << naive.name << ":\n" << text << m.error;
        ++measured;
      }
      const schedule::Schedule defaults = schedule::parseTrace(naive.name, naive.defaultTrace);
      std::vector<std::string> seen;
      for (const auto& c : tuner::sampleCandidates(naive, 12, rng, seen, {}, &defaults))
        for (const std::string& text : naive.traceVariants)
          drawn +=
              c.trace.rfind(schedule::traceText(schedule::parseTrace(naive.name, text)), 0) == 0;
    }
    EXPECT_GT(withVariants, 0) << "the blocked convs offer variants";
    EXPECT_GT(measured, 0);
    EXPECT_GT(drawn, 0) << "the sampler starts some candidates from a variant";
  }
}

// A kernel with `reference`'s parameters and a body of our choosing.
loop::Kernel withBody(const loop::Kernel& reference, loop::Stmt body) {
  loop::Kernel k = reference;
  k.body = std::move(body);
  return k;
}

TEST(TunerMeasure, SurvivesCandidatesThatCrashHangOrComputeSomethingElse) {
  const auto lowered = lowerSample("conv_bn_relu.onnx");
  const loop::Kernel& k = lowered.kernels.back();
  ASSERT_FALSE(k.outputs.empty());
  const loop::Buffer out = k.outputs.front();
  const target::Target host = target::parseTarget("llvm");
  tuner::MeasureOptions options;
  options.repeat = 1;
  options.timeoutSeconds = 3;
  const auto one = loop::makeConst(out.elementType(), 1.0);

  // A store far outside the buffer.
  const auto crash =
      withBody(k, loop::Store::make(out, loop::makeIndex(std::int64_t{1} << 40), one));
  auto m = tuner::measureInChild(lowered, k, crash, host, options);
  EXPECT_NE(m.error.find("crashed (signal"), std::string::npos) << m.error;

  // A loop that never ends in time: each step depends on the last.
  const auto i = loop::Var::make(loop::indexType(), "i");
  const auto zero = loop::makeIndex(0);
  const auto hang = withBody(
      k, loop::For::make(i, zero, loop::makeIndex(std::int64_t{1} << 50), loop::ForKind::Serial,
                         loop::Store::make(out, zero, loop::Load::make(out, zero) + one)));
  m = tuner::measureInChild(lowered, k, hang, host, options);
  EXPECT_EQ(m.error, "timed out after 3 s");

  // Code that runs but computes something else is refused, never timed.
  const auto wrong = withBody(k, loop::For::make(i, zero, loop::makeIndex(1), loop::ForKind::Serial,
                                                 loop::Store::make(out, zero, one + one + one)));
  m = tuner::measureInChild(lowered, k, wrong, host, options);
  EXPECT_NE(m.error.find("wrong result"), std::string::npos) << m.error;

  // And the default itself measures fine afterwards.
  m = tuner::measureInChild(lowered, k, k, host, options);
  EXPECT_TRUE(m.ok()) << m.error;
}

// Whether `call` has `slot` among its outputs.
bool writes(const lowering::LoweredModel& lowered, const lowering::KernelCall& call, int slot) {
  const auto kernel = std::find_if(lowered.kernels.begin(), lowered.kernels.end(),
                                   [&](const auto& k) { return k.name == call.kernel; });
  const std::size_t first = kernel == lowered.kernels.end() ? 0 : kernel->inputs.size();
  return std::find(call.args.begin() + std::ptrdiff_t(std::min(first, call.args.size())),
                   call.args.end(), slot) != call.args.end();
}

// The producers of a kernel's inputs are the last calls before it that wrote each of its f32
// activations; graph inputs and weights have none.
TEST(TunerMeasure, ProducersAreTheLastWritersOfEachActivationInput) {
  int fed = 0;
  for (const char* model : {"residual_add.onnx", "sample_cnn.onnx", "nchwc_zoo.onnx"}) {
    const auto lowered = lowerSample(model);
    for (std::size_t c = 0; c < lowered.calls.size(); ++c) {
      const lowering::KernelCall& consumer = lowered.calls[c];
      const auto first = std::find_if(lowered.calls.begin(), lowered.calls.end(),
                                      [&](const auto& x) { return x.kernel == consumer.kernel; });
      if (consumer.kernel.empty() || first != lowered.calls.begin() + std::ptrdiff_t(c))
        continue;
      const auto kernel = std::find_if(lowered.kernels.begin(), lowered.kernels.end(),
                                       [&](const auto& k) { return k.name == consumer.kernel; });
      ASSERT_NE(kernel, lowered.kernels.end());
      std::set<std::size_t> feeds;
      std::size_t last = 0;
      for (const tuner::ProducerCall& p : tuner::producersOf(lowered, consumer.kernel)) {
        EXPECT_LT(p.call, c) << model << " " << consumer.kernel;
        EXPECT_GE(p.call, last) << "in execution order";
        last = p.call;
        for (const auto& [out, in] : p.feeds) {
          const int slot = consumer.args[in];
          EXPECT_EQ(lowered.calls[p.call].args[out], slot);
          EXPECT_LT(in, kernel->inputs.size());
          feeds.insert(in);
          ++fed;
          // Nothing between the producer and the consumer writes the slot again.
          for (std::size_t between = p.call + 1; between < c; ++between)
            EXPECT_FALSE(writes(lowered, lowered.calls[between], slot))
                << model << " " << lowered.calls[between].kernel;
        }
      }
      for (std::size_t in = 0; in < kernel->inputs.size(); ++in) {
        const lowering::TensorSlot& slot = lowered.slots[consumer.args[in]];
        const bool activation = slot.kind == lowering::SlotKind::Intermediate ||
                                slot.kind == lowering::SlotKind::Output;
        EXPECT_EQ(feeds.count(in) == 1, activation && slot.dtype == graph::DType::F32)
            << model << " " << consumer.kernel << " input " << in << " (" << slot.name << ")";
      }
    }
  }
  EXPECT_GT(fed, 3);

  // The residual block's last kernel reads the first Conv's result (fed) and the graph's
  // input x (cold).
  const auto lowered = lowerSample("residual_add.onnx");
  const lowering::KernelCall& last = lowered.calls.back();
  const auto producers = tuner::producersOf(lowered, last.kernel);
  ASSERT_EQ(producers.size(), 1u) << last.kernel;
  EXPECT_EQ(producers[0].feeds.size(), 1u);
  const int xSlot = lowered.inputs.at(0);
  EXPECT_NE(std::find(last.args.begin(), last.args.end(), xSlot), last.args.end());
  EXPECT_NE(last.args[producers[0].feeds[0].second], xSlot);
  EXPECT_TRUE(tuner::producersOf(lowered, lowered.calls.front().kernel).empty());
  EXPECT_TRUE(tuner::producersOf(lowered, "no_such_kernel").empty());

  // Measured with its producer run before each timed call.
  const auto kernel = std::find_if(lowered.kernels.begin(), lowered.kernels.end(),
                                   [&](const auto& k) { return k.name == last.kernel; });
  ASSERT_NE(kernel, lowered.kernels.end());
  tuner::MeasureOptions options;
  options.repeat = 2;
  ASSERT_TRUE(options.warmInputs);
  const auto m =
      tuner::measureInChild(lowered, *kernel, *kernel, target::parseTarget("llvm"), options);
  EXPECT_TRUE(m.ok()) << m.error;
  EXPECT_GT(m.medianMs, 0);
  // The same with the default and its producer compiled once, before the child.
  const tuner::Baseline baseline(lowered, *kernel, target::parseTarget("llvm"), true);
  EXPECT_EQ(baseline.producers().size(), 1u);
  const auto again =
      tuner::measureInChild(lowered, baseline, *kernel, target::parseTarget("llvm"), options);
  EXPECT_TRUE(again.ok()) << again.error;
  EXPECT_GT(again.medianMs, 0);
}

// The check in the model vetoes a record that is slower there and checks its workload's next
// best in another pass; a veto on the last pass sets every record of the workload aside.
TEST(TunerCheck, AVetoedBestMakesWayForTheNextBest) {
  const auto lowered = lowerSample("residual_add.onnx");
  const auto naive = std::find_if(lowered.unscheduled.begin(), lowered.unscheduled.end(),
                                  [](const loop::Kernel& k) { return !k.defaultTrace.empty(); });
  ASSERT_NE(naive, lowered.unscheduled.end());
  const std::string key = tuner::workloadKey(*naive);
  const api::TuningMachine m = api::tuningMachine("llvm", 1);
  const tuner::MachineKey machine{m.target, m.cpu, m.threads};
  // The first step of the default trace alone leaves the nest scalar and serial: many times
  // slower in the model than the default, whatever its (made-up) record claims.
  const std::string slowTrace = naive->defaultTrace.substr(0, naive->defaultTrace.find('\n') + 1);
  ASSERT_NE(slowTrace, naive->defaultTrace);
  const auto made = [&](const std::string& trace, double ms) {
    tuner::TuningRecord r = record(key, ms);
    r.kernel = naive->name;
    r.machine = machine;
    r.trace = trace;
    r.defaultMedianMs = 1.0;
    return r;
  };
  for (const int passes : {3, 1}) {
    const fs::path path = tempFile("check" + std::to_string(passes) + ".jsonl");
    fs::remove(path);
    tuner::appendRecord(path.string(), made(naive->defaultTrace, 0.5)); // the next best
    tuner::appendRecord(path.string(), made(slowTrace, 0.1));           // the best
    api::Session session;
    const api::OpenResult opened =
        session.openModel(std::string(LATHE_MODEL_DIR) + "/residual_add.onnx");
    ASSERT_TRUE(opened.ok()) << opened.failure->message;
    api::TuneOptions options;
    options.trials = 0; // only the check
    options.recordsPath = path.string();
    options.checkRounds = 2;
    options.checkPasses = passes;
    const api::TuneResult result = session.tune(options);
    ASSERT_TRUE(result.ok()) << result.failure->message;
    ASSERT_TRUE(result.report->modelCheck);
    const api::ModelCheck& check = *result.report->modelCheck;
    const auto w = std::find_if(result.report->workloads.begin(), result.report->workloads.end(),
                                [&](const api::TunedWorkload& x) { return x.workload == key; });
    ASSERT_NE(w, result.report->workloads.end()) << naive->name;
    const auto records = tuner::readRecords(path.string());
    ASSERT_GE(records.size(), 3u);
    EXPECT_TRUE(tuner::isVeto(records[2]));
    EXPECT_EQ(records[2].trace, slowTrace) << "the slow best is vetoed first";
    EXPECT_EQ(tuner::isTraceVeto(records[2]), passes > 1)
        << "only its trace, while passes are left";
    tuner::RecordDatabase db;
    db.addFile(path.string());
    const tuner::TuningRecord* best = db.best(key, machine);
    if (passes > 1) {
      EXPECT_EQ(w->nextBests, 1);
      EXPECT_EQ(check.nextBests, 1);
      EXPECT_GE(check.passes, 2);
      // The next best (the default's own trace) stands unless the check found it slower too.
      if (w->vetoed)
        EXPECT_EQ(best, nullptr);
      else
        EXPECT_TRUE(best && best->trace == naive->defaultTrace && w->bestTrace == best->trace);
    } else {
      EXPECT_TRUE(w->vetoed);
      EXPECT_EQ(check.passes, 1);
      EXPECT_EQ(check.vetoes, 1);
      EXPECT_EQ(best, nullptr) << "the last pass's veto leaves the default";
    }
    fs::remove(path);
  }
}

TEST(TunerLoop, TunesWritesRecordsAndResumes) {
  const auto lowered = lowerSample("conv_bn_relu.onnx");
  const fs::path path = tempFile("tune.jsonl");
  fs::remove(path);
  tuner::TuneOptions options;
  options.machine = {"llvm", "test-cpu", 1};
  options.trials = 6;
  options.batch = 3;
  options.recordsPath = path.string();
  options.measure.repeat = 2;
  int rounds = 0;
  options.onRound = [&](const tuner::TuneProgress& p) {
    ++rounds;
    EXPECT_GT(p.defaultModelMs, 0);
    EXPECT_LE(p.bestModelMs, p.defaultModelMs);
  };
  const tuner::TuneReport first = tuner::tuneModel(lowered, options);
  EXPECT_EQ(first.trials, 6);
  EXPECT_LE(first.heldUp, first.remeasured);
  EXPECT_LE(first.remeasured, first.trials);
  EXPECT_GT(rounds, 0);
  const auto records = tuner::readRecords(path.string());
  EXPECT_EQ(records.size(), 6u);
  // Resumed: the earlier trials count and are not measured again.
  const tuner::TuneReport second = tuner::tuneModel(lowered, options);
  std::set<std::string> traces;
  for (const auto& r : tuner::readRecords(path.string()))
    EXPECT_TRUE(traces.insert(r.workload + r.trace).second) << "measured twice: " << r.trace;
  int total = 0;
  for (const auto& w : second.workloads)
    total += w.trials;
  EXPECT_EQ(total, 6 + second.trials);
  fs::remove(path);
}

TEST(TunerMeasure, ANewBestKeepsTheMeasurementLessInItsFavour) {
  tuner::Measurement lucky, second, failed;
  lucky.medianMs = 0.80; // 20 % better than its default...
  lucky.defaultMedianMs = 1.00;
  second.medianMs = 0.99; // ...and 1 % on a second look, with a slower default
  second.defaultMedianMs = 1.00;
  failed.error = "timed out after 20 s";
  EXPECT_TRUE(tuner::clearWin(lucky.medianMs, lucky.defaultMedianMs));
  EXPECT_FALSE(tuner::clearWin(second.medianMs, second.defaultMedianMs));
  EXPECT_DOUBLE_EQ(tuner::lessFavourable(lucky, second).medianMs, 0.99);
  EXPECT_DOUBLE_EQ(tuner::lessFavourable(second, lucky).medianMs, 0.99);
  EXPECT_FALSE(tuner::lessFavourable(lucky, failed).ok());
  EXPECT_FALSE(tuner::lessFavourable(failed, lucky).ok());
  // The ratio decides, not the time: a faster candidate next to a faster default.
  tuner::Measurement quickDefault;
  quickDefault.medianMs = 0.70;
  quickDefault.defaultMedianMs = 0.71;
  EXPECT_DOUBLE_EQ(tuner::lessFavourable(lucky, quickDefault).medianMs, 0.70);
}

TEST(TunerFeatures, SeeVectorsThreadsAndUnrolling) {
  const auto lowered = lowerSample();
  const loop::Kernel* tail = nullptr;
  for (const auto& k : lowered.kernels)
    if (k.name.rfind("fused_add_mul", 0) == 0)
      tail = &k;
  ASSERT_TRUE(tail);
  const auto loops = tuner::loopsOf(*tail);
  ASSERT_GE(loops.size(), 3u); // channel (blocks), rows, columns (and channels in a block)
  const tuner::Features plain = tuner::featuresOf(*tail);
  const auto feature = [](const tuner::Features& f, const std::string& name) {
    const auto& names = tuner::featureNames();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (name == names[i])
        return f[i];
    ADD_FAILURE() << "no feature " << name;
    return 0.0f;
  };
  const auto scheduled = [&](const std::string& steps) {
    const auto set = schedule::parseText("kernel " + tail->name + ":\n" + steps);
    return tuner::featuresOf(schedule::apply(*tail, set.schedules.front()));
  };
  const std::string& c = loops[0].name;
  const std::string& x = loops.back().name;
  const tuner::Features vectorized = scheduled("split(" + x + ", 8)\nvectorize(" + x + ".i)\n");
  EXPECT_GT(feature(vectorized, "lanes"), feature(plain, "lanes"));
  EXPECT_LT(feature(vectorized, "vector_work"), feature(plain, "vector_work"));
  EXPECT_EQ(feature(vectorized, "work"), feature(plain, "work")) << "the same elements";
  const tuner::Features threaded = scheduled("parallel(" + c + ")\n");
  EXPECT_EQ(feature(plain, "parallel_extent"), 0.0f);
  EXPECT_GT(feature(threaded, "parallel_extent"), 0.0f);
  EXPECT_LT(feature(threaded, "work_per_task"), feature(threaded, "work"));
}

TEST(TunerCostModel, LearnsARankingFromASyntheticSet) {
  // Time falls with vector lanes and threads and rises with guards, plus noise: the model
  // must rank unseen points nearly as the truth does.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, 1);
  std::normal_distribution<float> noise(0, 0.05f);
  const auto truth = [](const tuner::Features& f) {
    return 1.0f - 0.4f * f[2] - 0.3f * f[3] + 0.2f * f[11];
  };
  const auto draw = [&] {
    tuner::Features f{};
    for (float& v : f)
      v = u(rng) * 4;
    return f;
  };
  tuner::CostModel model;
  EXPECT_FALSE(model.trained());
  for (int i = 0; i < 200; ++i) {
    const auto f = draw();
    model.add(f, truth(f) + noise(rng));
  }
  model.train();
  ASSERT_TRUE(model.trained());
  std::vector<tuner::Features> test;
  for (int i = 0; i < 100; ++i)
    test.push_back(draw());
  const std::vector<float> predicted = model.predict(test);
  // Kendall's tau between the prediction and the truth.
  int concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < test.size(); ++i)
    for (std::size_t j = i + 1; j < test.size(); ++j) {
      const float a = (predicted[i] - predicted[j]) * (truth(test[i]) - truth(test[j]));
      (a > 0 ? concordant : discordant) += 1;
    }
  const double tau = double(concordant - discordant) / (concordant + discordant);
  EXPECT_GT(tau, 0.6) << "rank correlation " << tau;
}

TEST(TunerSearch, MutationsStayLegalAndNew) {
  const auto lowered = lowerSample();
  std::mt19937 rng(9);
  for (const loop::Kernel& k : lowered.kernels) {
    std::vector<std::string> seen;
    const auto first = tuner::sampleCandidates(k, 4, rng, seen);
    std::vector<std::vector<std::size_t>> parents;
    for (const auto& c : first)
      parents.push_back(c.knobs);
    const std::size_t before = seen.size();
    for (const auto& c : tuner::sampleCandidates(k, 6, rng, seen, parents)) {
      EXPECT_NO_THROW(schedule::apply(k, c.schedule)) << k.name << ": " << c.trace;
      EXPECT_EQ(std::count(seen.begin(), seen.end(), c.trace), 1) << "drawn twice: " << c.trace;
    }
    EXPECT_GE(seen.size(), before);
  }
}

} // namespace
