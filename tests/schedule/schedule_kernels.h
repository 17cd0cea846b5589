#pragma once
// Small kernels the schedule tests replay primitives on: a naive matmul whose reduction
// stores into the output inside the k loop, and an elementwise epilogue nest.

#include "engine/loop_ir/ir.h"
#include "engine/loop_ir/ir_operators.h"

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

} // namespace lathe::schedule::testing
