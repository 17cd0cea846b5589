#include "engine/lowering/reduce_helpers.h"

#include "engine/loop_ir/ir_equality.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <limits>

namespace lathe::lowering {
namespace {

// Below this many element operations a kernel runs serially: the fork/join of a parallel
// loop costs more than the work.
constexpr std::int64_t kParallelWork = 1 << 15;
// With parallelism, blocks of columns shrink (down to kMinBlock) until there are this many
// tasks, so that reductions over leading axes still spread over the threads.
constexpr std::int64_t kMinTasks = 64;
constexpr std::int64_t kMinBlock = 64;

std::int64_t product(const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims)
    n *= d;
  return n;
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

} // namespace

std::vector<Expr> splitFlatIndex(const Expr& flat, const std::vector<std::int64_t>& shape) {
  std::vector<Expr> index(shape.size());
  Expr rest = flat;
  for (std::size_t k = shape.size(); k-- > 0;) {
    index[k] = k == 0 ? rest : loop::floorMod(rest, loop::makeIndex(shape[k]));
    rest = loop::floorDiv(rest, loop::makeIndex(shape[k]));
  }
  return index;
}

ReduceLayout::ReduceLayout(std::vector<std::int64_t> shape,
                           const std::vector<std::int64_t>& reducedAxes)
    : shape_(std::move(shape)), reduced_(shape_.size(), false) {
  for (std::int64_t a : reducedAxes) {
    LATHE_CHECK(a >= 0 && static_cast<std::size_t>(a) < shape_.size(), "reduced axis out of range");
    reduced_[static_cast<std::size_t>(a)] = true;
  }
  for (std::size_t d = 0; d < shape_.size(); ++d)
    if (reduced_[d])
      prefixRank_ = d + 1;
  for (std::size_t d = 0; d < prefixRank_; ++d) {
    const bool joins = !groups_.empty() &&
                       (groups_.back().reduced == reduced_[d] || (!reduced_[d] && shape_[d] == 1));
    if (!joins)
      groups_.push_back({1, reduced_[d], d, 0});
    groups_.back().extent *= shape_[d];
    ++groups_.back().count;
  }
}

std::vector<std::int64_t> ReduceLayout::outerShape() const {
  std::vector<std::int64_t> dims;
  for (const Group& g : groups_)
    if (!g.reduced)
      dims.push_back(g.extent);
  return dims;
}

std::vector<std::int64_t> ReduceLayout::reducedShape() const {
  std::vector<std::int64_t> dims;
  for (const Group& g : groups_)
    if (g.reduced)
      dims.push_back(g.extent);
  return dims;
}

std::int64_t ReduceLayout::reducedCount() const {
  return product(reducedShape());
}

std::int64_t ReduceLayout::columns() const {
  return product(std::vector<std::int64_t>(
      shape_.begin() + static_cast<std::ptrdiff_t>(prefixRank_), shape_.end()));
}

std::int64_t ReduceLayout::numElements() const {
  return product(shape_);
}

ReduceTask::ReduceTask(KernelBuilder& kb, const ReduceLayout& layout, std::vector<Expr> outer,
                       Expr blockStart, Expr width, std::int64_t maxWidth)
    : kb_(kb), layout_(layout), outer_(std::move(outer)), blockStart_(std::move(blockStart)),
      width_(std::move(width)), maxWidth_(maxWidth) {}

Stmt ReduceTask::overColumns(const ColumnBody& body) const {
  Expr local = kb_.freshVar("c");
  return loop::For::make(local, loop::makeIndex(0), width_, loop::ForKind::Serial,
                         body(local, blockStart_ + local));
}

Stmt ReduceTask::overReduced(const ReducedBody& body, bool reverse) const {
  const std::vector<std::int64_t> dims = layout_.reducedShape();
  std::vector<Expr> vars, index;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    vars.push_back(kb_.freshVar("r"));
    const bool backwards = reverse && k + 1 == dims.size();
    index.push_back(backwards ? loop::makeIndex(dims[k] - 1) - vars.back() : vars.back());
  }
  Stmt s = overColumns(
      [&](const Expr& local, const Expr& column) { return body(index, local, column); });
  for (std::size_t k = dims.size(); k-- > 0;)
    s = kb_.serialLoop(vars[k], dims[k], s);
  return s;
}

std::vector<Expr> ReduceTask::groupIndex(const std::vector<Expr>& reduced) const {
  std::vector<Expr> index;
  std::size_t o = 0, r = 0;
  for (const ReduceLayout::Group& g : layout_.groups())
    index.push_back(g.reduced ? reduced.at(r++) : outer_.at(o++));
  return index;
}

// The trailing kept dims' indices from a flat column (only epilogues use them).
std::vector<Expr> ReduceTask::columnIndex(const Expr& column) const {
  const auto& shape = layout_.shape();
  return splitFlatIndex(
      column, std::vector<std::int64_t>(
                  shape.begin() + static_cast<std::ptrdiff_t>(layout_.prefixRank()), shape.end()));
}

Expr ReduceTask::inputFlat(const std::vector<Expr>& reduced, const Expr& column) const {
  if (layout_.groups().empty())
    return column;
  std::vector<std::int64_t> extents;
  for (const ReduceLayout::Group& g : layout_.groups())
    extents.push_back(g.extent);
  return flatIndex(extents, groupIndex(reduced)) * layout_.columns() + column;
}

Expr ReduceTask::keptFlat(const Expr& column) const {
  if (outer_.empty())
    return column;
  return flatIndex(layout_.outerShape(), outer_) * layout_.columns() + column;
}

// Index vectors (for epilogues and scattered operands) split each group's index over its
// dims.
std::vector<Expr> ReduceTask::fullIndex(const std::vector<Expr>& reduced,
                                        const Expr& column) const {
  const std::vector<Expr> groups = groupIndex(reduced);
  std::vector<Expr> index;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const ReduceLayout::Group& g = layout_.groups()[k];
    const auto first = layout_.shape().begin() + static_cast<std::ptrdiff_t>(g.first);
    for (Expr& e : splitFlatIndex(
             groups[k],
             std::vector<std::int64_t>(first, first + static_cast<std::ptrdiff_t>(g.count))))
      index.push_back(std::move(e));
  }
  for (Expr& e : columnIndex(column))
    index.push_back(std::move(e));
  return index;
}

std::vector<Expr> ReduceTask::keptIndex(const Expr& column, bool keepDims) const {
  std::vector<Expr> index;
  std::size_t o = 0;
  for (const ReduceLayout::Group& g : layout_.groups()) {
    const auto first = layout_.shape().begin() + static_cast<std::ptrdiff_t>(g.first);
    // A reduced group's kept dims have extent 1: their index is 0, like its reduced dims'.
    const std::vector<Expr> parts =
        g.reduced ? std::vector<Expr>(g.count, loop::makeIndex(0))
                  : splitFlatIndex(outer_.at(o++),
                                   std::vector<std::int64_t>(
                                       first, first + static_cast<std::ptrdiff_t>(g.count)));
    for (std::size_t d = 0; d < g.count; ++d)
      if (keepDims || !layout_.isReduced(g.first + d))
        index.push_back(parts[d]);
  }
  for (Expr& e : columnIndex(column))
    index.push_back(std::move(e));
  return index;
}

namespace {

// The operand of `value` other than a load of buffer[index], when `value` is such a load
// combined with another expression by +, *, max or min.
bool runningCombine(const loop::Store& store) {
  const loop::ExprKind op = store.value.kind();
  if (op != loop::ExprKind::Add && op != loop::ExprKind::Mul && op != loop::ExprKind::Max &&
      op != loop::ExprKind::Min)
    return false;
  const auto* bin = static_cast<const loop::BinaryExprNode*>(store.value.get());
  auto isAcc = [&](const Expr& e) {
    const loop::Load* l = e.as<loop::Load>();
    return l && l->buffer.name() == store.buffer.name() && loop::equal(l->index, store.index);
  };
  // Signed sums and products stay in order (rfactor refuses them: overflow).
  const bool ordered =
      store.value.type().isInt() && (op == loop::ExprKind::Add || op == loop::ExprKind::Mul);
  return !ordered && (isAcc(bin->a) || isAcc(bin->b));
}

std::int64_t floorPowerOfTwo(std::int64_t n) {
  std::int64_t p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

} // namespace

void ReduceTask::vectorizePass(const Stmt& built) const {
  // As the kernel will be: the loop over a task's one column gone.
  const Stmt pass = loop::simplify(built);
  const loop::For* f = pass.as<loop::For>();
  const loop::Store* store = f ? f->body.as<loop::Store>() : nullptr;
  const std::optional<std::int64_t> extent = f ? loop::asConstInt(f->extent) : std::nullopt;
  if (maxWidth_ != 1 || !store || !extent || store->value.type().lanes() != 1 ||
      kb_.vectorBits() == 0)
    return;
  const std::int64_t lanes = kb_.vectorBits() / store->value.type().bits();
  const std::string& r = f->name();
  // rfactor and vectorize take at most 64 lanes (an AVX-512 vector of bytes).
  if (lanes < 2 || lanes > 64 || *extent < 2 * lanes)
    return;
  if (!loop::usesVar(store->index, r)) {
    if (!runningCombine(*store))
      return;
    // Up to 4 vectors of partial results, with at least two rounds of them.
    const std::int64_t vectors =
        std::min<std::int64_t>({4, floorPowerOfTwo(*extent / (2 * lanes)), 64 / lanes});
    const std::int64_t partials = vectors * lanes;
    kb_.defaultStep("rfactor(" + r + ", " + std::to_string(partials) + ")");
    if (vectors > 1) {
      kb_.defaultStep("split(" + r + ".i, " + std::to_string(lanes) + ")");
      kb_.defaultStep("vectorize(" + r + ".i.i)");
      kb_.defaultStep("unroll(" + r + ".i.o)");
    } else {
      kb_.defaultStep("vectorize(" + r + ".i)");
    }
    kb_.defaultStep("vectorize(" + r + ".init)");
    // The tree's levels that combine two or more pairs (the last one is a single pair).
    int level = 1;
    for (std::int64_t h = partials / 2; h >= 2; h /= 2)
      kb_.defaultStep("vectorize(" + r + ".h" + std::to_string(level++) + ")");
    return;
  }
  kb_.defaultStep("split(" + r + ", " + std::to_string(lanes) + ")");
  if (*extent % lanes != 0)
    kb_.defaultStep("partition(" + r + ".i)");
  kb_.defaultStep("vectorize(" + r + ".i)");
}

TensorRef ReduceTask::row(const std::string& hint, graph::DType dtype) {
  rows_.push_back(kb_.scratch(hint, dtype, {maxWidth_}));
  return rows_.back();
}

bool worthParallel(std::int64_t work) {
  return work >= kParallelWork;
}

Stmt forEachTask(KernelBuilder& kb, const ReduceLayout& layout, std::int64_t passes,
                 const std::function<Stmt(ReduceTask&)>& body, std::int64_t maxBlock) {
  const std::vector<std::int64_t> outerShape = layout.outerShape();
  const std::int64_t outerCount = product(outerShape);
  const std::int64_t columns = layout.columns();
  const bool parallel = worthParallel(layout.numElements() * passes);
  std::int64_t block = std::max<std::int64_t>(1, std::min(columns, maxBlock));
  if (parallel)
    while (outerCount * ceilDiv(columns, block) < kMinTasks && block > kMinBlock)
      block = ceilDiv(block, 2);
  const std::int64_t blocks = ceilDiv(columns, block);

  // Rows live inside the task loop: a parallel loop's body is outlined, so each worker
  // gets its own copy (stack allocations go to the entry block of the outlined function).
  auto task = [&](std::vector<Expr> outer, const Expr& blockIndex) {
    const Expr start = blockIndex * block;
    const Expr width = columns % block == 0
                           ? loop::makeIndex(block)
                           : loop::min(loop::makeIndex(block), loop::makeIndex(columns) - start);
    ReduceTask t(kb, layout, std::move(outer), start, width, block);
    Stmt s = body(t);
    for (const TensorRef& r : t.rows())
      s = kb.allocate(r, s);
    return s;
  };
  std::vector<std::int64_t> taskShape = outerShape;
  taskShape.push_back(blocks);
  if (!parallel)
    return kb.loopNest(
        taskShape,
        [&](const std::vector<Expr>& vars) {
          return task(std::vector<Expr>(vars.begin(), vars.end() - 1), vars.back());
        },
        "o", std::numeric_limits<std::int64_t>::max());
  // In parallel, all tasks form one loop so that the threads share them evenly even when
  // the leading dims are short (a batch of 1, 8 heads, ...).
  const Expr t = kb.freshVar("t");
  std::vector<Expr> index = splitFlatIndex(t, taskShape);
  const Expr blockIndex = index.back();
  index.pop_back();
  return kb.taskLoop(t, outerCount * blocks, task(std::move(index), blockIndex), true);
}

Expr lowestOf(loop::Type type) {
  if (type.isFloat())
    return loop::makeFloatConst(type, -std::numeric_limits<double>::infinity());
  if (type.isUInt() || type.isBool())
    return loop::makeIntConst(type, 0);
  return loop::makeIntConst(type, type.bits() == 64 ? std::numeric_limits<std::int64_t>::min()
                                                    : -(std::int64_t(1) << (type.bits() - 1)));
}

Expr highestOf(loop::Type type) {
  if (type.isFloat())
    return loop::makeFloatConst(type, std::numeric_limits<double>::infinity());
  if (type.isBool())
    return loop::makeIntConst(type, 1);
  if (type.bits() == 64) // u64's all-ones is -1 as a bit pattern
    return loop::makeIntConst(type, type.isUInt() ? -1 : std::numeric_limits<std::int64_t>::max());
  return loop::makeIntConst(type, (std::int64_t(1) << (type.bits() - (type.isUInt() ? 0 : 1))) - 1);
}

Expr constLike(const Expr& like, double value) {
  return like.type().isFloat() ? loop::makeFloatConst(like.type(), value)
                               : loop::makeIntConst(like.type(), static_cast<std::int64_t>(value));
}

Expr callIntrinsic(loop::Intrinsic op, Expr x) {
  return loop::Call::make(op, {std::move(x)});
}

} // namespace lathe::lowering
