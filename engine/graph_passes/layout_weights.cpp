#include "engine/graph_passes/layout_weights.h"

#include <algorithm>
#include <cstring>

namespace lathe::passes {
namespace {

using graph::DType;
using graph::Node;
using graph::TensorData;
using graph::Value;

// A Conv whose window covers its whole input, once (kernel = input extent, no padding, no
// dilation, one group, every output dim 1): per image, Y[m] = sum_k W[m, k] * X[k] over the
// input's C*H*W values, a fully connected layer written as a Conv.
bool wholeWindowConv(const Node& n) {
  if (!n.domain().empty() || n.opType() != "Conv" || !n.output(0) || n.attrInt("group", 1) != 1)
    return false;
  const Value *x = n.input(0), *w = n.input(1), *y = n.output(0);
  if (!x || !w || !x->type.isStatic() || !y->type.isStatic() || x->type.rank() < 3 ||
      y->type.rank() != x->type.rank() || x->type.dtype != DType::F32 || !w->isConstant() ||
      w->constant().isElided() || w->constant().dtype() != DType::F32 ||
      w->constant().dims().size() != x->type.rank())
    return false;
  const std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return false;
  for (std::int64_t v : n.attrInts("pads", {}))
    if (v != 0)
      return false;
  for (std::int64_t v : n.attrInts("dilations", {}))
    if (v != 1)
      return false;
  const auto xd = x->type.staticDims(), yd = y->type.staticDims();
  const auto& wd = w->constant().dims();
  if (wd[1] != xd[1] || yd[1] != wd[0] || yd[0] != xd[0] ||
      std::any_of(xd.begin(), xd.end(), [](std::int64_t d) { return d < 1; }) || wd[0] < 1)
    return false; // (empty ones stay Convs)
  for (std::size_t a = 2; a < xd.size(); ++a)
    if (wd[a] != xd[a] || yd[a] != 1)
      return false;
  return !n.hasAttribute("kernel_shape") ||
         n.attrInts("kernel_shape") == std::vector<std::int64_t>(wd.begin() + 2, wd.end());
}

Value* shapeConstant(graph::Graph& graph, const std::string& base,
                     const std::vector<std::int64_t>& dims) {
  return graph.addConstant(graph.uniqueName(base),
                           TensorData::fromValues(DType::I64, {std::int64_t(dims.size())}, dims));
}

// The Conv as Reshape(X) to [N, K], Gemm with W^T [K, M] (transposed here, so that its rows
// run along the output channels) and the bias, and a Reshape that takes over Y.
void convAsGemm(graph::Graph& graph, Node& n) {
  Value *x = n.input(0), *y = n.output(0);
  const auto xd = x->type.staticDims();
  const TensorData& w = n.input(1)->constant();
  const std::int64_t N = xd[0], M = w.dims()[0], K = w.numElements() / M;
  const auto from = w.values<float>();
  std::vector<float> t(static_cast<std::size_t>(K * M));
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t k = 0; k < K; ++k)
      t[static_cast<std::size_t>(k * M + m)] = from[static_cast<std::size_t>(m * K + k)];
  Value* wt = graph.addConstant(graph.uniqueName(n.input(1)->name() + "_t"),
                                TensorData::fromValues(DType::F32, {K, M}, t));
  Node* flat = graph.insertNodeBefore(&n, "Reshape", {x, shapeConstant(graph, "fc_shape", {N, K})},
                                      {graph.uniqueName(x->name() + "_rows")});
  flat->name = n.name + "/rows";
  flat->output()->type = graph::TensorType::of(DType::F32, {N, K});
  std::vector<Value*> ins{flat->output(), wt};
  if (n.input(2))
    ins.push_back(n.input(2));
  Node* gemm = graph.insertNodeBefore(&n, "Gemm", ins, {graph.uniqueName(y->name() + "_gemm")});
  gemm->name = n.name;
  gemm->output()->type = graph::TensorType::of(DType::F32, {N, M});
  Node* back = graph.insertNodeBefore(
      &n, "Reshape", {gemm->output(), shapeConstant(graph, "fc_shape", y->type.staticDims())},
      {graph.uniqueName(y->name() + "_placeholder")});
  back->name = n.name + "/planes";
  back->output()->type = y->type;
  graph.swapOutputs(back, 0, &n, 0);
}

} // namespace

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
  std::vector<Node*> convs;
  for (const auto& n : graph.nodes())
    if (wholeWindowConv(*n))
      convs.push_back(n.get());
  for (Node* n : convs)
    convAsGemm(graph, *n);
  if (!convs.empty())
    graph.removeNodes(convs);
  changed = changed || !convs.empty();
  if (changed)
    graph.pruneUnusedValues();
  return changed;
}

} // namespace lathe::passes
