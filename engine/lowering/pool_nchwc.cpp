// lathe::GlobalAveragePoolNCHWc and lathe::GlobalMaxPoolNCHWc: global pooling of a
// channel-blocked tensor, made by the layout-nchwc pass where a chain of Convs ends in one
// (MobileNetV2's and ResNet's heads). X is [N, C/16, H, W, 16], Y [N, C/16, 1, 1, 16]: the
// 16 channels of a block are one vector (two with AVX2), summed or maxed over the plane in
// a register, so the chain's exit converts the pooled values instead of the whole plane.
// A plain nest and a default trace: the block's channels kept in registers across the
// plane (register_tile), the (image, block) tasks one parallel loop.
#include "engine/lowering/conv_nchwc_internal.h"
#include "engine/lowering/reduce_helpers.h"

namespace lathe::lowering {
namespace {

constexpr std::int64_t kBlock = kNchwcBlock;

Stmt lowerGlobalPoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue,
                          bool average) {
  const TensorRef x = kb.input(*node.input(0), node);
  const TensorRef y = kb.output(*node.output(0), node);
  if (x.rank() != 5 || y.rank() != 5 || x.shape[4] != kBlock || y.shape[4] != kBlock ||
      x.dtype != graph::DType::F32 || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] ||
      y.shape[2] != 1 || y.shape[3] != 1)
    unsupportedNode(node, "needs a blocked [N, C/16, H, W, 16] input and a [N, C/16, 1, 1, 16] "
                          "output");
  const std::int64_t N = x.shape[0], Cb = x.shape[1], H = x.shape[2], W = x.shape[3];
  const Expr n = axisVar(kb, "n", N), cb = axisVar(kb, "cb", Cb), h = axisVar(kb, "h", H),
             w = axisVar(kb, "w", W), j = kb.freshVar("j");
  const Expr zero = loop::makeIndex(0);
  const std::vector<Expr> idx{n, cb, zero, zero, j};
  const Expr acc = y.load(idx), v = x.load({n, cb, h, w, j});
  const Expr next = average ? acc + v : loop::select(v > acc, v, acc);
  const Expr init = average ? constantOf(y.dtype, 0) : lowestOf(loop::f32());
  const Expr result =
      average ? acc / loop::makeFloatConst(acc.type(), static_cast<double>(H * W)) : acc;
  const Stmt element =
      loop::Block::make({y.store(idx, init), loopOver(h, H, loopOver(w, W, y.store(idx, next))),
                         y.store(idx, epilogue(result, idx))});
  const Stmt nest = loopOver(n, N, loopOver(cb, Cb, forCount(j, kBlock, element)));

  const int lanes = kb.vectorBits() / 32;
  if (lanes < 4 || kBlock % lanes != 0) {
    kb.describe("blocked global pooling, one output element at a time (no vector width known)");
    return nest;
  }
  const std::string jn = loopName(j);
  if (lanes < kBlock)
    kb.defaultStep("split(" + jn + ", " + std::to_string(lanes) + ")");
  const std::string top = lanes < kBlock ? jn + ".o" : jn;
  if (H * W > 1)
    kb.defaultStep("register_tile(" + top + ", " + loopName(H > 1 ? h : w) + ")");
  else
    kb.defaultStep("vectorize(" + (lanes < kBlock ? jn + ".i" : jn) + ")");
  std::vector<std::string> tasks;
  if (N > 1)
    tasks.push_back(loopName(n));
  if (Cb > 1)
    tasks.push_back(loopName(cb));
  for (const std::string& step : parallelTaskSteps(tasks, N * Cb, N * Cb * kBlock * H * W))
    kb.defaultStep(step);
  kb.describe(std::string("blocked (NCHW16c) global ") + (average ? "average" : "max") +
              " pooling, default trace: " + std::to_string(N * Cb) +
              " tasks, the 16 channels of a block in registers across the " +
              std::to_string(H * W) + " positions of the plane");
  return nest;
}

} // namespace

Stmt lowerGlobalAveragePoolNchwc(const graph::Node& node, KernelBuilder& kb,
                                 const Epilogue& epilogue) {
  return lowerGlobalPoolNchwc(node, kb, epilogue, true);
}

Stmt lowerGlobalMaxPoolNchwc(const graph::Node& node, KernelBuilder& kb, const Epilogue& epilogue) {
  return lowerGlobalPoolNchwc(node, kb, epilogue, false);
}

} // namespace lathe::lowering
