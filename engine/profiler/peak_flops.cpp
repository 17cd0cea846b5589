#include "engine/profiler/peak_flops.h"

#include "engine/runtime/thread_pool.h"
#include "engine/support/timer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace lathe::profiler {

namespace {

// Enough independent accumulators to cover FMA latency (4 cycles) on two ports.
constexpr int kChains = 12;
constexpr std::int64_t kIterations = 1 << 19;
constexpr int kTrials = 5;

// x = x * a + b never overflows or goes denormal: it converges to b / (1 - a) = 1.
constexpr float kA = 0.999f, kB = 0.001f;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float chainsAvx512(std::int64_t iterations, float seed) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k)
    acc[k] = _mm512_set1_ps(seed + static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(kA), b = _mm512_set1_ps(kB);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < kChains; ++k)
      acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  __m512 sum = acc[0];
  for (int k = 1; k < kChains; ++k)
    sum = _mm512_add_ps(sum, acc[k]);
  alignas(64) float lanes[16]; // not _mm512_reduce_add_ps: GCC 12 warns inside it
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes)
    total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float chainsAvx2(std::int64_t iterations, float seed) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k)
    acc[k] = _mm256_set1_ps(seed + static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(kA), b = _mm256_set1_ps(kB);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < kChains; ++k)
      acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  __m256 sum = acc[0];
  for (int k = 1; k < kChains; ++k)
    sum = _mm256_add_ps(sum, acc[k]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes)
    total += v;
  return total;
}
#endif

float chainsScalar(std::int64_t iterations, float seed) {
  float acc[kChains];
  for (int k = 0; k < kChains; ++k)
    acc[k] = seed + static_cast<float>(k);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < kChains; ++k)
      acc[k] = std::fma(acc[k], kA, kB);
  float total = 0;
  for (float v : acc)
    total += v;
  return total;
}

enum class Isa { Avx512, Avx2, Scalar };

Isa hostIsa() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return Isa::Avx2;
#endif
  return Isa::Scalar;
}

int lanesOf(Isa isa) {
  return isa == Isa::Avx512 ? 16 : isa == Isa::Avx2 ? 8 : 1;
}

float runChains(Isa isa, std::int64_t iterations, float seed) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512)
    return chainsAvx512(iterations, seed);
  if (isa == Isa::Avx2)
    return chainsAvx2(iterations, seed);
#endif
  return chainsScalar(iterations, seed);
}

std::atomic<float> gSink{0}; // keeps the chains' results alive

double measure(int threads) {
  const Isa isa = hostIsa();
  // The scalar fallback is slow per iteration; keep it to a few milliseconds too.
  const std::int64_t iterations = isa == Isa::Scalar ? kIterations / 8 : kIterations;
  runtime::ThreadPool pool(threads);
  const int n = pool.threadCount();
  double best = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    Stopwatch watch;
    pool.parallelFor(n, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t)
        gSink.store(runChains(isa, iterations, static_cast<float>(t)), std::memory_order_relaxed);
    });
    const double seconds = watch.elapsedMs() * 1e-3;
    const double flops = 2.0 * kChains * lanesOf(isa) * static_cast<double>(iterations) * n;
    if (seconds > 0)
      best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}

} // namespace

double measurePeakGflops(int threads) {
  static std::mutex mutex;
  static std::map<int, double> cache;
  const int n = threads > 0 ? threads : runtime::ThreadPool::defaultThreadCount();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(n);
  if (it == cache.end())
    it = cache.emplace(n, measure(n)).first;
  return it->second;
}

const char* peakFlopsIsa() {
  switch (hostIsa()) {
  case Isa::Avx512:
    return "avx512";
  case Isa::Avx2:
    return "avx2";
  case Isa::Scalar:
    break;
  }
  return "scalar";
}

} // namespace lathe::profiler
