#include "engine/graph_passes/winograd_nchwc.h"

#include "engine/graph/op_table.h"
#include "engine/graph_passes/layout_nchwc.h"
#include "engine/support/checked_int.h"
#include "engine/support/winograd.h"

#include <unordered_map>

namespace lathe::passes {
namespace {

using graph::DType;
using graph::Node;
using graph::TensorData;
using graph::Value;
constexpr std::int64_t kBlock = kChannelBlock;
// Below this many tiles the transformed weights are reused too little (see winogradTileFor).
constexpr std::int64_t kMinTiles = 32;
// The smallest channel counts worth the two transforms: below them the multiplies saved are
// few against the transforms' passes over the input and the output.
constexpr std::int64_t kMinChannels = 32;

// A blocked 3x3 Conv with stride and dilation 1 and constant packed weights.
bool eligible(const Node& n) {
  if (n.domain() != graph::kLatheDomain || n.opType() != "ConvNCHWc" || !n.output(0) ||
      !n.input(0) || n.input(0)->type.rank() != 5 || // not an NCHW input
      !n.input(1) || !n.input(1)->isConstant() || n.input(1)->constant().isElided())
    return false;
  const auto& w = n.input(1)->constant();
  const auto& wd = w.dims();
  if (w.dtype() != DType::F32 || wd.size() != 6 || wd[2] != 3 || wd[3] != 3 || wd[4] != kBlock ||
      wd[5] != kBlock)
    return false;
  if (n.attrInts("strides", {1, 1}) != std::vector<std::int64_t>{1, 1} ||
      n.attrInts("dilations", {1, 1}) != std::vector<std::int64_t>{1, 1})
    return false;
  const Value* y = n.output(0);
  return y->type.isStatic() && y->type.rank() == 5 && n.group < 0;
}

// The packed 3x3 weights [M/16, C/16, 3, 3, 16, 16] as G g Gt: [M/16, C/16, a, a, 16, 16].
TensorData transformed(const TensorData& packed, const winograd::Transforms& t) {
  const auto& d = packed.dims();
  const std::int64_t blocks = d[0] * d[1], a = t.alpha, pairs = kBlock * kBlock;
  const auto from = packed.values<float>();
  std::vector<float> to(static_cast<std::size_t>(blocks * a * a * pairs));
  for (std::int64_t b = 0; b < blocks; ++b)
    for (std::int64_t p = 0; p < pairs; ++p) {
      double g[3][3], gt[6][3] = {};
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          g[i][j] = from[static_cast<std::size_t>((b * 9 + i * 3 + j) * pairs + p)];
      for (std::int64_t r = 0; r < a; ++r) // G g
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 3; ++k)
            gt[r][j] += t.g[r * 3 + k] * g[k][j];
      for (std::int64_t r = 0; r < a; ++r) // (G g) Gt
        for (std::int64_t c = 0; c < a; ++c) {
          double u = 0;
          for (int k = 0; k < 3; ++k)
            u += gt[r][k] * t.g[c * 3 + k];
          to[static_cast<std::size_t>(((b * a + r) * a + c) * pairs + p)] = static_cast<float>(u);
        }
    }
  return TensorData::fromValues(DType::F32, {d[0], d[1], a, a, kBlock, kBlock}, to);
}

} // namespace

std::int64_t winogradTileFor(std::int64_t images, std::int64_t inChannels, std::int64_t outChannels,
                             std::int64_t outH, std::int64_t outW) {
  if (inChannels < kMinChannels || outChannels < kMinChannels)
    return 0;
  for (std::int64_t m : {4, 2}) {
    const std::int64_t alpha = m + 2, tiles = images * ceilDivide(outH, m) * ceilDivide(outW, m);
    // Multiplies against the direct convolution's; at most half of them to pay for the
    // transforms.
    const double ratio = double(alpha * alpha * tiles) / double(9 * images * outH * outW);
    if (tiles >= kMinTiles && ratio <= 0.5)
      return m;
  }
  return 0;
}

bool winogradNchwc(graph::Graph& graph) {
  std::vector<Node*> convs;
  for (const auto& n : graph.nodes())
    if (eligible(*n))
      convs.push_back(n.get());
  // One transformed copy per weight tensor (a tensor shared by convs that pick different
  // tiles stays direct where it differs).
  std::unordered_map<const Value*, Value*> transformedWeights;
  std::vector<Node*> replaced;
  for (Node* n : convs) {
    const auto wd = n->input(1)->constant().dims();
    const auto yd = n->output(0)->type.staticDims();
    const std::int64_t m = winogradTileFor(yd[0], wd[1] * kBlock, wd[0] * kBlock, yd[2], yd[3]);
    if (m == 0)
      continue;
    Value*& u = transformedWeights[n->input(1)];
    if (u && u->constant().dims()[2] != m + 2)
      continue;
    if (!u)
      u = graph.addConstant(graph.uniqueName(n->input(1)->name() + "_winograd"),
                            transformed(n->input(1)->constant(), winograd::transforms(m)));
    std::vector<Value*> ins{n->input(0), u};
    if (n->input(2))
      ins.push_back(n->input(2));
    Node* c = graph.addNode("ConvWinogradNCHWc", ins,
                            {graph.uniqueName(n->output(0)->name() + "_winograd")},
                            std::string(graph::kLatheDomain));
    c->name = n->name;
    for (const char* key : {"pads", "auto_pad"})
      if (const graph::Attribute* a = n->findAttribute(key))
        c->attributes[key] = *a;
    c->attributes["tile"] = graph::Attribute{m};
    c->output()->type = n->output(0)->type;
    graph.swapOutputs(c, 0, n, 0);
    replaced.push_back(n);
  }
  if (replaced.empty())
    return false;
  graph.removeNodes(replaced);
  graph.sortTopologically();
  return true;
}

} // namespace lathe::passes
