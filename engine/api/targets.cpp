// The target picker's list: compiling for this machine with a few -mcpu levels, then the
// cross targets engine/target knows.

#include "engine/api/session.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/support/diagnostics.h"
#include "engine/target/target.h"

namespace lathe::api {

std::vector<TargetSummary> knownTargets() {
  std::vector<TargetSummary> targets;
  for (const target::KnownTarget& known : target::knownTargets()) {
    const bool host = codegen::runsOnHost(target::parseTarget(known.text));
    targets.push_back({known.label, known.text, known.description, host, {}, {}, 0, {}});
#if defined(__x86_64__)
    if (known.text != "llvm")
      continue;
    // Right after the host: the same triple at fixed x86-64 levels, e.g. to see what AVX-512
    // does to a kernel's assembly.
    targets.push_back({"x86-64-v3 (AVX2)",
                       "llvm -mcpu=x86-64-v3",
                       "this machine's triple, code limited to x86-64-v3 (AVX2, FMA)",
                       codegen::runsOnHost(target::parseTarget("llvm -mcpu=x86-64-v3")),
                       {},
                       {},
                       0,
                       {}});
    targets.push_back({"x86-64-v4 (AVX-512)",
                       "llvm -mcpu=x86-64-v4",
                       "this machine's triple, code for x86-64-v4 (AVX-512); runs only on "
                       "CPUs that have it",
                       codegen::runsOnHost(target::parseTarget("llvm -mcpu=x86-64-v4")),
                       {},
                       {},
                       0,
                       {}});
#endif
  }
  for (TargetSummary& t : targets) {
    const target::Target parsed = target::parseTarget(t.text);
    if (!codegen::targetAvailable(parsed, &t.unavailable))
      continue;
    const target::Target resolved = codegen::resolveTarget(parsed);
    t.triple = resolved.triple;
    t.cpu = resolved.cpu;
    t.vectorBits = codegen::vectorBits(resolved);
  }
  return targets;
}

bool runsInThisProcess(const std::string& text) {
  try {
    return codegen::runsOnHost(target::parseTarget(text));
  } catch (const Error&) {
    return false;
  }
}

bool isGpuTarget(const std::string& text) {
  try {
    return target::parseTarget(text).kind == target::Kind::Cuda;
  } catch (const Error&) {
    return false;
  }
}

ResolvedTarget resolveTargetText(const std::string& text) {
  try {
    const target::Target parsed = target::parseTarget(text);
    if (parsed.kind == target::Kind::Cuda || !codegen::targetAvailable(parsed, nullptr))
      return {parsed.text(), parsed.text()};
    const target::Target resolved = codegen::resolveTarget(parsed);
    return {parsed.text(), resolved.triple + ", cpu " + resolved.cpu + ", " +
                               std::to_string(codegen::vectorBits(resolved)) + "-bit vectors"};
  } catch (const Error&) {
    return {};
  }
}

} // namespace lathe::api
