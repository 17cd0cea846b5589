// Shape rules for elementwise, normalization and matrix-product ops, the helpers shared by
// all shape-rule files, and the dispatch over the per-family rule tables.

#include "engine/graph_passes/shape_rules.h"

#include "engine/graph_passes/shape_rules_internal.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace lathe::passes::rules {

void fail(const Node& node, const std::string& reason) {
  throw Error(ErrorKind::Invalid, reason, ErrorLocation{{}, node.name, node.opType()});
}

void unsupported(const Node& node, const std::string& reason) {
  throw Error(ErrorKind::Unsupported, reason, ErrorLocation{{}, node.name, node.opType()});
}

const TensorType* inputType(const Node& node, std::size_t i) {
  const graph::Value* v = node.input(i);
  return v ? &v->type : nullptr;
}

DType inputDType(const Node& node, std::size_t i) {
  const TensorType* t = inputType(node, i);
  return t ? t->dtype : DType::Undefined;
}

std::optional<std::vector<std::int64_t>> constantInts(const Node& node, std::size_t i) {
  const graph::Value* v = node.input(i);
  if (!v || !v->isConstant() || v->constant().isElided())
    return std::nullopt;
  const graph::TensorData& data = v->constant();
  std::vector<std::int64_t> out(static_cast<std::size_t>(data.numElements()));
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = data.elementAsInt(static_cast<std::int64_t>(k));
  return out;
}

std::optional<std::vector<double>> constantReals(const Node& node, std::size_t i) {
  const graph::Value* v = node.input(i);
  if (!v || !v->isConstant() || v->constant().isElided())
    return std::nullopt;
  const graph::TensorData& data = v->constant();
  std::vector<double> out(static_cast<std::size_t>(data.numElements()));
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = data.elementAsDouble(static_cast<std::int64_t>(k));
  return out;
}

std::optional<std::vector<std::int64_t>> intsFromInputOrAttribute(const Node& node,
                                                                  std::size_t input,
                                                                  const std::string& attribute,
                                                                  bool* given) {
  if (given)
    *given = true;
  if (node.input(input))
    return constantInts(node, input);
  if (node.hasAttribute(attribute))
    return node.attrInts(attribute);
  if (given)
    *given = false;
  return std::vector<std::int64_t>{};
}

TensorType makeType(DType dtype, Shape shape) {
  TensorType t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

TensorType unknownDims(DType dtype, std::size_t rank) {
  return makeType(dtype, Shape(rank, Dim::unknown()));
}

TensorType unknownRank(DType dtype) {
  TensorType t;
  t.dtype = dtype;
  return t;
}

Shape knownDims(const std::vector<std::int64_t>& dims) {
  Shape shape;
  for (std::int64_t d : dims)
    shape.push_back(Dim::known(d));
  return shape;
}

Dim broadcastDim(const Node& node, const Dim& a, const Dim& b, std::size_t axis) {
  if (a.isKnown() && b.isKnown()) {
    if (a.value == b.value || b.value == 1)
      return a;
    if (a.value == 1)
      return b;
    fail(node, "cannot broadcast dimension " + std::to_string(a.value) + " with " +
                   std::to_string(b.value) + " at output axis " + std::to_string(axis));
  }
  // A known extent other than 1 wins: the other side must be 1 or equal to it.
  if (a.isKnown())
    return a.value == 1 ? b : a;
  if (b.isKnown())
    return b.value == 1 ? a : b;
  if (a.isSymbolic() && a == b)
    return a;
  return Dim::unknown();
}

Shape broadcastShapes(const Node& node, const std::vector<const Shape*>& shapes) {
  std::size_t rank = 0;
  for (const Shape* s : shapes)
    rank = std::max(rank, s->size());
  Shape out(rank, Dim::known(1));
  for (const Shape* s : shapes) {
    const std::size_t offset = rank - s->size();
    for (std::size_t i = 0; i < s->size(); ++i)
      out[offset + i] = broadcastDim(node, out[offset + i], (*s)[i], offset + i);
  }
  return out;
}

std::optional<Shape> broadcastTypes(const Node& node, const std::vector<const TensorType*>& types) {
  std::vector<const Shape*> shapes;
  for (const TensorType* t : types) {
    if (!t->shape)
      return std::nullopt;
    shapes.push_back(&*t->shape);
  }
  return broadcastShapes(node, shapes);
}

Dim unifyDims(const Node& node, const Dim& a, const Dim& b, const std::string& what) {
  if (a.isKnown() && b.isKnown() && a.value != b.value)
    fail(node,
         what + " must match, got " + std::to_string(a.value) + " and " + std::to_string(b.value));
  if (a.isKnown() || a.isSymbolic())
    return a.isKnown() || !b.isKnown() ? a : b;
  return b;
}

Dim productOfDims(Shape::const_iterator first, Shape::const_iterator last) {
  std::int64_t product = 1;
  const Dim* symbol = nullptr;
  for (auto it = first; it != last; ++it) {
    if (it->isKnown()) {
      product *= it->value;
    } else if (it->isSymbolic() && !symbol) {
      symbol = &*it;
    } else {
      return Dim::unknown();
    }
  }
  if (!symbol)
    return Dim::known(product);
  return product == 1 ? *symbol : Dim::unknown();
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if (a % b != 0 && ((a > 0) == (b > 0)))
    ++q;
  return q;
}

std::int64_t rankOf(const TensorType& t) {
  return static_cast<std::int64_t>(t.rank());
}

const Dim& dimOr(const TensorType* t, std::size_t i, const Dim& fallback) {
  return t && t->shape && i < t->shape->size() ? (*t->shape)[i] : fallback;
}

} // namespace lathe::passes::rules

namespace lathe::passes {
namespace {

using namespace rules;

// --- elementwise -------------------------------------------------------------------------

std::optional<Types> sameTypeAsInput(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  return Types(n.outputs().size(), *x);
}

std::optional<Types> boolOfInputShape(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  TensorType t = *x;
  t.dtype = DType::Bool;
  return Types{t};
}

std::optional<Types> inferCast(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  TensorType t = *x;
  if (n.opType() == "CastLike") {
    t.dtype = inputDType(n, 1);
  } else {
    const auto to = graph::dtypeFromOnnxCode(n.attrInt("to", 0));
    if (!to)
      return std::nullopt; // strings and other types Lathe does not represent
    t.dtype = *to;
  }
  return Types{t};
}

std::optional<Types> inferEyeLike(const Node& n) {
  auto types = sameTypeAsInput(n);
  if (types && n.hasAttribute("dtype"))
    if (auto dt = graph::dtypeFromOnnxCode(n.attrInt("dtype", 0)))
      (*types)[0].dtype = *dt;
  return types;
}

// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: the loss has the scores' element
// type and, with reduction "none", the target's shape (else it is a scalar); log_prob has
// the scores' type.
std::optional<Types> inferLoss(const Node& n) {
  const TensorType* scores = inputType(n, 0);
  const TensorType* target = inputType(n, 1);
  if (!scores)
    return std::nullopt;
  TensorType loss;
  loss.dtype = scores->dtype;
  if (n.attrString("reduction", "mean") != "none")
    loss.shape.emplace();
  else if (target)
    loss.shape = target->shape;
  Types out{loss};
  if (n.outputs().size() > 1)
    out.push_back(*scores);
  return out;
}

std::optional<Types> inferDropout(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  TensorType mask = *x;
  mask.dtype = DType::Bool;
  return Types{*x, mask};
}

// Numpy broadcasting over every present input; the element type is that of the first input
// that has one, or bool for comparisons.
std::optional<Types> inferBroadcast(const Node& n) {
  std::vector<const TensorType*> types;
  DType dtype = DType::Undefined;
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    if (const TensorType* t = inputType(n, i)) {
      types.push_back(t);
      if (dtype == DType::Undefined)
        dtype = t->dtype;
    }
  if (types.empty())
    return std::nullopt;
  static const char* const kComparisons[] = {"Equal", "Greater", "GreaterOrEqual", "Less",
                                             "LessOrEqual"};
  if (std::find(std::begin(kComparisons), std::end(kComparisons), n.opType()) !=
      std::end(kComparisons))
    dtype = DType::Bool;
  const auto shape = broadcastTypes(n, types);
  return Types{shape ? makeType(dtype, *shape) : unknownRank(dtype)};
}

std::optional<Types> inferWhere(const Node& n) {
  const TensorType *c = inputType(n, 0), *x = inputType(n, 1), *y = inputType(n, 2);
  if (!c || !x || !y)
    return std::nullopt;
  const DType dtype = x->dtype != DType::Undefined ? x->dtype : y->dtype;
  const auto shape = broadcastTypes(n, {c, x, y});
  return Types{shape ? makeType(dtype, *shape) : unknownRank(dtype)};
}

// --- normalization -----------------------------------------------------------------------

std::optional<Types> inferBatchNorm(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  // Training mode's running mean and variance have the shape of the inputs they update.
  Types out{*x};
  for (std::size_t i = 1; i < n.outputs().size(); ++i) {
    const TensorType* stat = inputType(n, 2 + i);
    out.push_back(stat ? *stat : TensorType{});
  }
  return out;
}

std::optional<Types> inferLayerNorm(const Node& n) {
  const TensorType* x = inputType(n, 0);
  if (!x)
    return std::nullopt;
  const DType statType =
      graph::dtypeFromOnnxCode(n.attrInt("stash_type", 1)).value_or(DType::Undefined);
  TensorType stats = unknownRank(statType);
  if (x->shape) {
    // Mean and inverse std keep the leading axes and reduce the normalized ones to 1.
    const auto rank = static_cast<std::int64_t>(x->rank());
    const std::int64_t axis = normalizeAxis(n, n.attrInt("axis", -1), rank);
    Shape shape = *x->shape;
    std::fill(shape.begin() + axis, shape.end(), Dim::known(1));
    stats = makeType(statType, shape);
  }
  return Types{*x, stats, stats};
}

// --- matrix products ---------------------------------------------------------------------

std::optional<Types> inferGemm(const Node& n) {
  const TensorType *a = inputType(n, 0), *b = inputType(n, 1);
  if (!a || !b)
    return std::nullopt;
  for (const TensorType* t : {a, b})
    if (t->shape && t->rank() != 2)
      fail(n, "A and B must be matrices, got rank " + std::to_string(t->rank()));
  const bool transA = n.attrInt("transA", 0) != 0, transB = n.attrInt("transB", 0) != 0;
  const Dim unknown;
  const Dim& m = dimOr(a, transA ? 1 : 0, unknown);
  const Dim& kA = dimOr(a, transA ? 0 : 1, unknown);
  const Dim& kB = dimOr(b, transB ? 1 : 0, unknown);
  const Dim& cols = dimOr(b, transB ? 0 : 1, unknown);
  unifyDims(n, kA, kB, "the inner dimensions of A and B");
  return Types{makeType(a->dtype != DType::Undefined ? a->dtype : b->dtype, {m, cols})};
}

std::optional<Types> inferMatMul(const Node& n) {
  const TensorType *a = inputType(n, 0), *b = inputType(n, 1);
  if (!a || !b)
    return std::nullopt;
  const DType dtype = a->dtype != DType::Undefined ? a->dtype : b->dtype;
  if (!a->shape || !b->shape)
    return Types{unknownRank(dtype)};
  if (a->rank() == 0 || b->rank() == 0)
    fail(n, "operands must have rank 1 or more");
  // Vectors are promoted to matrices, and the added axis is dropped again afterwards.
  Shape sa = *a->shape, sb = *b->shape;
  if (sa.size() == 1)
    sa.insert(sa.begin(), Dim::known(1));
  if (sb.size() == 1)
    sb.push_back(Dim::known(1));
  unifyDims(n, sa.back(), sb[sb.size() - 2], "the inner dimensions of A and B");
  const Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  Shape out = broadcastShapes(n, {&batchA, &batchB});
  if (a->rank() > 1)
    out.push_back(sa[sa.size() - 2]);
  if (b->rank() > 1)
    out.push_back(sb.back());
  return Types{makeType(dtype, out)};
}

// Einsum with explicit or implicit output and optional ellipses.
std::optional<Types> inferEinsum(const Node& n) {
  std::string eq;
  for (char c : n.attrString("equation", ""))
    if (c != ' ')
      eq += c;
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back().push_back(c);
  }
  if (terms.size() != n.inputs.size())
    fail(n, "the equation names " + std::to_string(terms.size()) + " operands");
  std::map<char, Dim> letters;
  std::map<char, int> counts;
  std::vector<const Shape*> ellipses;
  std::vector<Shape> ellipsisStore(terms.size());
  DType dtype = DType::Undefined;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    const TensorType* type = inputType(n, t);
    if (!type || !type->shape)
      return std::nullopt;
    if (dtype == DType::Undefined)
      dtype = type->dtype;
    const std::string& term = terms[t];
    const auto dots = term.find("...");
    const std::size_t named = term.size() - (dots == std::string::npos ? 0 : 3);
    if (named > type->rank() || (dots == std::string::npos && named != type->rank()))
      fail(n, "operand " + std::to_string(t) + " of rank " + std::to_string(type->rank()) +
                  " does not match '" + term + "'");
    const std::size_t ellipsisRank = type->rank() - named;
    std::size_t axis = 0;
    for (std::size_t i = 0; i < term.size(); ++i) {
      if (i == dots) {
        ellipsisStore[t].assign(type->shape->begin() + axis,
                                type->shape->begin() + axis + ellipsisRank);
        ellipses.push_back(&ellipsisStore[t]);
        axis += ellipsisRank;
        i += 2;
        continue;
      }
      const Dim& d = (*type->shape)[axis++];
      auto [it, fresh] = letters.emplace(term[i], d);
      if (!fresh) // a letter of extent 1 broadcasts against the others
        it->second = it->second.isKnown() && it->second.value == 1
                         ? d
                         : (d.isKnown() && d.value == 1
                                ? it->second
                                : unifyDims(n, it->second, d, std::string("label ") + term[i]));
      ++counts[term[i]];
    }
  }
  const Shape ellipsis = broadcastShapes(n, ellipses);
  std::string rhs;
  if (arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
  } else { // implicit output: the ellipsis, then labels used once, alphabetically
    rhs = ellipses.empty() ? "" : "...";
    for (const auto& [c, count] : counts)
      if (count == 1)
        rhs += c;
  }
  Shape out;
  for (std::size_t i = 0; i < rhs.size(); ++i) {
    if (rhs.compare(i, 3, "...") == 0) {
      out.insert(out.end(), ellipsis.begin(), ellipsis.end());
      i += 2;
    } else if (letters.count(rhs[i])) {
      out.push_back(letters[rhs[i]]);
    } else {
      fail(n, std::string("output label ") + rhs[i] + " does not appear in any operand");
    }
  }
  return Types{makeType(dtype, out)};
}

// Takes from `inferred` only what `current` does not know yet: a declared type (from the
// model or an earlier pass) is never contradicted, only completed.
bool refineType(TensorType& current, const TensorType& inferred) {
  bool changed = false;
  if (current.dtype == graph::DType::Undefined && inferred.dtype != graph::DType::Undefined) {
    current.dtype = inferred.dtype;
    changed = true;
  }
  if (!inferred.shape)
    return changed;
  if (!current.shape) {
    current.shape = inferred.shape;
    return true;
  }
  if (current.shape->size() != inferred.shape->size())
    return changed;
  for (std::size_t i = 0; i < current.shape->size(); ++i) {
    Dim& have = (*current.shape)[i];
    const Dim& got = (*inferred.shape)[i];
    const bool moreSpecific = (!have.isKnown() && got.isKnown()) ||
                              (!have.isKnown() && !have.isSymbolic() && got.isSymbolic());
    if (moreSpecific) {
      have = got;
      changed = true;
    }
  }
  return changed;
}

} // namespace

namespace rules {

void addRules(RuleTable& rules, std::string_view ops, Rule rule) {
  while (!ops.empty()) {
    const auto space = ops.find(' ');
    rules.emplace(std::string(ops.substr(0, space)), rule);
    ops.remove_prefix(space == std::string_view::npos ? ops.size() : space + 1);
  }
}

void addComputeRules(RuleTable& rules) {
  addRules(rules,
           "Abs Acos Acosh Asin Asinh Atan Atanh Ceil Celu Clip Cos Cosh CumSum Elu Erf Exp Floor "
           "Hardmax HardSigmoid HardSwish Identity InstanceNormalization LRN LeakyRelu Log "
           "LogSoftmax LpNormalization MeanVarianceNormalization Neg Reciprocal Relu "
           "ReverseSequence Round ScatterElements ScatterND Selu Shrink Sigmoid Sign Sin Sinh "
           "Softmax Softplus Softsign Sqrt Tan Tanh ThresholdedRelu Trilu",
           sameTypeAsInput);
  addRules(rules, "IsNaN IsInf Not", boolOfInputShape);
  addRules(rules,
           "Add Sub Mul Div Pow Mod Max Min Sum Mean And Or Xor PRelu BitShift Equal Greater "
           "GreaterOrEqual Less LessOrEqual",
           inferBroadcast);
  rules["Cast"] = rules["CastLike"] = inferCast;
  rules["EyeLike"] = inferEyeLike;
  rules["Dropout"] = inferDropout;
  rules["NegativeLogLikelihoodLoss"] = rules["SoftmaxCrossEntropyLoss"] = inferLoss;
  rules["Where"] = inferWhere;
  rules["BatchNormalization"] = inferBatchNorm;
  rules["LayerNormalization"] = inferLayerNorm;
  rules["Gemm"] = inferGemm;
  rules["MatMul"] = inferMatMul;
  rules["Einsum"] = inferEinsum;
}

} // namespace rules

std::optional<std::vector<graph::TensorType>> inferOutputTypes(const graph::Node& node) {
  static const RuleTable kRules = [] {
    RuleTable table;
    addComputeRules(table);
    addSpatialRules(table);
    addLayoutRules(table);
    addIndexingRules(table);
    addMiscRules(table);
    addQuantizeRules(table); // after Compute/Spatial: it wraps the MatMul and Conv rules
    return table;
  }();
  if (!node.domain().empty())
    return std::nullopt;
  const auto it = kRules.find(node.opType());
  return it == kRules.end() ? std::nullopt : it->second(node);
}

bool refineOutputTypes(graph::Node& node) {
  const auto types = inferOutputTypes(node);
  if (!types)
    return false;
  bool changed = false;
  for (std::size_t i = 0; i < types->size() && i < node.outputs().size(); ++i)
    if (graph::Value* out = node.output(i))
      changed = refineType(out->type, (*types)[i]) || changed;
  return changed;
}

} // namespace lathe::passes
