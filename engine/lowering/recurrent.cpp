// Recurrent layers as kernel rules: RNN, GRU and LSTM with ONNX opset 14 semantics (layout,
// directions, activations with alpha/beta, clip, sequence_lens, initial states, peepholes,
// linear_before_reset, input_forget).
//
// Schedule, per direction (the directions run one after the other on shared scratch):
//  - W and R are copied transposed, so that every product below runs over contiguous gate
//    columns (and vectorises) while each element still sums its terms in order;
//  - X*W^T for all time steps at once, one (parallel) task per row of X;
//  - a serial loop over time. A step computes H*R^T for every gate into `hr`, then the gates
//    element by element, updating the hidden (and cell) state in place. GRU without
//    linear_before_reset needs r first: its step is product, r (.) H, product, gates.
// With enough batch rows, each row is an independent recurrence: one parallel task per row
// runs the whole time loop. Otherwise a large step runs its products as parallel loops over
// (row, block of columns), which costs one fork/join per phase and step.
//
// sequence_lens is read as data: row b runs steps s < len[b], forward at time s and reverse
// at time len[b]-1-s (reversed within its own length, as ONNX Runtime does). A step past the
// length keeps the state and writes zero to Y at time s, so every element of Y is written
// exactly once. Y_h and Y_c hold the state after the last valid step (zero for an empty
// sequence, like ONNX Runtime).
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/recurrent_internal.h"
#include "engine/lowering/window_helpers.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::lowering {
namespace {

using graph::Node;
using recurrent::activate;
using recurrent::Cell;
using recurrent::Operands;

// Work (multiply-adds) from which a loop is worth a parallel fork/join.
constexpr std::int64_t kParallelWork = std::int64_t{1} << 16;
// The same for the loops inside a time step, which fork and join once per step and phase.
constexpr std::int64_t kStepParallelWork = std::int64_t{1} << 19;
// Scratch buffers above this many bytes go to the heap, not the stack.
constexpr std::int64_t kStackBytes = 64 * 1024;

// Scratch shared by the directions; each direction refills it.
struct Scratch {
  TensorRef wt, rt; // W^T [I, N] and R^T [H, N] of the current direction
  TensorRef xw;     // X*W^T of every time step, [S*B, N] (row t*B + b)
  TensorRef h, c;   // hidden and cell state [B, H]
  TensorRef hr;     // the current step's H*R^T, [B, N]
  TensorRef rh;     // GRU without linear_before_reset: r (.) H, [B, H]
};

// Where one batch row stands at a step: whether it runs (undefined: every row runs every
// step) and the time index it reads X at and writes Y at.
struct RowStep {
  Expr valid, time;
};

// Scalar bindings made in order, wrapped as nested LetStmts around the statement that uses
// them: values used more than once are computed once.
class LetChain {
public:
  explicit LetChain(KernelBuilder& kb) : kb_(kb) {}
  Expr bind(const std::string& hint, const Expr& value) {
    const Expr v = freshScalar(kb_, hint, value.type());
    lets_.emplace_back(v, value);
    return v;
  }
  Stmt wrap(Stmt body) const {
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
      body = loop::LetStmt::make(it->first, it->second, body);
    return body;
  }

private:
  KernelBuilder& kb_;
  std::vector<std::pair<Expr, Expr>> lets_;
};

class RecurrentLowering {
public:
  RecurrentLowering(const Node& node, KernelBuilder& kb, const Epilogue& epilogue, Cell cell)
      : kb_(kb), epilogue_(epilogue), op_(recurrent::resolve(node, kb, cell)) {}

  Stmt build() {
    const Operands& op = op_;
    const std::int64_t N = op.N();
    std::vector<TensorRef*> buffers{&s_.wt, &s_.rt, &s_.xw, &s_.h, &s_.hr};
    s_.wt = kb_.scratch("wt", op.x.dtype, {op.I, N});
    s_.rt = kb_.scratch("rt", op.x.dtype, {op.H, N});
    s_.xw = kb_.scratch("xw", op.x.dtype, {op.S * op.B, N});
    s_.h = kb_.scratch("h", op.x.dtype, {op.B, op.H});
    s_.hr = kb_.scratch("hr", op.x.dtype, {op.B, N});
    if (op.cell == Cell::Lstm) {
      s_.c = kb_.scratch("c", op.x.dtype, {op.B, op.H});
      buffers.push_back(&s_.c);
    }
    if (op.cell == Cell::Gru && !op.linearBeforeReset) {
      s_.rh = kb_.scratch("rh", op.x.dtype, {op.B, op.H});
      buffers.push_back(&s_.rh);
    }
    // Independent rows: a task per row when there are enough of them, or when a step is
    // too small to split.
    const std::int64_t stepWork = op.B * N * op.H;
    batchParallel_ = op.B >= 2 && op.S * stepWork >= kParallelWork &&
                     (op.B >= 8 || stepWork < kStepParallelWork);
    stepParallel_ = !batchParallel_ && stepWork >= kStepParallelWork;

    std::vector<Stmt> directions;
    for (std::int64_t d = 0; d < op.D; ++d)
      directions.push_back(direction(d));
    Stmt body = loop::Block::make(directions);
    for (const TensorRef* b : buffers)
      body = kb_.allocate(*b, body, b->numElements() * loopType(b->dtype).bytes() > kStackBytes);
    return body;
  }

private:
  Expr zero() const { return loop::makeZero(op_.type); }
  Expr one() const { return loop::makeOne(op_.type); }

  Stmt direction(std::int64_t d) {
    return loop::Block::make({transpose(op_.w, s_.wt, d), transpose(op_.r, s_.rt, d),
                              inputProducts(), initState(d), timeLoop(d), finalState(d)});
  }

  // to[k, n] = from[d, n, k], in tiles of 32 x 32: the 32 rows read stay in L1 while
  // each row of `to` is written contiguously.
  Stmt transpose(const TensorRef& from, const TensorRef& to, std::int64_t d) {
    constexpr std::int64_t T = 32;
    const std::int64_t N = to.shape[1], K = to.shape[0];
    const std::int64_t nTiles = (N + T - 1) / T, kTiles = (K + T - 1) / T;
    const Expr tile = kb_.freshVar("tile");
    const Expr n0 = (tile / kTiles) * T, k0 = (tile % kTiles) * T;
    const Expr k = kb_.freshVar("k"), n = kb_.freshVar("n");
    const Stmt copy = to.store({k0 + k, n0 + n}, from.load({loop::makeIndex(d), n0 + n, k0 + k}));
    const Stmt body =
        forRange(k, loop::makeIndex(0), loop::min(K - k0, loop::makeIndex(T)),
                 forRange(n, loop::makeIndex(0), loop::min(N - n0, loop::makeIndex(T)), copy));
    return forCount(tile, nTiles * kTiles, body,
                    N * K >= kParallelWork ? loop::ForKind::Parallel : loop::ForKind::Serial);
  }

  // acc[accIndex(n)] = sum_k lhs(k) * mat[k, lo + n] for n in [0, width), the terms added in
  // order of k. A pass over the row adds four terms to each element, one after the other:
  // the rounding of a plain loop over k, with a quarter of the loads and stores of `acc`.
  Stmt accumulate(const TensorRef& acc,
                  const std::function<std::vector<Expr>(const Expr&)>& accIndex,
                  const std::function<Expr(const Expr&)>& lhs, const TensorRef& mat, const Expr& lo,
                  const Expr& width) {
    constexpr std::int64_t U = 4;
    const std::int64_t K = mat.shape[0];
    const Expr n = kb_.freshVar("n");
    std::vector<Stmt> st{forRange(n, loop::makeIndex(0), width, acc.store(accIndex(n), zero()))};
    auto pass = [&](const Expr& k0, std::int64_t terms) {
      std::vector<Expr> as;
      const Expr m = kb_.freshVar("n");
      Expr sum = acc.load(accIndex(m));
      for (std::int64_t u = 0; u < terms; ++u) {
        as.push_back(freshScalar(kb_, "a", op_.type));
        sum = sum + as[u] * mat.load({k0 + u, lo + m});
      }
      Stmt s = forRange(m, loop::makeIndex(0), width, acc.store(accIndex(m), sum));
      for (std::int64_t u = terms; u-- > 0;)
        s = loop::LetStmt::make(as[u], lhs(k0 + u), s);
      return s;
    };
    const Expr k = kb_.freshVar("k");
    if (K / U > 0)
      st.push_back(forCount(k, K / U, pass(k * U, U)));
    if (K % U != 0)
      st.push_back(pass(loop::makeIndex(K / U * U), K % U));
    return loop::Block::make(st);
  }

  // xw[t*B + b, n] = sum_k X[t, b, k] * W[n, k], one task per row of X.
  Stmt inputProducts() {
    const Operands& op = op_;
    const Expr row = kb_.freshVar("row");
    const Expr t = row / op.B, b = row % op.B;
    // Row t*B + b of X is flat row `row` in the [S, B, I] layout.
    auto x = [&](const Expr& k) {
      return op.batchFirst ? op.x.load({b, t, k}) : op.x.loadFlat(row * op.I + k);
    };
    const Stmt body = accumulate(
        s_.xw, [&](const Expr& n) { return std::vector<Expr>{row, n}; }, x, s_.wt,
        loop::makeIndex(0), loop::makeIndex(op.N()));
    const std::int64_t work = op.S * op.B * op.N() * op.I;
    return forCount(row, op.S * op.B, body,
                    work >= kParallelWork ? loop::ForKind::Parallel : loop::ForKind::Serial);
  }

  Stmt initState(std::int64_t d) {
    const Operands& op = op_;
    return kb_.loopNest(
        {op.B, op.H},
        [&](const std::vector<Expr>& i) {
          const Expr &b = i[0], &j = i[1];
          std::vector<Stmt> st{
              s_.h.store({b, j}, op.h0 ? op.h0->load(op.stateIndex(d, b, j)) : zero())};
          if (op.cell == Cell::Lstm)
            st.push_back(s_.c.store({b, j}, op.c0 ? op.c0->load(op.stateIndex(d, b, j)) : zero()));
          return loop::Block::make(st);
        },
        "init");
  }

  // The row's sequence length, clamped to [0, S] so that a bad length cannot index out of X.
  Expr length(const Expr& b) const {
    const Expr len = loop::cast(loop::indexType(), op_.lens->load({b}));
    return loop::min(loop::max(len, loop::makeIndex(0)), loop::makeIndex(op_.S));
  }

  Stmt timeLoop(std::int64_t d) {
    const Expr s = kb_.freshVar("step");
    if (!batchParallel_)
      return forCount(s, op_.S, step(d, s, Expr()));
    const Expr b = kb_.freshVar("batch");
    return forCount(b, op_.B, forCount(s, op_.S, step(d, s, b)), loop::ForKind::Parallel);
  }

  // hr[b, n0 + n] = sum_k lhs(b, k) * R[n0 + n, k] for n in [0, count): the single row
  // `row`, or every row (in blocks of columns, in parallel when the step is large).
  Stmt product(const Expr& row, const std::function<Expr(const Expr&, const Expr&)>& lhs,
               std::int64_t n0, std::int64_t count) {
    auto forRow = [&](const Expr& b, const Expr& lo, const Expr& width) {
      return accumulate(
          s_.hr, [&](const Expr& n) { return std::vector<Expr>{b, lo + n}; },
          [&](const Expr& k) { return lhs(b, k); }, s_.rt, lo, width);
    };
    if (row.defined())
      return forRow(row, loop::makeIndex(n0), loop::makeIndex(count));
    // Column blocks give a small batch several tasks per step.
    const std::int64_t block = stepParallel_ ? std::min<std::int64_t>(count, 64) : count;
    const std::int64_t blocks = (count + block - 1) / block;
    const Expr task = kb_.freshVar("task");
    const Expr b = blocks == 1 ? task : task / blocks;
    const Expr start = blocks == 1 ? loop::makeIndex(0) : (task % blocks) * block;
    const Expr width =
        blocks == 1 ? loop::makeIndex(count) : loop::min(count - start, loop::makeIndex(block));
    return forCount(task, op_.B * blocks, forRow(b, n0 + start, width),
                    stepParallel_ ? loop::ForKind::Parallel : loop::ForKind::Serial);
  }

  // body(row step, b, j) for every element of the state at step s: of the single row `row`,
  // or of all rows. A row's length, validity and time are bound once, outside its columns.
  using ElementBody = std::function<Stmt(const RowStep&, const Expr&, const Expr&)>;
  Stmt elements(std::int64_t d, const Expr& s, const Expr& row, const ElementBody& body) {
    auto perRow = [&](const Expr& b, const std::function<Stmt(const RowStep&)>& inner) {
      const bool reverse = op_.reverse(d);
      if (!op_.lens)
        return inner({Expr(), reverse ? (op_.S - 1) - s : s});
      const Expr len = freshScalar(kb_, "len", loop::indexType());
      const Expr valid = freshScalar(kb_, "valid", loop::boolean());
      const Expr time = freshScalar(kb_, "time", loop::indexType());
      const Stmt in = inner({valid, time});
      return loop::LetStmt::make(
          len, length(b),
          loop::LetStmt::make(
              valid, s < len,
              loop::LetStmt::make(time, reverse ? loop::select(valid, (len - 1) - s, s) : s, in)));
    };
    const Expr j = kb_.freshVar("j");
    auto columns = [&](const Expr& b) {
      return perRow(b, [&](const RowStep& rs) { return forCount(j, op_.H, body(rs, b, j)); });
    };
    if (row.defined())
      return columns(row);
    // A small batch parallelises over all its elements at once.
    if (stepParallel_ && op_.B * op_.H >= 4096) {
      const Expr e = kb_.freshVar("e");
      const Expr b = e / op_.H;
      return forCount(e, op_.B * op_.H,
                      perRow(b, [&](const RowStep& rs) { return body(rs, b, e % op_.H); }),
                      loop::ForKind::Parallel);
    }
    const Expr b = kb_.freshVar("b");
    return forCount(b, op_.B, columns(b));
  }

  // xw + hr (+ Wb + Rb) of gate g at (b, j).
  Expr gateInput(std::int64_t d, const RowStep& rs, const Expr& b, const Expr& j,
                 std::int64_t g) const {
    const Expr col = g * op_.H + j;
    Expr v = s_.xw.load({rs.time * op_.B + b, col}) + s_.hr.load({b, col});
    if (op_.bias)
      v = v + op_.bias->load({loop::makeIndex(d), col}) + recurrentBiasAt(d, g, j);
    return v;
  }
  Expr recurrentBiasAt(std::int64_t d, std::int64_t g, const Expr& j) const {
    return op_.bias->load({loop::makeIndex(d), (op_.G + g) * op_.H + j});
  }
  Expr clip(const Expr& x) const {
    if (!op_.clip)
      return x;
    const Expr c = loop::makeFloatConst(op_.type, *op_.clip);
    return loop::min(loop::max(x, -c), c);
  }
  Expr gate(std::int64_t d, std::size_t k, const Expr& pre) {
    return activate(kb_, op_.act(d, k), clip(pre));
  }

  // Stores the new state of (b, j) (kept when the row is past its length) and Y.
  Stmt commit(std::int64_t d, const RowStep& rs, const Expr& b, const Expr& j, const Expr& h,
              const Expr& c = Expr()) {
    auto keep = [&](const Expr& v, const TensorRef& state) {
      return rs.valid.defined() ? loop::select(rs.valid, v, state.load({b, j})) : v;
    };
    std::vector<Stmt> st{s_.h.store({b, j}, keep(h, s_.h))};
    if (c.defined())
      st.push_back(s_.c.store({b, j}, keep(c, s_.c)));
    if (op_.y) {
      const std::vector<Expr> idx = op_.yIndex(rs.time, d, b, j);
      const Expr v = rs.valid.defined() ? loop::select(rs.valid, h, zero()) : h;
      st.push_back(op_.y->store(idx, epilogue_(v, idx)));
    }
    return loop::Block::make(st);
  }

  Stmt step(std::int64_t d, const Expr& s, const Expr& row) {
    switch (op_.cell) {
    case Cell::Rnn:
      return rnnStep(d, s, row);
    case Cell::Gru:
      return gruStep(d, s, row);
    case Cell::Lstm:
      break;
    }
    return lstmStep(d, s, row);
  }

  Expr hPrev(const Expr& b, const Expr& k) const { return s_.h.load({b, k}); }

  // RNN: Ht = f(Xt*Wi + Ht-1*Ri + Wbi + Rbi).
  Stmt rnnStep(std::int64_t d, const Expr& s, const Expr& row) {
    auto prev = [&](const Expr& b, const Expr& k) { return hPrev(b, k); };
    return loop::Block::make(
        product(row, prev, 0, op_.H),
        elements(d, s, row, [&](const RowStep& rs, const Expr& b, const Expr& j) {
          LetChain lets(kb_);
          const Expr h = lets.bind("ht", gate(d, 0, gateInput(d, rs, b, j, 0)));
          return lets.wrap(commit(d, rs, b, j, h));
        }));
  }

  // GRU, gates z r h: Ht = (1 - z) * h + z * Ht-1 with
  //   h = g(Xt*Wh + (r (.) Ht-1)*Rh + Rbh + Wbh)      (linear_before_reset = 0)
  //   h = g(Xt*Wh + r (.) (Ht-1*Rh + Rbh) + Wbh)      (linear_before_reset = 1)
  Stmt gruStep(std::int64_t d, const Expr& s, const Expr& row) {
    const Operands& op = op_;
    const std::int64_t H = op.H;
    auto prev = [&](const Expr& b, const Expr& k) { return hPrev(b, k); };
    auto resetGate = [&](const RowStep& rs, const Expr& b, const Expr& j) {
      return gate(d, 0, gateInput(d, rs, b, j, 1));
    };
    std::vector<Stmt> phases;
    if (op.linearBeforeReset) {
      phases.push_back(product(row, prev, 0, 3 * H));
    } else {
      phases.push_back(product(row, prev, 0, 2 * H));
      phases.push_back(elements(d, s, row, [&](const RowStep& rs, const Expr& b, const Expr& j) {
        return s_.rh.store({b, j}, resetGate(rs, b, j) * hPrev(b, j));
      }));
      phases.push_back(
          product(row, [&](const Expr& b, const Expr& k) { return s_.rh.load({b, k}); }, 2 * H, H));
    }
    phases.push_back(elements(d, s, row, [&](const RowStep& rs, const Expr& b, const Expr& j) {
      Expr pre;
      if (op.linearBeforeReset) {
        Expr linear = s_.hr.load({b, 2 * H + j});
        if (op.bias)
          linear = linear + recurrentBiasAt(d, 2, j);
        pre = s_.xw.load({rs.time * op.B + b, 2 * H + j}) + resetGate(rs, b, j) * linear;
        if (op.bias)
          pre = pre + op.bias->load({loop::makeIndex(d), 2 * H + j});
      } else {
        pre = gateInput(d, rs, b, j, 2);
      }
      LetChain lets(kb_);
      const Expr z = lets.bind("zt", gate(d, 0, gateInput(d, rs, b, j, 0)));
      const Expr h = lets.bind("ht", gate(d, 1, pre));
      const Expr hNew = lets.bind("Ht", (one() - z) * h + z * hPrev(b, j));
      return lets.wrap(commit(d, rs, b, j, hNew));
    }));
    return loop::Block::make(phases);
  }

  // LSTM, gates i o f c:
  //   i = f(Xt*Wi + Ht-1*Ri + Pi (.) Ct-1 + Wbi + Rbi)
  //   f = f(Xt*Wf + Ht-1*Rf + Pf (.) Ct-1 + Wbf + Rbf)     (1 - i with input_forget)
  //   Ct = f (.) Ct-1 + i (.) g(Xt*Wc + Ht-1*Rc + Wbc + Rbc)
  //   o = f(Xt*Wo + Ht-1*Ro + Po (.) Ct + Wbo + Rbo),  Ht = o (.) h(Ct)
  Stmt lstmStep(std::int64_t d, const Expr& s, const Expr& row) {
    const Operands& op = op_;
    auto withPeephole = [&](const Expr& pre, std::int64_t p, const Expr& j, const Expr& cell) {
      return op.peep ? pre + op.peep->load({loop::makeIndex(d), p * op.H + j}) * cell : pre;
    };
    auto prev = [&](const Expr& b, const Expr& k) { return hPrev(b, k); };
    return loop::Block::make(
        product(row, prev, 0, 4 * op.H),
        elements(d, s, row, [&](const RowStep& rs, const Expr& b, const Expr& j) {
          LetChain lets(kb_);
          const Expr cPrev = lets.bind("cp", s_.c.load({b, j}));
          const Expr i =
              lets.bind("it", gate(d, 0, withPeephole(gateInput(d, rs, b, j, 0), 0, j, cPrev)));
          const Expr f = lets.bind(
              "ft", op.inputForget
                        ? one() - i
                        : gate(d, 0, withPeephole(gateInput(d, rs, b, j, 2), 2, j, cPrev)));
          const Expr c = lets.bind("ct", f * cPrev + i * gate(d, 1, gateInput(d, rs, b, j, 3)));
          const Expr o = gate(d, 0, withPeephole(gateInput(d, rs, b, j, 1), 1, j, c));
          const Expr h = lets.bind("ht", o * activate(kb_, op.act(d, 2), c));
          return lets.wrap(commit(d, rs, b, j, h, c));
        }));
  }

  Stmt finalState(std::int64_t d) {
    const Operands& op = op_;
    if (!op.yh && !op.yc)
      return loop::noOp();
    return kb_.loopNest(
        {op.B, op.H},
        [&](const std::vector<Expr>& i) {
          const Expr &b = i[0], &j = i[1];
          auto final = [&](const TensorRef& state) {
            const Expr v = state.load({b, j});
            return op.lens ? loop::select(length(b) > 0, v, zero()) : v;
          };
          std::vector<Stmt> st;
          if (op.yh)
            st.push_back(op.yh->store(op.stateIndex(d, b, j), final(s_.h)));
          if (op.yc)
            st.push_back(op.yc->store(op.stateIndex(d, b, j), final(s_.c)));
          return loop::Block::make(st);
        },
        "fin");
  }

  KernelBuilder& kb_;
  const Epilogue& epilogue_;
  const Operands op_;
  Scratch s_;
  bool batchParallel_ = false, stepParallel_ = false;
};

template <Cell cell>
Stmt lowerRecurrent(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return RecurrentLowering(node, kb, epilogue, cell).build();
}

} // namespace

void registerRecurrentRules(RuleTable& table) {
  auto& k = table.kernels;
  k["RNN"] = lowerRecurrent<Cell::Rnn>;
  k["GRU"] = lowerRecurrent<Cell::Gru>;
  k["LSTM"] = lowerRecurrent<Cell::Lstm>;
}

} // namespace lathe::lowering
