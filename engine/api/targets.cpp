// The target picker's list: compiling for this machine with a few -mcpu levels, then the
// cross targets engine/target knows.

#include "engine/api/session.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/target/target.h"

namespace lathe::api {

namespace {
// Whether this CPU has every feature in `wanted` ("+avx2,+fma").
[[maybe_unused]] bool hostHas(std::initializer_list<const char*> wanted) {
  const std::string features = "," + codegen::hostCpuFeatures() + ",";
  for (const char* f : wanted)
    if (features.find(",+" + std::string(f) + ",") == std::string::npos)
      return false;
  return true;
}
} // namespace

std::vector<TargetSummary> knownTargets() {
  std::vector<TargetSummary> targets;
  for (const target::KnownTarget& known : target::knownTargets()) {
    const bool host = target::parseTarget(known.text).isHost();
    targets.push_back({known.label, known.text, known.description, host});
#if defined(__x86_64__)
    if (known.text != "llvm")
      continue;
    // Right after the host: the same triple at fixed x86-64 levels, e.g. to see what AVX-512
    // does to a kernel's assembly.
    targets.push_back({"x86-64-v3 (AVX2)", "llvm -mcpu=x86-64-v3",
                       "this machine's triple, code limited to x86-64-v3 (AVX2, FMA)",
                       hostHas({"avx2", "fma"})});
    targets.push_back({"x86-64-v4 (AVX-512)", "llvm -mcpu=x86-64-v4",
                       "this machine's triple, code for x86-64-v4 (AVX-512); runs only on "
                       "CPUs that have it",
                       hostHas({"avx512f", "avx512bw", "avx512dq", "avx512vl"})});
#endif
  }
  return targets;
}

} // namespace lathe::api
