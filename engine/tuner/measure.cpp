#include "engine/tuner/measure.h"

#include "engine/codegen/llvm/compiler.h"
#include "engine/driver/kernel_trial.h"
#include "engine/runtime/thread_pool.h"
#include "engine/runtime/timing_stats.h"
#include "engine/support/diagnostics.h"
#include "engine/support/timer.h"
#include "engine/tuner/producers.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace lathe::tuner {
namespace {

// What the child writes back: fixed-size, so a short read means the child died writing.
struct ChildReport {
  double medianMs = 0, p10Ms = 0, p90Ms = 0, defaultMedianMs = 0;
  char error[512] = {};
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return v[std::min(i, v.size() - 1)];
}

// Bytes to touch between timed calls so that the caches no longer hold the kernel's weights
// and inputs: twice the last-level cache sysfs reports, within [8, 64] MiB.
std::size_t flushBytes() {
  std::size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty())
      continue;
    std::size_t value = std::strtoull(text.c_str(), nullptr, 10);
    if (text.back() == 'K')
      value <<= 10;
    else if (text.back() == 'M')
      value <<= 20;
    largest = std::max(largest, value);
  }
  return std::clamp<std::size_t>(2 * largest, std::size_t{8} << 20, std::size_t{64} << 20);
}

// A model runs each kernel once, on weights that have left the caches since the last run
// (and inputs fresh from the kernel before): timing the same call in a hot loop favours
// variants that only win when everything is cached. Each timed call therefore starts after
// the caches were flushed (as TVM's enable_cpu_cache_flush does); the flush is not timed.
// The candidate's calls alternate with the default's, so that what the machine does
// meanwhile (a shared host, a compile on the other core) falls on both alike rather than
// on whichever ran second.
struct PairedTimes {
  std::vector<double> candidate, reference;
};
PairedTimes timeCalls(codegen::KernelFunction candidate, driver::KernelArguments& candidateArgs,
                      codegen::KernelFunction reference, driver::KernelArguments& referenceArgs,
                      int repeat, std::vector<unsigned char>& flush,
                      const std::function<void(driver::KernelArguments&)>& before) {
  candidate(candidateArgs.args()); // warm-up: code paged in, pool threads started
  reference(referenceArgs.args());
  PairedTimes ms;
  const auto timed = [&](codegen::KernelFunction f, driver::KernelArguments& args) {
    for (std::size_t i = 0; i < flush.size(); i += 64)
      flush[i] = static_cast<unsigned char>(flush[i] + 1);
    before(args);
    Stopwatch watch;
    f(args.args());
    return watch.elapsedMs();
  };
  for (int r = 0; r < repeat; ++r) {
    // Which goes first alternates too: a call right after the flush pays for the same
    // cold start either way, but not always the same one.
    if (r % 2 == 0) {
      ms.candidate.push_back(timed(candidate, candidateArgs));
      ms.reference.push_back(timed(reference, referenceArgs));
    } else {
      ms.reference.push_back(timed(reference, referenceArgs));
      ms.candidate.push_back(timed(candidate, candidateArgs));
    }
  }
  return ms;
}

// The first difference between the outputs of two runs, or nothing.
std::string compareOutputs(const loop::Kernel& kernel, driver::KernelArguments& reference,
                           driver::KernelArguments& candidate, const MeasureOptions& options) {
  const std::size_t first = kernel.inputs.size();
  for (std::size_t o = 0; o < kernel.outputs.size(); ++o) {
    const auto a = reference.buffer(first + o);
    const auto b = candidate.buffer(first + o);
    if (kernel.outputs[o].elementType().toString() == "f32") {
      const std::size_t n = a.size() / 4;
      const auto element = [](const auto& bytes, std::size_t i) {
        float v;
        std::memcpy(&v, bytes.data() + i * 4, 4);
        return v;
      };
      // Rounding follows the size of what was summed, not of each result: a small element
      // made by cancelling large terms (Winograd's transforms) moves by as much as the
      // output's largest ones when the order of the sums changes.
      double largest = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (std::isfinite(element(a, i)))
          largest = std::max(largest, std::fabs(double(element(a, i))));
      for (std::size_t i = 0; i < n; ++i) {
        const float x = element(a, i), y = element(b, i);
        const bool same = (std::isnan(x) && std::isnan(y)) || x == y ||
                          std::fabs(double(y) - double(x)) <=
                              options.atol + options.rtol * (std::fabs(double(x)) + largest);
        if (!same)
          return "wrong result: output " + std::to_string(o) + " element " + std::to_string(i) +
                 " is " + std::to_string(y) + ", the default gives " + std::to_string(x);
      }
    } else if (a.size() != b.size() || std::memcmp(a.data(), b.data(), a.size()) != 0) {
      return "wrong result: output " + std::to_string(o) + " differs from the default's";
    }
  }
  return {};
}

[[noreturn]] void runChild(int fd, const lowering::LoweredModel& lowered,
                           const loop::Kernel& reference, const Baseline* prepared,
                           const loop::Kernel& candidate, const target::Target& target,
                           const MeasureOptions& options) {
  // Generated code that faults ends the child by its signal, whatever handlers the parent
  // installed (a sanitizer's, Qt's), so the parent can tell a crash from an error.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction plain{};
    plain.sa_handler = SIG_DFL;
    ::sigaction(sig, &plain, nullptr);
  }
  ChildReport report;
  try {
    runtime::ThreadPool pool(options.threads);
    runtime::ScopedCurrentThreadPool current(&pool);
    std::unique_ptr<Baseline> compiledHere;
    if (!prepared)
      compiledHere = std::make_unique<Baseline>(lowered, reference, target, options.warmInputs);
    const Baseline& baseline = prepared ? *prepared : *compiledHere;
    const std::vector<ProducerCall>& producers = baseline.producers();
    codegen::CodegenOptions codegen;
    codegen.target = target;
    const auto candidateCode = codegen::jitKernels({candidate}, codegen);
    driver::KernelArguments referenceArgs(lowered, reference.name);
    driver::KernelArguments candidateArgs(lowered, reference.name);
    const auto f = baseline.function(reference.name);
    const auto g = candidateCode->function(candidate.name);
    f(referenceArgs.args());
    g(candidateArgs.args());
    const std::string wrong = compareOutputs(reference, referenceArgs, candidateArgs, options);
    if (!wrong.empty())
      throw Error(ErrorKind::Invalid, wrong);
    // Each producer writes its outputs that the kernel reads into the kernel's buffers.
    std::vector<driver::KernelArguments> producerArgs;
    for (const ProducerCall& p : producers)
      producerArgs.emplace_back(lowered, lowered.calls[p.call]);
    const auto writeInputs = [&](driver::KernelArguments& args) {
      for (std::size_t i = 0; i < producers.size(); ++i) {
        std::vector<void*> pointers(producerArgs[i].args(),
                                    producerArgs[i].args() + producerArgs[i].size());
        for (const auto& [out, in] : producers[i].feeds)
          pointers[out] = args.args()[in];
        baseline.function(lowered.calls[producers[i].call].kernel)(pointers.data());
      }
    };
    std::vector<unsigned char> flush(options.flushCaches ? flushBytes() : 0);
    const PairedTimes paired =
        timeCalls(g, candidateArgs, f, referenceArgs, options.repeat, flush, writeInputs);
    const std::vector<double>& times = paired.candidate;
    const std::vector<double>& defaults = paired.reference;
    report.medianMs = runtime::computeTimingStats(times).median;
    report.p10Ms = percentile(times, 0.1);
    report.p90Ms = percentile(times, 0.9);
    report.defaultMedianMs = runtime::computeTimingStats(defaults).median;
  } catch (const std::exception& e) {
    std::strncpy(report.error, e.what(), sizeof report.error - 1);
  }
  const char* p = reinterpret_cast<const char*>(&report);
  std::size_t left = sizeof report;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n <= 0)
      break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::_exit(0); // no destructors of the parent's objects, no atexit handlers
}

} // namespace

Baseline::Baseline(const lowering::LoweredModel& lowered, const loop::Kernel& reference,
                   const target::Target& target, bool warmInputs)
    : reference_(&reference),
      producers_(warmInputs ? producersOf(lowered, reference.name) : std::vector<ProducerCall>{}) {
  // The default kernel and the producers of its inputs (as the model compiled them) in one
  // module.
  std::vector<loop::Kernel> kernels{reference};
  for (const ProducerCall& p : producers_) {
    const std::string& name = lowered.calls[p.call].kernel;
    if (std::none_of(kernels.begin(), kernels.end(),
                     [&](const loop::Kernel& k) { return k.name == name; }))
      kernels.push_back(*std::find_if(lowered.kernels.begin(), lowered.kernels.end(),
                                      [&](const loop::Kernel& k) { return k.name == name; }));
  }
  codegen::CodegenOptions codegen;
  codegen.target = target;
  code_ = codegen::jitKernels(kernels, codegen);
}

Baseline::~Baseline() = default;

codegen::KernelFunction Baseline::function(const std::string& name) const {
  return code_->function(name);
}

namespace {

Measurement measureWith(const lowering::LoweredModel& lowered, const loop::Kernel& reference,
                        const Baseline* prepared, const loop::Kernel& candidate,
                        const target::Target& target, const MeasureOptions& options) {
  Measurement m;
  int fds[2];
  if (::pipe(fds) != 0) {
    m.error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return m;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    m.error = std::string("cannot fork: ") + std::strerror(errno);
    return m;
  }
  if (pid == 0) {
    ::close(fds[0]);
    runChild(fds[1], lowered, reference, prepared, candidate, target, options);
  }
  ::close(fds[1]);
  ChildReport report;
  std::size_t got = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(options.timeoutSeconds * 1000));
  bool timedOut = false;
  while (got < sizeof report) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timedOut = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long>(left, 1000)));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      continue;
    const ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&report) + got, sizeof report - got);
    if (n <= 0)
      break; // the child is gone
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  if (timedOut)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) {
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %g s", options.timeoutSeconds);
    m.error = text;
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    m.error =
        "crashed (signal " + std::to_string(sig) + (name ? std::string(", SIG") + name : "") + ")";
  } else if (got < sizeof report) {
    m.error = "the measuring process exited without a result (status " +
              std::to_string(WEXITSTATUS(status)) + ")";
  } else if (report.error[0]) {
    m.error = report.error;
  } else {
    m.medianMs = report.medianMs;
    m.p10Ms = report.p10Ms;
    m.p90Ms = report.p90Ms;
    m.defaultMedianMs = report.defaultMedianMs;
  }
  return m;
}

} // namespace

Measurement measureInChild(const lowering::LoweredModel& lowered, const loop::Kernel& reference,
                           const loop::Kernel& candidate, const target::Target& target,
                           const MeasureOptions& options) {
  return measureWith(lowered, reference, nullptr, candidate, target, options);
}

Measurement measureInChild(const lowering::LoweredModel& lowered, const Baseline& baseline,
                           const loop::Kernel& candidate, const target::Target& target,
                           const MeasureOptions& options) {
  return measureWith(lowered, baseline.reference(), &baseline, candidate, target, options);
}

Measurement lessFavourable(const Measurement& a, const Measurement& b) {
  if (!a.ok())
    return a;
  if (!b.ok())
    return b;
  const auto ratio = [](const Measurement& m) {
    return m.defaultMedianMs > 0 ? m.medianMs / m.defaultMedianMs : m.medianMs;
  };
  return ratio(b) > ratio(a) ? b : a;
}

} // namespace lathe::tuner
