// Data movement ops: the layout family lives here (reshapes, Transpose, Expand, Tile, Concat,
// Split, DepthToSpace/SpaceToDepth); indexing, generators and Resize are in the
// data_movement_*.cpp files, whose registration functions this file calls.
//
// Most ops are pointwise rules: the value at an output index is a load from the input at an
// index computed from it. Every index a rule loads at stays in bounds even in branches a
// Select discards, because the code generator evaluates both sides of a Select.
#include "engine/loop_ir/ir_operators.h"
#include "engine/lowering/op_rules.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::lowering {

// Defined in the other data_movement_*.cpp files.
void registerDataMovementIndexRules(RuleTable& table);
void registerDataMovementGenerateRules(RuleTable& table);
void registerDataMovementResizeRules(RuleTable& table);

namespace {

using graph::Node;
using Shape = std::vector<std::int64_t>;

Shape inputShape(const Node& n, std::size_t i) {
  const graph::Value* v = n.input(i);
  if (!v)
    unsupportedNode(n, "input " + std::to_string(i) + " is absent");
  return staticShape(*v, n);
}

Shape outputShape(const Node& n) {
  return staticShape(*n.output(0), n);
}

[[noreturn]] void invalidNode(const Node& n, const std::string& reason) {
  throw Error(ErrorKind::Invalid, reason, {{}, n.name, n.opType()});
}

// --- reshapes: the row-major element order is unchanged, only the dims are ----------------

// Reshape, Flatten, Squeeze, Unsqueeze: output flat index == input flat index.
Expr lowerFlatCopy(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  return in.readFlat(0, flatIndex(outputShape(n), idx));
}

Expr lowerTranspose(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const auto rank = static_cast<std::int64_t>(idx.size());
  Shape perm = n.attrInts("perm");
  if (!n.hasAttribute("perm"))
    for (std::int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (static_cast<std::int64_t>(perm.size()) != rank)
    invalidNode(n, "perm has " + std::to_string(perm.size()) + " entries for rank " +
                       std::to_string(rank));
  // Output dim i is input dim perm[i].
  std::vector<Expr> src(idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i)
    src[static_cast<std::size_t>(
        normalizeAxis(n, perm[i], static_cast<std::int64_t>(idx.size())))] = idx[i];
  for (const Expr& e : src)
    if (!e.defined())
      invalidNode(n, "perm is not a permutation");
  return in.read(0, src);
}

// Expand is numpy broadcasting of the input to the output shape.
Expr lowerExpand(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  return readBroadcast(in, n, 0, idx);
}

Expr lowerTile(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const Shape inShape = inputShape(n, 0), outShape = outputShape(n);
  if (inShape.size() != idx.size())
    invalidNode(n, "output rank differs from the input rank");
  std::vector<Expr> src;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (inShape[i] == 1)
      src.push_back(loop::makeIndex(0));
    else if (inShape[i] == outShape[i])
      src.push_back(idx[i]);
    else
      src.push_back(idx[i] % inShape[i]); // the output index is never negative
  }
  return in.read(0, src);
}

// A Select chain over the axis ranges; each input's load clamps its axis index into range
// so the loads of the inputs that are not chosen stay in bounds.
Expr lowerConcat(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  const auto axis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("axis", 0), static_cast<std::int64_t>(idx.size())));
  struct Part {
    std::size_t input;
    std::int64_t offset, extent;
  };
  std::vector<Part> parts;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    if (!n.input(i))
      continue;
    const Shape s = inputShape(n, i);
    if (s.size() != idx.size())
      invalidNode(n, "input " + std::to_string(i) + " has another rank than the output");
    if (s[axis] > 0) // empty inputs contribute nothing
      parts.push_back({i, offset, s[axis]});
    offset += s[axis];
  }
  if (parts.empty()) // then the output is empty too and this value is never stored
    return constantOf(n.output(0)->type.dtype, 0);
  auto valueOf = [&](const Part& p) {
    std::vector<Expr> src = idx;
    Expr a = idx[axis] - p.offset;
    if (parts.size() > 1)
      a = loop::max(loop::min(a, p.extent - 1), std::int64_t{0});
    src[axis] = a;
    return in.read(p.input, src);
  };
  std::vector<Expr> values; // read in input order, so the kernel's parameters are too
  for (const Part& p : parts)
    values.push_back(valueOf(p));
  Expr value = values.back();
  for (std::size_t k = parts.size() - 1; k-- > 0;)
    value = loop::select(idx[axis] < parts[k + 1].offset, values[k], value);
  return value;
}

// --- depth <-> space ---------------------------------------------------------------------

std::int64_t blockSize(const Node& n) {
  const std::int64_t b = n.attrInt("blocksize", 0);
  if (b < 1)
    invalidNode(n, "blocksize must be positive");
  return b;
}

// out[n, c, h*b + i, w*b + j] = in[n, channel(c, i, j), h, w].
Expr lowerDepthToSpace(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  if (idx.size() != 4)
    unsupportedNode(n, "needs a rank-4 tensor");
  const std::int64_t b = blockSize(n);
  const std::int64_t outChannels = outputShape(n)[1];
  const std::string mode = n.attrString("mode", "DCR");
  Expr h = idx[2] / b, i = idx[2] % b, w = idx[3] / b, j = idx[3] % b;
  Expr channel;
  if (mode == "DCR") // input channels ordered (i, j, c)
    channel = (i * b + j) * outChannels + idx[1];
  else if (mode == "CRD") // input channels ordered (c, i, j)
    channel = (idx[1] * b + i) * b + j;
  else
    invalidNode(n, "unknown mode '" + mode + "'");
  return in.read(0, {idx[0], channel, h, w});
}

// out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j].
Expr lowerSpaceToDepth(const Node& n, const std::vector<Expr>& idx, OperandReader& in) {
  if (idx.size() != 4)
    unsupportedNode(n, "needs a rank-4 tensor");
  const std::int64_t b = blockSize(n);
  const std::int64_t inChannels = inputShape(n, 0)[1];
  Expr c = idx[1] % inChannels, block = idx[1] / inChannels;
  Expr i = block / b, j = block % b;
  return in.read(0, {idx[0], c, idx[2] * b + i, idx[3] * b + j});
}

// --- Split: several outputs, so a kernel rule with one loop nest per output ---------------

// Extents of the parts along the axis: from the output shapes, which shape inference has
// already derived from the split input/attribute or the equal-split rule; an absent output
// takes its extent from the split sizes themselves.
Shape splitSizes(const Node& n, std::int64_t extent, std::size_t axis) {
  const std::size_t parts = n.outputs().size();
  const bool allPresent =
      std::all_of(n.outputs().begin(), n.outputs().end(), [](const auto* v) { return v; });
  Shape given;
  if (!allPresent && n.input(1))
    given = constantInts(n, 1, "split");
  else if (!allPresent && n.hasAttribute("split"))
    given = n.attrInts("split");
  const auto count = static_cast<std::int64_t>(parts);
  const std::int64_t chunk = (extent + count - 1) / count;
  Shape sizes;
  for (std::size_t i = 0; i < parts; ++i) {
    if (const graph::Value* v = n.output(i))
      sizes.push_back(staticShape(*v, n)[axis]);
    else if (given.size() == parts)
      sizes.push_back(given[i]);
    else
      sizes.push_back(
          std::clamp<std::int64_t>(extent - chunk * static_cast<std::int64_t>(i), 0, chunk));
  }
  std::int64_t sum = 0;
  for (std::int64_t s : sizes)
    sum += s;
  if (sum != extent)
    invalidNode(n,
                "split sizes add up to " + std::to_string(sum) + ", not " + std::to_string(extent));
  return sizes;
}

Stmt lowerSplit(const Node& n, KernelBuilder& kb, const Epilogue& epilogue) {
  const TensorRef x = kb.input(*n.input(0), n);
  const auto axis = static_cast<std::size_t>(
      normalizeAxis(n, n.attrInt("axis", 0), static_cast<std::int64_t>(x.rank())));
  const Shape sizes = splitSizes(n, x.shape[axis], axis);
  std::vector<Stmt> nests;
  std::int64_t offset = 0;
  for (std::size_t part = 0; part < sizes.size(); ++part) {
    if (const graph::Value* v = n.output(part)) {
      const TensorRef out = kb.output(*v, n);
      nests.push_back(kb.loopNest(out.shape, [&](const std::vector<Expr>& idx) {
        std::vector<Expr> src = idx;
        src[axis] = idx[axis] + offset;
        Expr value = x.load(src);
        return out.store(idx, part == 0 ? epilogue(value, idx) : value);
      }));
    }
    offset += sizes[part];
  }
  return loop::Block::make(nests);
}

} // namespace

void registerDataMovementRules(RuleTable& t) {
  auto& p = t.pointwise;
  p["Reshape"] = p["Flatten"] = p["Squeeze"] = p["Unsqueeze"] = lowerFlatCopy;
  p["Transpose"] = lowerTranspose;
  p["Expand"] = lowerExpand;
  p["Tile"] = lowerTile;
  p["Concat"] = lowerConcat;
  p["DepthToSpace"] = lowerDepthToSpace;
  p["SpaceToDepth"] = lowerSpaceToDepth;
  t.kernels["Split"] = lowerSplit;
  registerDataMovementIndexRules(t);
  registerDataMovementGenerateRules(t);
  registerDataMovementResizeRules(t);
}

} // namespace lathe::lowering
