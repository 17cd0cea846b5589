// Session::tryKernelSchedule: one kernel, rescheduled, compiled alone and timed next to the
// default, on the model's own weights and random activations.
#include "engine/api/session_state.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/runtime/thread_pool.h"
#include "engine/runtime/timing_stats.h"
#include "engine/schedule/schedule_io.h"
#include "engine/support/timer.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <sstream>

namespace lathe::api {

namespace {

// Buffers for every parameter of the first call of `kernel`: constants hold their values,
// floats are uniform in [-1, 1), everything else is zero (valid as an index anywhere).
class KernelArguments {
public:
  KernelArguments(const lowering::LoweredModel& lowered, const std::string& kernel) {
    const auto call = std::find_if(lowered.calls.begin(), lowered.calls.end(),
                                   [&](const auto& c) { return c.kernel == kernel; });
    if (call == lowered.calls.end())
      throw Error(ErrorKind::Invalid, "kernel " + kernel + " is never called");
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int slotIndex : call->args) {
      const lowering::TensorSlot& slot = lowered.slots[slotIndex];
      if (slot.dynamicShape)
        throw Error(ErrorKind::Unsupported,
                    "kernel " + kernel + " writes a tensor of run-time shape");
      auto& bytes = storage_.emplace_back(static_cast<std::size_t>(slot.byteSize()) + 64, 0);
      auto* base = reinterpret_cast<unsigned char*>(
          (reinterpret_cast<std::uintptr_t>(bytes.data()) + 63) / 64 * 64);
      if (slot.constant)
        std::memcpy(base, slot.constant->data(), slot.constant->byteSize());
      else if (slot.dtype == graph::DType::F32)
        for (std::int64_t i = 0; i < slot.byteSize() / 4; ++i) {
          const float v = uniform(rng);
          std::memcpy(base + i * 4, &v, 4);
        }
      args_.push_back(base);
    }
  }
  void** args() { return args_.data(); }

private:
  std::vector<std::vector<unsigned char>> storage_;
  std::vector<void*> args_;
};

// Median of `repeat` calls after one warm-up; stops early (returning what it has) when
// cancelled.
double medianMs(codegen::KernelFunction f, KernelArguments& arguments, int repeat,
                const std::atomic<bool>* cancel) {
  f(arguments.args());
  std::vector<double> times;
  for (int r = 0; r < repeat && !(cancel && cancel->load()); ++r) {
    Stopwatch watch;
    f(arguments.args());
    times.push_back(watch.elapsedMs());
  }
  return runtime::computeTimingStats(times).median;
}

} // namespace

KernelScheduleResult Session::tryKernelSchedule(const KernelScheduleOptions& options) {
  KernelScheduleResult result;
  try {
    if (!state_->folded || !state_->target)
      throw Error(ErrorKind::Invalid, "compile the model first");
    if (!state_->target->isHost())
      throw Error(ErrorKind::Unsupported,
                  "schedules are tried on this machine; compile for the host target (\"llvm\")");
    if (!state_->defaultLowered)
      state_->defaultLowered = std::make_shared<const lowering::LoweredModel>(
          lowerModel(*state_->folded, *state_->target, nullptr));
    const lowering::LoweredModel& lowered = *state_->defaultLowered;
    const auto kernel =
        std::find_if(lowered.kernels.begin(), lowered.kernels.end(),
                     [&](const loop::Kernel& k) { return k.name == options.kernel; });
    if (kernel == lowered.kernels.end())
      throw Error(ErrorKind::Invalid, "there is no kernel named '" + options.kernel + "'");

    // The steps, line by line, so that a refusal names the line of the panel's text.
    schedule::Schedule steps{options.kernel, {}};
    std::istringstream lines(options.steps);
    int lineNo = 0;
    for (std::string line; std::getline(lines, line);) {
      ++lineNo;
      try {
        const schedule::ScheduleSet one = schedule::parseText("kernel k:\n" + line);
        for (schedule::Step step : one.schedules.at(0).steps) {
          step.line = lineNo;
          steps.steps.push_back(std::move(step));
        }
      } catch (const Error& e) {
        result.failedLine = lineNo;
        const std::string& reason = e.reason();
        const std::size_t colon = reason.find(": ");
        throw Error(ErrorKind::Invalid,
                    "line " + std::to_string(lineNo) + ": " +
                        (colon == std::string::npos ? reason : reason.substr(colon + 2)));
      }
    }
    loop::Kernel scheduled;
    std::size_t refused = 0;
    try {
      scheduled = schedule::apply(*kernel, steps, "steps", &refused);
    } catch (const Error&) {
      result.failedLine = steps.steps.at(refused).line;
      throw;
    }

    auto report = std::make_shared<KernelScheduleReport>();
    report->kernel = options.kernel;
    report->trace = schedule::traceText(steps);
    report->loopIr = loop::toString(scheduled);
    report->defaultLoopIr = loop::toString(*kernel);
    codegen::CodegenOptions codegenOptions;
    codegenOptions.target = *state_->target;
    codegenOptions.keepText = true;
    const auto jit = codegen::jitKernels({scheduled}, codegenOptions);
    report->llvmIrOptimized = jit->code().at(0).llvmIrOptimized;
    report->assembly = jit->code().at(0).assembly;

    if (options.repeat > 0) {
      const int threads =
          options.threads > 0 ? options.threads : runtime::ThreadPool::defaultThreadCount();
      if (!state_->trialPool || state_->trialPool->threadCount() != threads)
        state_->trialPool = std::make_unique<runtime::ThreadPool>(threads);
      runtime::ScopedCurrentThreadPool current(state_->trialPool.get());
      KernelArguments arguments(lowered, options.kernel);
      auto known = state_->defaultMedianMs.find(options.kernel);
      if (known == state_->defaultMedianMs.end()) {
        codegenOptions.keepText = false;
        const auto defaultJit = codegen::jitKernels({*kernel}, codegenOptions);
        const double ms = medianMs(defaultJit->function(options.kernel), arguments, options.repeat,
                                   options.cancel);
        known = state_->defaultMedianMs.emplace(options.kernel, ms).first;
      }
      report->defaultMedianMs = known->second;
      report->medianMs =
          medianMs(jit->function(options.kernel), arguments, options.repeat, options.cancel);
    }
    if (options.cancel && options.cancel->load())
      throw Error(ErrorKind::Cancelled, "cancelled");
    result.report = std::move(report);
  } catch (const Error& e) {
    result.failure = toFailure(e);
  } catch (const std::exception& e) {
    result.failure =
        Failure{"internal", std::string("internal error: ") + e.what(), {}, {}, {}, e.what()};
  }
  return result;
}

ScheduleSetFile readScheduleSet(const std::string& path) {
  ScheduleSetFile file;
  try {
    for (const schedule::Schedule& s : schedule::readFile(path).schedules)
      file.kernels.emplace_back(s.kernel, schedule::traceText(s));
  } catch (const Error& e) {
    file.failure = toFailure(e);
  }
  return file;
}

std::string formatScheduleSet(const std::vector<std::pair<std::string, std::string>>& kernels) {
  std::string text;
  for (const auto& [kernel, steps] : kernels) {
    text += "kernel " + kernel + ":\n";
    std::istringstream lines(steps);
    for (std::string line; std::getline(lines, line);)
      if (line.find_first_not_of(" \t") != std::string::npos)
        text += "  " + line.substr(line.find_first_not_of(" \t")) + "\n";
  }
  return text;
}

} // namespace lathe::api
