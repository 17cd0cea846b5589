// Reference kernels for convolution, pooling and matrix products: direct loops over the
// ONNX definitions, accumulating in double.

#include "engine/graph_passes/constant_evaluator_internal.h"
#include "engine/reference/reference_ops_internal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

namespace lathe::reference::ops {
namespace {

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return -floorDiv(-a, b);
}

// A sliding window over up to three spatial axes; missing leading axes have extent 1.
struct Window {
  std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1},
      dilation{1, 1, 1}, padBegin{0, 0, 0}, padEnd{0, 0, 0};
  std::int64_t inPlane() const { return in[0] * in[1] * in[2]; }
  std::int64_t outPlane() const { return out[0] * out[1] * out[2]; }
  // Input coordinate on axis a of output position o and kernel position k.
  std::int64_t at(std::size_t a, std::int64_t o, std::int64_t k) const {
    return o * stride[a] - padBegin[a] + k * dilation[a];
  }
};

Window readWindow(const Node& node, const Dims& in, const Dims& out, const Dims& kernel) {
  const std::size_t spatial = in.size();
  if (spatial < 1 || spatial > 3)
    refuse(std::to_string(spatial) + " spatial axes (the reference handles 1 to 3)");
  const auto strides = node.attrInts("strides", Dims(spatial, 1));
  const auto dilations = node.attrInts("dilations", Dims(spatial, 1));
  const auto pads = node.attrInts("pads", Dims(2 * spatial, 0));
  const std::string autoPad = node.attrString("auto_pad", "NOTSET");
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial ||
      kernel.size() != spatial)
    refuse("strides, dilations, pads and kernel_shape must cover the spatial axes");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    refuse("auto_pad '" + autoPad + "'");
  Window w;
  const std::size_t skip = 3 - spatial;
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::size_t a = skip + i;
    w.in[a] = in[i];
    w.out[a] = out[i];
    w.kernel[a] = kernel[i];
    w.stride[a] = strides[i];
    w.dilation[a] = dilations[i];
    if (autoPad == "NOTSET") {
      w.padBegin[a] = pads[i];
      w.padEnd[a] = pads[i + spatial];
    } else if (autoPad != "VALID") {
      // SAME: out = ceil(in / stride); an odd total goes to the end (UPPER) or start (LOWER).
      const std::int64_t total = std::max<std::int64_t>(
          0, (out[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in[i]);
      w.padBegin[a] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd[a] = total - w.padBegin[a];
    }
  }
  return w;
}

Dims spatialOf(const Dims& dims) {
  return Dims(dims.begin() + 2, dims.end());
}

std::optional<Outputs> conv(const Node& node, const std::vector<TensorType>& out) {
  const Dims xDims = input(node, 0).dims(), wDims = input(node, 1).dims();
  const std::vector<double> x = floatInput(node, 0), w = floatInput(node, 1);
  const std::vector<double> bias =
      optionalInput(node, 2) ? floatInput(node, 2) : std::vector<double>{};
  const Dims yDims = out[0].staticDims();
  const Dims kernel = spatialOf(wDims);
  if (node.hasAttribute("kernel_shape") && node.attrInts("kernel_shape") != kernel)
    refuse("kernel_shape differs from the weight's spatial dims");
  const Window win = readWindow(node, spatialOf(xDims), spatialOf(yDims), kernel);
  const std::int64_t batch = xDims[0], channels = xDims[1], maps = wDims[0];
  const std::int64_t groupChannels = wDims[1], group = node.attrInt("group", 1);
  const std::int64_t mapsPerGroup = maps / group;
  const std::int64_t inPlane = win.inPlane(), outPlane = win.outPlane();
  const std::int64_t kernelSize = win.kernel[0] * win.kernel[1] * win.kernel[2];
  std::vector<double> y(static_cast<std::size_t>(product(yDims)));
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t m = 0; m < maps; ++m) {
      double* acc = &y[static_cast<std::size_t>((n * maps + m) * outPlane)];
      std::fill(acc, acc + outPlane, bias.empty() ? 0.0 : bias[static_cast<std::size_t>(m)]);
      const std::int64_t firstChannel = (m / mapsPerGroup) * groupChannels;
      for (std::int64_t c = 0; c < groupChannels; ++c) {
        const double* plane =
            &x[static_cast<std::size_t>((n * channels + firstChannel + c) * inPlane)];
        const double* weights = &w[static_cast<std::size_t>((m * groupChannels + c) * kernelSize)];
        for (std::int64_t kd = 0; kd < win.kernel[0]; ++kd)
          for (std::int64_t kh = 0; kh < win.kernel[1]; ++kh)
            for (std::int64_t kw = 0; kw < win.kernel[2]; ++kw) {
              const double weight = weights[(kd * win.kernel[1] + kh) * win.kernel[2] + kw];
              // The output columns whose input column lies inside the input.
              const std::int64_t shift = win.padBegin[2] - kw * win.dilation[2];
              const std::int64_t first = std::max<std::int64_t>(0, ceilDiv(shift, win.stride[2]));
              const std::int64_t last =
                  std::min(win.out[2] - 1, floorDiv(win.in[2] - 1 + shift, win.stride[2]));
              for (std::int64_t od = 0; od < win.out[0]; ++od) {
                const std::int64_t id = win.at(0, od, kd);
                if (id < 0 || id >= win.in[0])
                  continue;
                for (std::int64_t oh = 0; oh < win.out[1]; ++oh) {
                  const std::int64_t ih = win.at(1, oh, kh);
                  if (ih < 0 || ih >= win.in[1])
                    continue;
                  const double* row = plane + (id * win.in[1] + ih) * win.in[2];
                  double* outRow = acc + (od * win.out[1] + oh) * win.out[2];
                  for (std::int64_t ow = first; ow <= last; ++ow)
                    outRow[ow] += weight * row[ow * win.stride[2] - shift];
                }
              }
            }
      }
    }
  return Outputs{makeOutput(out[0], y)};
}

enum class Pooling { Max, Average, Lp };

// (sum |x|^p)^(1/p) of a window's values.
double lpNorm(const std::vector<double>& values, double p) {
  double sum = 0;
  for (double v : values)
    sum += std::pow(std::fabs(v), p);
  return std::pow(sum, 1.0 / p);
}

// MaxPool, AveragePool and LpPool: every output element visits its window.
template <Pooling Kind>
std::optional<Outputs> pool(const Node& node, const std::vector<TensorType>& out) {
  const Dims xDims = input(node, 0).dims();
  const std::vector<double> x = floatInput(node, 0);
  const Dims yDims = out[0].staticDims();
  const Window win =
      readWindow(node, spatialOf(xDims), spatialOf(yDims), node.attrInts("kernel_shape"));
  constexpr bool IsMax = Kind == Pooling::Max;
  const bool indices = IsMax && node.outputs().size() > 1 && node.output(1);
  const double norm = Kind == Pooling::Lp ? static_cast<double>(node.attrInt("p", 2)) : 2.0;
  if (indices && node.attrInt("storage_order", 0) != 0)
    refuse("MaxPool indices in column-major storage order");
  const bool includePad = Kind == Pooling::Average && node.attrInt("count_include_pad", 0) != 0;
  const std::int64_t planes = xDims[0] * xDims[1];
  std::vector<double> y(static_cast<std::size_t>(product(yDims)));
  std::vector<std::int64_t> where(indices ? y.size() : 0);
  std::size_t o = 0;
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t od = 0; od < win.out[0]; ++od)
      for (std::int64_t oh = 0; oh < win.out[1]; ++oh)
        for (std::int64_t ow = 0; ow < win.out[2]; ++ow, ++o) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          std::int64_t count = 0, padded = 1, bestAt = -1;
          std::vector<double> window;
          const std::array<std::int64_t, 3> pos{od, oh, ow};
          // The window positions inside the padded input count for count_include_pad.
          for (std::size_t a = 0; a < 3; ++a) {
            std::int64_t inside = 0;
            for (std::int64_t k = 0; k < win.kernel[a]; ++k) {
              const std::int64_t i = win.at(a, pos[a], k);
              inside += i >= -win.padBegin[a] && i < win.in[a] + win.padEnd[a];
            }
            padded *= inside;
          }
          for (std::int64_t kd = 0; kd < win.kernel[0]; ++kd) {
            const std::int64_t id = win.at(0, od, kd);
            if (id < 0 || id >= win.in[0])
              continue;
            for (std::int64_t kh = 0; kh < win.kernel[1]; ++kh) {
              const std::int64_t ih = win.at(1, oh, kh);
              if (ih < 0 || ih >= win.in[1])
                continue;
              for (std::int64_t kw = 0; kw < win.kernel[2]; ++kw) {
                const std::int64_t iw = win.at(2, ow, kw);
                if (iw < 0 || iw >= win.in[2])
                  continue;
                const std::int64_t flat =
                    (p * win.in[0] + id) * win.in[1] * win.in[2] + ih * win.in[2] + iw;
                const double v = x[static_cast<std::size_t>(flat)];
                if (v > best || bestAt < 0) {
                  best = v;
                  bestAt = flat;
                }
                sum += v;
                ++count;
                if constexpr (Kind == Pooling::Lp)
                  window.push_back(v);
              }
            }
          }
          if (count == 0)
            refuse("a pooling window lies entirely in the padding");
          if constexpr (Kind == Pooling::Lp)
            y[o] = lpNorm(window, norm);
          else
            y[o] = IsMax ? best : sum / static_cast<double>(includePad ? padded : count);
          if (indices)
            where[o] = bestAt;
        }
  Outputs outputs{makeOutput(out[0], y)};
  if (indices)
    outputs.push_back(passes::eval::makeTensor(DType::I64, out[1].staticDims(), where));
  else if (node.outputs().size() > 1)
    outputs.emplace_back();
  return outputs;
}

template <Pooling Kind>
std::optional<Outputs> globalPool(const Node& node, const std::vector<TensorType>& out) {
  const Dims xDims = input(node, 0).dims();
  const std::vector<double> x = floatInput(node, 0);
  const std::int64_t planes = xDims[0] * xDims[1];
  const std::int64_t size = product(spatialOf(xDims));
  if (size == 0)
    refuse("global pooling over an empty plane");
  std::vector<double> y(static_cast<std::size_t>(planes));
  for (std::int64_t p = 0; p < planes; ++p) {
    const auto first = x.begin() + p * size, last = first + size;
    double& out = y[static_cast<std::size_t>(p)];
    if constexpr (Kind == Pooling::Max)
      out = *std::max_element(first, last);
    else if constexpr (Kind == Pooling::Average)
      out = std::accumulate(first, last, 0.0) / double(size);
    else
      out = lpNorm(std::vector<double>(first, last), double(node.attrInt("p", 2)));
  }
  return Outputs{makeOutput(out[0], y)};
}

std::optional<Outputs> gemm(const Node& node, const std::vector<TensorType>& out) {
  const Dims aDims = input(node, 0).dims(), bDims = input(node, 1).dims();
  const std::vector<double> a = floatInput(node, 0), b = floatInput(node, 1);
  const bool transA = node.attrInt("transA", 0) != 0, transB = node.attrInt("transB", 0) != 0;
  const double alpha = node.attrFloat("alpha", 1.0f), beta = node.attrFloat("beta", 1.0f);
  const std::int64_t rows = transA ? aDims[1] : aDims[0], inner = transA ? aDims[0] : aDims[1];
  const std::int64_t cols = transB ? bDims[0] : bDims[1];
  const Dims yDims = out[0].staticDims();
  std::vector<double> y(static_cast<std::size_t>(rows * cols), 0.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      double acc = 0;
      for (std::int64_t k = 0; k < inner; ++k)
        acc += a[static_cast<std::size_t>(transA ? k * rows + i : i * inner + k)] *
               b[static_cast<std::size_t>(transB ? j * inner + k : k * cols + j)];
      y[static_cast<std::size_t>(i * cols + j)] = alpha * acc;
    }
  if (const TensorData* c = optionalInput(node, 2)) {
    const std::vector<double> cv = floatInput(node, 2);
    const auto from = passes::eval::broadcastSources(yDims, c->dims());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] += beta * cv[static_cast<std::size_t>(from[i])];
  }
  return Outputs{makeOutput(out[0], y)};
}

// numpy matmul: 1-D operands gain (and lose) a unit axis, batch axes broadcast.
std::optional<Outputs> matmul(const Node& node, const std::vector<TensorType>& out) {
  Dims aDims = input(node, 0).dims(), bDims = input(node, 1).dims();
  const std::vector<double> a = floatInput(node, 0), b = floatInput(node, 1);
  if (aDims.size() == 1)
    aDims.insert(aDims.begin(), 1);
  if (bDims.size() == 1)
    bDims.push_back(1);
  const std::int64_t rows = aDims[aDims.size() - 2], inner = aDims.back(), cols = bDims.back();
  const Dims aBatch(aDims.begin(), aDims.end() - 2), bBatch(bDims.begin(), bDims.end() - 2);
  Dims batch(std::max(aBatch.size(), bBatch.size()), 1);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::size_t fromEnd = batch.size() - i;
    const std::int64_t da = fromEnd <= aBatch.size() ? aBatch[aBatch.size() - fromEnd] : 1;
    const std::int64_t db = fromEnd <= bBatch.size() ? bBatch[bBatch.size() - fromEnd] : 1;
    batch[i] = da == 1 ? db : da;
  }
  const auto aFrom = passes::eval::broadcastSources(batch, aBatch);
  const auto bFrom = passes::eval::broadcastSources(batch, bBatch);
  std::vector<double> y(static_cast<std::size_t>(product(batch) * rows * cols), 0.0);
  for (std::size_t p = 0; p < aFrom.size(); ++p) {
    const double* am = &a[static_cast<std::size_t>(aFrom[p] * rows * inner)];
    const double* bm = &b[static_cast<std::size_t>(bFrom[p] * inner * cols)];
    double* ym = &y[p * static_cast<std::size_t>(rows * cols)];
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t k = 0; k < inner; ++k) {
        const double v = am[i * inner + k];
        for (std::int64_t j = 0; j < cols; ++j)
          ym[i * cols + j] += v * bm[k * cols + j];
      }
  }
  return Outputs{makeOutput(out[0], y)};
}

} // namespace

void addNetworkKernels(KernelTable& table) {
  table["Conv"] = conv;
  table["MaxPool"] = pool<Pooling::Max>;
  table["AveragePool"] = pool<Pooling::Average>;
  table["LpPool"] = pool<Pooling::Lp>;
  table["GlobalMaxPool"] = globalPool<Pooling::Max>;
  table["GlobalAveragePool"] = globalPool<Pooling::Average>;
  table["GlobalLpPool"] = globalPool<Pooling::Lp>;
  table["Gemm"] = gemm;
  table["MatMul"] = matmul;
}

} // namespace lathe::reference::ops
