#include "engine/graph_passes/layout_weights.h"

#include <cstring>

namespace lathe::passes {

bool layoutWeights(graph::Graph& graph) {
  bool changed = false;
  const auto uses = graph.computeUses();
  for (const auto& n : graph.nodes()) {
    if (!n->domain().empty() || n->opType() != "Gemm" || n->attrInt("transB", 0) == 0)
      continue;
    const graph::Value* b = n->input(1);
    if (!b || !b->isConstant() || b->constant().isElided() || b->constant().dims().size() != 2 ||
        graph.isGraphOutput(b))
      continue;
    auto it = uses.find(b);
    if (it == uses.end() || it->second.size() != 1)
      continue; // shared with another node: leave it as it is
    const graph::TensorData& data = b->constant();
    const std::int64_t rows = data.dims()[0], cols = data.dims()[1];
    const std::size_t size = graph::dtypeSize(data.dtype());
    auto bytes = std::make_shared<std::string>(data.byteSize(), '\0');
    const std::byte* from = data.data();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        std::memcpy(bytes->data() + (c * rows + r) * size, from + (r * cols + c) * size, size);
    graph::Value* t = graph.addConstant(graph.uniqueName(b->name() + "_t"),
                                        graph::TensorData(data.dtype(), {cols, rows}, bytes));
    n->inputs[1] = t;
    n->attributes["transB"] = graph::Attribute{std::int64_t{0}};
    changed = true;
  }
  if (changed)
    graph.pruneUnusedValues();
  return changed;
}

} // namespace lathe::passes
