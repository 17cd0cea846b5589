#include "engine/frontend/onnx/version_downgrade.h"

#include "engine/frontend/onnx/version_adapters.h"
#include "engine/frontend/onnx/version_upgrade.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace lathe::frontend {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::TensorProto;

namespace {

// Small int64 constants (initializers and Constant outputs) by name, through the
// enclosing graphs: the axes inputs that opset 18 introduced.
struct ConstantScope {
  const ConstantScope* parent = nullptr;
  std::unordered_map<std::string, const TensorProto*> tensors;

  std::optional<std::vector<std::int64_t>> ints(const std::string& name) const {
    for (const ConstantScope* s = this; s; s = s->parent) {
      auto it = s->tensors.find(name);
      if (it == s->tensors.end())
        continue;
      const TensorProto& t = *it->second;
      if (t.data_type() != TensorProto::INT64)
        return std::nullopt;
      if (t.int64_data_size() > 0)
        return std::vector<std::int64_t>(t.int64_data().begin(), t.int64_data().end());
      std::vector<std::int64_t> v(t.raw_data().size() / sizeof(std::int64_t));
      if (!v.empty()) // memcpy from or to a null pointer is undefined even for 0 bytes
        std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(std::int64_t));
      return v;
    }
    return std::nullopt;
  }
};

struct Context {
  UpgradeContext& c;
  const ConstantScope& constants;
  std::int64_t version; // the schema version the node is in, e.g. 18
  std::string versioned() const { return c.node.op_type() + "-" + std::to_string(version); }
};

std::optional<AttributeProto> attribute(const NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name)
      return a;
  return std::nullopt;
}

// Drops attribute `name` when absent or at `isDefault`; otherwise refuses with `why`.
template <typename Pred>
void dropAtDefault(Context& x, const std::string& name, Pred isDefault, const std::string& why) {
  std::optional<AttributeProto> a = takeAttribute(x.c.node, name);
  if (a && !isDefault(*a))
    x.c.refuse(x.versioned() + " attribute '" + name + "' " + why);
}

void compatible(Context&) {}

// Reduce*-18 take axes as an input; at 17 (except ReduceSum) it is an attribute.
void reduceAxesToAttribute(Context& x) {
  NodeProto& n = x.c.node;
  std::vector<std::int64_t> axes;
  const bool given = n.input_size() > 1 && !n.input(1).empty();
  if (given) {
    std::optional<std::vector<std::int64_t>> values = x.constants.ints(n.input(1));
    if (!values)
      x.c.refuse(x.versioned() + " with axes computed at run time is not supported (the axes "
                                 "input must be a constant)");
    axes = *values;
  }
  while (n.input_size() > 1)
    n.mutable_input()->RemoveLast();
  std::optional<AttributeProto> noop = takeAttribute(n, "noop_with_empty_axes");
  if (axes.empty() && noop && noop->i() != 0) {
    // No axes and "do nothing": each element reduced alone, which is itself for these ops
    // (ReduceL1 would be |x|, ReduceSumSquare x*x, ReduceLogSum log x: refused).
    const std::string& op = n.op_type();
    if (op != "ReduceMax" && op != "ReduceMin" && op != "ReduceMean" && op != "ReduceProd" &&
        op != "ReduceLogSumExp")
      x.c.refuse(x.versioned() + " with noop_with_empty_axes = 1 and no axes is not supported");
    n.set_op_type("Identity");
    n.clear_attribute();
    return;
  }
  if (!axes.empty()) {
    AttributeProto* a = n.add_attribute();
    a->set_name("axes");
    a->set_type(AttributeProto::INTS);
    for (std::int64_t v : axes)
      a->add_ints(v);
  }
}

// Split-18 may give num_outputs instead of sizes: chunks of ceil(d / n), the last smaller.
// The sizes are computed from the input's shape (and folded when that is static).
void splitNumOutputs(Context& x) {
  NodeProto& n = x.c.node;
  std::optional<AttributeProto> count = takeAttribute(n, "num_outputs");
  if (!count)
    return;
  if (n.input_size() > 1 && !n.input(1).empty())
    x.c.refuse(x.versioned() + " gives both split sizes and num_outputs");
  const std::int64_t parts = count->i();
  if (parts < 1 || parts != n.output_size())
    x.c.refuse(x.versioned() + " num_outputs = " + std::to_string(parts) + " but the node has " +
               std::to_string(n.output_size()) + " outputs");
  std::int64_t axis = 0;
  if (std::optional<AttributeProto> a = attribute(n, "axis"))
    axis = a->i();
  UpgradeContext& c = x.c;
  const std::string shape = c.fresh("shape");
  c.emit(c.before, "Shape", {n.input(0)}, {shape});
  const std::string length = c.fresh("length");
  c.emit(c.before, "Gather", {shape, c.constInts("axis", {axis})}, {length});
  // chunk = (d + n - 1) / n; last = d - chunk * (n - 1)
  const std::string padded = c.fresh("padded");
  c.emit(c.before, "Add", {length, c.constInts("n_minus_1", {parts - 1})}, {padded});
  const std::string chunk = c.fresh("chunk");
  c.emit(c.before, "Div", {padded, c.constInts("n", {parts})}, {chunk});
  std::vector<std::string> sizes(static_cast<std::size_t>(parts - 1), chunk);
  const std::string used = c.fresh("used");
  c.emit(c.before, "Mul", {chunk, c.constInts("n_minus_1b", {parts - 1})}, {used});
  const std::string last = c.fresh("last");
  c.emit(c.before, "Sub", {length, used}, {last});
  sizes.push_back(last);
  const std::string split = c.fresh("split");
  AttributeProto* a = c.emit(c.before, "Concat", sizes, {split}).add_attribute();
  a->set_name("axis");
  a->set_type(AttributeProto::INT);
  a->set_i(0);
  while (n.input_size() < 2)
    n.add_input("");
  n.set_input(1, split);
}

void padAxes(Context& x) {
  const NodeProto& n = x.c.node;
  if (n.input_size() > 3 && !n.input(3).empty())
    x.c.refuse(x.versioned() + " with an axes input is not supported");
}

void padWrap(Context& x) {
  if (std::optional<AttributeProto> m = attribute(x.c.node, "mode"); m && m->s() == "wrap")
    x.c.refuse(x.versioned() + " mode 'wrap' is not supported");
}

void resize18(Context& x) {
  dropAtDefault(
      x, "antialias", [](const AttributeProto& a) { return a.i() == 0; },
      "= 1 (antialiased downsampling) is not supported");
  dropAtDefault(
      x, "keep_aspect_ratio_policy", [](const AttributeProto& a) { return a.s() == "stretch"; },
      "is not supported");
  dropAtDefault(
      x, "axes", [](const AttributeProto&) { return false; },
      "(a subset of axes) is not supported");
}

void resize19(Context& x) {
  if (std::optional<AttributeProto> m = attribute(x.c.node, "coordinate_transformation_mode");
      m && m->s() == "half_pixel_symmetric")
    x.c.refuse(x.versioned() + " coordinate_transformation_mode 'half_pixel_symmetric' is not "
                               "supported");
}

void scatterReduction(Context& x) {
  if (std::optional<AttributeProto> r = attribute(x.c.node, "reduction");
      r && (r->s() == "max" || r->s() == "min"))
    x.c.refuse(x.versioned() + " reduction '" + r->s() + "' is not supported");
}

bool allOnes(const AttributeProto& a) {
  for (std::int64_t d : a.ints())
    if (d != 1)
      return false;
  return true;
}

void lpPool18(Context& x) {
  dropAtDefault(
      x, "ceil_mode", [](const AttributeProto& a) { return a.i() == 0; }, "= 1 is not supported");
  dropAtDefault(x, "dilations", allOnes, "other than 1 is not supported");
}

void averagePoolDilations(Context& x) {
  dropAtDefault(x, "dilations", allOnes, "other than 1 is not supported");
}

// Cast's saturate only applies to the float8 types, which Lathe refuses by type.
void dropSaturate(Context& x) {
  takeAttribute(x.c.node, "saturate");
}

void quantize21(Context& x) {
  dropAtDefault(
      x, "block_size", [](const AttributeProto& a) { return a.i() == 0; },
      "(blocked quantization) is not supported");
  dropAtDefault(
      x, "output_dtype", [](const AttributeProto& a) { return a.i() == 0; },
      "is not supported (the zero point gives the type)");
}

void dequantize21(Context& x) {
  dropAtDefault(
      x, "block_size", [](const AttributeProto& a) { return a.i() == 0; },
      "(blocked quantization) is not supported");
}

// GridSample-20 renamed its modes (and allows N-d inputs, which Lathe's rule refuses).
void gridSample20(Context& x) {
  std::optional<AttributeProto> m = takeAttribute(x.c.node, "mode");
  std::string mode = m ? m->s() : "linear";
  if (mode == "linear")
    mode = "bilinear";
  else if (mode == "cubic")
    mode = "bicubic";
  AttributeProto* a = x.c.node.add_attribute();
  a->set_name("mode");
  a->set_type(AttributeProto::STRING);
  a->set_s(mode);
}

// Gelu-20: x * 0.5 * (1 + erf(x / sqrt 2)), or with approximate = "tanh"
// x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
void gelu20(Context& x) {
  UpgradeContext& c = x.c;
  NodeProto& n = c.node;
  std::string approximate = "none";
  if (std::optional<AttributeProto> a = attribute(n, "approximate"))
    approximate = a->s();
  if (approximate != "none" && approximate != "tanh")
    c.refuse(x.versioned() + " approximate = '" + approximate + "' is not one of none and tanh");
  const std::string in = n.input(0);
  std::string inner;
  if (approximate == "none") {
    const std::string scaled = c.fresh("scaled");
    c.emit(c.before, "Mul", {in, c.scalarLike("inv_sqrt2", 1.0 / std::sqrt(2.0), in)}, {scaled});
    inner = c.fresh("erf");
    c.emit(c.before, "Erf", {scaled}, {inner});
  } else {
    const std::string sq = c.fresh("square"), cube = c.fresh("cube"), term = c.fresh("term"),
                      sum = c.fresh("sum"), arg = c.fresh("arg");
    c.emit(c.before, "Mul", {in, in}, {sq});
    c.emit(c.before, "Mul", {sq, in}, {cube});
    c.emit(c.before, "Mul", {cube, c.scalarLike("coefficient", 0.044715, in)}, {term});
    c.emit(c.before, "Add", {in, term}, {sum});
    c.emit(c.before, "Mul", {sum, c.scalarLike("sqrt_2_over_pi", std::sqrt(2.0 / M_PI), in)},
           {arg});
    inner = c.fresh("tanh");
    c.emit(c.before, "Tanh", {arg}, {inner});
  }
  const std::string onePlus = c.fresh("one_plus"), half = c.fresh("half_x");
  c.emit(c.before, "Add", {inner, c.scalarLike("one", 1.0, in)}, {onePlus});
  c.emit(c.before, "Mul", {in, c.scalarLike("half", 0.5, in)}, {half});
  n.set_op_type("Mul");
  n.clear_input();
  n.add_input(half);
  n.add_input(onePlus);
  n.clear_attribute();
}

// Mish-18: x * tanh(softplus(x)).
void mish18(Context& x) {
  UpgradeContext& c = x.c;
  NodeProto& n = c.node;
  const std::string in = n.input(0);
  const std::string soft = c.fresh("softplus"), t = c.fresh("tanh");
  c.emit(c.before, "Softplus", {in}, {soft});
  c.emit(c.before, "Tanh", {soft}, {t});
  n.set_op_type("Mul");
  n.clear_input();
  n.add_input(in);
  n.add_input(t);
}

struct Rule {
  const char* op;
  std::int64_t since; // the version whose nodes this rule brings down to the version before
  void (*apply)(Context&);
};

// Every schema version after 17 of every op Lathe knows, and the ops added after 17 that
// opset-17 ops express. An op version missing here that the model uses is refused.
const Rule kRules[] = {
    {"ReduceL1", 18, reduceAxesToAttribute},
    {"ReduceL2", 18, reduceAxesToAttribute},
    {"ReduceLogSum", 18, reduceAxesToAttribute},
    {"ReduceLogSumExp", 18, reduceAxesToAttribute},
    {"ReduceMax", 18, reduceAxesToAttribute},
    {"ReduceMax", 20, compatible}, // bool inputs
    {"ReduceMean", 18, reduceAxesToAttribute},
    {"ReduceMin", 18, reduceAxesToAttribute},
    {"ReduceMin", 20, compatible}, // bool inputs
    {"ReduceProd", 18, reduceAxesToAttribute},
    {"ReduceSumSquare", 18, reduceAxesToAttribute},
    {"Split", 18, splitNumOutputs},
    {"Pad", 18, padAxes},
    {"Pad", 19, padWrap},
    {"Pad", 21, compatible}, // 4-bit types
    {"Resize", 18, resize18},
    {"Resize", 19, resize19},
    {"ScatterElements", 18, scatterReduction},
    {"ScatterND", 18, scatterReduction},
    {"LpPool", 18, lpPool18},
    {"AveragePool", 19, averagePoolDilations},
    {"Cast", 19, dropSaturate},
    {"Cast", 21, compatible},
    {"CastLike", 19, dropSaturate},
    {"CastLike", 21, compatible},
    {"QuantizeLinear", 19, dropSaturate},
    {"QuantizeLinear", 21, quantize21},
    {"DequantizeLinear", 19, compatible},
    {"DequantizeLinear", 21, dequantize21},
    {"GridSample", 20, gridSample20},
    {"Equal", 19, compatible}, // strings
    {"Identity", 19, compatible},
    {"Identity", 21, compatible},
    {"If", 19, compatible},
    {"If", 21, compatible},
    {"Loop", 19, compatible},
    {"Loop", 21, compatible},
    {"Scan", 19, compatible},
    {"Scan", 21, compatible},
    {"Reshape", 19, compatible},
    {"Reshape", 21, compatible},
    {"Shape", 19, compatible},
    {"Shape", 21, compatible},
    {"Size", 19, compatible},
    {"Size", 21, compatible},
    {"Constant", 19, compatible},
    {"Constant", 21, compatible},
    {"ConstantOfShape", 20, compatible},
    {"ConstantOfShape", 21, compatible},
    {"Flatten", 21, compatible},
    {"Squeeze", 21, compatible},
    {"Unsqueeze", 21, compatible},
    {"Transpose", 21, compatible},
    {"IsInf", 20, compatible},
    {"IsNaN", 20, compatible},
    {"QLinearMatMul", 21, compatible},
    {"Gelu", 20, gelu20},
    {"Mish", 18, mish18},
};

class Downgrader {
public:
  Downgrader(onnx::ModelProto& model, std::int64_t source) : model_(model), source_(source) {}

  void run() {
    collectModelNames(model_.graph(), names_, used_);
    downgradeGraph(*model_.mutable_graph(), nullptr, nullptr);
    setDefaultOpset(model_, 17);
    if (model_.ir_version() > 8)
      model_.set_ir_version(8);
  }

private:
  void downgradeGraph(onnx::GraphProto& g, const ValueScope* parentValues,
                      const ConstantScope* parentConstants) {
    ValueScope values;
    values.parent = parentValues;
    for (const auto& vi : g.input())
      values.note(vi);
    for (const auto& vi : g.value_info())
      values.note(vi);
    ConstantScope constants;
    constants.parent = parentConstants;
    for (const auto& t : g.initializer())
      constants.tensors[t.name()] = &t;
    for (const auto& n : g.node())
      if (n.op_type() == "Constant" && n.output_size() == 1)
        for (const auto& a : n.attribute())
          if (a.name() == "value" && a.has_t())
            constants.tensors[n.output(0)] = &a.t();
    std::vector<NodeProto> nodes;
    for (auto& node : *g.mutable_node()) {
      for (auto& a : *node.mutable_attribute()) {
        if (a.has_g())
          downgradeGraph(*a.mutable_g(), &values, &constants);
        for (auto& sub : *a.mutable_graphs())
          downgradeGraph(sub, &values, &constants);
      }
      downgradeNode(std::move(node), values, constants, nodes);
    }
    g.clear_node();
    for (auto& n : nodes)
      *g.add_node() = std::move(n);
  }

  void downgradeNode(NodeProto node, const ValueScope& values, const ConstantScope& constants,
                     std::vector<NodeProto>& out) {
    if (node.domain().empty() || node.domain() == "ai.onnx") {
      UpgradeContext c{node, values, names_, used_, {}, {}};
      // The rules of this op for versions up to the model's, newest first: each brings the
      // node down one version.
      std::vector<const Rule*> rules;
      for (const Rule& r : kRules)
        if (node.op_type() == r.op && r.since <= source_)
          rules.insert(rules.begin(), &r);
      for (const Rule* r : rules) {
        Context x{c, constants, r->since};
        r->apply(x);
      }
      appendWithNeighbours(c, std::move(node), out);
      return;
    }
    out.push_back(std::move(node));
  }

  onnx::ModelProto& model_;
  std::int64_t source_;
  std::unordered_set<std::string> names_;
  std::unordered_set<std::string> used_;
};

} // namespace

bool expressedByOpset17Ops(const std::string& op) {
  return op == "Gelu" || op == "Mish";
}

void downgradeNodesToOpset17(onnx::ModelProto& model, std::int64_t sourceOpset) {
  Downgrader(model, sourceOpset).run();
}

} // namespace lathe::frontend
