#include "engine/api/explain.h"

#include "engine/api/session.h"

#include <algorithm>

namespace lathe::api {

std::string Explanation::title() const {
  const std::string line = text.substr(0, text.find('\n'));
  return line.rfind("# ", 0) == 0 ? line.substr(2) : line;
}

const Explanation* findExplanation(const std::string& name, const std::string& kind) {
  for (const Explanation& e : explanations())
    if (e.name == name && (kind.empty() || e.kind == kind))
      return &e;
  return nullptr;
}

std::vector<const Explanation*> explanationsInOrder() {
  static const std::vector<std::string> stages = {"import",   "graph-passes",  "lowering",
                                                  "schedule", "llvm-ir",       "llvm-ir-optimised",
                                                  "assembly", "execution-plan"};
  std::vector<std::string> passes;
  for (const PassInfoSummary& p : defaultPipeline())
    if (std::find(passes.begin(), passes.end(), p.name) == passes.end())
      passes.push_back(p.name);
  const auto rank = [&](const Explanation& e) -> std::pair<int, std::size_t> {
    const std::vector<std::string>* order = e.kind == "stage"  ? &stages
                                            : e.kind == "pass" ? &passes
                                                               : nullptr;
    const int kind = e.kind == "stage" ? 0 : e.kind == "pass" ? 1 : 2;
    if (!order)
      return {kind, 0};
    const auto it = std::find(order->begin(), order->end(), e.name);
    return {kind, static_cast<std::size_t>(it - order->begin())};
  };
  std::vector<const Explanation*> out;
  for (const Explanation& e : explanations())
    out.push_back(&e);
  std::stable_sort(out.begin(), out.end(),
                   [&](const Explanation* a, const Explanation* b) { return rank(*a) < rank(*b); });
  return out;
}

} // namespace lathe::api
