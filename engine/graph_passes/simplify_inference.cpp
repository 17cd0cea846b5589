#include "engine/graph_passes/simplify_inference.h"

namespace lathe::passes {
namespace {

bool trainingModeOff(const graph::Node& dropout) {
  const graph::Value* mode = dropout.input(2);
  if (!mode)
    return true;
  return mode->isConstant() && !mode->constant().isElided() &&
         mode->constant().numElements() == 1 && mode->constant().elementAsInt(0) == 0;
}

// The permutation of a Transpose (its default reverses the axes), or empty when unknown.
std::vector<std::int64_t> permutation(const graph::Node& t) {
  const graph::Value* in = t.input(0);
  if (const graph::Attribute* a = t.findAttribute("perm"))
    return a->is<std::vector<std::int64_t>>() ? a->as<std::vector<std::int64_t>>()
                                              : std::vector<std::int64_t>{};
  if (!in || !in->type.hasRank())
    return {};
  std::vector<std::int64_t> reverse;
  for (std::size_t d = in->type.rank(); d-- > 0;)
    reverse.push_back(static_cast<std::int64_t>(d));
  return reverse;
}

// Transpose(Transpose(x, p1), p2) with p1[p2[i]] == i for all i is x itself. Importers that
// keep a model's NHWC edges wrap each NCHW op in a pair, so chains of such ops leave
// back-to-back inverse Transposes between them.
graph::Value* undoneTranspose(const graph::Node& n) {
  if (n.opType() != "Transpose" || !n.domain().empty() || !n.input(0))
    return nullptr;
  const graph::Node* first = n.input(0)->producer();
  if (!first || first->opType() != "Transpose" || !first->domain().empty() || !first->input(0))
    return nullptr;
  const std::vector<std::int64_t> p1 = permutation(*first), p2 = permutation(n);
  if (p1.empty() || p1.size() != p2.size())
    return nullptr;
  for (std::size_t i = 0; i < p2.size(); ++i) {
    const std::int64_t j = p2[i];
    if (j < 0 || static_cast<std::size_t>(j) >= p1.size() ||
        p1[static_cast<std::size_t>(j)] != static_cast<std::int64_t>(i))
      return nullptr;
  }
  return first->input(0);
}

} // namespace

bool simplifyForInference(graph::Graph& graph) {
  std::vector<graph::Node*> dead;
  const auto uses = graph.computeUses();
  bool changed = false;
  for (const auto& n : graph.nodes()) {
    graph::Value* source = undoneTranspose(*n);
    graph::Value* out = n->output(0);
    // A graph output keeps its producer (and its name).
    if (!source || !out || graph.isGraphOutput(out))
      continue;
    graph.replaceAllUsesWith(out, source);
    changed = true;
  }
  auto used = [&](const graph::Value* v) { return v && (uses.count(v) || graph.isGraphOutput(v)); };
  for (const auto& n : graph.nodes()) {
    const std::string& op = n->opType();
    if (!n->domain().empty() || (op != "Identity" && op != "Dropout"))
      continue;
    graph::Value* in = n->input(0);
    graph::Value* out = n->output(0);
    if (!in || !out)
      continue;
    // Dropout's mask is all-true at inference, but a used mask keeps the node, and so does
    // training mode (an input that is not a constant false).
    if (op == "Dropout" && n->outputs().size() > 1 && used(n->output(1)))
      continue;
    if (op == "Dropout" && !trainingModeOff(*n))
      continue;
    // A graph output that is also an input would lose its own name; keep such Identity.
    if (graph.isGraphOutput(out) &&
        (graph.isGraphOutput(in) || in->kind() == graph::ValueKind::Input))
      continue;
    if (graph.isGraphOutput(out)) {
      // The model's output keeps its name: the node producing `in` takes over `out`.
      graph::Node* producer = in->producer();
      if (!producer)
        continue; // a constant: the Identity stays
      graph.swapOutputs(producer, static_cast<std::size_t>(in->producerIndex()), n.get(), 0);
      graph.replaceAllUsesWith(in, out);
    } else {
      graph.replaceAllUsesWith(out, in);
    }
    dead.push_back(n.get());
  }
  graph.removeNodes(dead);
  return changed || !dead.empty();
}

} // namespace lathe::passes
