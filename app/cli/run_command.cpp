// lathe run MODEL.onnx [--inputs in.npz] [--fill random|zeros|ones] [--outputs out.npz]
//   [--repeat N] [--threads T] [--print-time] [--print-top K] [--json] [--input-shapes ...]
//   [--profile [--report table|csv|json] [--trace trace.json]]
#include "app/cli/commands.h"
#include "app/cli/option_checks.h"
#include "app/cli/session_option.h"
#include "engine/api/session.h"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace lathe::cli {

namespace {

struct RunCommandOptions {
  std::string model, inputs, outputs, fill, inputShapes, target = "llvm", tuningRecords;
  std::string session, sessionSchedules; // --session FILE and the schedules it keeps
  bool targetGiven = false;
  std::string report = "table", trace; // with profile
  int repeat = 1, threads = 0, top = 0;
  bool printTime = false, json = false, profile = false, gpuOnHost = false;
  std::vector<std::string> disabledPasses;
};

std::string shapeText(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

int runModel(RunCommandOptions o) {
  if (!o.session.empty() &&
      !applySessionFile(o.session, {&o.model, &o.target, o.targetGiven, &o.inputs, &o.fill,
                                    &o.inputShapes, &o.tuningRecords, &o.sessionSchedules}))
    return 1;
  if (o.model.empty()) {
    std::cerr << "lathe: error: run needs a model or bundle (or --session FILE)\n";
    return 2;
  }
  for (const std::string* output : {&o.outputs, &o.trace})
    for (const std::string* input : {&o.model, &o.inputs})
      if (!output->empty() && !input->empty() && api::isSameFile(*output, *input)) {
        std::cerr << "lathe: error: " << *output << " is the input " << *input
                  << "; writing it would destroy the input\n";
        return 2;
      }
  api::Session session;
  const bool bundle = o.model.size() > 4 && o.model.substr(o.model.size() - 4) == ".tar";
  if (bundle) {
    if (!o.inputShapes.empty() || !o.tuningRecords.empty()) {
      std::cerr << "lathe: error: "
                << (o.inputShapes.empty() ? "--tuning-records" : "--input-shapes")
                << " applies when compiling; a bundle's code is fixed\n";
      return 2;
    }
    const api::OpenResult opened = session.openBundle(o.model, boundedThreads(o.threads));
    if (!opened.ok()) {
      std::cerr << "lathe: error: " << opened.failure->message << "\n";
      return 1;
    }
  }
  api::RunOptions run;
  run.inputsNpz = o.inputs;
  run.fill = o.fill;
  run.outputsNpz = o.outputs;
  run.repeat = o.repeat;
  run.topK = o.top;
  run.profile = o.profile;
  api::CompileOptions compile;
  compile.target = o.target;
  compile.threads = boundedThreads(o.threads);
  compile.tuningRecords = o.tuningRecords;
  compile.scheduleText = o.sessionSchedules;
  compile.gpuSchedulesOnHost = o.gpuOnHost;
  // Code for another machine runs there: exported, built and run under its emulator.
  const bool elsewhere = !bundle && !api::runsInThisProcess(o.target);
  if (o.gpuOnHost && (bundle || elsewhere)) {
    std::cerr << "lathe: error: --gpu-schedules-on-host compiles the model for this machine; "
              << (bundle ? "a bundle's code is fixed" : "\"" + o.target + "\" runs elsewhere")
              << "\n";
    return 2;
  }
  if (elsewhere && o.profile) {
    std::cerr << "lathe: error: --profile needs code that runs in this process; \"" << o.target
              << "\" runs under an emulator\n";
    return 2;
  }
  if (elsewhere) {
    api::OpenOptions open;
    open.inputShapes = parseInputShapes(o.inputShapes);
    open.inputShapesFile = o.inputs;
    open.disabledPasses = o.disabledPasses;
    open.forGpu = api::isGpuTarget(compile.target);
    const api::OpenResult opened = session.openModel(o.model, open);
    if (!opened.ok()) {
      std::cerr << "lathe: error: " << opened.failure->message << "\n";
      return 1;
    }
    compile.inputsFile = o.inputs;
  } else if (!bundle) {
    const auto compiled =
        openAndCompile(session, o.model, o.inputShapes, compile, o.inputs, o.disabledPasses);
    if (!compiled)
      return 1;
    if (!o.tuningRecords.empty())
      printTuningSummary(std::cerr, *compiled);
  }
  const api::RunResult result = elsewhere ? session.runOnTarget(compile, run) : session.run(run);
  if (result.ok() && !result.report->runner.empty())
    std::cerr << "lathe: ran the export for \"" << result.report->target
              << "\": " << result.report->runner << "\n";
  if (!result.ok()) {
    std::cerr << "lathe: error: " << result.failure->message << "\n";
    return 1;
  }
  const api::RunReport& r = *result.report;
  if (r.profile && !o.trace.empty()) {
    const api::WriteResult written = api::writeTextFile(o.trace, api::profileChromeTrace(r));
    if (!written.ok()) {
      std::cerr << "lathe: error: " << written.failure->message << "\n";
      return 1;
    }
    std::cerr << "lathe: wrote " << o.trace << " (" << r.profile->events.size()
              << " events; open it in https://ui.perfetto.dev or chrome://tracing)\n";
  }
  // A CSV or JSON profile is the whole of stdout, so that it can be redirected to a file.
  if (r.profile && o.report != "table" && !o.json) {
    std::cout << api::formatProfile(r, o.report);
    return 0;
  }
  if (o.json) {
    nlohmann::json j{{"mean_ms", r.meanMs}, {"median_ms", r.medianMs},
                     {"min_ms", r.minMs},   {"max_ms", r.maxMs},
                     {"std_ms", r.stdMs},   {"repeat", r.latenciesMs.size()},
                     {"threads", r.threads}};
    for (const auto& out : r.outputs) {
      nlohmann::json oj{{"name", out.name}, {"dtype", out.dtype}, {"shape", out.shape},
                        {"min", out.min},   {"max", out.max},     {"mean", out.mean}};
      for (const auto& [index, value] : out.top)
        oj["top"].push_back({{"index", index}, {"value", value}});
      j["outputs"].push_back(oj);
    }
    if (r.profile)
      j["profile"] = nlohmann::json::parse(api::formatProfile(r, "json"));
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  for (const auto& out : r.outputs) {
    std::cout << out.name << "  " << out.dtype << shapeText(out.shape) << "  min " << out.min
              << "  max " << out.max << "  mean " << out.mean << "\n";
    for (std::size_t k = 0; k < out.top.size(); ++k)
      std::cout << "  top " << k + 1 << ": index " << out.top[k].first << "  value "
                << out.top[k].second << "\n";
  }
  if (o.printTime) {
    std::cout << std::fixed << std::setprecision(3) << "Execution time summary ("
              << r.latenciesMs.size() << " runs, " << r.threads << " threads):\n"
              << " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n"
              << std::setw(10) << r.meanMs << std::setw(13) << r.medianMs << std::setw(12)
              << r.maxMs << std::setw(13) << r.minMs << std::setw(13) << r.stdMs << "\n";
  }
  if (r.profile)
    std::cout << "\n" << api::formatProfile(r, "table");
  return 0;
}

} // namespace

void addRunCommand(CLI::App& app, int& exitCode) {
  auto o = std::make_shared<RunCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run a bundle from lathe compile (.tar), or compile an ONNX model in memory and run it");
  cmd->add_option("model", o->model,
                  "A bundle (.tar) or a model (.onnx, .tflite); optional with --session");
  addSessionOption(cmd, o->session);
  cmd->footer("A bundle runs native code; open only bundles you trust. Its manifest is checked and "
              "its kernels.so and weights.bin must match the SHA-256 hashes the manifest records "
              "before the kernels are loaded; that catches damaged or swapped files, but whoever "
              "can edit a bundle can rewrite the hashes too.");
  cmd->add_option("--inputs", o->inputs,
                  "Inputs by name from a .npz file (numpy.savez); their shapes fix "
                  "the model's symbolic input dims");
  cmd->add_option(
         "--fill", o->fill,
         "Fill inputs not in --inputs: random (uniform [-1,1) floats, 0/1 integers), zeros "
         "or ones. Default: random without --inputs; with it a missing input is an error")
      ->check(CLI::IsMember({"random", "zeros", "ones"}));
  cmd->add_option("--outputs", o->outputs, "Write the outputs by name to this .npz file");
  cmd->add_option("--repeat", o->repeat, "Timed runs (one warm-up run first when more than 1)")
      ->check(atLeastOne)
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads (0 = one per core; at most the cores)")
      ->check(threadCount)
      ->capture_default_str();
  cmd->add_flag("--print-time", o->printTime,
                "Print mean, median, max, min and std of the runs in ms");
  cmd->add_option("--print-top", o->top, "Print the K largest values of each output");
  cmd->add_flag("--json", o->json, "Print the timing summary and output shapes as JSON");
  cmd->add_option("--input-shapes", o->inputShapes,
                  "Fix symbolic input dims: \"name:[d0,d1,...] other:[...]\" "
                  "(without --inputs)");
  cmd->add_option("--tuning-records", o->tuningRecords,
                  "Apply the best schedules of this records file (lathe tune) for this CPU and "
                  "--threads")
      ->check(CLI::ExistingFile);
  addDisablePassOption(cmd, &o->disabledPasses);
  cmd->add_flag(
      "--gpu-schedules-on-host", o->gpuOnHost,
      "Lower and schedule as for a CUDA GPU, then run every block and thread in turn on "
      "this CPU: the GPU schedules' outputs without a GPU (times mean nothing for a GPU)");
  cmd->add_option(
         "--target", o->target,
         "Target string; code for another machine is exported, built with its toolchain and run "
         "under its emulator (qemu) or Node (see lathe targets)")
      ->capture_default_str();
  CLI::Option* profile = cmd->add_flag(
      "--profile", o->profile,
      "Time every kernel call and parallel-loop chunk of the timed runs (after a warm-up run) "
      "and print a per-kernel table sorted by time");
  cmd->add_option("--report", o->report,
                  "With --profile: the per-kernel table as text (after the outputs), or as csv "
                  "or json (the whole of stdout)")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str()
      ->needs(profile);
  cmd->add_option("--trace", o->trace,
                  "With --profile: write a Chrome trace (JSON) of the timed runs, one lane per "
                  "thread, for Perfetto or chrome://tracing")
      ->needs(profile);
  cmd->callback([o, cmd, &exitCode] {
    try {
      o->targetGiven = cmd->count("--target") > 0;
      exitCode = runModel(*o);
    } catch (const CLI::ValidationError& e) {
      std::cerr << "lathe: error: " << e.what() << "\n";
      exitCode = 2;
    }
  });
}

} // namespace lathe::cli
