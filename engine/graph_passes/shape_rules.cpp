// Shape rules for elementwise, normalization, convolution, pooling and matrix ops, plus the
// helpers and the dispatch shared with shape_rules_data.cpp.

#include "engine/graph_passes/shape_rules.h"

#include "engine/graph_passes/shape_rules_internal.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <map>

namespace lathe::passes::rules {

void fail(const Node& node, const std::string& reason) {
  throw Error(ErrorKind::Invalid, reason, ErrorLocation{{}, node.name, node.opType()});
}

const TensorType* inputType(const Node& node, std::size_t i) {
  const graph::Value* v = node.input(i);
  return v ? &v->type : nullptr;
}

DType inputDType(const Node& node, std::size_t i) {
  const TensorType* t = inputType(node, i);
  return t ? t->dtype : DType::Undefined;
}

std::optional<std::vector<std::int64_t>> constantInts(const Node& node, std::size_t i) {
  const graph::Value* v = node.input(i);
  if (!v || !v->isConstant() || v->constant().isElided())
    return std::nullopt;
  const graph::TensorData& data = v->constant();
  std::vector<std::int64_t> out(static_cast<std::size_t>(data.numElements()));
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = data.elementAsInt(static_cast<std::int64_t>(k));
  return out;
}

std::optional<std::vector<double>> constantReals(const Node& node, std::size_t i) {
  const graph::Value* v = node.input(i);
  if (!v || !v->isConstant() || v->constant().isElided())
    return std::nullopt;
  const graph::TensorData& data = v->constant();
  std::vector<double> out(static_cast<std::size_t>(data.numElements()));
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = data.elementAsDouble(static_cast<std::int64_t>(k));
  return out;
}

std::optional<std::vector<std::int64_t>> intsFromInputOrAttribute(const Node& node,
                                                                  std::size_t input,
                                                                  const std::string& attribute,
                                                                  bool* given) {
  if (given)
    *given = true;
  if (node.input(input))
    return constantInts(node, input);
  if (node.hasAttribute(attribute))
    return node.attrInts(attribute);
  if (given)
    *given = false;
  return std::vector<std::int64_t>{};
}

TensorType makeType(DType dtype, Shape shape) {
  TensorType t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

TensorType unknownDims(DType dtype, std::size_t rank) {
  return makeType(dtype, Shape(rank, Dim::unknown()));
}

TensorType unknownRank(DType dtype) {
  TensorType t;
  t.dtype = dtype;
  return t;
}

Shape knownDims(const std::vector<std::int64_t>& dims) {
  Shape shape;
  for (std::int64_t d : dims)
    shape.push_back(Dim::known(d));
  return shape;
}

Dim broadcastDim(const Node& node, const Dim& a, const Dim& b, std::size_t axis) {
  if (a.isKnown() && b.isKnown()) {
    if (a.value == b.value || b.value == 1)
      return a;
    if (a.value == 1)
      return b;
    fail(node, "cannot broadcast dimension " + std::to_string(a.value) + " with " +
                   std::to_string(b.value) + " at output axis " + std::to_string(axis));
  }
  // A known extent other than 1 wins: the other side must be 1 or equal to it.
  if (a.isKnown())
    return a.value == 1 ? b : a;
  if (b.isKnown())
    return b.value == 1 ? a : b;
  if (a.isSymbolic() && a == b)
    return a;
  return Dim::unknown();
}

Shape broadcastShapes(const Node& node, const std::vector<const Shape*>& shapes) {
  std::size_t rank = 0;
  for (const Shape* s : shapes)
    rank = std::max(rank, s->size());
  Shape out(rank, Dim::known(1));
  for (const Shape* s : shapes) {
    const std::size_t offset = rank - s->size();
    for (std::size_t i = 0; i < s->size(); ++i)
      out[offset + i] = broadcastDim(node, out[offset + i], (*s)[i], offset + i);
  }
  return out;
}

std::optional<Shape> broadcastTypes(const Node& node, const std::vector<const TensorType*>& types) {
  std::vector<const Shape*> shapes;
  for (const TensorType* t : types) {
    if (!t->shape)
      return std::nullopt;
    shapes.push_back(&*t->shape);
  }
  return broadcastShapes(node, shapes);
}

Dim unifyDims(const Node& node, const Dim& a, const Dim& b, const std::string& what) {
  if (a.isKnown() && b.isKnown() && a.value != b.value)
    fail(node,
         what + " must match, got " + std::to_string(a.value) + " and " + std::to_string(b.value));
  if (a.isKnown() || a.isSymbolic())
    return a.isKnown() || !b.isKnown() ? a : b;
  return b;
}

Dim productOfDims(Shape::const_iterator first, Shape::const_iterator last) {
  std::int64_t product = 1;
  const Dim* symbol = nullptr;
  for (auto it = first; it != last; ++it) {
    if (it->isKnown()) {
      product *= it->value;
    } else if (it->isSymbolic() && !symbol) {
      symbol = &*it;
    } else {
      return Dim::unknown();
    }
  }
  if (!symbol)
    return Dim::known(product);
  return product == 1 ? *symbol : Dim::unknown();
}

} // namespace lathe::passes::rules

namespace lathe::passes {
namespace {

using namespace rules;

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// --- elementwise -------------------------------------------------------------------------

std::optional<Types> sameTypeAsInput(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  return Types(n.outputs().size(), *x);
}

std::optional<Types> boolOfInputShape(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  TensorType t = *x;
  t.dtype = DType::Bool;
  return Types{t};
}

std::optional<Types> inferCast(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  TensorType t = *x;
  if (n.opType() == "CastLike") {
    t.dtype = inputDType(n, 1);
  } else {
    const auto to = graph::dtypeFromOnnxCode(n.attrInt("to", 0));
    if (!to)
      return std::nullopt; // strings and other types Lathe does not represent
    t.dtype = *to;
  }
  return Types{t};
}

std::optional<Types> inferEyeLike(const Node& n) {
  auto types = sameTypeAsInput(n);
  if (types && n.hasAttribute("dtype"))
    if (auto dt = graph::dtypeFromOnnxCode(n.attrInt("dtype", 0)))
      (*types)[0].dtype = *dt;
  return types;
}

std::optional<Types> inferDropout(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  TensorType mask = *x;
  mask.dtype = DType::Bool;
  return Types{*x, mask};
}

// Numpy broadcasting over every present input; the element type is that of the first input
// that has one, or bool for comparisons.
std::optional<Types> inferBroadcast(const Node& n) {
  std::vector<const TensorType*> types;
  DType dtype = DType::Undefined;
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    if (const TensorType* t = inputType(n, i)) {
      types.push_back(t);
      if (dtype == DType::Undefined)
        dtype = t->dtype;
    }
  if (types.empty())
    return std::nullopt;
  static const char* const kComparisons[] = {"Equal", "Greater", "GreaterOrEqual", "Less",
                                             "LessOrEqual"};
  if (std::find(std::begin(kComparisons), std::end(kComparisons), n.opType()) !=
      std::end(kComparisons))
    dtype = DType::Bool;
  const auto shape = broadcastTypes(n, types);
  return Types{shape ? makeType(dtype, *shape) : unknownRank(dtype)};
}

std::optional<Types> inferWhere(const Node& n) {
  const TensorType *c = inputType(n, 0), *x = inputType(n, 1), *y = inputType(n, 2);
  if (!c || !x || !y)
    return std::nullopt;
  const DType dtype = x->dtype != DType::Undefined ? x->dtype : y->dtype;
  const auto shape = broadcastTypes(n, {c, x, y});
  return Types{shape ? makeType(dtype, *shape) : unknownRank(dtype)};
}

// --- normalization -----------------------------------------------------------------------

std::optional<Types> inferBatchNorm(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  // Training mode's running mean and variance have the shape of the inputs they update.
  Types out{*x};
  for (std::size_t i = 1; i < n.outputs().size(); ++i) {
    const TensorType* stat = inputType(n, 2 + i);
    out.push_back(stat ? *stat : TensorType{});
  }
  return out;
}

std::optional<Types> inferLayerNorm(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const DType statType =
      graph::dtypeFromOnnxCode(n.attrInt("stash_type", 1)).value_or(DType::Undefined);
  TensorType stats = unknownRank(statType);
  if (x->shape) {
    // Mean and inverse std keep the leading axes and reduce the normalized ones to 1.
    const auto rank = static_cast<std::int64_t>(x->rank());
    const std::int64_t axis = normalizeAxis(n, n.attrInt("axis", -1), rank);
    Shape shape = *x->shape;
    std::fill(shape.begin() + axis, shape.end(), Dim::known(1));
    stats = makeType(statType, shape);
  }
  return Types{*x, stats, stats};
}

// --- convolution and pooling -------------------------------------------------------------

// Attributes shared by Conv, ConvTranspose and the pools, for `spatial` spatial axes.
struct Window {
  std::vector<std::int64_t> kernel, strides, dilations, pads;
  std::string autoPad;
  bool ceilMode = false;
};

Window readWindow(const Node& n, std::size_t spatial, std::vector<std::int64_t> kernel) {
  Window w;
  w.kernel = std::move(kernel);
  w.strides = n.attrInts("strides", std::vector<std::int64_t>(spatial, 1));
  w.dilations = n.attrInts("dilations", std::vector<std::int64_t>(spatial, 1));
  w.pads = n.attrInts("pads", std::vector<std::int64_t>(2 * spatial, 0));
  w.autoPad = n.attrString("auto_pad", "NOTSET");
  w.ceilMode = n.attrInt("ceil_mode", 0) != 0;
  if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial)
    fail(n, "kernel_shape, strides, dilations and pads must cover the " + std::to_string(spatial) +
                " spatial axes");
  for (std::size_t i = 0; i < spatial; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      fail(n, "kernel sizes, strides and dilations must be positive");
  if (w.autoPad == "VALID")
    std::fill(w.pads.begin(), w.pads.end(), 0);
  return w;
}

bool isSamePadding(const Window& w) {
  return w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER";
}

// Output extent of a sliding window along spatial axis i.
Dim windowOutput(const Node& n, const Window& w, std::size_t i, const Dim& in) {
  if (!in.isKnown())
    return Dim::unknown();
  if (isSamePadding(w))
    return Dim::known(ceilDiv(in.value, w.strides[i]));
  const std::int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
  const std::int64_t padded = in.value + w.pads[i] + w.pads[i + w.kernel.size()];
  if (padded < span)
    fail(n, "a window of " + std::to_string(span) + " does not fit the padded input of " +
                std::to_string(padded) + " on spatial axis " + std::to_string(i));
  if (!w.ceilMode)
    return Dim::known((padded - span) / w.strides[i] + 1);
  std::int64_t out = ceilDiv(padded - span, w.strides[i]) + 1;
  // A last window that would start in the right padding is dropped (as PyTorch and ORT do).
  if ((out - 1) * w.strides[i] >= in.value + w.pads[i])
    --out;
  return Dim::known(out);
}

// The rank of an N-d conv/pool input, checked to have a batch, a channel and spatial axes.
std::optional<std::size_t> convRank(const Node& n, const TensorType* x, const TensorType* w) {
  if (x && w && x->shape && w->shape && x->rank() != w->rank())
    fail(n, "input rank " + std::to_string(x->rank()) + " and weight rank " +
                std::to_string(w->rank()) + " differ");
  const TensorType* ranked = x && x->shape ? x : (w && w->shape ? w : nullptr);
  if (!ranked)
    return std::nullopt;
  if (ranked->rank() < 3)
    fail(n, "needs rank 3 or more (batch, channels, spatial axes), got rank " +
                std::to_string(ranked->rank()));
  return ranked->rank();
}

// The kernel's spatial extent: the attribute, else the weight's trailing dims.
std::optional<std::vector<std::int64_t>> convKernel(const Node& n, const TensorType& w,
                                                    std::size_t spatial) {
  if (n.hasAttribute("kernel_shape"))
    return n.attrInts("kernel_shape");
  if (!w.shape)
    return std::nullopt;
  std::vector<std::int64_t> kernel;
  for (std::size_t i = 0; i < spatial; ++i) {
    const Dim& d = (*w.shape)[2 + i];
    if (!d.isKnown())
      return std::nullopt;
    kernel.push_back(d.value);
  }
  return kernel;
}

const Dim& dimOr(const TensorType* t, std::size_t i, const Dim& fallback) {
  return t && t->shape ? (*t->shape)[i] : fallback;
}

std::optional<Types> inferConv(const Node& n) {
  const TensorType *x = inputType(n, 0), *w = inputType(n, 1);
  if (!x || !w)
    return std::nullopt;
  const DType dtype = x->dtype != DType::Undefined ? x->dtype : w->dtype;
  const auto rank = convRank(n, x, w);
  if (!rank)
    return Types{unknownRank(dtype)};
  const std::size_t spatial = *rank - 2;
  const std::int64_t group = n.attrInt("group", 1);
  const Dim unknown;
  const Dim &inChannels = dimOr(x, 1, unknown), &weightChannels = dimOr(w, 1, unknown);
  if (group < 1)
    fail(n, "group must be positive");
  if (inChannels.isKnown() && weightChannels.isKnown() &&
      inChannels.value != weightChannels.value * group)
    fail(n, "input has " + std::to_string(inChannels.value) + " channels but the weight expects " +
                std::to_string(weightChannels.value) + " x group " + std::to_string(group));
  Shape out(*rank, Dim::unknown());
  out[0] = dimOr(x, 0, unknown);
  out[1] = dimOr(w, 0, unknown);
  const auto kernel = convKernel(n, *w, spatial);
  if (kernel && x->shape) {
    const Window win = readWindow(n, spatial, *kernel);
    for (std::size_t i = 0; i < spatial; ++i)
      out[2 + i] = windowOutput(n, win, i, (*x->shape)[2 + i]);
  }
  return Types{makeType(dtype, out)};
}

std::optional<Types> inferConvTranspose(const Node& n) {
  const TensorType *x = inputType(n, 0), *w = inputType(n, 1);
  if (!x || !w)
    return std::nullopt;
  const DType dtype = x->dtype != DType::Undefined ? x->dtype : w->dtype;
  const auto rank = convRank(n, x, w);
  if (!rank)
    return Types{unknownRank(dtype)};
  const std::size_t spatial = *rank - 2;
  const std::int64_t group = n.attrInt("group", 1);
  const Dim unknown;
  unifyDims(n, dimOr(x, 1, unknown), dimOr(w, 0, unknown), "input channels and weight dim 0");
  Shape out(*rank, Dim::unknown());
  out[0] = dimOr(x, 0, unknown);
  const Dim& perGroup = dimOr(w, 1, unknown);
  out[1] = perGroup.isKnown() ? Dim::known(perGroup.value * group)
                              : (group == 1 ? perGroup : Dim::unknown());
  if (n.hasAttribute("output_shape")) {
    // Given with or without the batch and channel axes; the spatial extents are the last ones.
    const auto given = n.attrInts("output_shape");
    if (given.size() < spatial)
      fail(n, "output_shape has fewer entries than spatial axes");
    for (std::size_t i = 0; i < spatial; ++i)
      out[2 + i] = Dim::known(given[given.size() - spatial + i]);
    return Types{makeType(dtype, out)};
  }
  const auto kernel = convKernel(n, *w, spatial);
  if (!kernel || !x->shape)
    return Types{makeType(dtype, out)};
  const Window win = readWindow(n, spatial, *kernel);
  const auto outputPadding = n.attrInts("output_padding", std::vector<std::int64_t>(spatial, 0));
  if (outputPadding.size() != spatial)
    fail(n, "output_padding must cover the spatial axes");
  for (std::size_t i = 0; i < spatial; ++i) {
    const Dim& in = (*x->shape)[2 + i];
    if (!in.isKnown())
      continue;
    const std::int64_t span = (win.kernel[i] - 1) * win.dilations[i] + 1;
    const std::int64_t extent = isSamePadding(win)
                                    ? in.value * win.strides[i]
                                    : win.strides[i] * (in.value - 1) + outputPadding[i] + span -
                                          win.pads[i] - win.pads[i + spatial];
    if (extent < 0)
      fail(n, "output extent on spatial axis " + std::to_string(i) + " is negative");
    out[2 + i] = Dim::known(extent);
  }
  return Types{makeType(dtype, out)};
}

std::optional<Types> inferPool(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const bool withIndices = n.opType() == "MaxPool";
  auto result = [&](TensorType t) {
    TensorType indices = t;
    indices.dtype = DType::I64;
    return withIndices ? Types{t, indices} : Types{t};
  };
  const auto rank = convRank(n, x, nullptr);
  if (!rank)
    return result(unknownRank(x->dtype));
  if (!n.hasAttribute("kernel_shape"))
    fail(n, "needs the kernel_shape attribute");
  const std::size_t spatial = *rank - 2;
  const Window win = readWindow(n, spatial, n.attrInts("kernel_shape"));
  Shape out = *x->shape;
  for (std::size_t i = 0; i < spatial; ++i)
    out[2 + i] = windowOutput(n, win, i, (*x->shape)[2 + i]);
  return result(makeType(x->dtype, out));
}

std::optional<Types> inferGlobalPool(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const auto rank = convRank(n, x, nullptr);
  if (!rank)
    return Types{*x};
  Shape out = *x->shape;
  std::fill(out.begin() + 2, out.end(), Dim::known(1));
  return Types{makeType(x->dtype, out)};
}

// --- matrix products ---------------------------------------------------------------------

std::optional<Types> inferGemm(const Node& n) {
  const TensorType *a = inputType(n, 0), *b = inputType(n, 1);
  if (!a || !b)
    return std::nullopt;
  for (const TensorType* t : {a, b})
    if (t->shape && t->rank() != 2)
      fail(n, "A and B must be matrices, got rank " + std::to_string(t->rank()));
  const bool transA = n.attrInt("transA", 0) != 0, transB = n.attrInt("transB", 0) != 0;
  const Dim unknown;
  const Dim& m = dimOr(a, transA ? 1 : 0, unknown);
  const Dim& kA = dimOr(a, transA ? 0 : 1, unknown);
  const Dim& kB = dimOr(b, transB ? 1 : 0, unknown);
  const Dim& cols = dimOr(b, transB ? 0 : 1, unknown);
  unifyDims(n, kA, kB, "the inner dimensions of A and B");
  return Types{makeType(a->dtype != DType::Undefined ? a->dtype : b->dtype, {m, cols})};
}

std::optional<Types> inferMatMul(const Node& n) {
  const TensorType *a = inputType(n, 0), *b = inputType(n, 1);
  if (!a || !b)
    return std::nullopt;
  const DType dtype = a->dtype != DType::Undefined ? a->dtype : b->dtype;
  if (!a->shape || !b->shape)
    return Types{unknownRank(dtype)};
  if (a->rank() == 0 || b->rank() == 0)
    fail(n, "operands must have rank 1 or more");
  // Vectors are promoted to matrices, and the added axis is dropped again afterwards.
  Shape sa = *a->shape, sb = *b->shape;
  if (sa.size() == 1)
    sa.insert(sa.begin(), Dim::known(1));
  if (sb.size() == 1)
    sb.push_back(Dim::known(1));
  unifyDims(n, sa.back(), sb[sb.size() - 2], "the inner dimensions of A and B");
  const Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  Shape out = broadcastShapes(n, {&batchA, &batchB});
  if (a->rank() > 1)
    out.push_back(sa[sa.size() - 2]);
  if (b->rank() > 1)
    out.push_back(sb.back());
  return Types{makeType(dtype, out)};
}

// Einsum with explicit or implicit output and optional ellipses.
std::optional<Types> inferEinsum(const Node& n) {
  std::string eq;
  for (char c : n.attrString("equation", ""))
    if (c != ' ')
      eq += c;
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back().push_back(c);
  }
  if (terms.size() != n.inputs.size())
    fail(n, "the equation names " + std::to_string(terms.size()) + " operands");
  std::map<char, Dim> letters;
  std::map<char, int> counts;
  std::vector<const Shape*> ellipses;
  std::vector<Shape> ellipsisStore(terms.size());
  DType dtype = DType::Undefined;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    const TensorType* type = inputType(n, t);
    if (!type || !type->shape)
      return std::nullopt;
    if (dtype == DType::Undefined)
      dtype = type->dtype;
    const std::string& term = terms[t];
    const auto dots = term.find("...");
    const std::size_t named = term.size() - (dots == std::string::npos ? 0 : 3);
    if (named > type->rank() || (dots == std::string::npos && named != type->rank()))
      fail(n, "operand " + std::to_string(t) + " of rank " + std::to_string(type->rank()) +
                  " does not match '" + term + "'");
    const std::size_t ellipsisRank = type->rank() - named;
    std::size_t axis = 0;
    for (std::size_t i = 0; i < term.size(); ++i) {
      if (i == dots) {
        ellipsisStore[t].assign(type->shape->begin() + axis,
                                type->shape->begin() + axis + ellipsisRank);
        ellipses.push_back(&ellipsisStore[t]);
        axis += ellipsisRank;
        i += 2;
        continue;
      }
      const Dim& d = (*type->shape)[axis++];
      auto [it, fresh] = letters.emplace(term[i], d);
      if (!fresh) // a letter of extent 1 broadcasts against the others
        it->second = it->second.isKnown() && it->second.value == 1
                         ? d
                         : (d.isKnown() && d.value == 1
                                ? it->second
                                : unifyDims(n, it->second, d, std::string("label ") + term[i]));
      ++counts[term[i]];
    }
  }
  const Shape ellipsis = broadcastShapes(n, ellipses);
  std::string rhs;
  if (arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
  } else { // implicit output: the ellipsis, then labels used once, alphabetically
    rhs = ellipses.empty() ? "" : "...";
    for (const auto& [c, count] : counts)
      if (count == 1)
        rhs += c;
  }
  Shape out;
  for (std::size_t i = 0; i < rhs.size(); ++i) {
    if (rhs.compare(i, 3, "...") == 0) {
      out.insert(out.end(), ellipsis.begin(), ellipsis.end());
      i += 2;
    } else if (letters.count(rhs[i])) {
      out.push_back(letters[rhs[i]]);
    } else {
      fail(n, std::string("output label ") + rhs[i] + " does not appear in any operand");
    }
  }
  return Types{makeType(dtype, out)};
}

// RNN, GRU and LSTM: Y, then the last hidden state (and LSTM's last cell state).
std::optional<Types> inferRecurrent(const Node& n) {
  const TensorType *x = inputType(n, 0), *r = inputType(n, 2);
  if (!x)
    return std::nullopt;
  const Dim unknown;
  const bool batchFirst = n.attrInt("layout", 0) != 0;
  const Dim dirs = Dim::known(n.attrString("direction", "forward") == "bidirectional" ? 2 : 1);
  const Dim hidden = n.hasAttribute("hidden_size") ? Dim::known(n.attrInt("hidden_size", 0))
                                                   : dimOr(r, 2, unknown);
  const Dim& seq = dimOr(x, batchFirst ? 1 : 0, unknown);
  const Dim& batch = dimOr(x, batchFirst ? 0 : 1, unknown);
  const TensorType y = makeType(x->dtype, batchFirst ? Shape{batch, seq, dirs, hidden}
                                                     : Shape{seq, dirs, batch, hidden});
  const TensorType state =
      makeType(x->dtype, batchFirst ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden});
  return Types{y, state, state};
}

} // namespace

namespace rules {

Rule findComputeRule(const std::string& op) {
  static const std::map<std::string, Rule, std::less<>> kRules = [] {
    std::map<std::string, Rule, std::less<>> m;
    for (const char* op : {"Abs",
                           "Acos",
                           "Acosh",
                           "Asin",
                           "Asinh",
                           "Atan",
                           "Atanh",
                           "Ceil",
                           "Celu",
                           "Clip",
                           "Cos",
                           "Cosh",
                           "CumSum",
                           "Elu",
                           "Erf",
                           "Exp",
                           "Floor",
                           "Hardmax",
                           "HardSigmoid",
                           "HardSwish",
                           "Identity",
                           "InstanceNormalization",
                           "LRN",
                           "LeakyRelu",
                           "Log",
                           "LogSoftmax",
                           "LpNormalization",
                           "MeanVarianceNormalization",
                           "Neg",
                           "Reciprocal",
                           "Relu",
                           "ReverseSequence",
                           "Round",
                           "ScatterElements",
                           "ScatterND",
                           "Selu",
                           "Sigmoid",
                           "Sign",
                           "Sin",
                           "Sinh",
                           "Softmax",
                           "Softplus",
                           "Softsign",
                           "Sqrt",
                           "Tan",
                           "Tanh",
                           "ThresholdedRelu",
                           "Trilu"})
      m[op] = sameTypeAsInput;
    for (const char* op : {"IsNaN", "IsInf", "Not"})
      m[op] = boolOfInputShape;
    for (const char* op : {"Add",  "Sub",        "Mul",      "Div",   "Pow",     "Mod",
                           "Max",  "Min",        "Sum",      "Mean",  "And",     "Or",
                           "Xor",  "PRelu",      "BitShift", "Equal", "Greater", "GreaterOrEqual",
                           "Less", "LessOrEqual"})
      m[op] = inferBroadcast;
    for (const char* op : {"MaxPool", "AveragePool", "LpPool"})
      m[op] = inferPool;
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
      m[op] = inferGlobalPool;
    for (const char* op : {"RNN", "GRU", "LSTM"})
      m[op] = inferRecurrent;
    m["Cast"] = m["CastLike"] = inferCast;
    m["EyeLike"] = inferEyeLike;
    m["Dropout"] = inferDropout;
    m["Where"] = inferWhere;
    m["BatchNormalization"] = inferBatchNorm;
    m["LayerNormalization"] = inferLayerNorm;
    m["Conv"] = inferConv;
    m["ConvTranspose"] = inferConvTranspose;
    m["Gemm"] = inferGemm;
    m["MatMul"] = inferMatMul;
    m["Einsum"] = inferEinsum;
    return m;
  }();
  auto it = kRules.find(op);
  return it == kRules.end() ? nullptr : it->second;
}

} // namespace rules

std::optional<std::vector<graph::TensorType>> inferOutputTypes(const graph::Node& node) {
  if (!node.domain().empty())
    return std::nullopt;
  Rule rule = findComputeRule(node.opType());
  if (!rule)
    rule = findDataRule(node.opType());
  return rule ? rule(node) : std::nullopt;
}

std::int64_t normalizeAxis(const graph::Node& node, std::int64_t axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail(node,
         "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

} // namespace lathe::passes
