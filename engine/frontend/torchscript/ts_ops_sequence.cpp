// Sequence models' aten ops: the LSTM and scaled dot-product attention.
#include "engine/frontend/torchscript/ts_translate.h"

#include <cmath>
#include <limits>

namespace lathe::frontend::torchscript {
namespace {

using graph::Attribute;
using graph::Value;

Attribute ints(std::vector<std::int64_t> v) {
  return Attribute{std::move(v)};
}
Attribute i64(std::int64_t v) {
  return Attribute{v};
}

} // namespace

// aten::lstm(input, [h0, c0], params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first): one ONNX LSTM per layer (bidirectional when the module is), each reading the
// last one's output; params hold w_ih, w_hh, b_ih, b_hh per layer and direction. h0 / c0 and
// the final states are [layers * directions, batch, hidden], layer-major.
void lstm(Translator& t) {
  if (!t.constBool(3, "has_biases"))
    t.unsupported("LSTMs without biases");
  const std::int64_t layers = t.constInt(4, "num_layers");
  const std::int64_t directions = t.constBool(7, "bidirectional") ? 2 : 1;
  const bool batchFirst = t.constBool(8, "batch_first");
  const std::vector<Value*> hx = t.tensorList(1, "the initial state");
  const std::vector<Value*> params = t.tensorList(2, "the parameters");
  if (layers < 1 || hx.size() != 2 ||
      params.size() != static_cast<std::size_t>(4 * layers * directions))
    t.unsupported("an LSTM with projections or without its initial state");
  for (Value* p : params)
    if (!p->isConstant() || p->constant().dtype() != graph::DType::F32)
      t.unsupported("LSTM parameters that are not float32 constants");
  const std::int64_t hidden = params[0]->constant().dims()[0] / 4;
  // Rows in 4 blocks of `hidden`, PyTorch's i f g o -> ONNX's i o f g; one slab per direction.
  auto stacked = [&](std::int64_t layer, int which) {
    std::vector<float> out;
    std::vector<std::int64_t> dims{directions};
    for (std::int64_t d = 0; d < directions; ++d) {
      const graph::TensorData& src =
          params[static_cast<std::size_t>((layer * directions + d) * 4 + which)]->constant();
      if (src.dims().empty() || src.dims()[0] != 4 * hidden)
        t.invalid("has LSTM parameters of differing hidden sizes");
      const std::int64_t rowElems = src.numElements() / (4 * hidden);
      const auto v = src.values<float>();
      const int order[4] = {0, 3, 1, 2};
      for (int b = 0; b < 4; ++b)
        out.insert(out.end(), v.begin() + order[b] * hidden * rowElems,
                   v.begin() + (order[b] + 1) * hidden * rowElems);
      if (d == 0)
        dims.insert(dims.end(), src.dims().begin(), src.dims().end());
    }
    return std::make_pair(std::move(out), std::move(dims));
  };
  Value* x = t.tensor(0);
  if (batchFirst)
    x = t.add("Transpose", {x}, {{"perm", ints({1, 0, 2})}});
  std::vector<Value*> finalH, finalC;
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    auto [w, wDims] = stacked(layer, 0);
    auto [r, rDims] = stacked(layer, 1);
    auto [bih, bihDims] = stacked(layer, 2);
    auto [bhh, bhhDims] = stacked(layer, 3);
    // B is [directions, 8 hidden]: each direction's input bias, then its recurrent one.
    std::vector<float> bias;
    for (std::int64_t d = 0; d < directions; ++d) {
      const auto at = [&](const std::vector<float>& v) { return v.begin() + d * 4 * hidden; };
      bias.insert(bias.end(), at(bih), at(bih) + 4 * hidden);
      bias.insert(bias.end(), at(bhh), at(bhh) + 4 * hidden);
    }
    Value* wv = t.constant(graph::TensorData::fromValues(graph::DType::F32, wDims, w), "lstm_w");
    Value* rv = t.constant(graph::TensorData::fromValues(graph::DType::F32, rDims, r), "lstm_r");
    Value* bv = t.constant(
        graph::TensorData::fromValues(graph::DType::F32, {directions, 8 * hidden}, bias), "lstm_b");
    auto states = [&](Value* all) {
      if (layers == 1)
        return all;
      return t.add("Slice", {all, t.ints({layer * directions}), t.ints({(layer + 1) * directions}),
                             t.ints({0})});
    };
    const std::string base = t.graph().uniqueName("lstm");
    graph::Node* n =
        t.graph().addNode("LSTM", {x, wv, rv, bv, nullptr, states(hx[0]), states(hx[1])},
                          {t.graph().uniqueName(base + "/Y"), t.graph().uniqueName(base + "/Y_h"),
                           t.graph().uniqueName(base + "/Y_c")});
    n->name = base;
    n->attributes["hidden_size"] = i64(hidden);
    if (directions == 2)
      n->attributes["direction"] = graph::Attribute{std::string("bidirectional")};
    // Y [seq, directions, batch, hidden] -> [seq, batch, directions * hidden].
    if (directions == 1) {
      x = t.add("Squeeze", {n->output(0), t.ints({1})});
    } else {
      Value* y = t.add("Transpose", {n->output(0)}, {{"perm", ints({0, 2, 1, 3})}});
      x = t.add("Reshape", {y, t.ints({0, 0, directions * hidden})});
    }
    finalH.push_back(n->output(1));
    finalC.push_back(n->output(2));
  }
  if (batchFirst)
    x = t.add("Transpose", {x}, {{"perm", ints({1, 0, 2})}});
  t.setOutput(0, x);
  auto joined = [&](const std::vector<Value*>& parts) {
    return parts.size() == 1 ? parts[0] : t.add("Concat", parts, {{"axis", i64(0)}});
  };
  t.setOutput(1, joined(finalH));
  t.setOutput(2, joined(finalC));
}

// _scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, need_attn_weights, is_causal)
// -> (softmax(q k^T / sqrt(E) + mask) v, the weights). A bool mask keeps where true; a
// causal one lets position i see positions up to i.
void scaledDotProductAttention(Translator& t) {
  Value* q = t.tensor(0);
  Value* k = t.tensor(1);
  Value* v = t.tensor(2);
  const std::optional<std::vector<std::int64_t>> qdims = t.knownDims(q), kdims = t.knownDims(k);
  if (!qdims || !kdims || qdims->size() < 2)
    t.unsupported("attention over shapes not known at import (query " + graph::toString(q->type) +
                  ", key " + graph::toString(k->type) + ")");
  const std::vector<std::int64_t>& qd = *qdims;
  const std::vector<std::int64_t>& kd = *kdims;
  const std::size_t r = qd.size();
  std::vector<std::int64_t> perm;
  for (std::size_t d = 0; d < r; ++d)
    perm.push_back(static_cast<std::int64_t>(d));
  std::swap(perm[r - 1], perm[r - 2]);
  Value* scores = t.add("MatMul", {q, t.add("Transpose", {k}, {{"perm", ints(perm)}})});
  scores = t.add("Div",
                 {scores, t.scalar(std::sqrt(static_cast<double>(qd.back())), graph::DType::F32)});
  const double lowest = -std::numeric_limits<double>::infinity();
  if (!t.isNone(3)) {
    Value* mask = t.tensor(3);
    if (t.dtype(mask) == graph::DType::Bool)
      scores = t.add("Where", {mask, scores, t.scalar(lowest, graph::DType::F32)});
    else
      scores = t.add("Add", {scores, mask});
  }
  if (t.constBool(6, "is_causal")) {
    const std::int64_t rows = qd[r - 2], cols = kd[r - 2];
    std::vector<std::uint8_t> keep(static_cast<std::size_t>(rows * cols));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        keep[static_cast<std::size_t>(i * cols + j)] = j <= i ? 1 : 0;
    Value* causal =
        t.constant(graph::TensorData::fromValues(graph::DType::Bool, {rows, cols}, keep), "causal");
    scores = t.add("Where", {causal, scores, t.scalar(lowest, graph::DType::F32)});
  }
  Value* weights = t.add("Softmax", {scores}, {{"axis", i64(-1)}});
  t.setOutput(0, t.add("MatMul", {weights, v}));
  t.setOutput(1, weights);
}

} // namespace lathe::frontend::torchscript
