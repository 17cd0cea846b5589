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
    targets.push_back({known.label, known.text, known.description, host, {}, {}, 0, {}});
#if defined(__x86_64__)
    if (known.text != "llvm")
      continue;
    // Right after the host: the same triple at fixed x86-64 levels, e.g. to see what AVX-512
    // does to a kernel's assembly.
    targets.push_back({"x86-64-v3 (AVX2)",
                       "llvm -mcpu=x86-64-v3",
                       "this machine's triple, code limited to x86-64-v3 (AVX2, FMA)",
                       hostHas({"avx2", "fma"}),
                       {},
                       {},
                       0,
                       {}});
    targets.push_back({"x86-64-v4 (AVX-512)",
                       "llvm -mcpu=x86-64-v4",
                       "this machine's triple, code for x86-64-v4 (AVX-512); runs only on "
                       "CPUs that have it",
                       hostHas({"avx512f", "avx512bw", "avx512dq", "avx512vl"}),
                       {},
                       {},
                       0,
                       {}});
#endif
  }
  for (TargetSummary& t : targets) {
    const target::Target parsed = target::parseTarget(t.text);
    if (parsed.kind != target::Kind::Llvm) {
      t.triple = parsed.kind == target::Kind::Cuda ? "nvptx64-nvidia-cuda" : "";
      t.cpu = parsed.arch;
      continue;
    }
    if (!codegen::targetAvailable(parsed, &t.unavailable))
      continue;
    const target::Target resolved = codegen::resolveTarget(parsed);
    t.triple = resolved.triple;
    t.cpu = resolved.cpu;
    t.vectorBits = codegen::vectorBits(resolved);
  }
  return targets;
}

} // namespace lathe::api
