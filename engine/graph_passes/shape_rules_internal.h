#pragma once
// Helpers shared by the shape-rule files, one per op family: shape_rules.cpp (elementwise,
// normalization, matrix products, and the dispatch), shape_rules_spatial.cpp (convolution,
// pooling, recurrent, resampling), shape_rules_layout.cpp (reshapes, joins, broadcasts) and
// shape_rules_index.cpp (indexing, shape computations, reductions). Not a pass interface.

#include "engine/graph/graph.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::passes::rules {

using graph::Dim;
using graph::DType;
using graph::Node;
using graph::TensorType;
using Shape = std::vector<Dim>;
using Types = std::vector<TensorType>;

[[noreturn]] void fail(const Node& node, const std::string& reason);
// A valid node that Lathe does not handle (ErrorKind::Unsupported).
[[noreturn]] void unsupported(const Node& node, const std::string& reason);

// The type of input i, or nullptr when that optional input is absent.
const TensorType* inputType(const Node& node, std::size_t i);
// A present input's dtype (Undefined when absent).
DType inputDType(const Node& node, std::size_t i);
// Input i's elements as integers, when it is a constant whose bytes are known.
std::optional<std::vector<std::int64_t>> constantInts(const Node& node, std::size_t i);
// Input i's elements as doubles, when it is a constant whose bytes are known.
std::optional<std::vector<double>> constantReals(const Node& node, std::size_t i);
// An int-list attribute, or the constant input i when present (opset 13+ moved several
// int-list attributes, such as axes and split, to inputs). nullopt: input present but not
// constant. An absent list gives an empty vector with `*given` false.
std::optional<std::vector<std::int64_t>> intsFromInputOrAttribute(const Node& node,
                                                                  std::size_t input,
                                                                  const std::string& attribute,
                                                                  bool* given = nullptr);

// Ceiling of a / b for any signs (b != 0).
std::int64_t ceilDiv(std::int64_t a, std::int64_t b);
std::int64_t rankOf(const TensorType& type);
// Dim i of a ranked type, else `fallback`.
const Dim& dimOr(const TensorType* type, std::size_t i, const Dim& fallback);

TensorType makeType(DType dtype, Shape shape);
TensorType unknownDims(DType dtype, std::size_t rank);
TensorType unknownRank(DType dtype);
Shape knownDims(const std::vector<std::int64_t>& dims);

// Numpy broadcasting of two dims at output axis `axis` (for the message).
Dim broadcastDim(const Node& node, const Dim& a, const Dim& b, std::size_t axis);
// Numpy broadcasting of several shapes.
Shape broadcastShapes(const Node& node, const std::vector<const Shape*>& shapes);
// Same for input types; nullopt when some rank is unknown.
std::optional<Shape> broadcastTypes(const Node& node, const std::vector<const TensorType*>& types);
// Two dims that must be equal (Concat's other axes, MatMul's K); `what` names them.
Dim unifyDims(const Node& node, const Dim& a, const Dim& b, const std::string& what);
// The product of dims: known when all are known, a symbol times ones stays that symbol.
Dim productOfDims(Shape::const_iterator first, Shape::const_iterator last);

// A shape rule: the output types of one node, or nullopt when it cannot say.
using Rule = std::optional<Types> (*)(const Node& node);
using RuleTable = std::map<std::string, Rule, std::less<>>;
// Registers `rule` for each op in the space-separated list `ops`.
void addRules(RuleTable& rules, std::string_view ops, Rule rule);
// Each family file registers its ops.
void addComputeRules(RuleTable& rules);
void addSpatialRules(RuleTable& rules);
void addLayoutRules(RuleTable& rules);
void addIndexingRules(RuleTable& rules);
void addMiscRules(RuleTable& rules);     // shape_rules_misc.cpp
void addQuantizeRules(RuleTable& rules); // shape_rules_quantize.cpp: after Compute/Spatial

} // namespace lathe::passes::rules
