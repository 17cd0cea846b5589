#include "engine/graph_passes/layout_nchwc.h"

#include "engine/graph/op_table.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace lathe::passes {
namespace {

using graph::DType;
using graph::Node;
using graph::TensorData;
using graph::Value;
constexpr std::int64_t B = kChannelBlock;

std::int64_t roundUp(std::int64_t c) {
  return (c + B - 1) / B * B;
}

// A static 4-D f32 value whose channels fill whole blocks, or nearly: rounded up to whole
// blocks they grow by at most half (24 channels take two blocks, the last one half empty).
// The padding channels then hold values nobody reads (see `zeroSafe`).
bool blockable(const Value* v) {
  if (!v || !v->type.isStatic() || v->type.rank() != 4 || v->type.dtype != DType::F32)
    return false;
  const std::int64_t c = v->type.staticDims()[1];
  return c > 0 && 2 * roundUp(c) <= 3 * c;
}

bool padded(const Value* v) {
  return v->type.staticDims()[1] % B != 0;
}

// Elementwise ops that keep the padding channels of a blocked value finite: those channels
// start as zeros (Conv weights and bias are padded with zeros) and each op may only map
// finite values to finite ones, so that the next Conv's zero weights cancel them.
bool zeroSafe(const Node& n) {
  static const std::set<std::string> safe{
      "Add", "Clip", "Elu",  "HardSigmoid", "HardSwish", "LeakyRelu", "Max", "Min",
      "Mul", "Neg",  "Relu", "Selu",        "Sigmoid",   "Sub",       "Tanh"};
  return n.domain().empty() && safe.count(n.opType()) > 0;
}

bool isScalar(const Value* v) {
  const auto count = v ? v->type.numElements() : std::nullopt;
  return count && *count == 1;
}

std::vector<std::int64_t> blockedDims(const Value* v) {
  const auto d = v->type.staticDims();
  return {d[0], roundUp(d[1]) / B, d[2], d[3], B};
}

// A depthwise Conv: one filter per channel, as many output channels as input channels.
bool isDepthwise(const Node& n) {
  const Value *x = n.input(0), *w = n.input(1);
  if (!x || !x->type.isStatic() || x->type.rank() != 4 || !w || !w->isConstant() ||
      w->constant().dims().size() != 4)
    return false;
  const std::int64_t C = x->type.staticDims()[1];
  const auto& wd = w->constant().dims();
  return C > 1 && n.attrInt("group", 1) == C && wd[0] == C && wd[1] == 1 && wd[2] > 1 && wd[3] > 1;
}

// A Conv whose few input channels (an image's three, say) are read in NCHW while its output
// is blocked: padded to a block, the input would multiply the Conv's work.
bool plainInput(const Node& n) {
  const Value* x = n.input(0);
  return x && x->type.isStatic() && x->type.rank() == 4 && x->type.dtype == DType::F32 &&
         x->type.staticDims()[1] < B && !blockable(x) && n.attrInt("group", 1) == 1;
}

bool eligibleConv(const Node& n) {
  if (!n.domain().empty() || n.opType() != "Conv" || !n.output(0))
    return false;
  if (n.attrInt("group", 1) != 1 && !isDepthwise(n))
    return false;
  const Value *x = n.input(0), *w = n.input(1), *b = n.input(2);
  if (!(blockable(x) || plainInput(n)) || !blockable(n.output(0)))
    return false;
  if (!w->isConstant() || w->constant().isElided() || w->constant().dtype() != DType::F32 ||
      w->constant().dims().size() != 4)
    return false;
  const auto& wd = w->constant().dims();
  if (b && (!b->isConstant() || b->constant().isElided() || b->constant().dtype() != DType::F32 ||
            b->constant().dims() != std::vector<std::int64_t>{wd[0]}))
    return false;
  // A kernel_shape that disagrees with the weights is refused by the NCHW lowering with a
  // clear message; leave such a Conv to it.
  if (n.hasAttribute("kernel_shape") &&
      n.attrInts("kernel_shape") != std::vector<std::int64_t>{wd[2], wd[3]})
    return false;
  return n.group < 0 && n.attrInts("dilations", {1, 1}).size() == 2 &&
         n.attrInts("strides", {1, 1}).size() == 2;
}

// An elementwise op that may follow blocked operands: one output of the shape of its
// operands, every operand either of that shape or a scalar.
bool follows(const Node& n, const std::unordered_set<const Value*>& candidates) {
  const graph::OpInfo* op = graph::findOp(n.domain(), n.opType());
  if (!op || op->fusion != graph::FusionRole::Elementwise || n.outputs().size() != 1 ||
      !blockable(n.output(0)) || n.group >= 0 || (padded(n.output(0)) && !zeroSafe(n)))
    return false;
  bool anyBlocked = false;
  for (const Value* in : n.inputs) {
    if (!in || isScalar(in))
      continue;
    if (!in->type.isStatic() || in->type.staticDims() != n.output(0)->type.staticDims())
      return false;
    anyBlocked = anyBlocked || candidates.count(in);
  }
  return anyBlocked;
}

// A global pool of a blocked value whose channels fill whole blocks: it pools the blocked
// value and hands on [N, C/16, 1, 1, 16], so that the chain's exit converts pooled values
// instead of whole planes.
bool poolsBlocked(const Node& n, const std::unordered_set<const Value*>& candidates) {
  if (!n.domain().empty() || (n.opType() != "GlobalAveragePool" && n.opType() != "GlobalMaxPool") ||
      n.group >= 0 || n.outputs().size() != 1 || !n.input(0) || !candidates.count(n.input(0)))
    return false;
  return blockable(n.input(0)) && !padded(n.input(0)) && blockable(n.output(0));
}

// A 2-D MaxPool, AveragePool or LpPool of a blocked value (no Indices output, a window of at
// least 2 x 2): it slides over one channel at a time, so it keeps the layout, and a chain goes
// on through it (ResNet's stem Conv and its pool join the chain after them; an Inception
// block's pooled branch stays blocked). Padding channels stay finite through a maximum or a
// mean of finite values; LpPool's powers might not, so it takes whole blocks only.
bool windowPoolsBlocked(const Node& n, const std::unordered_set<const Value*>& candidates) {
  const std::string& op = n.opType();
  if (!n.domain().empty() || (op != "MaxPool" && op != "AveragePool" && op != "LpPool") ||
      n.group >= 0 || n.outputs().size() != 1 || !n.output(0) || !n.input(0) ||
      !candidates.count(n.input(0)))
    return false;
  if (op == "LpPool" && (!blockable(n.input(0)) || padded(n.input(0))))
    return false;
  const std::vector<std::int64_t> kernel = n.attrInts("kernel_shape", {});
  return kernel.size() == 2 && kernel[0] > 1 && kernel[1] > 1 &&
         n.attrInts("strides", {1, 1}).size() == 2 && n.attrInts("dilations", {1, 1}).size() == 2 &&
         blockable(n.input(0)) && blockable(n.output(0));
}

// Components of candidate nodes joined by the values between them.
class Components {
public:
  int find(const Node* n) { return index(rootOf(n)); }
  void join(const Node* a, const Node* b) {
    const Node* ra = rootOf(a);
    const Node* rb = rootOf(b);
    if (ra != rb)
      parent_[ra] = rb;
  }

private:
  const Node* rootOf(const Node* n) {
    parent_.try_emplace(n, n);
    while (parent_.at(n) != n)
      n = parent_.at(n);
    return n;
  }
  int index(const Node* root) { return ids_.try_emplace(root, int(ids_.size())).first->second; }
  std::unordered_map<const Node*, const Node*> parent_;
  std::unordered_map<const Node*, int> ids_;
};

class Rewriter {
public:
  explicit Rewriter(graph::Graph& g) : g_(g) {}

  // NCHW -> [N, C/16, H, W, 16]: Reshape to [N, C/16, 16, H, W], then Transpose.
  Value* blocked(Value* v) {
    if (auto it = blocked_.find(v); it != blocked_.end())
      return it->second;
    const auto d = v->type.staticDims();
    Node* reshape = g_.addNode("Reshape", {v, shapeConstant({d[0], d[1] / B, B, d[2], d[3]})},
                               {g_.uniqueName(v->name() + "_split")});
    reshape->name = v->name() + "/to_nchwc";
    reshape->output()->type = graph::TensorType::of(v->type.dtype, {d[0], d[1] / B, B, d[2], d[3]});
    Node* t = g_.addNode("Transpose", {reshape->output()}, {g_.uniqueName(v->name() + "_nchwc")});
    t->name = v->name() + "/to_nchwc_t";
    t->attributes["perm"] = graph::Attribute{std::vector<std::int64_t>{0, 1, 3, 4, 2}};
    t->output()->type = graph::TensorType::of(v->type.dtype, blockedDims(v));
    return blocked_[v] = t->output();
  }

  // The blocked value back in NCHW, produced by a Reshape that then takes over `original`
  // (its name and uses) from `producer`.
  void unblock(Value* original, Node* producer) {
    Value* b = blocked_.at(original);
    const auto d = original->type.staticDims();
    Node* t = g_.addNode("Transpose", {b}, {g_.uniqueName(original->name() + "_unblocked")});
    t->name = original->name() + "/from_nchwc_t";
    t->attributes["perm"] = graph::Attribute{std::vector<std::int64_t>{0, 1, 4, 2, 3}};
    t->output()->type =
        graph::TensorType::of(original->type.dtype, {d[0], d[1] / B, B, d[2], d[3]});
    Node* reshape = g_.addNode("Reshape", {t->output(), shapeConstant(d)},
                               {g_.uniqueName(original->name() + "_placeholder")});
    reshape->name = original->name() + "/from_nchwc";
    reshape->output()->type = original->type;
    g_.swapOutputs(reshape, 0, producer, static_cast<std::size_t>(original->producerIndex()));
  }

  void conv(const Node& n) {
    const bool depthwise = isDepthwise(n), plain = plainInput(n);
    Value* x = plain ? n.input(0) : blocked(n.input(0));
    std::vector<Value*> ins{x, depthwise ? packedDepthwise(n.input(1))
                               : plain   ? packed(n.input(1), n.input(0)->type.staticDims()[1])
                                         : packed(n.input(1), B)};
    if (n.input(2))
      ins.push_back(paddedBias(n.input(2)));
    Node* c = g_.addNode(depthwise ? "DepthwiseConvNCHWc" : "ConvNCHWc", ins,
                         {g_.uniqueName(n.output(0)->name() + "_nchwc")},
                         std::string(graph::kLatheDomain));
    c->name = n.name;
    for (const char* key : {"strides", "pads", "dilations", "auto_pad", "kernel_shape"})
      if (const graph::Attribute* a = n.findAttribute(key))
        c->attributes[key] = *a;
    // The channel counts before padding, for the profiler's count of useful operations.
    const std::int64_t M = n.output(0)->type.staticDims()[1], C = n.input(0)->type.staticDims()[1];
    if (M % B != 0 || (!plain && C % B != 0))
      c->attributes["channels"] = graph::Attribute{std::vector<std::int64_t>{M, C}};
    c->output()->type = graph::TensorType::of(DType::F32, blockedDims(n.output(0)));
    blocked_[n.output(0)] = c->output();
  }

  // The weights [M, C, kh, kw] as [M'/16, C'/cb, kh, kw, cb, 16] (input channel, then output
  // channel, within the blocks), M' and C' rounded up to whole blocks with zeros, once per
  // weight tensor. Input blocks of cb = 16 channels, or one block of all C when the input
  // stays in NCHW (cb = C).
  Value* packed(Value* weights, std::int64_t cb) {
    if (auto it = packed_.find(weights); it != packed_.end())
      return it->second;
    const TensorData& w = weights->constant();
    const auto& d = w.dims(); // [M, C, kh, kw]
    const std::int64_t M = d[0], C = d[1], K = d[2] * d[3];
    const std::int64_t Mb = roundUp(M) / B, Cb = (C + cb - 1) / cb;
    const auto from = w.values<float>();
    std::vector<float> packed(static_cast<std::size_t>(Mb * Cb * K * cb * B), 0.0f);
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t k = 0; k < K; ++k)
          packed[static_cast<std::size_t>(((((m / B) * Cb + c / cb) * K + k) * cb + c % cb) * B +
                                          m % B)] = from[(m * C + c) * K + k];
    return packed_[weights] = g_.addConstant(
               g_.uniqueName(weights->name() + "_nchwc"),
               TensorData::fromValues(DType::F32, {Mb, Cb, d[2], d[3], cb, B}, packed));
  }

  // Depthwise weights [C, 1, kh, kw] as [C'/16, kh, kw, 16]: the 16 channels of a block
  // innermost, one vector a tap; C' rounded up to whole blocks with zeros.
  Value* packedDepthwise(Value* weights) {
    if (auto it = packed_.find(weights); it != packed_.end())
      return it->second;
    const TensorData& w = weights->constant();
    const auto& d = w.dims(); // [C, 1, kh, kw]
    const std::int64_t C = d[0], K = d[2] * d[3], Cb = roundUp(C) / B;
    const auto from = w.values<float>();
    std::vector<float> packed(static_cast<std::size_t>(Cb * K * B), 0.0f);
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t k = 0; k < K; ++k)
        packed[static_cast<std::size_t>(((c / B) * K + k) * B + c % B)] = from[c * K + k];
    return packed_[weights] =
               g_.addConstant(g_.uniqueName(weights->name() + "_nchwc"),
                              TensorData::fromValues(DType::F32, {Cb, d[2], d[3], B}, packed));
  }

  // The bias [M], with zeros for the padding channels when M is not whole blocks.
  Value* paddedBias(Value* bias) {
    const TensorData& b = bias->constant();
    const std::int64_t M = b.dims()[0];
    if (M % B == 0)
      return bias;
    if (auto it = packed_.find(bias); it != packed_.end())
      return it->second;
    const auto from = b.values<float>();
    std::vector<float> values(from.begin(), from.end());
    values.resize(static_cast<std::size_t>(roundUp(M)), 0.0f);
    return packed_[bias] = g_.addConstant(g_.uniqueName(bias->name() + "_nchwc"),
                                          TensorData::fromValues(DType::F32, {roundUp(M)}, values));
  }

  void pool(const Node& n) {
    Node* p = g_.addNode(n.opType() + "NCHWc", {blocked(n.input(0))},
                         {g_.uniqueName(n.output(0)->name() + "_nchwc")},
                         std::string(graph::kLatheDomain));
    p->name = n.name;
    for (const char* key : {"kernel_shape", "strides", "pads", "dilations", "auto_pad", "ceil_mode",
                            "count_include_pad", "p"})
      if (const graph::Attribute* a = n.findAttribute(key))
        p->attributes[key] = *a;
    p->output()->type = graph::TensorType::of(DType::F32, blockedDims(n.output(0)));
    blocked_[n.output(0)] = p->output();
  }

  void follower(const Node& n) {
    std::vector<Value*> ins;
    for (Value* in : n.inputs)
      ins.push_back(!in || isScalar(in) ? in : blocked(in));
    Node* f = g_.addNode(n.opType(), ins, {g_.uniqueName(n.output(0)->name() + "_nchwc")});
    f->name = n.name;
    f->attributes = n.attributes;
    f->output()->type = graph::TensorType::of(n.output(0)->type.dtype, blockedDims(n.output(0)));
    blocked_[n.output(0)] = f->output();
  }

private:
  Value* shapeConstant(const std::vector<std::int64_t>& dims) {
    return g_.addConstant(g_.uniqueName("nchwc_shape"),
                          TensorData::fromValues(DType::I64, {std::int64_t(dims.size())}, dims));
  }

  graph::Graph& g_;
  std::unordered_map<const Value*, Value*> blocked_, packed_;
};

} // namespace

bool layoutNchwc(graph::Graph& graph) {
  // Candidates in node order (the graph is topologically sorted).
  std::vector<Node*> candidates;
  std::unordered_set<const Node*> candidateSet;
  std::unordered_set<const Value*> candidateOutputs;
  for (const auto& n : graph.nodes())
    if (eligibleConv(*n) || follows(*n, candidateOutputs) || poolsBlocked(*n, candidateOutputs) ||
        windowPoolsBlocked(*n, candidateOutputs)) {
      candidates.push_back(n.get());
      candidateSet.insert(n.get());
      candidateOutputs.insert(n->output(0));
    }
  if (candidates.empty())
    return false;

  Components components;
  for (Node* n : candidates) {
    components.find(n);
    for (const Value* in : n->inputs)
      if (candidateOutputs.count(in))
        components.join(in->producer(), n);
  }
  // Per component: Convs, and the conversions into and out of the blocked layout.
  const auto uses = graph.computeUses();
  struct Count {
    int convs = 0;
    std::set<const Value*> in, out;
  };
  // (A component whose values enter or leave it with padding channels stays in NCHW: the
  // conversions only handle whole blocks.)
  std::map<int, Count> counts;
  for (Node* n : candidates) {
    const int id = components.find(n);
    Count& c = counts[id];
    const bool isConv = n->opType() == "Conv";
    c.convs += isConv ? 1 : 0;
    for (std::size_t i = isConv && plainInput(*n) ? 1 : 0; i < (isConv ? 1 : n->inputs.size());
         ++i) {
      const Value* in = n->input(i);
      if (in && !isScalar(in) &&
          (!candidateOutputs.count(in) || components.find(in->producer()) != id))
        c.in.insert(in);
    }
    const Value* out = n->output(0);
    bool outside = graph.isGraphOutput(out);
    if (auto it = uses.find(out); it != uses.end())
      for (const graph::Use& u : it->second)
        outside = outside || !candidateSet.count(u.node) || components.find(u.node) != id;
    if (outside)
      c.out.insert(out);
  }
  std::vector<Node*> converted;
  for (Node* n : candidates) {
    const Count& c = counts.at(components.find(n));
    const auto paddedValue = [](const Value* v) { return padded(v); };
    if (c.convs > 0 && c.convs >= 2 * static_cast<int>(c.in.size() + c.out.size()) &&
        std::none_of(c.in.begin(), c.in.end(), paddedValue) &&
        std::none_of(c.out.begin(), c.out.end(), paddedValue))
      converted.push_back(n);
  }
  if (converted.empty())
    return false;

  Rewriter rewrite(graph);
  for (Node* n : converted) {
    if (n->opType() == "Conv")
      rewrite.conv(*n);
    else if (n->opType() == "GlobalAveragePool" || n->opType() == "GlobalMaxPool" ||
             n->opType() == "MaxPool" || n->opType() == "AveragePool" || n->opType() == "LpPool")
      rewrite.pool(*n);
    else
      rewrite.follower(*n);
  }
  const std::unordered_set<const Node*> convertedSet(converted.begin(), converted.end());
  for (Node* n : converted) {
    Value* out = n->output(0);
    bool outside = graph.isGraphOutput(out);
    if (auto it = uses.find(out); it != uses.end())
      for (const graph::Use& u : it->second)
        outside = outside || !convertedSet.count(u.node);
    if (outside)
      rewrite.unblock(out, n);
  }
  graph.removeNodes(converted);
  graph.sortTopologically();
  return true;
}

} // namespace lathe::passes
