// lathe compile MODEL.onnx --target "llvm [-mcpu=NAME]" -o OUT.tar [--dump DIR]
//   [--schedule FILE] [--input-shapes "name:[...]"]
#include "app/cli/commands.h"
#include "app/cli/option_checks.h"
#include "app/cli/session_option.h"
#include "engine/api/session.h"

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace lathe::cli {
namespace {

struct CompileCommandOptions {
  std::string model, target = "llvm", output, dump, schedule, inputShapes, inputs, tuningRecords;
  std::string session, sessionSchedules; // --session FILE and the schedules it keeps
  bool targetGiven = false;
  int threads = 0;
  std::vector<std::string> disabledPasses;
};

// "scheduled 2 kernels: k1 (3 steps), k2 (1 step)\n", or nothing.
std::string scheduledSummary(const api::CompileReport& c) {
  std::string list;
  int count = 0;
  for (const api::KernelReport& k : c.kernels) {
    if (k.schedule.empty() || k.tunedTrials > 0 || k.schedule == k.defaultTrace)
      continue; // the default, or tuned (said apart)
    const auto steps = std::count(k.schedule.begin(), k.schedule.end(), '\n');
    list += (count++ ? ", " : "") + k.name + " (" + std::to_string(steps) +
            (steps == 1 ? " step)" : " steps)");
  }
  if (!count)
    return {};
  return "scheduled " + std::to_string(count) + (count == 1 ? " kernel: " : " kernels: ") + list +
         "\n";
}

int compileModel(CompileCommandOptions o) {
  if (!o.session.empty() &&
      !applySessionFile(o.session, {&o.model, &o.target, o.targetGiven, &o.inputs, nullptr,
                                    &o.inputShapes, &o.tuningRecords, &o.sessionSchedules}))
    return 1;
  if (o.model.empty()) {
    std::cerr << "lathe: error: compile needs a model (or --session FILE)\n";
    return 2;
  }
  for (const std::string* input : {&o.model, &o.schedule, &o.tuningRecords})
    if (!input->empty() && api::isSameFile(o.output, *input)) {
      std::cerr << "lathe: error: -o " << o.output << " is the input " << *input
                << "; writing the bundle would destroy it\n";
      return 2;
    }
  api::Session session;
  api::CompileOptions options;
  options.target = o.target;
  options.bundlePath = o.output;
  options.dumpDir = o.dump;
  options.schedulePath = o.schedule;
  if (o.schedule.empty())
    options.scheduleText = o.sessionSchedules; // the session's kept schedules
  options.tuningRecords = o.tuningRecords;
  options.threads = o.threads;
  const auto report =
      openAndCompile(session, o.model, o.inputShapes, options, o.inputs, o.disabledPasses);
  if (!report)
    return 1;
  const api::CompileReport& c = *report;
  std::cout << std::fixed << std::setprecision(1) << "compiled " << o.model << " for \"" << c.target
            << "\": " << c.kernels.size() << " kernels, lowering " << c.lowerMilliseconds
            << " ms, code generation " << c.codegenMilliseconds << " ms\n"
            << scheduledSummary(c);
  if (!o.tuningRecords.empty())
    printTuningSummary(std::cout, c);
  printGpuSummary(std::cout, c);
  std::cout << (c.foldedNodes ? "folded " + std::to_string(c.foldedNodes) +
                                    " constant nodes at compile time\n"
                              : "")
            << "memory plan: " << c.arenaBytes / 1024 << " KiB of intermediates (without reuse "
            << c.naiveArenaBytes / 1024 << " KiB), " << c.constantBytes / 1024
            << " KiB of weights\n"
            << "wrote " << o.output << " (" << c.bundleBytes / 1024 << " KiB)"
            << (o.dump.empty() ? "" : "; per-kernel code in " + o.dump) << "\n";
  return 0;
}

} // namespace

std::shared_ptr<const api::CompileReport>
openAndCompile(api::Session& session, const std::string& model, const std::string& inputShapes,
               const api::CompileOptions& options, const std::string& inputsFile,
               const std::vector<std::string>& disabledPasses) {
  api::OpenOptions open;
  open.disabledPasses = disabledPasses;
  open.forGpu = api::isGpuTarget(options.target) || options.gpuSchedulesOnHost;
  open.inputShapes = parseInputShapes(inputShapes);
  open.inputShapesFile = inputsFile;
  const api::OpenResult opened = session.openModel(model, open);
  if (!opened.ok()) {
    std::cerr << "lathe: error: " << opened.failure->message << "\n";
    return nullptr;
  }
  const api::CompileResult compiled = session.compile(options);
  if (!compiled.ok()) {
    std::cerr << "lathe: error: " << compiled.failure->message << "\n";
    return nullptr;
  }
  return compiled.report;
}

void addDisablePassOption(CLI::App* cmd, std::vector<std::string>* passes) {
  cmd->add_option("--disable-pass", *passes,
                  "Leave this pass of the pipeline out (repeatable; lathe passes lists them), "
                  "e.g. winograd-nchwc to keep 3x3 Convs direct");
}

void printGpuSummary(std::ostream& out, const api::CompileReport& c) {
  std::size_t width = 6;
  bool any = false;
  for (const api::KernelReport& k : c.kernels) {
    width = std::max(width, k.name.size());
    any = any || !k.gpuLaunches.empty();
  }
  if (!any)
    return;
  const auto cell = [](int v) { return v < 0 ? std::string("-") : std::to_string(v); };
  out << "CUDA launches (ptxas -v per entry function; '-': ptxas did not run):\n"
      << std::left << std::setw(static_cast<int>(width + 2)) << "kernel" << std::right
      << std::setw(9) << "launches" << std::setw(12) << "threads" << std::setw(11) << "registers"
      << std::setw(9) << "stack B" << std::setw(10) << "spills B" << "\n";
  int spilling = 0;
  std::string missing;
  for (const api::KernelReport& k : c.kernels) {
    std::int64_t threads = 0;
    int registers = -1, stack = -1, spills = -1;
    for (const api::GpuLaunchReport& g : k.gpuLaunches) {
      threads += g.grid[0] * g.grid[1] * g.grid[2] * g.block[0] * g.block[1] * g.block[2];
      registers = std::max(registers, g.registers);
      stack = std::max(stack, g.stackBytes);
      if (g.spillStores >= 0)
        spills = std::max(spills, 0) + g.spillStores + g.spillLoads;
    }
    spilling += spills > 0;
    if (missing.empty())
      missing = k.ptxasNote;
    out << std::left << std::setw(static_cast<int>(width + 2)) << k.name << std::right
        << std::setw(9) << k.gpuLaunches.size() << std::setw(12) << threads << std::setw(11)
        << cell(registers) << std::setw(9) << cell(stack) << std::setw(10) << cell(spills)
        << (spills > 0 ? "  spills" : "") << "\n";
  }
  if (spilling)
    out << spilling << " kernel(s) spill registers to local memory\n";
  if (!missing.empty())
    out << missing << "\n";
}

void printTuningSummary(std::ostream& out, const api::CompileReport& c) {
  int trials = 0;
  for (const api::KernelReport& k : c.kernels)
    trials += k.tunedTrials;
  out << "tuning records: " << c.tunedKernels << " of " << c.kernels.size() << " kernels tuned";
  if (c.tunedKernels)
    out << " (" << trials << " trials behind their schedules)";
  out << "\n";
  for (const std::string& note : c.tuningNotes)
    out << "  " << note << "\n";
}

void addCompileCommand(CLI::App& app, int& exitCode) {
  auto o = std::make_shared<CompileCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compile a model to a bundle: kernels (shared object), manifest and weights");
  cmd->add_option("model", o->model, "Model file (.onnx or .tflite); optional with --session");
  addSessionOption(cmd, o->session);
  cmd->add_option("--target", o->target,
                  "Target string: \"llvm\" (this machine), \"llvm -mcpu=znver4\", "
                  "\"llvm -mtriple=aarch64-linux-gnu\", ... (see lathe targets)")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "The bundle to write (.tar)")->required();
  cmd->add_option("--dump", o->dump,
                  "Also write per kernel: loop IR (.loop), LLVM IR before/after optimisation "
                  "(.ll, .opt.ll) and assembly (.s) into this folder; a .loop file starts with the "
                  "schedule trace replayed on it");
  cmd->add_option("--schedule", o->schedule,
                  "Replay the schedule traces in this file (text or JSON) on the kernels they "
                  "name, e.g.\n  kernel fused_add_mul_7:\n    fuse(i1, i2)\n    "
                  "vectorize(i3)\nLoop names are those of the .loop files --dump writes")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tuning-records", o->tuningRecords,
                  "Apply the best schedule of each kernel found by lathe tune for this CPU and "
                  "--threads (kernels --schedule names keep their schedule)")
      ->check(CLI::ExistingFile);
  addDisablePassOption(cmd, &o->disabledPasses);
  cmd->add_option("--threads", o->threads,
                  "The threads the bundle will run on, which picks the tuning records that "
                  "apply (0: one per core)")
      ->check(threadCount)
      ->capture_default_str();
  cmd->add_option("--input-shapes", o->inputShapes,
                  "Fix symbolic input dims: \"name:[d0,d1,...] other:[...]\"");
  cmd->add_option("--inputs", o->inputs,
                  "An .npz of inputs like the ones the bundle will run on: symbolic dims take "
                  "its arrays' shapes, and integer scalars (a sample rate) are compiled in by "
                  "value")
      ->check(CLI::ExistingFile);
  cmd->callback([o, cmd, &exitCode] {
    try {
      o->targetGiven = cmd->count("--target") > 0;
      exitCode = compileModel(*o);
    } catch (const CLI::ValidationError& e) {
      std::cerr << "lathe: error: " << e.what() << "\n";
      exitCode = 2;
    }
  });
}

} // namespace lathe::cli
