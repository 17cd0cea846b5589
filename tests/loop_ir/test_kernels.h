#pragma once
// Small loop nests shared by the loop IR tests.

#include "engine/loop_ir/ir.h"
#include "engine/loop_ir/ir_operators.h"

namespace lathe::loop::testing {

inline Expr indexVar(const char* name) {
  return Var::make(indexType(), name);
}

// A 3x3 convolution (1x3x10x10 input, 4 output channels, no padding) with a ReLU epilogue,
// accumulating in a one-element stack buffer.
inline Kernel convReluKernel() {
  Buffer data = Buffer::make("data", f32(), makeShape({1, 3, 10, 10}));
  Buffer w = Buffer::make("w", f32(), makeShape({4, 3, 3, 3}));
  Buffer out = Buffer::make("out", f32(), makeShape({1, 4, 8, 8}));
  Buffer acc = Buffer::make("acc", f32(), makeShape({1}));
  Expr co = indexVar("co"), y = indexVar("y"), x = indexVar("x");
  Expr ci = indexVar("ci"), ky = indexVar("ky"), kx = indexVar("kx");
  Expr zero = makeIndex(0);

  Expr product = Load::make(data, ci * 100 + (y + ky) * 10 + x + kx) *
                 Load::make(w, co * 27 + ci * 9 + ky * 3 + kx);
  Stmt update = Store::make(acc, zero, Load::make(acc, zero) + product);
  Stmt reduction =
      For::make(ci, makeIndex(0), makeIndex(3), ForKind::Serial,
                For::make(ky, makeIndex(0), makeIndex(3), ForKind::Serial,
                          For::make(kx, makeIndex(0), makeIndex(3), ForKind::Serial, update)));
  Stmt init = Store::make(acc, zero, makeConst(f32(), 0.0));
  Stmt epilogue = Store::make(out, co * 64 + y * 8 + x, max(Load::make(acc, zero), 0.0));
  Stmt pixel = Allocate::make(acc, MemoryScope::Stack, Block::make({init, reduction, epilogue}));
  Stmt body =
      For::make(co, makeIndex(0), makeIndex(4), ForKind::Parallel,
                For::make(y, makeIndex(0), makeIndex(8), ForKind::Serial,
                          For::make(x, makeIndex(0), makeIndex(8), ForKind::Serial, pixel)));

  Kernel kernel;
  kernel.name = "fused_conv_relu_0";
  kernel.inputs = {data, w};
  kernel.outputs = {out};
  kernel.body = body;
  kernel.sourceNodes = {"conv0", "relu0"};
  return kernel;
}

} // namespace lathe::loop::testing
