#include "engine/lowering/kernel_builder.h"

#include "engine/loop_ir/ir_mutator.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace lathe::lowering {

loop::Type loopType(graph::DType dtype) {
  using graph::DType;
  switch (dtype) {
  case DType::F32:
    return loop::f32();
  case DType::F64:
    return loop::f64();
  case DType::F16:
    return loop::f16();
  case DType::I8:
    return loop::i8();
  case DType::I16:
    return loop::i16();
  case DType::I32:
    return loop::i32();
  case DType::I64:
    return loop::i64();
  case DType::U8:
    return loop::u8();
  case DType::U16:
    return loop::u16();
  case DType::U32:
    return loop::u32();
  case DType::U64:
    return loop::u64();
  case DType::Bool:
    return loop::boolean();
  case DType::BF16: // stored as its bits; only Cast converts (see lowerCast)
    return loop::u16();
  case DType::Undefined:
    break;
  }
  throw Error(ErrorKind::Unsupported,
              "element type " + std::string(graph::dtypeName(dtype)) + " in generated code");
}

Expr TensorRef::load(const std::vector<Expr>& index) const {
  return loop::Load::make(buffer, flatIndex(shape, index));
}

Stmt TensorRef::store(const std::vector<Expr>& index, Expr value) const {
  return loop::Store::make(buffer, flatIndex(shape, index), std::move(value));
}

Expr TensorRef::loadFlat(Expr flat) const {
  return loop::Load::make(buffer, std::move(flat));
}

Stmt TensorRef::storeFlat(Expr flat, Expr value) const {
  return loop::Store::make(buffer, std::move(flat), std::move(value));
}

std::int64_t TensorRef::numElements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape)
    n *= d;
  return n;
}

Expr flatIndex(const std::vector<std::int64_t>& shape, const std::vector<Expr>& index) {
  LATHE_CHECK(shape.size() == index.size(), "index rank does not match the shape");
  Expr flat = loop::makeIndex(0);
  for (std::size_t i = 0; i < shape.size(); ++i)
    flat = i == 0 ? index[0] : flat * shape[i] + index[i];
  return shape.empty() ? loop::makeIndex(0) : flat;
}

std::vector<Expr> broadcastIndex(const std::vector<std::int64_t>& operand,
                                 const std::vector<Expr>& outIndex) {
  LATHE_CHECK(operand.size() <= outIndex.size(), "operand has a higher rank than the output");
  const std::size_t offset = outIndex.size() - operand.size();
  std::vector<Expr> index;
  for (std::size_t i = 0; i < operand.size(); ++i)
    index.push_back(operand[i] == 1 ? loop::makeIndex(0) : outIndex[offset + i]);
  return index;
}

std::vector<std::int64_t> staticShape(const graph::Value& value, const graph::Node& node) {
  if (!value.type.isStatic())
    throw Error(ErrorKind::Unsupported,
                "value '" + value.name() + "' has shape " + graph::toString(value.type) +
                    "; code generation needs static shapes (fix them with --input-shapes)",
                {{}, node.name, node.opType()});
  return value.type.staticDims();
}

Expr constantOf(graph::DType dtype, double value) {
  const loop::Type t = loopType(dtype);
  if (t.isFloat())
    return loop::makeFloatConst(t, value);
  if (t.isBool())
    return loop::makeBool(value != 0);
  return loop::makeIntConst(t, static_cast<std::int64_t>(value));
}

LetBindings::LetBindings(const graph::Node& node, const std::string& what) : prefix_(what + "_") {
  for (char c : node.output(0)->name())
    prefix_ += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
}

Expr LetBindings::bind(const std::string& name, Expr value) {
  Expr var = loop::Var::make(value.type(), prefix_ + "_" + name);
  lets_.emplace_back(var, std::move(value));
  return var;
}

Expr LetBindings::wrap(Expr body) const {
  for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
    body = loop::Let::make(it->first, it->second, body);
  return body;
}

KernelBuilder::KernelBuilder(std::string kernelName, std::vector<std::string> sourceNodes)
    : name_(std::move(kernelName)), sourceNodes_(std::move(sourceNodes)) {}

TensorRef KernelBuilder::makeRef(const std::string& valueName, graph::DType dtype,
                                 std::vector<std::int64_t> shape) {
  // Buffer names are identifiers in printed loop IR; keep them readable and unique.
  std::string clean;
  for (char c : valueName)
    clean += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  while (!clean.empty() && clean.front() == '_')
    clean.erase(clean.begin());
  if (clean.empty() || std::isdigit(static_cast<unsigned char>(clean[0])))
    clean = "t" + clean;
  const int n = varCounts_[clean]++;
  if (n > 0)
    clean += "_" + std::to_string(n);
  std::vector<Expr> dims;
  for (std::int64_t d : shape)
    dims.push_back(loop::makeIndex(d));
  return {loop::Buffer::make(clean, loopType(dtype), dims), std::move(shape), dtype};
}

TensorRef KernelBuilder::input(const graph::Value& value, const graph::Node& node) {
  if (auto it = byValue_.find(value.name()); it != byValue_.end())
    return it->second;
  TensorRef ref = makeRef(value.name(), value.type.dtype, staticShape(value, node));
  byValue_[value.name()] = ref;
  inputs_.push_back(ref);
  inputValues_.push_back(const_cast<graph::Value*>(&value));
  return ref;
}

void KernelBuilder::redirectOutput(const graph::Value& from, const graph::Value& to,
                                   const graph::Node& node) {
  if (from.type.dtype != to.type.dtype || from.type.shape != to.type.shape)
    throw Error(ErrorKind::Internal,
                "fused group result " + graph::toString(to.type) + " differs from its anchor's " +
                    graph::toString(from.type),
                {{}, node.name, node.opType()});
  redirects_[from.name()] = &to;
}

TensorRef KernelBuilder::output(const graph::Value& value0, const graph::Node& node) {
  auto redirect = redirects_.find(value0.name());
  const graph::Value& value = redirect == redirects_.end() ? value0 : *redirect->second;
  if (auto it = byValue_.find(value.name()); it != byValue_.end())
    return it->second;
  TensorRef ref = makeRef(value.name(), value.type.dtype, staticShape(value, node));
  byValue_[value.name()] = ref;
  outputs_.push_back(ref);
  outputValues_.push_back(const_cast<graph::Value*>(&value));
  return ref;
}

TensorRef KernelBuilder::scratch(const std::string& hint, graph::DType dtype,
                                 std::vector<std::int64_t> shape) {
  return makeRef(hint, dtype, std::move(shape));
}

Stmt KernelBuilder::allocate(const TensorRef& scratch, Stmt body, bool onHeap) const {
  return loop::Allocate::make(
      scratch.buffer, onHeap ? loop::MemoryScope::Heap : loop::MemoryScope::Stack, std::move(body));
}

const std::string& loopName(const Expr& var) {
  return var.as<loop::Var>()->name;
}

std::string loopList(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names)
    list += (list.empty() ? "" : ", ") + n;
  return list;
}

Expr KernelBuilder::freshVar(const std::string& hint) {
  const int n = varCounts_["var." + hint]++;
  return loop::Var::make(loop::indexType(), n == 0 ? hint : hint + std::to_string(n));
}

Stmt KernelBuilder::serialLoop(const Expr& var, std::int64_t extent, Stmt body) const {
  return loop::For::make(var, loop::makeIndex(0), loop::makeIndex(extent), loop::ForKind::Serial,
                         std::move(body));
}

Stmt KernelBuilder::taskLoop(const Expr& var, std::int64_t extent, Stmt body, bool parallel) {
  if (parallel && extent > 1)
    parallelCandidates_.push_back(loopName(var));
  return serialLoop(var, extent, std::move(body));
}

Stmt KernelBuilder::loopNest(const std::vector<std::int64_t>& shape,
                             const std::function<Stmt(const std::vector<Expr>&)>& body,
                             const std::string& hint, std::int64_t parallelThreshold) {
  std::vector<Expr> vars;
  for (std::size_t i = 0; i < shape.size(); ++i)
    vars.push_back(freshVar(hint + std::to_string(i)));
  Stmt s = body(vars);
  std::int64_t total = 1;
  for (std::int64_t d : shape)
    total *= d;
  // The outermost dim with more than one iteration carries the parallelism.
  std::size_t parallelDim = shape.size();
  if (total >= parallelThreshold)
    for (std::size_t i = 0; i < shape.size(); ++i)
      if (shape[i] > 1) {
        parallelDim = i;
        break;
      }
  for (std::size_t k = shape.size(); k-- > 0;)
    s = loop::For::make(vars[k], loop::makeIndex(0), loop::makeIndex(shape[k]),
                        loop::ForKind::Serial, s);
  // The parallel loop is a step of the default trace (finish() keeps it in the nest instead
  // when the nest ends up inside a parallel loop).
  if (parallelDim < shape.size())
    parallelCandidates_.push_back(vars[parallelDim].as<loop::Var>()->name);
  return s;
}

bool KernelBuilder::epilogueFlattens(const std::vector<std::int64_t>& outShape,
                                     std::size_t from) const {
  for (const std::vector<std::int64_t>& shape : epilogueOperands_) {
    bool whole = true, one = true;
    for (std::size_t d = from; d < outShape.size(); ++d) {
      // Operand dims are aligned right; missing leading dims broadcast.
      const std::size_t back = outShape.size() - d;
      const std::int64_t extent = back <= shape.size() ? shape[shape.size() - back] : 1;
      whole = whole && extent == outShape[d];
      one = one && extent == 1;
    }
    if (!whole && !one)
      return false;
  }
  return true;
}

namespace {

// Which of the named loops sit inside a parallel loop or inside another of them (where a
// parallel step would be refused: nested parallelism runs serially).
class NestedLoops : public loop::IRVisitor {
public:
  explicit NestedLoops(const std::vector<std::string>& names) : names_(names) {}
  std::vector<std::string> nested;

protected:
  void visitFor(const loop::For* op) override {
    const bool named = std::find(names_.begin(), names_.end(), op->name()) != names_.end();
    if (depth_ > 0 && named)
      nested.push_back(op->name());
    const bool parallel = named || op->forKind == loop::ForKind::Parallel;
    depth_ += parallel;
    loop::IRVisitor::visitFor(op);
    depth_ -= parallel;
  }

private:
  const std::vector<std::string>& names_;
  int depth_ = 0;
};

// The named loops made parallel in place.
class MarkParallel : public loop::IRMutator {
public:
  explicit MarkParallel(const std::vector<std::string>& names) : names_(names) {}

protected:
  Stmt mutateFor(const loop::For* op) override {
    const Stmt body = mutate(op->body);
    const bool named = std::find(names_.begin(), names_.end(), op->name()) != names_.end();
    return loop::For::make(op->var, op->min, op->extent,
                           named ? loop::ForKind::Parallel : op->forKind, body);
  }

private:
  const std::vector<std::string>& names_;
};

} // namespace

namespace {

// The first loop name used by two loops of `body`, if any.
class RepeatedLoopName : public loop::IRVisitor {
public:
  std::string repeated;

protected:
  void visitFor(const loop::For* op) override {
    if (!seen_.insert(op->name()).second && repeated.empty())
      repeated = op->name();
    loop::IRVisitor::visitFor(op);
  }

private:
  std::set<std::string> seen_;
};

} // namespace

loop::Kernel KernelBuilder::finish(Stmt body) {
  // Schedule steps name loops: a name used twice would make them mean two loops at once.
  RepeatedLoopName names;
  names.visit(body);
  LATHE_CHECK(names.repeated.empty(),
              "kernel " + name_ + " names two loops '" + names.repeated + "'");
  // Nests of loopNest(): their parallel loop is a default-trace step, or, inside another
  // parallel loop, stays marked in the nest itself (as it always ran).
  NestedLoops nested(parallelCandidates_);
  nested.visit(body);
  if (!nested.nested.empty())
    body = MarkParallel(nested.nested).mutate(body);
  // First in the trace: the loops exist in the plain nest, where independence is plainest
  // to prove (after vectorize and partition a row's reads and writes are harder to bound).
  std::string parallelSteps;
  for (const std::string& name : parallelCandidates_)
    if (std::find(nested.nested.begin(), nested.nested.end(), name) == nested.nested.end())
      parallelSteps += "parallel(" + name + ")\n";
  defaultTrace_ = parallelSteps + defaultTrace_;
  for (std::string& variant : traceVariants_)
    variant = parallelSteps + variant;
  loop::Kernel k;
  k.name = name_;
  for (const TensorRef& r : inputs_)
    k.inputs.push_back(r.buffer);
  for (const TensorRef& r : outputs_)
    k.outputs.push_back(r.buffer);
  k.body = std::move(body);
  k.sourceNodes = sourceNodes_;
  k.strategy = strategy_;
  k.defaultTrace = defaultTrace_;
  k.traceVariants = traceVariants_;
  return k;
}

} // namespace lathe::lowering
