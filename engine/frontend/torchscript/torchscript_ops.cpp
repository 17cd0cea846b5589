// aten ops -> graph IR ops. Each handler reads the current node's inputs through the
// Translator (constants must be compile-time constants where the graph IR needs attributes)
// and sets its outputs. Semantics follow PyTorch's operator definitions.
#include "engine/frontend/torchscript/ts_translate.h"

#include <cmath>
#include <limits>

namespace lathe::frontend::torchscript {
namespace {

using graph::Attribute;
using graph::Value;
using Attrs = std::map<std::string, Attribute>;

Attribute ints(std::vector<std::int64_t> v) {
  return Attribute{std::move(v)};
}
Attribute i64(std::int64_t v) {
  return Attribute{v};
}

// A per-dimension list (stride, padding, ...) of `n` spatial dims; one value means all.
std::vector<std::int64_t> spatial(Translator& t, std::size_t i, std::size_t n, const char* what) {
  std::vector<std::int64_t> v = t.constInts(i, what);
  if (v.size() == 1)
    v.assign(n, v[0]);
  if (v.size() != n)
    t.invalid(std::string(what) + " has " + std::to_string(v.size()) + " values for " +
              std::to_string(n) + " spatial dims");
  return v;
}

std::vector<std::int64_t> symmetricPads(const std::vector<std::int64_t>& p) {
  std::vector<std::int64_t> pads = p;
  pads.insert(pads.end(), p.begin(), p.end());
  return pads;
}

// conv(input, weight, bias, stride, padding, dilation, groups) and aten::_convolution.
void convolution(Translator& t, bool full) {
  Value* x = t.tensor(0);
  Value* w = t.tensor(1);
  const std::size_t n = t.rank(w) - 2;
  Attrs a;
  a["strides"] = ints(spatial(t, 3, n, "stride"));
  const bool transposed = full && t.constBool(6, "transposed");
  const std::size_t groupsAt = full ? 8 : 6;
  a["dilations"] = ints(spatial(t, 5, n, "dilation"));
  a["group"] = i64(t.constInt(groupsAt, "groups"));
  const torch::jit::Value* padding = t.node().input(4);
  const TsValue& pv = t.value(padding);
  if (pv.kind == TsValue::Kind::Constant && pv.constant.isString()) {
    const std::string mode = pv.constant.toStringRef();
    if (mode == "same")
      a["auto_pad"] = Attribute{std::string("SAME_UPPER")};
    else if (mode != "valid")
      t.invalid("has padding '" + mode + "'");
  } else {
    a["pads"] = ints(symmetricPads(spatial(t, 4, n, "padding")));
  }
  std::vector<Value*> inputs{x, w};
  if (!t.isNone(2))
    inputs.push_back(t.tensor(2));
  if (transposed) {
    a["output_padding"] = ints(spatial(t, 7, n, "output_padding"));
    t.setOutput(0, t.add("ConvTranspose", std::move(inputs), std::move(a)));
    return;
  }
  t.setOutput(0, t.add("Conv", std::move(inputs), std::move(a)));
}

void conv(Translator& t) {
  convolution(t, false);
}
void convFull(Translator& t) {
  convolution(t, true);
}

// batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn)
void batchNorm(Translator& t) {
  if (t.constBool(5, "training"))
    t.unsupported("batch_norm in training mode");
  Value* mean = t.tensor(3);
  Value* var = t.tensor(4);
  Value* scale = t.isNone(1) ? t.add("Add", {t.add("Mul", {mean, t.scalar(0, graph::DType::F32)}),
                                             t.scalar(1, graph::DType::F32)})
                             : t.tensor(1);
  Value* bias = t.isNone(2) ? t.add("Mul", {mean, t.scalar(0, graph::DType::F32)}) : t.tensor(2);
  t.setOutput(0, t.add("BatchNormalization", {t.tensor(0), scale, bias, mean, var},
                       {{"epsilon", Attribute{static_cast<float>(t.constDouble(7, "eps"))}}}));
}

// layer_norm(input, normalized_shape, weight, bias, eps, cudnn)
void layerNorm(Translator& t) {
  Value* x = t.tensor(0);
  const std::vector<std::int64_t> shape = t.constInts(1, "normalized_shape");
  const auto axis = static_cast<std::int64_t>(t.rank(x)) - static_cast<std::int64_t>(shape.size());
  std::vector<Value*> inputs{x};
  if (t.isNone(2))
    t.unsupported("layer_norm without a weight");
  inputs.push_back(t.tensor(2));
  if (!t.isNone(3))
    inputs.push_back(t.tensor(3));
  t.setOutput(0, t.add("LayerNormalization", std::move(inputs),
                       {{"axis", i64(axis)},
                        {"epsilon", Attribute{static_cast<float>(t.constDouble(4, "eps"))}}}));
}

// linear(input, weight, bias): input @ weight^T + bias.
void linear(Translator& t) {
  Value* wt = t.add("Transpose", {t.tensor(1)}, {{"perm", ints({1, 0})}});
  Value* y = t.add("MatMul", {t.tensor(0), wt});
  if (!t.isNone(2))
    y = t.add("Add", {y, t.tensor(2)});
  t.setOutput(0, y);
}

// addmm(self, mat1, mat2, beta, alpha): beta * self + alpha * mat1 @ mat2.
void addmm(Translator& t) {
  const double beta = t.node().inputs().size() > 3 ? t.constDouble(3, "beta") : 1.0;
  const double alpha = t.node().inputs().size() > 4 ? t.constDouble(4, "alpha") : 1.0;
  t.setOutput(0, t.add("Gemm", {t.tensor(1), t.tensor(2), t.tensor(0)},
                       {{"alpha", Attribute{static_cast<float>(alpha)}},
                        {"beta", Attribute{static_cast<float>(beta)}}}));
}

void matmul(Translator& t) {
  t.setOutput(0, t.add("MatMul", {t.tensor(0), t.tensor(1)}));
}

// add / sub (a, b, alpha): a +- alpha * b; rsub: b - alpha * a.
void addSub(Translator& t, const char* op, bool reversed) {
  Value* a = t.tensor(0);
  Value* b = t.tensor(1, a);
  if (t.node().inputs().size() > 2 && !t.isNone(2)) {
    const double alpha = t.constDouble(2, "alpha");
    if (alpha != 1.0)
      b = t.add("Mul", {b, t.scalar(alpha, t.dtype(a))});
  }
  t.setOutput(0, reversed ? t.add(op, {b, a}) : t.add(op, {a, b}));
}
void addOp(Translator& t) {
  addSub(t, "Add", false);
}
void subOp(Translator& t) {
  addSub(t, "Sub", false);
}
void rsubOp(Translator& t) {
  addSub(t, "Sub", true);
}

void binary(Translator& t, const char* op) {
  Value* a = t.tensor(0);
  t.setOutput(0, t.add(op, {a, t.tensor(1, a)}));
}
void mulOp(Translator& t) {
  binary(t, "Mul");
}
// pow: an integer base with a float exponent gives floats, as in PyTorch.
void powOp(Translator& t) {
  Value* a = t.tensor(0);
  Value* e = t.tensor(1, graph::isFloat(t.dtype(a)) ? a : nullptr);
  if (!graph::isFloat(t.dtype(a)) && graph::isFloat(t.dtype(e)))
    a = t.add("Cast", {a}, {{"to", i64(graph::onnxCodeOf(t.dtype(e)))}});
  t.setOutput(0, t.add("Pow", {a, e}));
}

// floor_divide: floor(a / b). Integer Div truncates toward zero, so a quotient with a
// remainder and operands of different signs is one less.
void floorDivide(Translator& t) {
  Value* a = t.tensor(0);
  Value* b = t.tensor(1, a);
  const graph::DType type = t.dtype(a);
  if (graph::isFloat(type)) {
    t.setOutput(0, t.add("Floor", {t.add("Div", {a, b})}));
    return;
  }
  Value* q = t.add("Div", {a, b});
  Value* zero = t.scalar(0, type);
  Value* inexact = t.add("Not", {t.add("Equal", {t.add("Mul", {q, b}), a})});
  Value* signsDiffer = t.add("Xor", {t.add("Less", {a, zero}), t.add("Less", {b, zero})});
  Value* fix =
      t.add("Cast", {t.add("And", {inexact, signsDiffer})}, {{"to", i64(graph::onnxCodeOf(type))}});
  t.setOutput(0, t.add("Sub", {q, fix}));
}

// zeros / ones(size, dtype, layout, device, pin_memory): the size may be computed at run time.
void filled(Translator& t, double value) {
  graph::DType type = graph::DType::F32;
  if (t.node().inputs().size() > 1 && !t.isNone(1)) {
    const auto st = static_cast<c10::ScalarType>(t.constInt(1, "dtype"));
    if (st == c10::ScalarType::Long)
      type = graph::DType::I64;
    else if (st != c10::ScalarType::Float)
      t.unsupported("dtype " + std::string(c10::toString(st)));
  }
  const graph::TensorData one =
      type == graph::DType::F32
          ? graph::TensorData::fromValues(type, {1}, std::vector<float>{static_cast<float>(value)})
          : graph::TensorData::fromValues(
                type, {1}, std::vector<std::int64_t>{static_cast<std::int64_t>(value)});
  t.setOutput(
      0, t.add("ConstantOfShape", {t.shapeTensor(0, "the size")}, {{"value", Attribute{one}}}));
}
void zeros(Translator& t) {
  filled(t, 0.0);
}
void ones(Translator& t) {
  filled(t, 1.0);
}
void maximumOp(Translator& t) {
  binary(t, "Max");
}
void minimumOp(Translator& t) {
  binary(t, "Min");
}

void divOp(Translator& t) {
  if (t.node().inputs().size() > 2 && !t.isNone(2))
    t.unsupported("div with rounding_mode '" + t.constString(2, "rounding_mode") + "'");
  binary(t, "Div");
}

void unary(Translator& t, const char* op) {
  t.setOutput(0, t.add(op, {t.tensor(0)}));
}
void relu(Translator& t) {
  unary(t, "Relu");
}
void sigmoid(Translator& t) {
  unary(t, "Sigmoid");
}
void tanhOp(Translator& t) {
  unary(t, "Tanh");
}
void hardswish(Translator& t) {
  unary(t, "HardSwish");
}
void expOp(Translator& t) {
  unary(t, "Exp");
}
void sqrtOp(Translator& t) {
  unary(t, "Sqrt");
}
void negOp(Translator& t) {
  unary(t, "Neg");
}
void identity(Translator& t) {
  t.setOutput(0, t.tensor(0));
}

void hardsigmoid(Translator& t) {
  t.setOutput(0, t.add("HardSigmoid", {t.tensor(0)},
                       {{"alpha", Attribute{1.0f / 6.0f}}, {"beta", Attribute{0.5f}}}));
}

void silu(Translator& t) {
  Value* x = t.tensor(0);
  t.setOutput(0, t.add("Mul", {x, t.add("Sigmoid", {x})}));
}

// gelu(x, approximate): "none" is x * (1 + erf(x / sqrt 2)) / 2; "tanh" the tanh form.
void gelu(Translator& t) {
  Value* x = t.tensor(0);
  const std::string approx =
      t.node().inputs().size() > 1 ? t.constString(1, "approximate") : "none";
  const graph::DType f = graph::DType::F32;
  Value* inner = nullptr;
  if (approx == "none") {
    inner = t.add("Erf", {t.add("Mul", {x, t.scalar(1.0 / std::sqrt(2.0), f)})});
  } else if (approx == "tanh") {
    Value* cube = t.add("Mul", {t.add("Mul", {x, x}), x});
    Value* poly = t.add("Add", {x, t.add("Mul", {cube, t.scalar(0.044715, f)})});
    inner = t.add("Tanh", {t.add("Mul", {poly, t.scalar(std::sqrt(2.0 / M_PI), f)})});
  } else {
    t.invalid("has approximate = '" + approx + "'");
  }
  Value* half = t.add("Mul", {x, t.scalar(0.5, f)});
  t.setOutput(0, t.add("Mul", {half, t.add("Add", {inner, t.scalar(1.0, f)})}));
}

// hardtanh(x, min, max) (ReLU6 is hardtanh(0, 6)).
void hardtanh(Translator& t) {
  const graph::DType f = graph::DType::F32;
  t.setOutput(0, t.add("Clip", {t.tensor(0), t.scalar(t.constDouble(1, "min_val"), f),
                                t.scalar(t.constDouble(2, "max_val"), f)}));
}

void clamp(Translator& t) {
  Value* x = t.tensor(0);
  Value* lo = t.isNone(1) ? nullptr : t.tensor(1, x);
  Value* hi = t.node().inputs().size() > 2 && !t.isNone(2) ? t.tensor(2, x) : nullptr;
  t.setOutput(0, t.add("Clip", {x, lo, hi}));
}

void leakyRelu(Translator& t) {
  const double slope = t.node().inputs().size() > 1 ? t.constDouble(1, "negative_slope") : 0.01;
  t.setOutput(0,
              t.add("LeakyRelu", {t.tensor(0)}, {{"alpha", Attribute{static_cast<float>(slope)}}}));
}

// max_pool2d(x, kernel, stride, padding, dilation, ceil_mode)
void maxPool(Translator& t) {
  Value* x = t.tensor(0);
  const std::size_t n = t.rank(x) - 2;
  const std::vector<std::int64_t> k = spatial(t, 1, n, "kernel_size");
  std::vector<std::int64_t> s = t.constInts(2, "stride");
  if (s.empty())
    s = k;
  else
    s = spatial(t, 2, n, "stride");
  t.setOutput(0, t.add("MaxPool", {x},
                       {{"kernel_shape", ints(k)},
                        {"strides", ints(s)},
                        {"pads", ints(symmetricPads(spatial(t, 3, n, "padding")))},
                        {"dilations", ints(spatial(t, 4, n, "dilation"))},
                        {"ceil_mode", i64(t.constBool(5, "ceil_mode") ? 1 : 0)}}));
}

// avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
void avgPool(Translator& t) {
  Value* x = t.tensor(0);
  const std::size_t n = t.rank(x) - 2;
  const std::vector<std::int64_t> k = spatial(t, 1, n, "kernel_size");
  std::vector<std::int64_t> s = t.constInts(2, "stride");
  s = s.empty() ? k : spatial(t, 2, n, "stride");
  if (t.node().inputs().size() > 6 && !t.isNone(6))
    t.unsupported("avg_pool with divisor_override");
  t.setOutput(0, t.add("AveragePool", {x},
                       {{"kernel_shape", ints(k)},
                        {"strides", ints(s)},
                        {"pads", ints(symmetricPads(spatial(t, 3, n, "padding")))},
                        {"ceil_mode", i64(t.constBool(4, "ceil_mode") ? 1 : 0)},
                        {"count_include_pad", i64(t.constBool(5, "count_include_pad") ? 1 : 0)}}));
}

// adaptive_avg_pool2d: output cell i of n along an axis of length L averages the input's
// [floor(i L / n), ceil((i + 1) L / n)). To 1x1 that is GlobalAveragePool; when n divides L
// on both axes, an AveragePool; otherwise the windows differ in size and overlap, and the
// average is separable: a product with a constant [W, ow] averaging matrix on the right and
// an [oh, H] one on the left.
void adaptiveAvgPool(Translator& t) {
  Value* x = t.tensor(0);
  std::vector<std::int64_t> size = t.constInts(1, "output_size");
  if (size.size() == 1)
    size.push_back(size[0]);
  if (size.size() != 2 || size[0] < 1 || size[1] < 1)
    t.invalid("needs an output size of two positive extents");
  const std::size_t rank = t.rank(x);
  if (size[0] == 1 && size[1] == 1 && rank == 4) {
    t.setOutput(0, t.add("GlobalAveragePool", {x}));
    return;
  }
  t.knownDims(x); // brings the types up to date
  const auto& shape = x->type.shape;
  if (rank < 3 || !shape || !(*shape)[rank - 2].isKnown() || !(*shape)[rank - 1].isKnown())
    t.unsupported("adaptive_avg_pool2d to " + std::to_string(size[0]) + "x" +
                  std::to_string(size[1]) + " of an input whose height and width are not known (" +
                  graph::toString(x->type) + ")");
  const std::int64_t h = (*shape)[rank - 2].value, w = (*shape)[rank - 1].value;
  if (rank == 4 && h % size[0] == 0 && w % size[1] == 0) {
    const std::vector<std::int64_t> window{h / size[0], w / size[1]};
    t.setOutput(0, t.add("AveragePool", {x},
                         {{"kernel_shape", graph::Attribute{window}},
                          {"strides", graph::Attribute{window}}}));
    return;
  }
  if (t.dtype(x) != graph::DType::F32)
    t.unsupported("adaptive_avg_pool2d of uneven windows on a non-float32 tensor");
  // averaging(L, n)[i][j] = 1 / |window i| for j in window i; transposed: [L, n].
  auto averaging = [](std::int64_t length, std::int64_t n, bool transposed) {
    std::vector<float> m(static_cast<std::size_t>(length * n), 0.0f);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t begin = i * length / n, end = ((i + 1) * length + n - 1) / n;
      for (std::int64_t j = begin; j < end; ++j)
        m[static_cast<std::size_t>(transposed ? j * n + i : i * length + j)] =
            1.0f / static_cast<float>(end - begin);
    }
    return m;
  };
  Value* right = t.constant(
      graph::TensorData::fromValues(graph::DType::F32, {w, size[1]}, averaging(w, size[1], true)),
      "adaptive_avg_w");
  Value* left = t.constant(
      graph::TensorData::fromValues(graph::DType::F32, {size[0], h}, averaging(h, size[0], false)),
      "adaptive_avg_h");
  t.setOutput(0, t.add("MatMul", {left, t.add("MatMul", {x, right})}));
}

void softmax(Translator& t, const char* op) {
  Value* x = t.tensor(0);
  if (t.node().inputs().size() > 2 && !t.isNone(2))
    t.unsupported("softmax with a dtype");
  t.setOutput(0, t.add(op, {x}, {{"axis", i64(t.axis(t.constInt(1, "dim"), x))}}));
}
void softmaxOp(Translator& t) {
  softmax(t, "Softmax");
}
void logSoftmaxOp(Translator& t) {
  softmax(t, "LogSoftmax");
}

void cat(Translator& t) {
  const std::vector<Value*> parts = t.tensorList(0, "the tensors");
  if (parts.empty())
    t.invalid("concatenates nothing");
  t.setOutput(0, t.add("Concat", parts, {{"axis", i64(t.axis(t.constInt(1, "dim"), parts[0]))}}));
}

void stack(Translator& t) {
  const std::vector<Value*> parts = t.tensorList(0, "the tensors");
  if (parts.empty())
    t.invalid("stacks nothing");
  const auto r = static_cast<std::int64_t>(t.rank(parts[0])) + 1;
  std::int64_t d = t.constInt(1, "dim");
  d = d < 0 ? d + r : d;
  std::vector<Value*> expanded;
  for (Value* p : parts)
    expanded.push_back(t.add("Unsqueeze", {p, t.ints({d})}));
  t.setOutput(0, t.add("Concat", expanded, {{"axis", i64(d)}}));
}

void reshape(Translator& t) {
  t.setOutput(0, t.add("Reshape", {t.tensor(0), t.shapeTensor(1, "the shape")}));
}

// The first `count` dims of x as a 1-D int64 tensor: a constant when x's shape is known at
// import (the shapes come with the model's inputs), else Shape and Slice.
Value* leadingDims(Translator& t, Value* x, std::int64_t count) {
  if (const auto dims = t.knownDims(x))
    return t.ints(std::vector<std::int64_t>(dims->begin(), dims->begin() + count));
  return t.add("Slice", {t.add("Shape", {x}), t.ints({0}), t.ints({count})});
}

void flatten(Translator& t) {
  Value* x = t.tensor(0);
  const auto r = static_cast<std::int64_t>(t.rank(x));
  const std::int64_t start = t.axis(t.constInt(1, "start_dim"), x);
  const std::int64_t end = t.axis(t.constInt(2, "end_dim"), x);
  if (end != r - 1)
    t.unsupported("flatten that stops before the last dim");
  if (start == 0) {
    t.setOutput(0, t.add("Reshape", {x, t.ints({-1})}));
    return;
  }
  if (const auto known = t.knownDims(x)) {
    std::vector<std::int64_t> dims = *known;
    std::int64_t rest = 1;
    for (std::size_t d = static_cast<std::size_t>(start); d < dims.size(); ++d)
      rest *= dims[d];
    dims.resize(static_cast<std::size_t>(start));
    dims.push_back(rest);
    t.setOutput(0, t.add("Reshape", {x, t.ints(dims)}));
    return;
  }
  // Keep the leading dims, merge the rest: Shape[0:start] ++ [-1].
  t.setOutput(0, t.add("Reshape", {x, t.add("Concat", {leadingDims(t, x, start), t.ints({-1})},
                                            {{"axis", i64(0)}})}));
}

void permute(Translator& t) {
  t.setOutput(0, t.add("Transpose", {t.tensor(0)}, {{"perm", ints(t.constInts(1, "dims"))}}));
}

void transpose(Translator& t) {
  Value* x = t.tensor(0);
  const std::size_t r = t.rank(x);
  std::vector<std::int64_t> perm;
  for (std::size_t d = 0; d < r; ++d)
    perm.push_back(static_cast<std::int64_t>(d));
  const std::int64_t a = t.axis(t.constInt(1, "dim0"), x), b = t.axis(t.constInt(2, "dim1"), x);
  std::swap(perm[static_cast<std::size_t>(a)], perm[static_cast<std::size_t>(b)]);
  t.setOutput(0, t.add("Transpose", {x}, {{"perm", ints(perm)}}));
}

// matrix transpose of a 2-D tensor.
void tOp(Translator& t) {
  Value* x = t.tensor(0);
  if (t.rank(x) < 2) {
    t.setOutput(0, x);
    return;
  }
  t.setOutput(0, t.add("Transpose", {x}, {{"perm", ints({1, 0})}}));
}

void unsqueeze(Translator& t) {
  Value* x = t.tensor(0);
  std::int64_t d = t.constInt(1, "dim");
  if (d < 0)
    d += static_cast<std::int64_t>(t.rank(x)) + 1;
  t.setOutput(0, t.add("Unsqueeze", {x, t.ints({d})}));
}

void squeeze(Translator& t) {
  Value* x = t.tensor(0);
  if (t.node().inputs().size() < 2) {
    t.setOutput(0, t.add("Squeeze", {x}));
    return;
  }
  t.setOutput(0, t.add("Squeeze", {x, t.ints({t.axis(t.constInt(1, "dim"), x)})}));
}

// slice(x, dim, start, end, step); None bounds mean the whole extent.
void slice(Translator& t) {
  Value* x = t.tensor(0);
  const std::int64_t d = t.axis(t.constInt(1, "dim"), x);
  const std::int64_t start = t.isNone(2) ? 0 : t.constInt(2, "start");
  const std::int64_t end =
      t.isNone(3) ? std::numeric_limits<std::int64_t>::max() : t.constInt(3, "end");
  const std::int64_t step = t.constInt(4, "step");
  t.setOutput(0, t.add("Slice", {x, t.ints({start}), t.ints({end}), t.ints({d}), t.ints({step})}));
}

// select(x, dim, index): one index, the dim removed.
void select(Translator& t) {
  Value* x = t.tensor(0);
  const std::int64_t d = t.axis(t.constInt(1, "dim"), x);
  t.setOutput(0,
              t.add("Gather",
                    {x, t.scalar(static_cast<double>(t.constInt(2, "index")), graph::DType::I64)},
                    {{"axis", i64(d)}}));
}

// index(x, [None, ..., idx, ...]): one integer index tensor, the other axes whole, is a Gather
// on that axis (the index's shape replaces it). Several index tensors (broadcast together)
// and boolean masks (whose result's size depends on the values) are refused.
void indexOp(Translator& t) {
  Value* x = t.tensor(0);
  // A list built in the graph, or one that freezing folded into a constant.
  const TsValue list = t.value(t.node().input(1));
  std::vector<Value*> indices; // nullptr: None (the axis whole)
  if (list.kind == TsValue::Kind::List) {
    for (const TsValue& e : list.elements) {
      if (e.kind == TsValue::Kind::Constant && e.constant.isNone())
        indices.push_back(nullptr);
      else if (e.kind == TsValue::Kind::Tensor)
        indices.push_back(e.tensor);
      else
        t.unsupported("indexing with something other than tensors and None");
    }
  } else if (list.kind == TsValue::Kind::Constant && list.constant.isList()) {
    for (const c10::IValue& e : list.constant.toListRef()) {
      if (e.isNone())
        indices.push_back(nullptr);
      else if (e.isTensor())
        indices.push_back(t.constant(tensorData(e.toTensor(), "an index"), "index"));
      else
        t.unsupported("indexing with something other than tensors and None");
    }
  } else {
    t.unsupported("aten::index with indices that are not a list");
  }
  Value* index = nullptr;
  std::int64_t axis = -1;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (!indices[k])
      continue;
    if (index)
      t.unsupported("indexing with several index tensors at once");
    index = indices[k];
    axis = static_cast<std::int64_t>(k);
  }
  if (!index) {
    t.setOutput(0, x);
    return;
  }
  const graph::DType type = t.dtype(index);
  if (type == graph::DType::Bool || type == graph::DType::U8)
    t.unsupported("indexing with a boolean mask (the result's size depends on its values)");
  if (type != graph::DType::I64 && type != graph::DType::I32)
    t.unsupported("indexing with a tensor of element type " + std::string(graph::dtypeName(type)));
  t.setOutput(0, t.add("Gather", {x, index}, {{"axis", i64(t.axis(axis, x))}}));
}

// embedding(weight, indices, padding_idx, scale_grad, sparse)
void embedding(Translator& t) {
  t.setOutput(0, t.add("Gather", {t.tensor(0), t.tensor(1)}, {{"axis", i64(0)}}));
}

// size(x, dim) -> a run-time int (a scalar int64 tensor); size(x) -> the shape.
void size(Translator& t) {
  Value* x = t.tensor(0);
  const bool whole = t.node().inputs().size() < 2;
  const std::int64_t d = whole ? 0 : t.axis(t.constInt(1, "dim"), x);
  if (const auto known = t.knownDims(x)) {
    // Known at import: a constant, as tracing with these shapes would record.
    const std::vector<std::int64_t>& dims = *known;
    TsValue c;
    if (whole)
      c.constant = c10::IValue(dims);
    else
      c.constant = c10::IValue(dims[static_cast<std::size_t>(d)]);
    t.setOutput(0, std::move(c));
    return;
  }
  Value* shape = t.add("Shape", {x});
  if (whole) {
    t.setOutput(0, shape);
    return;
  }
  t.setOutput(0, t.add("Gather", {shape, t.scalar(static_cast<double>(d), graph::DType::I64)},
                       {{"axis", i64(0)}}));
}

// mean / sum (x, dim, keepdim, dtype), or (x, dtype) over every dim; an empty dim list is
// every dim too. ReduceSum takes its axes as an input at opset 13 and later, ReduceMean as an
// attribute until 18.
void reduce(Translator& t, bool sum) {
  Value* x = t.tensor(0);
  const std::size_t count = t.node().inputs().size();
  if (!t.isNone(count - 1))
    t.unsupported(std::string(sum ? "sum" : "mean") + " with a dtype");
  std::vector<std::int64_t> dims;
  bool keep = false;
  if (count > 2) {
    for (std::int64_t d : t.constInts(1, "dim"))
      dims.push_back(t.axis(d, x));
    keep = t.constBool(2, "keepdim");
  }
  Attrs a{{"keepdims", i64(keep ? 1 : 0)}};
  if (sum) {
    std::vector<Value*> inputs{x};
    if (!dims.empty())
      inputs.push_back(t.ints(dims));
    t.setOutput(0, t.add("ReduceSum", std::move(inputs), std::move(a)));
    return;
  }
  if (!dims.empty())
    a["axes"] = ints(dims);
  t.setOutput(0, t.add("ReduceMean", {x}, std::move(a)));
}
void mean(Translator& t) {
  reduce(t, false);
}
void sumOp(Translator& t) {
  reduce(t, true);
}

// upsample_nearest2d(x, output_size, scales...) / upsample_bilinear2d(x, output_size,
// align_corners, scales...): sizes or scale factors.
void upsample(Translator& t, bool bilinear) {
  Value* x = t.tensor(0);
  Attrs a{{"mode", Attribute{std::string(bilinear ? "linear" : "nearest")}}};
  if (bilinear)
    a["coordinate_transformation_mode"] = Attribute{
        std::string(t.constBool(2, "align_corners") ? "align_corners" : "pytorch_half_pixel")};
  else
    a["coordinate_transformation_mode"] = Attribute{std::string("asymmetric")},
    a["nearest_mode"] = Attribute{std::string("floor")};
  if (!t.isNone(1)) {
    const std::vector<std::int64_t> out = t.constInts(1, "output_size");
    Value* sizes = t.add("Concat", {leadingDims(t, x, 2), t.ints(out)}, {{"axis", i64(0)}});
    t.setOutput(0, t.add("Resize", {x, nullptr, nullptr, sizes}, std::move(a)));
    return;
  }
  // Scale factors: the list after align_corners (bilinear) or after output_size (nearest).
  const std::size_t at = bilinear ? 3 : 2;
  const TsValue& sv = t.value(t.node().input(at));
  std::vector<float> scales{1.0f, 1.0f};
  if (sv.kind == TsValue::Kind::Constant && sv.constant.isDoubleList()) {
    for (double s : sv.constant.toDoubleVector())
      scales.push_back(static_cast<float>(s));
  } else {
    t.unsupported("upsampling without a constant size or scale");
  }
  Value* sc = t.constant(graph::TensorData::fromValues(
                             graph::DType::F32, {static_cast<std::int64_t>(scales.size())}, scales),
                         "scales");
  t.setOutput(0, t.add("Resize", {x, nullptr, sc}, std::move(a)));
}
void upsampleNearest(Translator& t) {
  upsample(t, false);
}
void upsampleBilinear(Translator& t) {
  upsample(t, true);
}

// lstm(input, hx[h0, c0], params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first): one layer, unidirectional. PyTorch's gates are i, f, g, o; ONNX's i, o, f, c.
void dropout(Translator& t) {
  t.setOutput(0, t.tensor(0));
}

} // namespace

const std::unordered_map<std::string, Handler>& atenHandlers() {
  static const std::unordered_map<std::string, Handler> table{
      {"aten::conv1d", conv},
      {"aten::conv2d", conv},
      {"aten::conv3d", conv},
      {"aten::_convolution", convFull},
      {"aten::batch_norm", batchNorm},
      {"aten::layer_norm", layerNorm},
      {"aten::linear", linear},
      {"aten::addmm", addmm},
      {"aten::matmul", matmul},
      {"aten::mm", matmul},
      {"aten::bmm", matmul},
      {"aten::add", addOp},
      {"aten::add_", addOp},
      {"aten::sub", subOp},
      {"aten::rsub", rsubOp},
      {"aten::mul", mulOp},
      {"aten::mul_", mulOp},
      {"aten::div", divOp},
      {"aten::pow", powOp},
      {"aten::floor_divide", floorDivide},
      {"aten::zeros", zeros},
      {"aten::ones", ones},
      {"aten::maximum", maximumOp},
      {"aten::minimum", minimumOp},
      {"aten::relu", relu},
      {"aten::relu_", relu},
      {"aten::sigmoid", sigmoid},
      {"aten::tanh", tanhOp},
      {"aten::hardswish", hardswish},
      {"aten::hardswish_", hardswish},
      {"aten::hardsigmoid", hardsigmoid},
      {"aten::silu", silu},
      {"aten::silu_", silu},
      {"aten::gelu", gelu},
      {"aten::hardtanh", hardtanh},
      {"aten::hardtanh_", hardtanh},
      {"aten::clamp", clamp},
      {"aten::leaky_relu", leakyRelu},
      {"aten::exp", expOp},
      {"aten::sqrt", sqrtOp},
      {"aten::neg", negOp},
      {"aten::max_pool2d", maxPool},
      {"aten::avg_pool2d", avgPool},
      {"aten::adaptive_avg_pool2d", adaptiveAvgPool},
      {"aten::sum", sumOp},
      {"aten::index", indexOp},
      {"aten::softmax", softmaxOp},
      {"aten::log_softmax", logSoftmaxOp},
      {"aten::cat", cat},
      {"aten::stack", stack},
      {"aten::view", reshape},
      {"aten::reshape", reshape},
      {"aten::flatten", flatten},
      {"aten::permute", permute},
      {"aten::transpose", transpose},
      {"aten::t", tOp},
      {"aten::unsqueeze", unsqueeze},
      {"aten::squeeze", squeeze},
      {"aten::slice", slice},
      {"aten::select", select},
      {"aten::embedding", embedding},
      {"aten::size", size},
      {"aten::mean", mean},
      {"aten::upsample_nearest2d", upsampleNearest},
      {"aten::upsample_bilinear2d", upsampleBilinear},
      {"aten::lstm", lstm},
      {"aten::dropout", dropout},
      {"aten::_scaled_dot_product_attention", scaledDotProductAttention},
      {"aten::feature_dropout", dropout},
      {"aten::identity", identity},
  };
  return table;
}

} // namespace lathe::frontend::torchscript
