// Operands, attributes and activations of RNN, GRU and LSTM nodes (see recurrent_internal.h).
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/recurrent_internal.h"
#include "engine/lowering/window_helpers.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cctype>

namespace lathe::lowering::recurrent {
namespace {

using graph::DType;
using graph::Node;
using loop::Intrinsic;

// The ONNX activations, how many of activation_alpha/activation_beta each consumes and their
// defaults (those of the ONNX operators of the same name).
struct ActivationKind {
  const char* name;
  bool alpha, beta;
  float defaultAlpha, defaultBeta;
};
constexpr ActivationKind kActivationKinds[] = {
    {"relu", false, false, 0, 0},           {"tanh", false, false, 0, 0},
    {"sigmoid", false, false, 0, 0},        {"affine", true, true, 1.0f, 0},
    {"leakyrelu", true, false, 0.01f, 0},   {"thresholdedrelu", true, false, 1.0f, 0},
    {"scaledtanh", true, true, 1.0f, 1.0f}, {"hardsigmoid", true, true, 0.2f, 0.5f},
    {"elu", true, false, 1.0f, 0},          {"softsign", false, false, 0, 0},
    {"softplus", false, false, 0, 0},
};

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string shapeString(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

template <typename T>
std::vector<T> attrList(const Node& node, const std::string& key) {
  const graph::Attribute* a = node.findAttribute(key);
  return a && a->is<std::vector<T>>() ? a->as<std::vector<T>>() : std::vector<T>{};
}

// `perDirection` activations for each direction. Alphas and betas are consumed in the order
// of the activations that take them (the ONNX definition, and ONNX Runtime's).
std::vector<Activation> parseActivations(const Node& node, const std::vector<std::string>& defaults,
                                         std::int64_t directions) {
  const std::size_t per = defaults.size(), want = per * static_cast<std::size_t>(directions);
  std::vector<std::string> names = attrList<std::string>(node, "activations");
  if (names.empty())
    for (std::int64_t d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  else if (names.size() == per && want == 2 * per) // one list for both directions
    names.insert(names.end(), names.begin(), names.end());
  else if (names.size() == 2 * per && want == per) // ONNX Runtime reads the first half
    names.resize(per);
  if (names.size() != want)
    unsupportedNode(node, std::to_string(names.size()) + " activations for " +
                              std::to_string(want) + " (" + std::to_string(per) +
                              " per direction)");
  const std::vector<float> alphas = attrList<float>(node, "activation_alpha");
  const std::vector<float> betas = attrList<float>(node, "activation_beta");
  std::size_t nextAlpha = 0, nextBeta = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    const std::string key = lower(name);
    const auto* kind = std::find_if(std::begin(kActivationKinds), std::end(kActivationKinds),
                                    [&](const ActivationKind& k) { return key == k.name; });
    if (kind == std::end(kActivationKinds))
      unsupportedNode(node, "activation '" + name + "'");
    Activation a{key, kind->defaultAlpha, kind->defaultBeta};
    if (kind->alpha && nextAlpha < alphas.size())
      a.alpha = alphas[nextAlpha++];
    if (kind->beta && nextBeta < betas.size())
      a.beta = betas[nextBeta++];
    out.push_back(a);
  }
  return out;
}

// let v = x in body(v): x is used more than once.
Expr bind(KernelBuilder& kb, const Expr& x, const std::function<Expr(const Expr&)>& body) {
  const Expr v = freshScalar(kb, "v", x.type());
  return loop::Let::make(v, x, body(v));
}

} // namespace

Expr activate(KernelBuilder& kb, const Activation& a, const Expr& x) {
  const loop::Type t = x.type();
  auto c = [&](double v) { return loop::makeFloatConst(t, v); };
  auto call = [](Intrinsic op, Expr arg) { return loop::Call::make(op, {std::move(arg)}); };
  const std::string& n = a.name;
  if (n == "sigmoid")
    return call(Intrinsic::Sigmoid, x);
  if (n == "tanh")
    return call(Intrinsic::Tanh, x);
  if (n == "relu")
    return loop::max(x, c(0));
  if (n == "affine")
    return c(a.alpha) * x + c(a.beta);
  if (n == "scaledtanh")
    return c(a.alpha) * call(Intrinsic::Tanh, c(a.beta) * x);
  if (n == "hardsigmoid")
    return loop::min(loop::max(c(a.alpha) * x + c(a.beta), c(0)), c(1));
  if (n == "softplus")
    return call(Intrinsic::Log, c(1) + call(Intrinsic::Exp, x));
  return bind(kb, x, [&](const Expr& v) -> Expr {
    if (n == "leakyrelu")
      return loop::select(v >= c(0), v, c(a.alpha) * v);
    if (n == "thresholdedrelu")
      return loop::select(v > c(a.alpha), v, c(0));
    if (n == "elu")
      return loop::select(v >= c(0), v, c(a.alpha) * (call(Intrinsic::Exp, v) - c(1)));
    LATHE_CHECK(n == "softsign", "unknown activation " + n);
    return v / (c(1) + call(Intrinsic::Abs, v));
  });
}

Operands resolve(const Node& node, KernelBuilder& kb, Cell cell) {
  Operands op;
  op.cell = cell;
  op.G = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  op.x = kb.input(*node.input(0), node);
  op.w = kb.input(*node.input(1), node);
  op.r = kb.input(*node.input(2), node);
  if (op.x.dtype != DType::F32 && op.x.dtype != DType::F64)
    unsupportedNode(node, "element type " + std::string(graph::dtypeName(op.x.dtype)));
  op.type = loopType(op.x.dtype);
  const std::string direction = node.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    unsupportedNode(node, "direction '" + direction + "'");
  op.D = direction == "bidirectional" ? 2 : 1;
  op.reverseOnly = direction == "reverse";
  op.batchFirst = node.attrInt("layout", 0) != 0;
  if (op.x.rank() != 3 || op.w.rank() != 3 || op.r.rank() != 3)
    unsupportedNode(node, "X, W and R must be 3-D");
  op.S = op.x.shape[op.batchFirst ? 1 : 0];
  op.B = op.x.shape[op.batchFirst ? 0 : 1];
  op.I = op.x.shape[2];
  op.H = node.attrInt("hidden_size", op.r.shape[2]);
  const std::int64_t S = op.S, B = op.B, H = op.H, D = op.D, N = op.N();
  auto expect = [&](const TensorRef& t, const std::vector<std::int64_t>& shape, const char* what) {
    if (t.shape != shape || t.dtype != op.x.dtype)
      unsupportedNode(node, std::string(what) + " has shape " + shapeString(t.shape) +
                                ", expected " + shapeString(shape) + " of X's type");
  };
  expect(op.w, {D, N, op.I}, "W");
  expect(op.r, {D, N, H}, "R");
  const std::vector<std::int64_t> stateShape =
      op.batchFirst ? std::vector<std::int64_t>{B, D, H} : std::vector<std::int64_t>{D, B, H};
  auto optionalInput = [&](std::size_t i) -> std::optional<TensorRef> {
    if (!node.input(i))
      return std::nullopt;
    return kb.input(*node.input(i), node);
  };
  if ((op.bias = optionalInput(3)))
    expect(*op.bias, {D, 2 * N}, "B");
  // Constant lengths that all equal the sequence length change nothing.
  if (const graph::Value* v = node.input(4)) {
    bool full = v->isConstant() && !v->constant().isElided();
    for (std::int64_t i = 0; full && i < v->constant().numElements(); ++i)
      full = v->constant().elementAsInt(i) == S;
    if (!full) {
      op.lens = kb.input(*v, node);
      if (op.lens->shape != std::vector<std::int64_t>{B} || !loopType(op.lens->dtype).isInt())
        unsupportedNode(node, "sequence_lens must be integers of shape [batch]");
    }
  }
  if ((op.h0 = optionalInput(5)))
    expect(*op.h0, stateShape, "initial_h");
  if (cell == Cell::Lstm) {
    if ((op.c0 = optionalInput(6)))
      expect(*op.c0, stateShape, "initial_c");
    if ((op.peep = optionalInput(7)))
      expect(*op.peep, {D, 3 * H}, "P");
  }
  auto optionalOutput = [&](std::size_t i) -> std::optional<TensorRef> {
    if (i >= node.outputs().size() || !node.output(i))
      return std::nullopt;
    return kb.output(*node.output(i), node);
  };
  if ((op.y = optionalOutput(0)))
    expect(*op.y,
           op.batchFirst ? std::vector<std::int64_t>{B, S, D, H}
                         : std::vector<std::int64_t>{S, D, B, H},
           "Y");
  if ((op.yh = optionalOutput(1)))
    expect(*op.yh, stateShape, "Y_h");
  if (cell == Cell::Lstm && (op.yc = optionalOutput(2)))
    expect(*op.yc, stateShape, "Y_c");

  if (node.hasAttribute("clip"))
    op.clip = node.attrFloat("clip", 0);
  op.linearBeforeReset = node.attrInt("linear_before_reset", 0) != 0;
  op.inputForget = node.attrInt("input_forget", 0) != 0;
  const std::vector<std::string> defaults =
      cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
      : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  op.perDirection = defaults.size();
  op.acts = parseActivations(node, defaults, D);
  return op;
}

} // namespace lathe::lowering::recurrent
