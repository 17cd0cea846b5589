#pragma once
// Small kernels the schedule tests replay primitives on: a naive matmul whose reduction
// stores into the output inside the k loop, and an elementwise epilogue nest.

#include "engine/loop_ir/ir.h"
#include "engine/loop_ir/ir_operators.h"

#include <limits>

namespace lathe::schedule::testing {

inline loop::Expr indexVar(const char* name) {
  return loop::Var::make(loop::indexType(), name);
}

inline loop::Stmt serialFor(const loop::Expr& v, std::int64_t extent, loop::Stmt body) {
  return loop::For::make(v, loop::makeIndex(0), loop::makeIndex(extent), loop::ForKind::Serial,
                         std::move(body));
}

constexpr std::int64_t kM = 30, kN = 20, kK = 17;

// out[i, j] = sum_k a[i, k] * b[k, j]; y[p, q] = max(out[p, q] * 0.5 + bias[q], 0).
inline loop::Kernel matmulKernel() {
  using namespace loop;
  Buffer a = Buffer::make("a", f32(), makeShape({kM, kK}));
  Buffer b = Buffer::make("b", f32(), makeShape({kK, kN}));
  Buffer bias = Buffer::make("bias", f32(), makeShape({kN}));
  Buffer out = Buffer::make("out", f32(), makeShape({kM, kN}));
  Buffer y = Buffer::make("y", f32(), makeShape({kM, kN}));
  Expr i = indexVar("i"), j = indexVar("j"), k = indexVar("k");
  Expr p = indexVar("p"), q = indexVar("q");
  Expr cell = i * kN + j;
  Stmt update = Store::make(
      out, cell, Load::make(out, cell) + Load::make(a, i * kK + k) * Load::make(b, k * kN + j));
  Stmt product = serialFor(i, kM,
                           serialFor(j, kN,
                                     Block::make(Store::make(out, cell, makeFloatConst(f32(), 0.0)),
                                                 serialFor(k, kK, update))));
  Expr e = p * kN + q;
  Stmt epilogue = serialFor(
      p, kM,
      serialFor(q, kN,
                Store::make(y, e, max(Load::make(out, e) * 0.5 + Load::make(bias, q), 0.0))));
  return Kernel{"matmul_relu", {a, b, bias}, {out, y}, Block::make(product, epilogue), {"mm"}};
}

// t[i, j] = a[i, j] * 2 in a scratch buffer written in `order` ("ij": row-major loops,
// "ji": the loops swapped, "overlap": rows 4 apart but 5 wide); then
// y[p, q] = t[p, q] + t[(p + 1) % 6, q].
inline loop::Kernel scratchKernel(const std::string& order = "ij") {
  using namespace loop;
  Buffer a = Buffer::make("a", f32(), makeShape({6, 5}));
  Buffer t = Buffer::make("t", f32(), makeShape({30}));
  Buffer y = Buffer::make("y", f32(), makeShape({6, 5}));
  Expr i = indexVar("i"), j = indexVar("j"), p = indexVar("p"), q = indexVar("q");
  Expr value = Load::make(a, i * 5 + j) * 2.0f;
  Stmt produce = order == "ji" ? serialFor(j, 5, serialFor(i, 6, Store::make(t, i * 5 + j, value)))
                 : order == "ij"
                     ? serialFor(i, 6, serialFor(j, 5, Store::make(t, i * 5 + j, value)))
                     : serialFor(i, 6, serialFor(j, 5, Store::make(t, i * 4 + j, value)));
  Stmt consume = serialFor(
      p, 6,
      serialFor(q, 5,
                Store::make(y, p * 5 + q,
                            Load::make(t, p * 5 + q) + Load::make(t, (p + 1) % 6 * 5 + q))));
  return Kernel{"scratch",
                {a},
                {y},
                Allocate::make(t, MemoryScope::Stack, Block::make(produce, consume)),
                {"s"}};
}

// A stencil: t[i, j] = a[i, j] * 2 over 8x5, then y[p, q] = t[p, q] + t[p + 2, q] over
// 6x5, so each row of y reads rows p and p + 2 of t.
inline loop::Kernel stencilKernel() {
  using namespace loop;
  Buffer a = Buffer::make("a", f32(), makeShape({8, 5}));
  Buffer t = Buffer::make("t", f32(), makeShape({40}));
  Buffer y = Buffer::make("y", f32(), makeShape({6, 5}));
  Expr i = indexVar("i"), j = indexVar("j"), p = indexVar("p"), q = indexVar("q");
  Stmt produce =
      serialFor(i, 8, serialFor(j, 5, Store::make(t, i * 5 + j, Load::make(a, i * 5 + j) * 2.0f)));
  Stmt consume =
      serialFor(p, 6,
                serialFor(q, 5,
                          Store::make(y, p * 5 + q,
                                      Load::make(t, p * 5 + q) + Load::make(t, (p + 2) * 5 + q))));
  return Kernel{"stencil",
                {a},
                {y},
                Allocate::make(t, MemoryScope::Stack, Block::make(produce, consume)),
                {"s"}};
}

// The maximum of each column of x[5, 16] over 4 rows at a time and the row it is in (the form
// of a MaxPool with Indices: two buffers updated together from one comparison):
//   for i, j: m = -inf; at = -1; for k: takes = x > m; at = takes ? i*4 + k : at; m = max
inline loop::Kernel argmaxKernel() {
  using namespace loop;
  Buffer x = Buffer::make("x", f32(), makeShape({8, 16}));
  Buffer m = Buffer::make("m", f32(), makeShape({2, 16}));
  Buffer at = Buffer::make("at", i64(), makeShape({2, 16}));
  Expr i = indexVar("i"), j = indexVar("j"), k = indexVar("k");
  Expr takes = Var::make(boolean(), "takes");
  Expr cell = i * 16 + j, value = Load::make(x, (i * 4 + k) * 16 + j);
  Stmt update = LetStmt::make(
      takes, value > Load::make(m, cell),
      Block::make(Store::make(at, cell, select(takes, i * 4 + k, Load::make(at, cell))),
                  Store::make(m, cell, select(takes, value, Load::make(m, cell)))));
  Stmt body = serialFor(
      i, 2,
      serialFor(
          j, 16,
          Block::make({Store::make(m, cell,
                                   makeFloatConst(f32(), -std::numeric_limits<double>::infinity())),
                       Store::make(at, cell, makeIndex(-1)), serialFor(k, 4, update)})));
  return Kernel{"argmax", {x}, {m, at}, body, {"am"}};
}

} // namespace lathe::schedule::testing
