// lathe export MODEL --target T -o DIR [--name N] [--tuning-records F --threads N]
//   [--schedule F] [--input-shapes "..."] [--inputs F.npz]
// lathe targets
#include "app/cli/commands.h"
#include "app/cli/option_checks.h"
#include "engine/api/session.h"

#include <iomanip>
#include <iostream>
#include <sstream>

namespace lathe::cli {
namespace {

struct ExportCommandOptions {
  std::string model, target = "llvm", output, name, schedule, inputShapes, inputs, tuningRecords;
  int threads = 0;
  std::vector<std::string> disabledPasses;
};

std::string kib(std::uint64_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / 1024.0 << " KiB";
  return s.str();
}

int exportModel(const ExportCommandOptions& o) {
  for (const std::string* input : {&o.model, &o.schedule, &o.tuningRecords, &o.inputs})
    if (!input->empty() && api::isSameFile(o.output, *input)) {
      std::cerr << "lathe: error: -o " << o.output << " is the input " << *input << "\n";
      return 2;
    }
  api::Session session;
  api::CompileOptions options;
  options.target = o.target;
  options.exportDir = o.output;
  options.exportName = o.name;
  options.schedulePath = o.schedule;
  options.tuningRecords = o.tuningRecords;
  options.threads = o.threads;
  const auto report =
      openAndCompile(session, o.model, o.inputShapes, options, o.inputs, o.disabledPasses);
  if (!report)
    return 1;
  if (!report->exported) {
    std::cerr << "lathe: error: nothing was exported\n";
    return 1;
  }
  const api::ExportReport& e = *report->exported;
  std::cout << "exported " << o.model << " for \"" << report->target << "\" (" << e.triple
            << ") into " << e.folder << ":\n";
  for (const api::ExportedFile& f : e.files)
    std::cout << "  " << std::left << std::setw(17) << f.name << std::right << std::setw(12)
              << kib(f.bytes) << "  " << f.description << "\n";
  if (!o.tuningRecords.empty())
    printTuningSummary(std::cout, *report);
  std::cout << "code " << kib(e.codeBytes) << ", weights " << kib(e.weightBytes) << ", arena "
            << kib(e.arenaBytes) << "\n";
  bool fits = true;
  if (!e.board.empty()) {
    // What is known before linking: the runtime and the example add a few KiB of code.
    const std::uint64_t ram = e.arenaBytes + e.scratchBytes + e.ioBytes + e.stackBytes;
    const std::uint64_t flash = e.codeBytes + e.weightBytes;
    std::cout << "board " << e.board << "\n"
              << "  flash: code " << kib(e.codeBytes) << " + weights " << kib(e.weightBytes)
              << " = " << kib(flash) << " of " << kib(e.boardFlashBytes)
              << " (and the runtime and example)\n"
              << "  RAM:   arena " << kib(e.arenaBytes) << " + scratch " << kib(e.scratchBytes)
              << " + inputs and outputs " << kib(e.ioBytes) << " + stack " << kib(e.stackBytes)
              << " = " << kib(ram) << " of " << kib(e.boardRamBytes) << "\n";
    if (flash > e.boardFlashBytes || ram > e.boardRamBytes) {
      std::cerr << "lathe: error: the export is written, but the example will not fit " << e.board
                << ": it needs " << kib(flash) << " of flash and " << kib(ram)
                << " of RAM (link model.a into firmware for a larger part)\n";
      fits = false;
    }
  }
  std::cout << "build: " << e.buildCommand << "\n";
  if (!e.runCommand.empty())
    std::cout << "run:   " << e.runCommand << (e.board.empty() ? " [input_0.npy ...]" : "") << "\n";
  return fits ? 0 : 1;
}

int listTargets() {
  std::cout << std::left << std::setw(22) << "target" << std::setw(30) << "triple" << std::setw(16)
            << "cpu" << std::setw(8) << "vector"
            << "target string\n";
  for (const api::TargetSummary& t : api::knownTargets()) {
    std::cout << std::setw(22) << t.label << std::setw(30) << (t.triple.empty() ? "-" : t.triple)
              << std::setw(16) << (t.cpu.empty() ? "-" : t.cpu) << std::setw(8)
              << (t.vectorBits ? std::to_string(t.vectorBits) + "b" : "-") << "\"" << t.text << "\""
              << (t.runsHere ? " (runs here)" : "")
              << (t.unavailable.empty() ? "" : " (unavailable: " + t.unavailable + ")") << "\n";
  }
  std::cout << std::right;
  return 0;
}

} // namespace

void addExportCommands(CLI::App& app, int& exitCode) {
  auto o = std::make_shared<ExportCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Compile a model for a target into a folder to build and deploy there with the "
                "standalone C runtime: kernels.o, weights.o, model.h/model.c, the runtime's "
                "sources, an example main.c, a Makefile and a README with the build command");
  cmd->add_option("model", o->model, "Model file (.onnx or .tflite)")->required();
  cmd->add_option("--target", o->target,
                  "Target string, e.g. \"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72\" "
                  "(see lathe targets)")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "The folder to write (created if missing)")->required();
  cmd->add_option("--name", o->name,
                  "The C name the model's symbols start with (default: the model file's name)");
  cmd->add_option("--schedule", o->schedule, "Replay the schedule traces in this file")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tuning-records", o->tuningRecords,
                  "Apply the best schedules of this records file (lathe tune) for the target's "
                  "CPU and --threads")
      ->check(CLI::ExistingFile);
  addDisablePassOption(cmd, &o->disabledPasses);
  cmd->add_option("--threads", o->threads, "The threads it will run on, for tuning records")
      ->check(threadCount)
      ->capture_default_str();
  cmd->add_option("--input-shapes", o->inputShapes,
                  "Fix symbolic input dims: \"name:[d0,d1,...] other:[...]\"");
  cmd->add_option("--inputs", o->inputs,
                  "An .npz of inputs like the ones it will run on (fixes symbolic dims)")
      ->check(CLI::ExistingFile);
  cmd->callback([o, &exitCode] {
    try {
      exitCode = exportModel(*o);
    } catch (const CLI::ValidationError& e) {
      std::cerr << "lathe: error: " << e.what() << "\n";
      exitCode = 2;
    }
  });

  CLI::App* targets = app.add_subcommand(
      "targets", "List the targets Lathe compiles for: triple, CPU, vector width, target string");
  targets->callback([&exitCode] { exitCode = listTargets(); });
}

} // namespace lathe::cli
