#pragma once
// Shared by the recurrent-layer lowerings (recurrent.cpp, recurrent_operands.cpp): a node's
// operands and attributes resolved against the ONNX definitions of RNN, GRU and LSTM, and
// the activation functions they name.

#include "engine/lowering/op_rules.h"

#include <optional>
#include <string>
#include <vector>

namespace lathe::lowering::recurrent {

enum class Cell { Rnn, Gru, Lstm };

struct Activation {
  std::string name; // lower case
  float alpha = 0, beta = 0;
};

// f(x) for one of the ONNX recurrent activations.
Expr activate(KernelBuilder& kb, const Activation& a, const Expr& x);

// The node's operands and attributes, checked against the ONNX shapes.
struct Operands {
  Cell cell = Cell::Rnn;
  std::int64_t G = 1; // gates: RNN 1, GRU 3 (z r h), LSTM 4 (i o f c)
  std::int64_t S = 0, B = 0, I = 0, H = 0, D = 1;
  bool batchFirst = false, reverseOnly = false;
  TensorRef x, w, r;
  std::optional<TensorRef> bias, lens, h0, c0, peep, y, yh, yc;
  std::vector<Activation> acts; // perDirection for direction 0, then for direction 1
  std::size_t perDirection = 1;
  std::optional<double> clip;
  bool linearBeforeReset = false, inputForget = false;
  loop::Type type;

  std::int64_t N() const { return G * H; }
  bool reverse(std::int64_t d) const { return reverseOnly || d == 1; }
  const Activation& act(std::int64_t d, std::size_t k) const {
    return acts[static_cast<std::size_t>(d) * perDirection + k];
  }
  // Index of a state element (initial_h/c, Y_h/c) and of an element of Y.
  std::vector<Expr> stateIndex(std::int64_t d, const Expr& b, const Expr& j) const {
    const Expr dir = loop::makeIndex(d);
    return batchFirst ? std::vector<Expr>{b, dir, j} : std::vector<Expr>{dir, b, j};
  }
  std::vector<Expr> yIndex(const Expr& t, std::int64_t d, const Expr& b, const Expr& j) const {
    const Expr dir = loop::makeIndex(d);
    return batchFirst ? std::vector<Expr>{b, t, dir, j} : std::vector<Expr>{t, dir, b, j};
  }
};

// Reads the node's inputs (in order, then its outputs) into kernel buffers and checks
// shapes, types and attributes; throws Unsupported for what the lowering does not handle.
Operands resolve(const graph::Node& node, KernelBuilder& kb, Cell cell);

} // namespace lathe::lowering::recurrent
