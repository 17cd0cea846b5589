// Reference kernels for Pad (every element type, by bytes) and LSTM (plain loops over time,
// batch and gates in double).

#include "engine/reference/reference_ops_internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace lathe::reference::ops {
namespace {

// The input coordinate that output coordinate `c` (already shifted by the leading pad)
// reads in `mode`, or -1 for the constant.
std::int64_t sourceIndex(std::int64_t c, std::int64_t n, const std::string& mode) {
  if (c >= 0 && c < n)
    return c;
  if (mode == "constant")
    return -1;
  if (mode == "edge")
    return c < 0 ? 0 : n - 1;
  // reflect, without repeating the edge: -1 reads 1, n reads n - 2.
  if (n == 1)
    return 0;
  const std::int64_t period = 2 * (n - 1);
  std::int64_t m = ((c % period) + period) % period;
  return m < n ? m : period - m;
}

std::optional<Outputs> pad(const Node& node, const std::vector<TensorType>& out) {
  const TensorData& data = input(node, 0);
  const std::string mode = node.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    refuse("Pad mode '" + mode + "'");
  if (optionalInput(node, 3))
    refuse("Pad with an axes input");
  const TensorData& padsData = input(node, 1);
  const Dims& in = data.dims();
  const std::size_t rank = in.size();
  if (static_cast<std::size_t>(padsData.numElements()) != 2 * rank)
    refuse("pads has " + std::to_string(padsData.numElements()) + " values for rank " +
           std::to_string(rank));
  Dims begin(rank);
  for (std::size_t i = 0; i < rank; ++i)
    begin[i] = padsData.elementAsInt(static_cast<std::int64_t>(i));
  const Dims dims = out[0].staticDims();
  if (mode != "constant")
    for (std::size_t i = 0; i < rank; ++i)
      if (dims[i] > 0 && in[i] == 0)
        refuse("Pad mode '" + mode + "' of an empty axis");
  const std::size_t size = graph::dtypeSize(data.dtype());
  std::string fill(size, '\0');
  if (const TensorData* value = optionalInput(node, 2); value && value->numElements() > 0) {
    if (value->dtype() != data.dtype())
      refuse("constant_value's type differs from the data's");
    std::memcpy(fill.data(), value->data(), size);
  }
  const Dims inStrides = stridesOf(in);
  const std::int64_t count = product(dims);
  auto bytes = std::make_shared<std::string>();
  bytes->reserve(static_cast<std::size_t>(count) * size);
  Dims at(rank, 0);
  const auto* source = reinterpret_cast<const char*>(data.data());
  for (std::int64_t flat = 0; flat < count; ++flat) {
    std::int64_t offset = 0;
    bool inside = true;
    for (std::size_t i = 0; i < rank && inside; ++i) {
      const std::int64_t c = sourceIndex(at[i] - begin[i], in[i], mode);
      inside = c >= 0;
      offset += c * inStrides[i];
    }
    if (inside)
      bytes->append(source + offset * static_cast<std::int64_t>(size), size);
    else
      bytes->append(fill);
    for (std::size_t i = rank; i-- > 0;) { // the next output coordinate, row-major
      if (++at[i] < dims[i])
        break;
      at[i] = 0;
    }
  }
  return Outputs{TensorData(data.dtype(), dims, std::move(bytes))};
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// LSTM with the default activations (Sigmoid, Tanh, Tanh), gates in ONNX order i, o, f, c.
std::optional<Outputs> lstm(const Node& node, const std::vector<TensorType>& out) {
  if (node.hasAttribute("activations")) {
    const auto& a = node.findAttribute("activations")->as<std::vector<std::string>>();
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != (i % 3 == 0 ? "Sigmoid" : "Tanh"))
        refuse("LSTM activations other than Sigmoid, Tanh, Tanh");
  }
  if (node.attrInt("input_forget", 0) != 0)
    refuse("LSTM input_forget");
  const bool batchFirst = node.attrInt("layout", 0) != 0;
  const std::string direction = node.attrString("direction", "forward");
  const double clip = node.hasAttribute("clip") ? node.attrFloat("clip", 0) : 0.0;
  const TensorData& xData = input(node, 0);
  const std::vector<double> x = floatInput(node, 0), w = floatInput(node, 1),
                            r = floatInput(node, 2);
  const Dims& xd = xData.dims();
  const std::int64_t seq = batchFirst ? xd[1] : xd[0], batch = batchFirst ? xd[0] : xd[1],
                     inSize = xd[2];
  const std::int64_t dirs = input(node, 1).dims()[0], hidden = input(node, 2).dims()[2];
  if (const TensorData* lens = optionalInput(node, 4))
    for (std::int64_t b = 0; b < lens->numElements(); ++b)
      if (lens->elementAsInt(b) != seq)
        refuse("LSTM sequence_lens shorter than the sequence");
  std::vector<double> bias(static_cast<std::size_t>(dirs * 8 * hidden), 0.0);
  if (optionalInput(node, 3))
    bias = floatInput(node, 3);
  const auto state = [&](std::size_t i) {
    return optionalInput(node, i)
               ? floatInput(node, i)
               : std::vector<double>(static_cast<std::size_t>(dirs * batch * hidden), 0.0);
  };
  std::vector<double> h = state(5), c = state(6);
  std::vector<double> peep(static_cast<std::size_t>(dirs * 3 * hidden), 0.0);
  if (optionalInput(node, 7))
    peep = floatInput(node, 7);
  const auto clipped = [&](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  // Y: [seq, dirs, batch, hidden] (layout 0) or [batch, seq, dirs, hidden] (layout 1).
  std::vector<double> y(static_cast<std::size_t>(seq * dirs * batch * hidden), 0.0);
  const auto H = static_cast<std::size_t>(hidden);
  for (std::int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || (direction == "bidirectional" && d == 1);
    const double* W = w.data() + d * 4 * hidden * inSize;
    const double* R = r.data() + d * 4 * hidden * hidden;
    const double* Wb = bias.data() + d * 8 * hidden;
    const double* Rb = Wb + 4 * hidden;
    const double* P = peep.data() + d * 3 * hidden;
    for (std::int64_t step = 0; step < seq; ++step) {
      const std::int64_t t = reverse ? seq - 1 - step : step;
      for (std::int64_t b = 0; b < batch; ++b) {
        const double* xt = x.data() + (batchFirst ? (b * seq + t) : (t * batch + b)) * inSize;
        double* ht = h.data() + (d * batch + b) * hidden;
        double* ct = c.data() + (d * batch + b) * hidden;
        std::vector<double> gates(4 * H);
        for (std::size_t g = 0; g < 4 * H; ++g) {
          double sum = Wb[g] + Rb[g];
          for (std::int64_t k = 0; k < inSize; ++k)
            sum += xt[k] * W[static_cast<std::int64_t>(g) * inSize + k];
          for (std::int64_t k = 0; k < hidden; ++k)
            sum += ht[k] * R[static_cast<std::int64_t>(g) * hidden + k];
          gates[g] = sum;
        }
        for (std::size_t j = 0; j < H; ++j) {
          const double i = sigmoid(clipped(gates[j] + P[j] * ct[j]));
          const double f = sigmoid(clipped(gates[2 * H + j] + P[2 * H + j] * ct[j]));
          const double cand = std::tanh(clipped(gates[3 * H + j]));
          ct[j] = f * ct[j] + i * cand;
          const double o = sigmoid(clipped(gates[H + j] + P[H + j] * ct[j]));
          ht[j] = o * std::tanh(ct[j]);
        }
        for (std::size_t j = 0; j < H; ++j) {
          const std::int64_t at = batchFirst ? ((b * seq + t) * dirs + d) * hidden
                                             : ((t * dirs + d) * batch + b) * hidden;
          y[static_cast<std::size_t>(at) + j] = ht[j];
        }
      }
    }
  }
  Outputs outputs;
  const std::vector<double>* values[] = {&y, &h, &c};
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!node.output(i)) {
      outputs.emplace_back();
      continue;
    }
    if (batchFirst && i > 0) { // Y_h, Y_c: [batch, dirs, hidden] in layout 1
      std::vector<double> t(values[i]->size());
      for (std::int64_t d = 0; d < dirs; ++d)
        for (std::int64_t b = 0; b < batch; ++b)
          for (std::int64_t j = 0; j < hidden; ++j)
            t[static_cast<std::size_t>((b * dirs + d) * hidden + j)] =
                (*values[i])[static_cast<std::size_t>((d * batch + b) * hidden + j)];
      outputs.push_back(makeOutput(out[i], t));
    } else {
      outputs.push_back(makeOutput(out[i], *values[i]));
    }
  }
  return outputs;
}

} // namespace

void addSequenceKernels(KernelTable& table) {
  table["Pad"] = pad;
  table["LSTM"] = lstm;
}

} // namespace lathe::reference::ops
