#include "engine/profiler/kernel_flops.h"

#include "engine/graph/op_table.h"

#include <unordered_map>

namespace lathe::profiler {

namespace {

bool staticShape(const graph::Value* v) {
  return v && v->type.isStatic();
}

double product(const std::vector<std::int64_t>& dims, std::size_t from = 0) {
  double n = 1;
  for (std::size_t i = from; i < dims.size(); ++i)
    n *= static_cast<double>(dims[i]);
  return n;
}

} // namespace

double estimateNodeFlops(const graph::Node& node) {
  if ((!node.domain().empty() && node.domain() != graph::kLatheDomain) || node.outputs().empty())
    return 0;
  const std::string& op = node.opType();
  const graph::Value* a = node.input(0);
  const graph::Value* b = node.input(1);
  const graph::Value* y = node.output(0);
  if (!staticShape(a) || !staticShape(b) || !staticShape(y))
    return 0;
  const std::vector<std::int64_t> as = a->type.staticDims(), bs = b->type.staticDims(),
                                  ys = y->type.staticDims();
  if (op == "Conv") // each output element: C/group x kernel window MACs (W is [M, C/g, k...])
    return 2 * product(ys) * product(bs, 1);
  // W packed as [M/16, C/16, k..., 16, 16], or [C/16, k..., 16] when depthwise
  if ((op == "ConvNCHWc" || op == "DepthwiseConvNCHWc") && !bs.empty() && ys.size() == 5) {
    double flops = 2 * product(ys) * product(bs, 1) / static_cast<double>(bs.back());
    // Padded channel blocks do work nobody reads: count the channels the model has.
    const std::vector<std::int64_t> channels = node.attrInts("channels", {});
    if (channels.size() == 2 && channels[0] > 0 && channels[1] > 0) {
      flops *= static_cast<double>(channels[0]) / static_cast<double>(ys[1] * ys[4]);
      if (op == "ConvNCHWc" && bs.size() == 6 && as.size() == 5)
        flops *= static_cast<double>(channels[1]) / static_cast<double>(as[1] * as[4]);
    }
    return flops;
  }
  // The direct convolution's count (W transformed to [M/16, C/16, a, a, 16, 16], a 3x3
  // kernel): the rate then compares with the direct kernels'.
  if (op == "ConvWinogradNCHWc" && bs.size() == 6)
    return 2 * product(ys) * static_cast<double>(bs[1] * bs[4]) * 9;
  if (op == "ConvTranspose") // each input element: M/group x kernel window MACs
    return 2 * product(as) * product(bs, 1);
  if (op == "MatMul" && !as.empty())
    return 2 * product(ys) * static_cast<double>(as.back());
  if (op == "Gemm" && as.size() == 2)
    return 2 * product(ys) * static_cast<double>(node.attrInt("transA", 0) ? as[0] : as[1]);
  return 0;
}

std::vector<double> estimateCallFlops(const graph::Graph& graph,
                                      const std::vector<std::vector<std::string>>& callNodes) {
  std::unordered_map<std::string, const graph::Node*> byName;
  for (const auto& node : graph.nodes())
    if (!node->name.empty())
      byName.emplace(node->name, node.get());
  std::vector<double> flops;
  for (const std::vector<std::string>& nodes : callNodes) {
    double f = 0;
    for (const std::string& name : nodes)
      if (auto it = byName.find(name); it != byName.end())
        f += estimateNodeFlops(*it->second);
    flops.push_back(f);
  }
  return flops;
}

} // namespace lathe::profiler
