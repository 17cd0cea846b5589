// Convolution and pooling as kernel rules: Conv, ConvTranspose (N-d, groups, dilations,
// padding), MaxPool (with Indices), AveragePool, LpPool and the global pools.
//
// Conv takes the register-tiled schedules when the target's vector width is known, each a
// plain nest and its default trace: depthwise 2-D, other 2-D and 3-D ones whose rows take
// vectors or run as wide rows, and those whose every output reads one input value
// (conv_nchw_traced.cpp); one output position a plane as a matrix product
// (conv_pointwise.cpp); a whole window is a Gemm already (layout-weights). 2-D f32 pools
// on rows of at least 4 positions are a plain
// nest and its default trace too (pool_nchw_traced.cpp). The fallbacks here (targets without
// vectors, other element types, N-d) and the other ops' default schedules: plain nests whose
// default trace runs one parallel task per (batch, channel) output plane (four or two output
// channels per task for Conv, so that each input element loaded feeds several multiply-adds).
// A task clears its plane, then for each input channel and kernel tap accumulates into it
// with the innermost loop over contiguous output positions, and finishes with one pass that
// adds the bias, divides (averages) and applies the fused epilogue. Padding costs no
// per-element test: unit-stride Conv runs on a zero-padded copy of the input (see wideConv);
// everything else loops over the output range each tap reads inside the input, computed per
// tap.
#include "engine/lowering/conv_nchwc_internal.h"
#include "engine/lowering/reduce_helpers.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace lathe::lowering {
namespace {

using graph::Node;

std::vector<std::int64_t> concat1(std::int64_t first, std::vector<std::int64_t> rest) {
  rest.insert(rest.begin(), first);
  return rest;
}

std::vector<std::int64_t> outExtents(const std::vector<WindowAxis>& axes) {
  std::vector<std::int64_t> e;
  for (const WindowAxis& a : axes)
    e.push_back(a.out);
  return e;
}

std::vector<std::int64_t> kernelExtents(const std::vector<WindowAxis>& axes) {
  std::vector<std::int64_t> e;
  for (const WindowAxis& a : axes)
    e.push_back(a.kernel);
  return e;
}

// Loops over every kernel tap and, inside, over the positions that tap connects:
//  - sliding (Conv, pools): output positions o with input o*stride + k*dilation - pad inside
//    the input;
//  - transposed (ConvTranspose): input positions i with output i*stride + k*dilation - pad
//    inside the output.
// `wrap` may bind per-tap values around the position loops; body(tap, out, in).
using TapWrap = std::function<Stmt(const std::vector<Expr>& tap, Stmt positions)>;
using TapBody = std::function<Stmt(const std::vector<Expr>& tap, const std::vector<Expr>& out,
                                   const std::vector<Expr>& in)>;

Stmt overTaps(KernelBuilder& kb, const std::vector<WindowAxis>& axes, bool transposed,
              const TapWrap& wrap, const TapBody& body) {
  return nestedLoops(
      kb, kernelExtents(axes),
      [&](const std::vector<Expr>& tap) {
        std::vector<IndexRange> ranges;
        std::vector<Expr> offsets;
        for (std::size_t a = 0; a < axes.size(); ++a) {
          const WindowAxis& w = axes[a];
          offsets.push_back(tap[a] * w.dilation - w.padBegin);
          ranges.push_back(transposed ? validRange(w.in, w.stride, offsets[a], w.out)
                                      : validRange(w.out, w.stride, offsets[a], w.in));
        }
        Stmt positions = nestedLoops(
            kb, ranges,
            [&](const std::vector<Expr>& pos) {
              std::vector<Expr> moved;
              for (std::size_t a = 0; a < axes.size(); ++a)
                moved.push_back(pos[a] * axes[a].stride + offsets[a]);
              return transposed ? body(tap, moved, pos) : body(tap, pos, moved);
            },
            "p");
        return wrap ? wrap(tap, positions) : positions;
      },
      "k");
}

std::vector<std::int64_t> weightKernel(const Node& node, const TensorRef& w) {
  std::vector<std::int64_t> kernel = dropFront(w.shape, 2);
  if (node.hasAttribute("kernel_shape") && node.attrInts("kernel_shape") != kernel)
    unsupportedNode(node, "kernel_shape differs from the weight's spatial dims");
  return kernel;
}

ConvOperands convOperands(const Node& node, KernelBuilder& kb) {
  ConvOperands ops{kb.input(*node.input(0), node), kb.input(*node.input(1), node), {}, {}, 1};
  if (node.input(2))
    ops.bias = kb.input(*node.input(2), node);
  ops.y = kb.output(*node.output(0), node);
  requireFloat(node, ops.x);
  if (ops.x.rank() < 3 || ops.w.rank() != ops.x.rank() || ops.y.rank() != ops.x.rank())
    unsupportedNode(node, "needs input, weight and output of one rank >= 3");
  ops.group = node.attrInt("group", 1);
  if (ops.group < 1)
    unsupportedNode(node, "group must be positive");
  return ops;
}

// The last pass over an output plane: bias (added after the sum, as ONNX Runtime does) and
// the fused epilogue. Nothing when there is neither.
Stmt finishPlane(KernelBuilder& kb, const Node& node, const ConvOperands& ops, const Expr& n,
                 const Expr& m, const Epilogue& epilogue) {
  if (!ops.bias && !hasEpilogue(node))
    return loop::noOp();
  return nestedLoops(
      kb, dropFront(ops.y.shape, 2),
      [&](const std::vector<Expr>& o) {
        const std::vector<Expr> idx = concat({n, m}, o);
        Expr v = ops.y.load(idx);
        if (ops.bias)
          v = v + ops.bias->load({m});
        return ops.y.store(idx, epilogue(v, idx));
      },
      "e");
}

Stmt clearPlane(KernelBuilder& kb, const TensorRef& y, const Expr& n, const Expr& m) {
  return nestedLoops(
      kb, dropFront(y.shape, 2),
      [&](const std::vector<Expr>& o) {
        return y.store(concat({n, m}, o), constantOf(y.dtype, 0));
      },
      "z");
}

// What both Conv schedules share: a task computes R output channels of one group (so that
// every input element loaded feeds R multiply-adds), with the weights of the current input
// channel and tap bound outside the loops over positions.
struct ConvTask {
  std::int64_t N, C, M, Cg, Mg, R, blocks;
  Expr task, n, m0, inChannel0, c;
  std::vector<Expr> weights;
  Expr xs; // the input element of the innermost iteration

  ConvTask(KernelBuilder& kb, const ConvOperands& ops) {
    N = ops.x.shape[0], C = ops.x.shape[1], M = ops.w.shape[0], Cg = ops.w.shape[1];
    Mg = M / ops.group;
    R = Mg % 4 == 0 ? 4 : (Mg % 2 == 0 ? 2 : 1);
    blocks = M / R;
    task = kb.freshVar("nm");
    n = task / blocks;
    m0 = (task % blocks) * R;
    inChannel0 = (m0 / Mg) * Cg;
    c = kb.freshVar("c");
    const loop::Type t = loopType(ops.y.dtype);
    for (std::int64_t r = 0; r < R; ++r)
      weights.push_back(freshScalar(kb, "w", t));
    xs = freshScalar(kb, "x", t);
  }

  Stmt bindWeights(const TensorRef& w, const std::vector<Expr>& tap, Stmt inner) const {
    for (std::int64_t r = R; r-- > 0;)
      inner = loop::LetStmt::make(weights[r], w.load(concat({m0 + r, c}, tap)), inner);
    return inner;
  }

  // let x = input in acc(r) += w_r * x for each r.
  Stmt accumulate(
      const Expr& input,
      const std::function<std::pair<TensorRef, std::vector<Expr>>(std::int64_t r)>& acc) const {
    std::vector<Stmt> stores;
    for (std::int64_t r = 0; r < R; ++r) {
      const auto [buffer, idx] = acc(r);
      stores.push_back(buffer.store(idx, buffer.load(idx) + weights[r] * xs));
    }
    return loop::LetStmt::make(xs, input, loop::Block::make(stores));
  }

  std::int64_t work(const std::vector<WindowAxis>& axes) const {
    return N * M * Cg * product(kernelExtents(axes)) * product(outExtents(axes));
  }
};

// Conv over the valid output range of each tap (any strides; the innermost loop runs over
// output x, strided in the input when the stride is).
Stmt rangeConv(const Node& node, KernelBuilder& kb, const Epilogue& epilogue,
               const ConvOperands& ops, const std::vector<WindowAxis>& axes) {
  const ConvTask ct(kb, ops);
  const TapWrap bind = [&](const std::vector<Expr>& tap, Stmt inner) {
    return ct.bindWeights(ops.w, tap, inner);
  };
  const TapBody accumulate = [&](const std::vector<Expr>&, const std::vector<Expr>& o,
                                 const std::vector<Expr>& i) {
    return ct.accumulate(ops.x.load(concat({ct.n, ct.inChannel0 + ct.c}, i)), [&](std::int64_t r) {
      return std::pair{ops.y, concat({ct.n, ct.m0 + r}, o)};
    });
  };
  // Clearing and finishing loop over the R channels: only the accumulation is unrolled.
  const Expr r0 = kb.freshVar("r"), r1 = kb.freshVar("r");
  const Stmt body = loop::Block::make(
      {forCount(r0, ct.R, clearPlane(kb, ops.y, ct.n, ct.m0 + r0)),
       forCount(ct.c, ct.Cg, overTaps(kb, axes, false, bind, accumulate)),
       forCount(r1, ct.R, finishPlane(kb, node, ops, ct.n, ct.m0 + r1, epilogue))});
  return taskLoop(kb, ct.task, ct.N * ct.blocks, body, ct.work(axes));
}

// Unit-stride Conv on a "wide" grid: with the input zero-padded into a scratch copy (when
// there is padding), output position o of every tap reads input o + tap offset in the
// flattened padded plane, so one contiguous loop covers the whole plane per tap. Each
// output row is computed across the full padded width (the extra columns are discarded at
// the end), which keeps that loop free of edge tests and long even for 7x7 planes.
//
// A strided 1x1 convolution (no padding) first gathers the input positions it reads into a
// dense copy, `subsample` holding the strides, and then runs as an unstrided one.
Stmt wideConv(const Node& node, KernelBuilder& kb, const Epilogue& epilogue,
              const ConvOperands& ops, const std::vector<WindowAxis>& axes,
              const std::vector<std::int64_t>& subsample = {}) {
  const ConvTask ct(kb, ops);
  const TensorRef &x = ops.x, &y = ops.y;
  const std::size_t S = axes.size();
  std::vector<std::int64_t> padded(S), wide(S, 1);
  bool anyPad = false;
  for (std::size_t a = 0; a < S; ++a) {
    padded[a] = axes[a].in + axes[a].padBegin + axes[a].padEnd;
    anyPad = anyPad || padded[a] != axes[a].in;
    // Every tap of every output must stay inside the padded plane (shape inference makes
    // it so); the flat indexing below relies on it.
    if (axes[a].out + (axes[a].kernel - 1) * axes[a].dilation > padded[a])
      unsupportedNode(node, "output extent does not match the padded input");
  }
  for (std::size_t a = S - 1; a-- > 0;)
    wide[a] = wide[a + 1] * padded[a + 1];
  std::int64_t F = 1; // positions of the wide grid, up to the last real output
  for (std::size_t a = 0; a < S; ++a)
    F += (axes[a].out - 1) * wide[a];
  auto wideIndex = [&](const std::vector<Expr>& pos, const std::vector<std::int64_t>& shift) {
    Expr flat = loop::makeIndex(0);
    for (std::size_t a = 0; a < S; ++a)
      flat = flat + (pos[a] + shift[a]) * wide[a];
    return flat;
  };
  const std::int64_t NC = ct.N * ct.C, planeIn = product(padded);
  // Accumulate straight into Y when the wide grid is the output plane (1x1 kernels).
  const bool dense = F == product(outExtents(axes));
  const bool copy = anyPad || !subsample.empty();
  const TensorRef src = copy ? kb.scratch("xpad", x.dtype, {NC, planeIn})
                             : TensorRef{x.buffer, {NC, planeIn}, x.dtype};
  const TensorRef acc = dense ? TensorRef{y.buffer, {ct.N * ct.M, F}, y.dtype}
                              : kb.scratch("acc", y.dtype, {ct.R, F});
  auto accRow = [&](const Expr& r) { return dense ? ct.n * ct.M + ct.m0 + r : r; };

  // The R rows of the accumulator are consecutive: one loop clears them.
  std::vector<Stmt> body;
  const Expr z = kb.freshVar("z");
  body.push_back(forCount(
      z, ct.R * F, acc.storeFlat(accRow(loop::makeIndex(0)) * F + z, constantOf(y.dtype, 0))));
  const Stmt taps = nestedLoops(
      kb, kernelExtents(axes),
      [&](const std::vector<Expr>& tap) {
        Expr offset = loop::makeIndex(0);
        for (std::size_t a = 0; a < S; ++a)
          offset = offset + tap[a] * (axes[a].dilation * wide[a]);
        const Expr f = kb.freshVar("f");
        const Stmt inner = ct.accumulate(
            src.load({ct.n * ct.C + ct.inChannel0 + ct.c, f + offset}), [&](std::int64_t r) {
              return std::pair{acc, std::vector<Expr>{accRow(loop::makeIndex(r)), f}};
            });
        return ct.bindWeights(ops.w, tap, forCount(f, F, inner));
      },
      "k");
  body.push_back(forCount(ct.c, ct.Cg, taps));
  if (!dense || ops.bias || hasEpilogue(node)) {
    const Expr r = kb.freshVar("r");
    body.push_back(forCount(r, ct.R,
                            nestedLoops(
                                kb, outExtents(axes),
                                [&](const std::vector<Expr>& o) {
                                  const std::vector<Expr> idx = concat({ct.n, ct.m0 + r}, o);
                                  Expr v = acc.load(
                                      {accRow(r), wideIndex(o, std::vector<std::int64_t>(S, 0))});
                                  if (ops.bias)
                                    v = v + ops.bias->load({ct.m0 + r});
                                  return y.store(idx, epilogue(v, idx));
                                },
                                "e")));
  }
  Stmt task = loop::Block::make(body);
  if (!dense) // per task, so that threads do not share it
    task = kb.allocate(acc, task, ct.R * F * loopType(y.dtype).bytes() > (256 << 10));
  Stmt main = taskLoop(kb, ct.task, ct.N * ct.blocks, task, ct.work(axes));
  if (!copy)
    return main;

  // The zero-padded (or subsampled) copy of the input, made once before the convolution.
  const Expr t = kb.freshVar("nc"), q = kb.freshVar("q");
  std::vector<std::int64_t> inExtents, padBegin;
  for (const WindowAxis& a : axes) {
    inExtents.push_back(a.in);
    padBegin.push_back(a.padBegin);
  }
  const TensorRef xPlanes{x.buffer, concat1(NC, dropFront(x.shape, 2)), x.dtype};
  const Stmt copyIn = nestedLoops(
      kb, inExtents,
      [&](const std::vector<Expr>& i) {
        std::vector<Expr> read{t};
        for (std::size_t a = 0; a < S; ++a)
          read.push_back(subsample.empty() ? i[a] : i[a] * subsample[a]);
        return src.store({t, wideIndex(i, padBegin)}, xPlanes.load(read));
      },
      "i");
  const Stmt clear =
      anyPad ? forCount(q, planeIn, src.store({t, q}, constantOf(x.dtype, 0))) : loop::noOp();
  const Stmt fill = taskLoop(kb, t, NC, loop::Block::make(clear, copyIn), NC * planeIn);
  return kb.allocate(src, loop::Block::make(fill, main), true);
}

Stmt lowerConv(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const ConvOperands ops = convOperands(node, kb);
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const std::int64_t C = x.shape[1], M = w.shape[0], Cg = w.shape[1];
  if (C != Cg * ops.group || M % ops.group != 0 || y.shape[1] != M)
    unsupportedNode(node, "channel counts do not match the weight and group");
  const std::vector<WindowAxis> axes =
      slidingWindow(node, dropFront(x.shape, 2), dropFront(y.shape, 2), weightKernel(node, w));
  if (kb.gpu())
    if (Stmt plain = gpuConv(node, kb, epilogue, ops, axes); plain.defined())
      return plain;
  if (Stmt depthwise = tracedDepthwiseConv(kb, epilogue, ops, axes); depthwise.defined())
    return depthwise;
  if (Stmt scaled = scaledConv(kb, epilogue, ops, axes); scaled.defined())
    return scaled;
  if (Stmt one = onePositionConv(kb, epilogue, ops, axes); one.defined())
    return one;
  const bool unitStrides =
      std::all_of(axes.begin(), axes.end(), [](const WindowAxis& a) { return a.stride == 1; });
  const bool padded = std::any_of(axes.begin(), axes.end(), [](const WindowAxis& a) {
    return a.padBegin != 0 || a.padEnd != 0;
  });
  // 1-D rows are long already; padding them into a copy would not pay.
  if (unitStrides && (axes.size() > 1 || !padded)) {
    if (Stmt pointwise = pointwiseConv(kb, epilogue, ops, axes); pointwise.defined())
      return pointwise;
    if (Stmt traced = tracedNchwConv(kb, epilogue, ops, axes); traced.defined())
      return traced;
    return wideConv(node, kb, epilogue, ops, axes);
  }
  const bool pointwise =
      std::all_of(axes.begin(), axes.end(), [](const WindowAxis& a) { return a.kernel == 1; });
  // Strided 1x1 windows without padding: one phase plane (the subsampled input), its wide rows
  // stored straight into Y.
  if (pointwise && !padded) {
    if (Stmt traced = tracedNchwConv(kb, epilogue, ops, axes); traced.defined())
      return traced;
    std::vector<WindowAxis> dense = axes;
    std::vector<std::int64_t> strides;
    for (WindowAxis& a : dense) {
      strides.push_back(a.stride);
      a.in = a.out;
      a.stride = 1;
    }
    return wideConv(node, kb, epilogue, ops, dense, strides);
  }
  if (Stmt traced = tracedNchwConv(kb, epilogue, ops, axes); traced.defined())
    return traced;
  return rangeConv(node, kb, epilogue, ops, axes);
}

Stmt lowerConvTranspose(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  const ConvOperands ops = convOperands(node, kb);
  const TensorRef &x = ops.x, &w = ops.w, &y = ops.y;
  const std::int64_t N = x.shape[0], C = x.shape[1], Mg = w.shape[1], M = y.shape[1];
  if (w.shape[0] != C || C % ops.group != 0 || M != Mg * ops.group)
    unsupportedNode(node, "channel counts do not match the weight and group");
  const std::int64_t Cg = C / ops.group;
  const std::vector<WindowAxis> axes =
      transposedWindow(node, dropFront(x.shape, 2), dropFront(y.shape, 2), weightKernel(node, w));

  // Scatter form: each input position adds its contribution to the outputs it reaches. A
  // task owns one output plane, so the scattered updates never race.
  const Expr task = kb.freshVar("nm");
  const Expr n = task / M, m = task % M;
  const Expr c = kb.freshVar("c");
  const Expr inChannel = (m / Mg) * Cg + c;
  const Expr ws = freshScalar(kb, "w", loopType(y.dtype));
  const TapWrap bindWeight = [&](const std::vector<Expr>& tap, Stmt inner) {
    return loop::LetStmt::make(ws, w.load(concat({inChannel, m % Mg}, tap)), inner);
  };
  const TapBody accumulate = [&](const std::vector<Expr>&, const std::vector<Expr>& o,
                                 const std::vector<Expr>& i) {
    const std::vector<Expr> idx = concat({n, m}, o);
    return y.store(idx, y.load(idx) + ws * x.load(concat({n, inChannel}, i)));
  };
  const Stmt body = loop::Block::make(
      {clearPlane(kb, y, n, m), forCount(c, Cg, overTaps(kb, axes, true, bindWeight, accumulate)),
       finishPlane(kb, node, ops, n, m, epilogue)});
  const std::int64_t work =
      N * C * Mg * product(kernelExtents(axes)) * product(dropFront(x.shape, 2));
  return taskLoop(kb, task, N * M, body, work);
}

} // namespace

// --- pooling ------------------------------------------------------------------------------

// |x|^p for the Lp pools (ONNX Runtime uses pow for every p; 1 and 2 are exact shortcuts).
Expr lpPower(const Expr& v, std::int64_t p) {
  if (p == 1)
    return loop::Call::make(loop::Intrinsic::Abs, {v});
  if (p == 2)
    return v * v;
  return loop::Call::make(loop::Intrinsic::Pow, {loop::Call::make(loop::Intrinsic::Abs, {v}),
                                                 loop::makeFloatConst(v.type(), double(p))});
}

Expr lpRoot(const Expr& sum, std::int64_t p) {
  if (p == 1)
    return sum;
  if (p == 2)
    return loop::Call::make(loop::Intrinsic::Sqrt, {sum});
  return loop::Call::make(loop::Intrinsic::Pow, {sum, loop::makeFloatConst(sum.type(), 1.0 / p)});
}

// The number of taps of output position `o` that AveragePool divides by along one axis: those
// inside the input, or inside the padded input with count_include_pad.
Expr tapCount(const WindowAxis& a, const Expr& o, bool includePad) {
  const Expr base = o * a.stride - a.padBegin;
  const std::int64_t lo = includePad ? -a.padBegin : 0, hi = includePad ? a.in + a.padEnd : a.in;
  const Expr first = loop::max(loop::makeIndex(0), ceilDiv(lo - base, a.dilation));
  const Expr end = loop::min(loop::makeIndex(a.kernel), ceilDiv(hi - base, a.dilation));
  return loop::max(end - first, loop::makeIndex(1));
}

Expr poolStart(PoolKind kind, graph::DType dtype) {
  // Minus infinity for floats: a finite lowest value (-FLT_MAX) reported a window of -inf
  // values (or a padded one) as -3.4e38 where ONNX Runtime says -inf.
  return kind == PoolKind::Max ? lowestOf(loopType(dtype)) : constantOf(dtype, 0);
}

Expr poolUpdate(PoolKind kind, const Expr& acc, const Expr& v, std::int64_t p) {
  return kind == PoolKind::Max  ? loop::select(v > acc, v, acc)
         : kind == PoolKind::Lp ? acc + lpPower(v, p)
                                : acc + v;
}

Expr poolFinish2d(PoolKind kind, Expr value, graph::DType dtype, std::int64_t p,
                  const WindowAxis& rows, const WindowAxis& cols, const Expr& oh, const Expr& ow,
                  bool includePad) {
  if (kind == PoolKind::Average)
    return value / loop::cast(loopType(dtype),
                              tapCount(rows, oh, includePad) * tapCount(cols, ow, includePad));
  if (kind == PoolKind::Lp)
    return lpRoot(value, p);
  return value;
}

namespace {

Stmt lowerPool(const Node& node, KernelBuilder& kb, const Epilogue& epilogue, PoolKind kind) {
  const TensorRef x = kb.input(*node.input(0), node);
  const TensorRef y = kb.output(*node.output(0), node);
  std::optional<TensorRef> indices;
  if (node.outputs().size() > 1 && node.output(1))
    indices = kb.output(*node.output(1), node);
  if (kind != PoolKind::Max)
    requireFloat(node, x);
  if (x.rank() < 3 || y.rank() != x.rank())
    unsupportedNode(node, "needs an input of rank >= 3");
  if (!node.hasAttribute("kernel_shape"))
    unsupportedNode(node, "needs the kernel_shape attribute");
  const std::int64_t storageOrder = node.attrInt("storage_order", 0);
  const std::int64_t p = node.attrInt("p", 2);
  if (kind == PoolKind::Lp && p < 1)
    unsupportedNode(node, "p must be positive");
  const std::vector<WindowAxis> axes = slidingWindow(
      node, dropFront(x.shape, 2), dropFront(y.shape, 2), node.attrInts("kernel_shape"));
  const bool includePad = node.attrInt("count_include_pad", 0) != 0;
  if (kb.gpu() && !indices) {
    WindowNest w;
    w.init = poolStart(kind, y.dtype);
    w.update = [&](const Expr& acc, const Expr& n, const Expr& c, const Expr&,
                   const std::vector<Expr>& pos, const std::vector<Expr>&) {
      const Expr v = x.load(concat({n, c}, pos));
      // Strictly greater: the first maximum in tap order wins, as on the CPU.
      if (kind == PoolKind::Max)
        return loop::select(v > acc, v, acc);
      return acc + (kind == PoolKind::Lp ? lpPower(v, p) : v);
    };
    w.finish = [&](const Expr& acc, const std::vector<Expr>& idx) {
      Expr v = acc;
      if (kind == PoolKind::Average) {
        Expr count = loop::makeIndex(1);
        for (std::size_t a = 0; a < axes.size(); ++a)
          count = count * tapCount(axes[a], idx[a + 2], includePad);
        v = v / loop::cast(loopType(y.dtype), count);
      } else if (kind == PoolKind::Lp) {
        v = lpRoot(v, p);
      }
      return epilogue(v, idx);
    };
    kb.describe("plain pooling for a GPU: one output element per iteration of the outer loops, " +
                std::string("its window reduced in tap order into a scalar"));
    return gpuWindowNest(kb, y, axes, w);
  }
  if (Stmt traced = tracedNchwPool(kb, epilogue, x, y, axes, kind, p, includePad,
                                   indices ? &*indices : nullptr, storageOrder);
      traced.defined())
    return traced;
  const std::int64_t N = x.shape[0], C = x.shape[1];
  const Expr task = kb.freshVar("nc");
  const Expr n = task / C, c = task % C;
  const loop::Type t = loopType(y.dtype);

  // The flat index in X that Indices reports: row-major, or column-major over the spatial
  // axes with storage_order=1.
  auto flatInput = [&](const std::vector<Expr>& pos) {
    Expr flat = task;
    if (storageOrder == 0) {
      for (std::size_t a = 0; a < axes.size(); ++a)
        flat = flat * axes[a].in + pos[a];
      return flat;
    }
    Expr inner = loop::makeIndex(0);
    for (std::size_t a = axes.size(); a-- > 0;)
      inner = inner * axes[a].in + pos[a];
    return flat * product(dropFront(x.shape, 2)) + inner;
  };

  const Expr init = poolStart(kind, y.dtype);
  Stmt clear = nestedLoops(
      kb, outExtents(axes),
      [&](const std::vector<Expr>& o) {
        const std::vector<Expr> idx = concat({n, c}, o);
        Stmt s = y.store(idx, init);
        // -1: no tap seen yet (the first tap's value may equal `init`, the type's lowest).
        return indices ? loop::Block::make(s, indices->store(idx, loop::makeIndex(-1))) : s;
      },
      "z");
  const Expr xs = freshScalar(kb, "x", t);
  const TapBody accumulate = [&](const std::vector<Expr>&, const std::vector<Expr>& o,
                                 const std::vector<Expr>& i) {
    const std::vector<Expr> idx = concat({n, c}, o);
    const Expr acc = y.load(idx);
    Stmt s;
    if (kind == PoolKind::Max) {
      // Strictly greater: the first maximum in tap order wins, as in ONNX Runtime. The
      // comparison is bound once: the Indices update must not see the new maximum. With
      // Indices, the first tap always counts, so that a window whose maximum is the type's
      // lowest value (0 in uint8) still reports where it is.
      const Expr greater = freshScalar(kb, "gt", loop::boolean());
      s = y.store(idx, loop::select(greater, xs, acc));
      Expr takes = xs > acc;
      if (indices) {
        s = loop::Block::make(
            s, indices->store(idx, loop::select(greater, flatInput(i), indices->load(idx))));
        takes = takes || indices->load(idx) < loop::makeIndex(0);
      }
      s = loop::LetStmt::make(greater, takes, s);
    } else {
      s = y.store(idx, acc + (kind == PoolKind::Lp ? lpPower(xs, p) : xs));
    }
    return loop::LetStmt::make(xs, x.load(concat({n, c}, i)), s);
  };
  const Stmt taps = overTaps(kb, axes, false, nullptr, accumulate);

  Stmt finish = loop::noOp();
  if (kind != PoolKind::Max || hasEpilogue(node))
    finish = nestedLoops(
        kb, outExtents(axes),
        [&](const std::vector<Expr>& o) {
          const std::vector<Expr> idx = concat({n, c}, o);
          Expr v = y.load(idx);
          if (kind == PoolKind::Average) {
            Expr count = loop::makeIndex(1);
            for (std::size_t a = 0; a < axes.size(); ++a)
              count = count * tapCount(axes[a], o[a], includePad);
            v = v / loop::cast(t, count);
          } else if (kind == PoolKind::Lp) {
            v = lpRoot(v, p);
          }
          return y.store(idx, epilogue(v, idx));
        },
        "e");
  const std::int64_t work = N * C * product(kernelExtents(axes)) * product(outExtents(axes));
  return taskLoop(kb, task, N * C, loop::Block::make({clear, taps, finish}), work);
}

Stmt lowerMaxPool(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerPool(node, kb, epilogue, PoolKind::Max);
}
Stmt lowerAveragePool(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerPool(node, kb, epilogue, PoolKind::Average);
}
Stmt lowerLpPool(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerPool(node, kb, epilogue, PoolKind::Lp);
}

// Global pools: one reduction over each (batch, channel) plane, accumulated in the output
// element in plane order.
Stmt lowerGlobalPool(const Node& node, KernelBuilder& kb, const Epilogue& epilogue, PoolKind kind) {
  const TensorRef x = kb.input(*node.input(0), node);
  const TensorRef y = kb.output(*node.output(0), node);
  if (kind != PoolKind::Max)
    requireFloat(node, x);
  if (x.rank() < 3 || y.rank() != x.rank())
    unsupportedNode(node, "needs an input of rank >= 3");
  const std::int64_t p = node.attrInt("p", 2);
  if (kind == PoolKind::Lp && p < 1)
    unsupportedNode(node, "p must be positive");
  const std::int64_t N = x.shape[0], C = x.shape[1], plane = product(dropFront(x.shape, 2));
  const TensorRef yFlat{y.buffer, {N * C}, y.dtype};
  const Expr task = kb.freshVar("nc"), q = kb.freshVar("q");
  const Expr acc = yFlat.load({task});
  const Expr v = x.loadFlat(task * plane + q);
  Expr next = kind == PoolKind::Max  ? loop::select(v > acc, v, acc)
              : kind == PoolKind::Lp ? acc + lpPower(v, p)
                                     : acc + v;
  const Expr init = poolStart(kind, y.dtype);
  Expr result = acc;
  if (kind == PoolKind::Average)
    result = acc / loop::makeFloatConst(acc.type(), double(plane));
  else if (kind == PoolKind::Lp)
    result = lpRoot(acc, p);
  std::vector<Expr> idx{task / C, task % C};
  while (idx.size() < y.rank())
    idx.push_back(loop::makeIndex(0));
  const Stmt body =
      loop::Block::make({yFlat.store({task}, init), forCount(q, plane, yFlat.store({task}, next)),
                         yFlat.store({task}, epilogue(result, idx))});
  return taskLoop(kb, task, N * C, body, N * C * plane);
}

Stmt lowerGlobalAveragePool(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerGlobalPool(node, kb, epilogue, PoolKind::Average);
}
Stmt lowerGlobalMaxPool(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerGlobalPool(node, kb, epilogue, PoolKind::Max);
}
Stmt lowerGlobalLpPool(const Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerGlobalPool(node, kb, epilogue, PoolKind::Lp);
}

} // namespace

void registerConvPoolRules(RuleTable& table) {
  auto& k = table.kernels;
  k["Conv"] = lowerConv;
  k["ConvTranspose"] = lowerConvTranspose;
  k["lathe::ConvNCHWc"] = lowerConvNchwc;
  k["lathe::ConvWinogradNCHWc"] = lowerConvWinogradNchwc;
  k["lathe::DepthwiseConvNCHWc"] = lowerDepthwiseConvNchwc;
  k["lathe::MaxPoolNCHWc"] = lowerMaxPoolNchwc;
  k["lathe::AveragePoolNCHWc"] = lowerAveragePoolNchwc;
  k["lathe::LpPoolNCHWc"] = lowerLpPoolNchwc;
  k["lathe::GlobalAveragePoolNCHWc"] = lowerGlobalAveragePoolNchwc;
  k["lathe::GlobalMaxPoolNCHWc"] = lowerGlobalMaxPoolNchwc;
  k["MaxPool"] = lowerMaxPool;
  k["AveragePool"] = lowerAveragePool;
  k["LpPool"] = lowerLpPool;
  k["GlobalAveragePool"] = lowerGlobalAveragePool;
  k["GlobalMaxPool"] = lowerGlobalMaxPool;
  k["GlobalLpPool"] = lowerGlobalLpPool;
}

} // namespace lathe::lowering
