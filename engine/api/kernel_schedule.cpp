// Session::tryKernelSchedule: one kernel, rescheduled, compiled alone and timed next to the
// default, on the model's own weights and random activations.
#include "engine/api/session_state.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/driver/kernel_trial.h"
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
          driver::lowerModel(*state_->folded, *state_->target, nullptr));
    const lowering::LoweredModel& lowered = *state_->defaultLowered;
    const auto kernel =
        std::find_if(lowered.kernels.begin(), lowered.kernels.end(),
                     [&](const loop::Kernel& k) { return k.name == options.kernel; });
    if (kernel == lowered.kernels.end())
      throw Error(ErrorKind::Invalid, "there is no kernel named '" + options.kernel + "'");
    // The steps replay on the nest as lowered (a whole trace, like a schedule file's); the
    // default they are timed against is that nest with its default trace.
    const loop::Kernel& naive =
        lowered.unscheduledKernel(static_cast<std::size_t>(kernel - lowered.kernels.begin()));

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
      scheduled = schedule::apply(naive, steps, "steps", &refused);
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
      driver::KernelArguments arguments(lowered, options.kernel);
      auto known = state_->defaultMedianMs.find(options.kernel);
      if (known == state_->defaultMedianMs.end()) {
        codegenOptions.keepText = false;
        const auto defaultJit = codegen::jitKernels({*kernel}, codegenOptions);
        const double ms = driver::medianKernelMs(defaultJit->function(options.kernel), arguments,
                                                 options.repeat, options.cancel);
        known = state_->defaultMedianMs.emplace(options.kernel, ms).first;
      }
      report->defaultMedianMs = known->second;
      report->medianMs = driver::medianKernelMs(jit->function(options.kernel), arguments,
                                                options.repeat, options.cancel);
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

ScheduleSetFile parseScheduleSet(const std::string& text) {
  ScheduleSetFile set;
  try {
    for (const schedule::Schedule& s : schedule::parseText(text, "schedule").schedules)
      set.kernels.emplace_back(s.kernel, schedule::traceText(s));
  } catch (const Error& e) {
    set.failure = toFailure(e);
  }
  return set;
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
