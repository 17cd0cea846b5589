#include "engine/graph_passes/fold_batch_norm.h"

#include <cmath>

namespace lathe::passes {
namespace {

using graph::DType;
using graph::Node;
using graph::TensorData;
using graph::Value;

bool isF32Constant(const Value* v) {
  return v && v->isConstant() && !v->constant().isElided() && v->constant().dtype() == DType::F32;
}

// Per-channel multiplier and offset of an inference BatchNormalization:
// y = x * scale[c] + shift[c].
struct ChannelAffine {
  std::vector<float> scale, shift;
};

std::optional<ChannelAffine> batchNormAffine(const Node& bn) {
  for (std::size_t i = 1; i < 5; ++i)
    if (!isF32Constant(bn.input(i)) || bn.input(i)->constant().dims().size() != 1)
      return std::nullopt;
  const auto gamma = bn.input(1)->constant().values<float>();
  const auto beta = bn.input(2)->constant().values<float>();
  const auto mean = bn.input(3)->constant().values<float>();
  const auto var = bn.input(4)->constant().values<float>();
  const std::size_t channels = gamma.size();
  if (beta.size() != channels || mean.size() != channels || var.size() != channels)
    return std::nullopt;
  const float eps = bn.attrFloat("epsilon", 1e-5f);
  ChannelAffine a;
  for (std::size_t c = 0; c < channels; ++c) {
    const float s = gamma[c] / std::sqrt(var[c] + eps);
    a.scale.push_back(s);
    a.shift.push_back(beta[c] - mean[c] * s);
  }
  return a;
}

Value* newConstant(graph::Graph& g, const std::string& base, const std::vector<std::int64_t>& dims,
                   const std::vector<float>& values) {
  return g.addConstant(g.uniqueName(base), TensorData::fromValues(DType::F32, dims, values));
}

// Conv: W [M, C/g, k...] scaled per output channel m; bias b' = b*s + shift.
bool foldIntoConv(graph::Graph& g, Node& conv, const ChannelAffine& a) {
  Value* w = conv.input(1);
  Value* b = conv.input(2);
  if (!isF32Constant(w) || (b && !isF32Constant(b)))
    return false;
  const auto& dims = w->constant().dims();
  if (dims.empty() || dims[0] != static_cast<std::int64_t>(a.scale.size()))
    return false;
  const auto wv = w->constant().values<float>();
  const std::size_t perChannel = wv.size() / a.scale.size();
  std::vector<float> scaled(wv.begin(), wv.end());
  for (std::size_t m = 0; m < a.scale.size(); ++m)
    for (std::size_t k = 0; k < perChannel; ++k)
      scaled[m * perChannel + k] *= a.scale[m];
  std::vector<float> bias(a.shift);
  if (b) {
    const auto bv = b->constant().values<float>();
    if (bv.size() != bias.size())
      return false;
    for (std::size_t m = 0; m < bias.size(); ++m)
      bias[m] += bv[m] * a.scale[m];
  }
  conv.inputs.resize(3);
  conv.inputs[1] = newConstant(g, w->name() + "_bn", dims, scaled);
  conv.inputs[2] = newConstant(g, (b ? b->name() : conv.output()->name() + "_bias") + "_bn",
                               {static_cast<std::int64_t>(bias.size())}, bias);
  return true;
}

// Gemm: Y = alpha*A'B' + beta*C with BN over Y's columns. B' columns are scaled and C is
// rebuilt as a per-column bias with beta = 1.
bool foldIntoGemm(graph::Graph& g, Node& gemm, const ChannelAffine& a) {
  Value* bMat = gemm.input(1);
  Value* c = gemm.input(2);
  if (!isF32Constant(bMat) || (c && !isF32Constant(c)) || bMat->constant().dims().size() != 2)
    return false;
  const bool transB = gemm.attrInt("transB", 0) != 0;
  const auto& dims = bMat->constant().dims();
  const std::size_t cols = a.scale.size();
  const std::int64_t n = transB ? dims[0] : dims[1];
  if (n != static_cast<std::int64_t>(cols))
    return false;
  const auto bv = bMat->constant().values<float>();
  std::vector<float> scaled(bv.begin(), bv.end());
  for (std::size_t i = 0; i < scaled.size(); ++i)
    scaled[i] *= a.scale[transB ? i / dims[1] : i % dims[1]];
  const float beta = gemm.attrFloat("beta", 1.0f);
  std::vector<float> bias(cols, 0.0f);
  if (c) {
    const TensorData& cd = c->constant();
    const auto cv = cd.values<float>();
    // Only biases that are the same for every row: scalar, [N] or [1, N].
    const bool rowInvariant =
        cv.size() == 1 || (cv.size() == cols && (cd.dims().size() == 1 || cd.dims()[0] == 1));
    if (!rowInvariant)
      return false;
    for (std::size_t j = 0; j < cols; ++j)
      bias[j] = beta * cv[cv.size() == 1 ? 0 : j];
  }
  for (std::size_t j = 0; j < cols; ++j)
    bias[j] = bias[j] * a.scale[j] + a.shift[j];
  gemm.inputs.resize(3);
  gemm.inputs[1] = newConstant(g, bMat->name() + "_bn", dims, scaled);
  gemm.inputs[2] = newConstant(g, (c ? c->name() : gemm.output()->name() + "_bias") + "_bn",
                               {static_cast<std::int64_t>(cols)}, bias);
  gemm.attributes["beta"] = graph::Attribute{1.0f};
  return true;
}

} // namespace

bool foldBatchNorm(graph::Graph& graph) {
  const auto uses = graph.computeUses();
  std::vector<Node*> dead;
  for (const auto& nptr : graph.nodes()) {
    Node& bn = *nptr;
    if (bn.opType() != "BatchNormalization" || !bn.domain().empty() ||
        bn.attrInt("training_mode", 0) != 0)
      continue;
    // Extra outputs (running stats) only exist in training mode; be safe anyway.
    bool extraOutputs = false;
    for (std::size_t i = 1; i < bn.outputs().size(); ++i)
      extraOutputs = extraOutputs || bn.outputs()[i];
    Value* x = bn.input(0);
    Value* y = bn.output(0);
    if (extraOutputs || !x || !y || !x->producer() || graph.isGraphOutput(x))
      continue;
    auto xUses = uses.find(x);
    if (xUses == uses.end() || xUses->second.size() != 1)
      continue; // the un-normalised value is read elsewhere too
    Node& producer = *x->producer();
    if (!producer.domain().empty() || producer.outputs().size() != 1)
      continue;
    const auto affine = batchNormAffine(bn);
    if (!affine)
      continue;
    bool folded = false;
    if (producer.opType() == "Conv")
      folded = foldIntoConv(graph, producer, *affine);
    else if (producer.opType() == "Gemm")
      folded = foldIntoGemm(graph, producer, *affine);
    if (!folded)
      continue;
    // The producer now computes the normalised value. Readers of the BN output read the
    // producer's value instead; a graph output keeps its name by moving to the producer.
    if (graph.isGraphOutput(y))
      graph.swapOutputs(&producer, 0, &bn, 0);
    else
      graph.replaceAllUsesWith(y, x);
    dead.push_back(&bn);
    graph.pruneUnusedValues(); // free the replaced weights now, not after all folds
  }
  graph.removeNodes(dead); // also drops the BN parameters and old weights left unused
  return !dead.empty();
}

} // namespace lathe::passes
