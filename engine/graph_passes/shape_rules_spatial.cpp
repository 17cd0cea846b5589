// Shape rules for convolution, pooling, recurrent and resampling ops (the ops with spatial
// or sequence axes).

#include "engine/graph_passes/shape_rules.h"
#include "engine/graph_passes/shape_rules_internal.h"

#include <algorithm>
#include <cmath>

namespace lathe::passes {
namespace {

using namespace rules;

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
    const std::int64_t unpadded = win.strides[i] * (in.value - 1) + outputPadding[i] + span;
    // SAME pads down to in * stride, but padding cannot be negative (as in ORT).
    const std::int64_t extent = isSamePadding(win) ? std::min(unpadded, in.value * win.strides[i])
                                                   : unpadded - win.pads[i] - win.pads[i + spatial];
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

// --- recurrent layers --------------------------------------------------------------------

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

// --- resampling ------------------------------------------------------------------------

std::optional<Types> inferResize(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownRank(x->dtype)};
  const bool upsample = n.opType() == "Upsample" || n.inputs.size() == 2;
  const auto scales = constantReals(n, upsample ? 1 : 2);
  const auto sizes = upsample ? std::nullopt : constantInts(n, 3);
  const auto axesAttr = n.attrInts("axes");
  std::vector<std::int64_t> axes;
  for (std::int64_t a : axesAttr)
    axes.push_back(normalizeAxis(n, a, rankOf(*x)));
  if (axes.empty())
    for (std::int64_t a = 0; a < rankOf(*x); ++a)
      axes.push_back(a);
  Shape out = *x->shape;
  const bool stretch = n.attrString("keep_aspect_ratio_policy", "stretch") == "stretch";
  const bool crops = n.attrString("coordinate_transformation_mode", "") == "tf_crop_and_resize";
  if (sizes && !sizes->empty() && stretch) {
    if (sizes->size() != axes.size())
      fail(n, "sizes has " + std::to_string(sizes->size()) + " entries for " +
                  std::to_string(axes.size()) + " axes");
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if ((*sizes)[i] < 0)
        fail(n, "negative output size " + std::to_string((*sizes)[i]));
      out[static_cast<std::size_t>(axes[i])] = Dim::known((*sizes)[i]);
    }
  } else if (scales && !scales->empty() && !crops) {
    if (scales->size() != axes.size())
      fail(n, "scales has " + std::to_string(scales->size()) + " entries for " +
                  std::to_string(axes.size()) + " axes");
    for (std::size_t i = 0; i < axes.size(); ++i) {
      Dim& d = out[static_cast<std::size_t>(axes[i])];
      if (d.isKnown())
        d = Dim::known(static_cast<std::int64_t>(std::floor(double(d.value) * (*scales)[i])));
      else if ((*scales)[i] != 1.0)
        d = Dim::unknown();
    }
  } else {
    return Types{unknownDims(x->dtype, x->rank())};
  }
  return Types{makeType(x->dtype, out)};
}

// DepthToSpace and SpaceToDepth on NCHW.
std::optional<Types> inferDepthSpace(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  if (!x->shape)
    return Types{unknownDims(x->dtype, 4)};
  if (x->rank() != 4)
    fail(n, "needs a rank-4 input, got rank " + std::to_string(x->rank()));
  const std::int64_t b = n.attrInt("blocksize", 0);
  if (b < 1)
    fail(n, "blocksize must be positive");
  const bool toSpace = n.opType() == "DepthToSpace";
  Shape out = *x->shape;
  auto scale = [&](Dim& d, bool grow, std::int64_t f, const char* what) {
    if (!d.isKnown())
      return;
    if (!grow && d.value % f != 0)
      fail(n, std::string(what) + " extent " + std::to_string(d.value) + " is not divisible by " +
                  std::to_string(f));
    d = Dim::known(grow ? d.value * f : d.value / f);
  };
  scale(out[1], !toSpace, b * b, "channel");
  scale(out[2], toSpace, b, "height");
  scale(out[3], toSpace, b, "width");
  return Types{makeType(x->dtype, out)};
}

} // namespace

void rules::addSpatialRules(RuleTable& rules) {
  addRules(rules, "MaxPool AveragePool LpPool", inferPool);
  addRules(rules, "GlobalAveragePool GlobalMaxPool GlobalLpPool", inferGlobalPool);
  addRules(rules, "RNN GRU LSTM", inferRecurrent);
  rules["Conv"] = inferConv;
  rules["ConvTranspose"] = inferConvTranspose;
  rules["Resize"] = rules["Upsample"] = inferResize;
  rules["DepthToSpace"] = rules["SpaceToDepth"] = inferDepthSpace;
}

} // namespace lathe::passes
