// Session::runOnTarget: the model exported for another machine, built with that machine's
// toolchain and run under its emulator (or Node for WebAssembly), as a person would after
// `lathe export`; the outputs come back as .npy files.
#include "engine/api/run_inputs.h"
#include "engine/api/session_state.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/export/bundle.h"
#include "engine/export/export_sources.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/runtime/cuda_executor.h"
#include "engine/runtime/npy.h"
#include "engine/runtime/timing_stats.h"
#include "engine/support/subprocess.h"
#include "engine/support/temporary_folder.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

namespace lathe::api {
namespace {

namespace fs = std::filesystem;

constexpr int kBuildSeconds = 300;
constexpr int kRunSeconds = 300;

// The Debian package that has `program`, for the message that says what to install.
std::string packageOf(const std::string& program) {
  static const std::pair<const char*, const char*> packages[] = {
      {"aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"},
      {"riscv64-linux-gnu-gcc", "gcc-riscv64-linux-gnu"},
      {"arm-none-eabi-gcc", "gcc-arm-none-eabi"},
      {"qemu-aarch64", "qemu-user"},
      {"qemu-riscv64", "qemu-user"},
      {"qemu-system-arm", "qemu-system-arm"},
      {"clang-19", "clang-19 lld-19"},
      {"node", "nodejs"},
      {"make", "make"},
      {"cc", "gcc"}};
  for (const auto& [name, package] : packages)
    if (program == name)
      return package;
  return {};
}

// The programs the example needs, in order: build tools, then (unless `buildOnly`) what
// runs it.
std::vector<std::string> neededPrograms(const exporter::ExportToolchain& tc,
                                        bool buildOnly = false) {
  std::vector<std::string> programs{"make"};
  if (const auto words = splitWords(tc.compiler); !words.empty())
    programs.push_back(words.front());
  if (buildOnly)
    return programs;
  if (tc.platform == exporter::ExportPlatform::Wasm)
    programs.push_back("node");
  else if (const auto words = splitWords(tc.emulator); !words.empty())
    programs.push_back(words.front());
  return programs;
}

// "a", "a and b", "a, b and c".
std::string listed(const std::vector<std::string>& items) {
  std::string list;
  for (std::size_t i = 0; i < items.size(); ++i)
    list += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return list;
}

// What of `programs` is missing here, as a sentence ending in the packages that have them;
// empty when nothing is.
std::string missingTools(const std::vector<std::string>& programs, const std::string& purpose) {
  std::vector<std::string> missing, packages;
  for (const std::string& program : programs)
    if (!programInPath(program)) {
      missing.push_back(program);
      if (const std::string p = packageOf(program); !p.empty())
        packages.push_back(p);
    }
  if (missing.empty())
    return {};
  std::string install;
  for (const std::string& p : packages)
    install += " " + p;
  return purpose + " needs " + listed(missing) +
         (missing.size() == 1 ? ", which is not installed" : ", which are not installed") +
         (install.empty() ? std::string() : " (Debian: apt-get install" + install + ")");
}

std::string lastLines(const std::string& text, int lines) {
  std::size_t at = text.size();
  while (lines-- > 0 && at > 0) {
    const std::size_t nl = text.rfind('\n', at - 1);
    if (nl == std::string::npos) {
      at = 0;
      break;
    }
    at = nl;
  }
  std::string tail = text.substr(at);
  while (!tail.empty() && (tail.front() == '\n'))
    tail.erase(0, 1);
  return tail;
}

} // namespace

// The model compiled to a CUDA bundle, loaded through the driver API and run `repeat` times;
// the report's latencies are the kernels' (CUDA events), the copies in and out not included.
std::shared_ptr<RunReport> Session::runOnGpu(const CompileOptions& compileOptions,
                                             const RunOptions& options) {
  const TemporaryFolder temp("lathe-cuda");
  CompileOptions bundleOptions = compileOptions;
  bundleOptions.bundlePath = (temp.path() / "model.tar").string();
  bundleOptions.exportDir.clear();
  bundleOptions.dumpDir.clear();
  bundleOptions.keepCode = false;
  bundleOptions.cancel = options.cancel;
  if (options.onProgress)
    options.onProgress({0, "compiling for " + compileOptions.target});
  const CompileResult compiled = compile(bundleOptions);
  if (!compiled.ok())
    throw Error(ErrorKind::Invalid, compiled.failure->message);
  if (!state_->layoutPlan)
    throw Error(ErrorKind::Internal, "the CUDA compile left no plan of its inputs and outputs");
  const runtime::ExecutionPlan& plan = *state_->layoutPlan;
  const std::unique_ptr<exporter::LoadedBundle> bundle =
      exporter::readBundle(bundleOptions.bundlePath);
  const exporter::BundleManifest& m = bundle->manifest;
  std::ifstream ptxFile(bundle->libraryPath, std::ios::binary);
  runtime::cuda::GpuModuleSpec spec;
  spec.ptx.assign(std::istreambuf_iterator<char>(ptxFile), std::istreambuf_iterator<char>());
  std::map<std::string, int> kernelIndex;
  for (const exporter::BundleKernel& k : m.kernels) {
    runtime::cuda::GpuKernelSpec kernel;
    kernel.name = k.name;
    for (const exporter::BundleLaunch& l : k.launches)
      kernel.launches.push_back(
          {l.name, {l.grid[0], l.grid[1], l.grid[2]}, {l.block[0], l.block[1], l.block[2]}});
    kernel.scratch = k.scratch;
    kernelIndex[k.name] = static_cast<int>(spec.kernels.size());
    spec.kernels.push_back(std::move(kernel));
  }
  for (const exporter::BundleSlot& slot : m.slots)
    spec.tensors.push_back({slot.bytes, slot.role == "constant"
                                            ? bundle->weights.data() + slot.weightsOffset
                                            : nullptr});
  for (const exporter::BundleCall& c : m.calls)
    spec.calls.push_back({kernelIndex.at(c.kernel), c.args});
  spec.inputs = m.inputs;
  spec.outputs = m.outputs;

  if (options.onProgress)
    options.onProgress({40, "running on the GPU"});
  runtime::cuda::GpuExecutor executor(spec);
  std::vector<runtime::Tensor> inputs =
      prepareRunInputs(plan, options.inputsNpz, options.fill, options.seed);
  std::vector<const void*> in;
  for (const runtime::Tensor& t : inputs)
    in.push_back(t.rawData());
  std::vector<runtime::Tensor> results;
  std::vector<void*> out;
  for (int o : plan.outputs) {
    const runtime::PlanSlot& slot = plan.slots[static_cast<std::size_t>(o)];
    results.push_back(runtime::Tensor::allocate(slot.type, slot.shape));
    out.push_back(results.back().rawData());
  }
  auto report = std::make_shared<RunReport>();
  report->target = compileOptions.target;
  report->threads = 1;
  report->runner = executor.device() + " (CUDA events time the kernels, not the copies)";
  const int repeat = std::max(1, options.repeat);
  for (int r = 0; r < repeat; ++r) {
    if (options.cancel && options.cancel->load())
      throw Error(ErrorKind::Cancelled, "run cancelled");
    double total = 0;
    for (double ms : executor.run(in, out))
      total += ms;
    report->latenciesMs.push_back(total);
  }
  const runtime::TimingStats stats = runtime::computeTimingStats(report->latenciesMs);
  report->medianMs = stats.median;
  report->meanMs = stats.mean;
  report->minMs = stats.min;
  report->maxMs = stats.max;
  report->stdMs = stats.stddev;
  reportOutputs(plan, std::move(results), options.topK, options.outputsNpz, *report);
  if (options.onProgress)
    options.onProgress({100, "done"});
  return report;
}

RunResult Session::runOnTarget(const CompileOptions& compileOptions, const RunOptions& options) {
  RunResult result;
  try {
    const target::Target target = target::parseTarget(compileOptions.target);
    if (target.kind == target::Kind::Cuda) {
      std::string why;
      if (!codegen::targetAvailable(target, &why))
        throw Error(ErrorKind::Unsupported, why);
      const runtime::cuda::DriverProbe& driver = runtime::cuda::probeDriver();
      if (!driver.usable)
        throw Error(ErrorKind::Unsupported, "cannot run on \"" + target.text() +
                                                "\": " + driver.message +
                                                "; lathe compile --target \"" + target.text() +
                                                "\" --dump DIR still writes and checks the PTX");
      result.report = runOnGpu(compileOptions, options);
      return result;
    }
    std::string why;
    if (!codegen::targetAvailable(target, &why))
      throw Error(ErrorKind::Unsupported, why);
    const target::Target resolved = codegen::resolveTarget(target);
    const exporter::ExportToolchain tc =
        exporter::toolchainFor(resolved.triple, resolved.cpu, codegen::hostTriple());
    if (tc.platform == exporter::ExportPlatform::BareMetal && !tc.board)
      throw Error(ErrorKind::Unsupported,
                  "no emulated board is known for " + resolved.triple + " (" + resolved.cpu +
                      "): the export builds a library to link into your firmware, but nothing "
                      "here can run it");
    if (const std::string missing =
            missingTools(neededPrograms(tc), "running code for " + resolved.triple + " here");
        !missing.empty())
      throw Error(ErrorKind::Unsupported, missing);

    const TemporaryFolder temp("lathe-target");
    const fs::path exportDir = temp.path() / "export";
    const fs::path outputs = temp.path() / "outputs";
    fs::create_directories(outputs);
    const auto progress = [&](int percent, const std::string& stage) {
      if (options.onProgress)
        options.onProgress({percent, stage});
    };
    const auto cancelled = [&] { return options.cancel && options.cancel->load(); };

    // 1. The export, as lathe export writes it.
    progress(0, "exporting for " + resolved.triple);
    CompileOptions exportOptions = compileOptions;
    exportOptions.exportDir = exportDir.string();
    exportOptions.bundlePath.clear();
    exportOptions.dumpDir.clear();
    exportOptions.keepCode = false;
    exportOptions.cancel = options.cancel;
    const CompileResult compiled = compile(exportOptions);
    if (!compiled.ok()) {
      result.failure = compiled.failure;
      return result;
    }
    if (!state_->layoutPlan)
      throw Error(ErrorKind::Internal, "the export left no plan of its inputs and outputs");
    const runtime::ExecutionPlan& plan = *state_->layoutPlan;

    // 2. The inputs, as run() would make them, one .npy file each.
    std::vector<runtime::Tensor> inputs =
        prepareRunInputs(plan, options.inputsNpz, options.fill, options.seed);
    std::vector<std::string> inputFiles;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string name = "input_" + std::to_string(i) + ".npy";
      runtime::writeNpy(temp.path() / name, inputs[i]);
      inputFiles.push_back(name);
    }

    // 3. The example program, built with the target's toolchain.
    progress(10, "building with " + splitWords(tc.compiler).front());
    ProcessOptions build;
    build.timeoutSeconds = kBuildSeconds;
    build.cancel = options.cancel;
    const ProcessResult built = runProcess({"make", "-C", exportDir.string()}, build);
    if (cancelled())
      throw Error(ErrorKind::Cancelled, "run cancelled");
    if (!built.ok())
      throw Error(ErrorKind::Internal, "building the export with " + tc.compiler + " failed (" +
                                           built.describe(kBuildSeconds) + "):\n" +
                                           lastLines(built.output, 12));

    // 4. Run under the emulator (or Node), in the temporary folder.
    const int repeat = std::max(1, options.repeat);
    std::vector<std::string> command;
    auto report = std::make_shared<RunReport>();
    report->target = target.text();
    report->threads = 1;
    if (tc.platform == exporter::ExportPlatform::Wasm) {
      command = {"node", (exportDir / "main.js").string(), "-o", "outputs"};
      if (repeat > 1)
        command.insert(command.end(), {"-r", std::to_string(repeat)});
      report->runner = "node (WebAssembly in V8, one thread)";
    } else if (tc.platform == exporter::ExportPlatform::BareMetal) {
      std::string args = "-o outputs";
      for (const std::string& f : inputFiles)
        args += " " + f;
      command = splitWords(tc.emulator);
      command.insert(command.end(), {(exportDir / "model.elf").string(), "-append", args});
      inputFiles.clear();
      report->runner = splitWords(tc.emulator).front() + " -M " + tc.board->machine +
                       " (emulated board with semihosting; not timed)";
      report->timed = false;
    } else {
      command = splitWords(tc.emulator);
      command.insert(command.end(), {(exportDir / "model").string(), "-t", "1", "-o", "outputs"});
      if (repeat > 1)
        command.insert(command.end(), {"-r", std::to_string(repeat)});
      report->runner = tc.emulator.empty()
                           ? std::string("natively, as a separate program on one thread")
                           : splitWords(tc.emulator).front() +
                                 " (emulated; times are the emulator's, not the target's)";
    }
    command.insert(command.end(), inputFiles.begin(), inputFiles.end());
    progress(40, "running under " + command.front());
    ProcessOptions run;
    run.workingDir = temp.path().string();
    run.timeoutSeconds = kRunSeconds;
    run.cancel = options.cancel;
    const ProcessResult ran = runProcess(command, run);
    if (cancelled())
      throw Error(ErrorKind::Cancelled, "run cancelled");
    if (!ran.ok()) {
      std::string hint;
      if (ran.signal == SIGILL)
        hint = "; this CPU lacks instructions the code for " + resolved.cpu + " uses";
      throw Error(ErrorKind::Internal, "running the export with " + command.front() + " failed (" +
                                           ran.describe(kRunSeconds) + hint + "):\n" +
                                           lastLines(ran.output, 12));
    }

    // 5. Outputs and times.
    std::vector<runtime::Tensor> results;
    for (std::size_t o = 0; o < plan.outputs.size(); ++o) {
      const fs::path file = outputs / ("output_" + std::to_string(o) + ".npy");
      if (!fs::exists(file))
        throw Error(ErrorKind::Internal, "the program wrote no " + file.filename().string() +
                                             " for output \"" + plan.slots[plan.outputs[o]].name +
                                             "\":\n" + lastLines(ran.output, 12));
      results.push_back(runtime::readNpy(file));
    }
    reportOutputs(plan, std::move(results), options.topK, options.outputsNpz, *report);
    if (report->timed) {
      // "20 runs on 1 thread(s): median 3.215 ms, min 3.100 ms", or one run's time.
      static const std::regex median(R"(median ([0-9.]+) ms)");
      std::smatch m;
      if (std::regex_search(ran.output, m, median)) {
        report->latenciesMs.assign(1, std::strtod(m[1].str().c_str(), nullptr));
        report->medianMs = report->meanMs = report->minMs = report->maxMs =
            report->latenciesMs.front();
      } else {
        report->timed = false;
      }
    }
    progress(100, "done");
    result.report = std::move(report);
  } catch (const Error& e) {
    result.failure = toFailure(e.within({state_->path, {}, {}}));
  } catch (const std::exception& e) {
    result.failure = Failure{
        "internal", state_->path + ": internal error: " + e.what(), state_->path, {}, {}, e.what()};
  }
  return result;
}

ExportBuild buildExport(const ExportReport& exported, const std::atomic<bool>* cancel) {
  ExportBuild result;
  const exporter::ExportToolchain tc =
      exporter::toolchainFor(exported.triple, "", codegen::hostTriple());
  if (std::string missing = missingTools(neededPrograms(tc, true), "building the example");
      !missing.empty()) {
    result.status = "skipped";
    result.message = std::move(missing);
    return result;
  }
  ProcessOptions options;
  options.timeoutSeconds = kBuildSeconds;
  options.cancel = cancel;
  const ProcessResult built = runProcess({"make", "-C", exported.folder}, options);
  if (built.cancelled) {
    result.status = "cancelled";
    result.message = "the build was cancelled";
  } else if (!built.ok()) {
    result.status = "failed";
    result.message = "make -C " + exported.folder + " (" + tc.compiler + ") failed, " +
                     built.describe(kBuildSeconds) + ":\n" + lastLines(built.output, 12);
  } else {
    result.status = "built";
    result.message = "make -C " + exported.folder + " built the example with " + tc.compiler;
  }
  return result;
}

} // namespace lathe::api
