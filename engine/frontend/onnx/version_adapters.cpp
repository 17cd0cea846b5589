#include "engine/frontend/onnx/version_adapters.h"

#include "engine/frontend/onnx/version_upgrade.h"

#include <cstring>
#include <limits>

namespace lathe::frontend {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::TensorProto;

void ValueScope::note(const onnx::ValueInfoProto& vi) {
  if (!vi.has_type() || !vi.type().has_tensor_type())
    return;
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() != 0)
    elemType[vi.name()] = tt.elem_type();
  if (tt.has_shape())
    rank[vi.name()] = tt.shape().dim_size();
}

void ValueScope::note(const std::string& name, const TensorProto& t) {
  elemType[name] = t.data_type();
  rank[name] = t.dims_size();
}

int ValueScope::typeOf(const std::string& name) const {
  for (const ValueScope* s = this; s; s = s->parent)
    if (auto it = s->elemType.find(name); it != s->elemType.end())
      return it->second;
  return 0;
}

int ValueScope::rankOf(const std::string& name) const {
  for (const ValueScope* s = this; s; s = s->parent)
    if (auto it = s->rank.find(name); it != s->rank.end())
      return it->second;
  return -1;
}

void UpgradeContext::refuse(const std::string& reason) const {
  std::string label = node.name();
  if (label.empty() && node.output_size() > 0)
    label = "producing '" + node.output(0) + "'";
  throw NodeRefusal(label, node.op_type(), reason);
}

std::string UpgradeContext::fresh(const std::string& what) {
  const std::string base =
      (node.output_size() > 0 && !node.output(0).empty() ? node.output(0) : node.op_type()) +
      "/lathe_" + what;
  std::string name = base;
  for (int i = 1; names.count(name); ++i)
    name = base + "_" + std::to_string(i);
  names.insert(name);
  return name;
}

NodeProto& UpgradeContext::emit(std::vector<NodeProto>& where, const std::string& op,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
  NodeProto& n = where.emplace_back();
  n.set_op_type(op);
  n.set_name(outputs.empty() ? fresh(op) : outputs.front());
  for (const auto& i : inputs)
    n.add_input(i);
  for (const auto& o : outputs)
    n.add_output(o);
  return n;
}

std::string UpgradeContext::constant(const std::string& what, const TensorProto& value) {
  const std::string name = fresh(what);
  NodeProto& n = emit(before, "Constant", {}, {name});
  AttributeProto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(AttributeProto::TENSOR);
  *a->mutable_t() = value;
  return name;
}

std::string UpgradeContext::constInts(const std::string& what,
                                      const std::vector<std::int64_t>& values) {
  TensorProto t;
  t.set_data_type(TensorProto::INT64);
  t.add_dims(static_cast<std::int64_t>(values.size()));
  for (std::int64_t v : values)
    t.add_int64_data(v);
  return constant(what, t);
}

std::string UpgradeContext::scalarLike(const std::string& what, double value,
                                       const std::string& like) {
  TensorProto t;
  switch (scope.typeOf(like)) {
  case TensorProto::FLOAT:
    t.set_data_type(TensorProto::FLOAT);
    t.add_float_data(static_cast<float>(value));
    return constant(what, t);
  case TensorProto::DOUBLE:
    t.set_data_type(TensorProto::DOUBLE);
    t.add_double_data(value);
    return constant(what, t);
  default: { // f16, bf16 or not known: convert where the type is known, at run time
    t.set_data_type(TensorProto::FLOAT);
    t.add_float_data(static_cast<float>(value));
    const std::string f = constant(what + "_f32", t);
    const std::string name = fresh(what);
    emit(before, "CastLike", {f, like}, {name});
    return name;
  }
  }
}

bool UpgradeContext::outputUsed(int index) const {
  return index < node.output_size() && !node.output(index).empty() &&
         used.count(node.output(index));
}

void collectModelNames(const onnx::GraphProto& g, std::unordered_set<std::string>& names,
                       std::unordered_set<std::string>& used) {
  for (const auto& vi : g.input())
    names.insert(vi.name());
  for (const auto& vi : g.output()) {
    names.insert(vi.name());
    used.insert(vi.name());
  }
  for (const auto& t : g.initializer())
    names.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& v : n.input()) {
      names.insert(v);
      used.insert(v);
    }
    for (const auto& v : n.output())
      names.insert(v);
    names.insert(n.name());
    for (const auto& a : n.attribute()) {
      if (a.has_g())
        collectModelNames(a.g(), names, used);
      for (const auto& sub : a.graphs())
        collectModelNames(sub, names, used);
    }
  }
}

void appendWithNeighbours(UpgradeContext& c, NodeProto node, std::vector<NodeProto>& out) {
  for (auto& b : c.before)
    out.push_back(std::move(b));
  out.push_back(std::move(node));
  for (auto& a : c.after)
    out.push_back(std::move(a));
  c.before.clear();
  c.after.clear();
}

void setDefaultOpset(onnx::ModelProto& model, std::int64_t version) {
  for (auto& imp : *model.mutable_opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx")
      imp.set_version(version);
}

bool sameAttributeValue(AttributeProto a, AttributeProto b) {
  a.clear_name();
  b.clear_name();
  a.clear_doc_string();
  b.clear_doc_string();
  return a.SerializeAsString() == b.SerializeAsString();
}

bool hasAttribute(const NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name)
      return true;
  return false;
}

std::optional<AttributeProto> takeAttribute(NodeProto& n, const std::string& name) {
  auto* attrs = n.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i)
    if (attrs->Get(i).name() == name) {
      AttributeProto a = attrs->Get(i);
      attrs->DeleteSubrange(i, 1);
      return a;
    }
  return std::nullopt;
}

namespace {

void setInt(NodeProto& n, const std::string& name, std::int64_t value) {
  takeAttribute(n, name);
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(value);
}

std::vector<std::int64_t> ints(const AttributeProto& a) {
  return {a.ints().begin(), a.ints().end()};
}

// Sets input `index`, filling any gap before it with absent ("") inputs.
void setInput(NodeProto& n, int index, const std::string& value) {
  while (n.input_size() <= index)
    n.add_input("");
  n.set_input(index, value);
}

// An attribute that became input `index` (an int64 list), or an absent input.
void intsAttributeToInput(UpgradeContext& c, const std::string& attr, int index, bool required) {
  std::optional<AttributeProto> a = takeAttribute(c.node, attr);
  if (!a) {
    if (required)
      c.refuse("the required attribute '" + attr + "' is missing");
    return;
  }
  if (a->type() == AttributeProto::INT)
    setInput(c.node, index, c.constInts(attr, {a->i()}));
  else
    setInput(c.node, index, c.constInts(attr, ints(*a)));
}

// Clip-6: min and max are attributes, defaulting to the f32 range (so Clip-6 also clamps
// infinities to it, as ONNX Runtime does). Clip-11 takes them as inputs.
void clip11(UpgradeContext& c) {
  std::optional<AttributeProto> lo = takeAttribute(c.node, "min");
  std::optional<AttributeProto> hi = takeAttribute(c.node, "max");
  const std::string x = c.node.input(0);
  const double big = std::numeric_limits<float>::max();
  setInput(c.node, 1, c.scalarLike("min", lo ? lo->f() : -big, x));
  setInput(c.node, 2, c.scalarLike("max", hi ? hi->f() : big, x));
}

// Pad-2: pads and value are attributes; Pad-11 takes them as inputs.
void pad11(UpgradeContext& c) {
  intsAttributeToInput(c, "pads", 1, true);
  if (std::optional<AttributeProto> v = takeAttribute(c.node, "value"))
    setInput(c.node, 2, c.scalarLike("value", v->f(), c.node.input(0)));
}

void slice10(UpgradeContext& c) {
  std::optional<AttributeProto> axes = takeAttribute(c.node, "axes");
  intsAttributeToInput(c, "starts", 1, true);
  intsAttributeToInput(c, "ends", 2, true);
  if (axes)
    setInput(c.node, 3, c.constInts("axes", ints(*axes)));
}

void topk10(UpgradeContext& c) {
  intsAttributeToInput(c, "k", 1, true);
}

void split13(UpgradeContext& c) {
  intsAttributeToInput(c, "split", 1, false);
}

void axesToInput13(UpgradeContext& c) {
  const bool required = c.node.op_type() == "Unsqueeze";
  intsAttributeToInput(c, "axes", 1, required);
}

// Softmax, LogSoftmax and Hardmax before 13 coerce the input to 2-D at `axis` (default 1)
// and normalise each row: over all the dims from `axis` on. From 13 they normalise along
// the one dim `axis` (default -1). The two agree when `axis` is the last dim; otherwise
// the old meaning is Flatten, the op on the rows, and a Reshape back.
void softmaxFamily13(UpgradeContext& c) {
  std::optional<AttributeProto> a = takeAttribute(c.node, "axis");
  const std::int64_t axis = a ? a->i() : 1;
  const std::string x = c.node.input(0);
  const int rank = c.scope.rankOf(x);
  const bool last = axis == -1 || (rank > 0 && (axis < 0 ? axis + rank : axis) == rank - 1);
  if (last) {
    setInt(c.node, "axis", axis);
    return;
  }
  const std::string rows = c.fresh("rows");
  setInt(c.emit(c.before, "Flatten", {x}, {rows}), "axis", axis);
  const std::string y = c.node.output(0);
  const std::string y2 = c.fresh("rows_out");
  const std::string shape = c.fresh("shape");
  c.node.set_input(0, rows);
  c.node.set_output(0, y2);
  setInt(c.node, "axis", 1);
  c.emit(c.after, "Shape", {x}, {shape});
  c.emit(c.after, "Reshape", {y2, shape}, {y});
}

// BatchNormalization-7 has `spatial` (1: statistics per channel, the only form later
// versions keep; 0: per activation).
void batchNorm9(UpgradeContext& c) {
  if (std::optional<AttributeProto> s = takeAttribute(c.node, "spatial"); s && s->i() != 1)
    c.refuse("BatchNormalization-7 with spatial = 0 (statistics per activation, not per "
             "channel) is not supported");
}

// BatchNormalization-9's extra outputs are training statistics; 14 replaces them with the
// running ones of training mode. At inference only Y is defined.
void batchNorm14(UpgradeContext& c) {
  for (int i = 1; i < c.node.output_size(); ++i)
    if (c.outputUsed(i))
      c.refuse("BatchNormalization's training outputs (output " + std::to_string(i) +
               ") are not supported");
  while (c.node.output_size() > 1)
    c.node.mutable_output()->RemoveLast();
}

// Dropout-7's mask has the input's element type, Dropout-10's is bool.
void dropout10(UpgradeContext& c) {
  if (c.outputUsed(1))
    c.refuse("the mask output of Dropout-7 (of the input's element type) is not supported");
  while (c.node.output_size() > 1)
    c.node.mutable_output()->RemoveLast();
}

// Dropout-10's ratio attribute became an optional input in 12; at inference Dropout is
// the identity whatever the ratio, so the ratio is dropped. The mask at inference is
// all true from 12 on; before, the standard left it open (ONNX Runtime wrote false).
void dropout12(UpgradeContext& c) {
  if (c.outputUsed(1))
    c.refuse("the mask output of Dropout before 12 has no defined value at inference");
  takeAttribute(c.node, "ratio");
}

// OneHot-9 gives an all-off row for a negative index; OneHot-11 counts negative indices
// from the back. Negative indices become `depth`, which is out of range in both.
void oneHot11(UpgradeContext& c) {
  const std::string idx = c.node.input(0);
  const std::string zero = c.scalarLike("zero", 0.0, idx);
  const std::string negative = c.fresh("negative");
  c.emit(c.before, "Less", {idx, zero}, {negative});
  const std::string depth = c.fresh("depth");
  c.emit(c.before, "CastLike", {c.node.input(1), idx}, {depth});
  const std::string kept = c.fresh("indices");
  c.emit(c.before, "Where", {negative, depth, idx}, {kept});
  c.node.set_input(0, kept);
}

struct StepKey {
  const char* op;
  std::int64_t to;
  StepAdapter adapter;
};

const StepKey kSteps[] = {
    {"Clip", 11, clip11},
    {"Pad", 11, pad11},
    {"Slice", 10, slice10},
    {"TopK", 10, topk10},
    {"Split", 13, split13},
    {"Squeeze", 13, axesToInput13},
    {"Unsqueeze", 13, axesToInput13},
    {"ReduceSum", 13, axesToInput13},
    {"Softmax", 13, softmaxFamily13},
    {"LogSoftmax", 13, softmaxFamily13},
    {"Hardmax", 13, softmaxFamily13},
    {"BatchNormalization", 9, batchNorm9},
    {"BatchNormalization", 14, batchNorm14},
    {"Dropout", 10, dropout10},
    {"Dropout", 12, dropout12},
    {"OneHot", 11, oneHot11},
};

} // namespace

StepAdapter findStepAdapter(const std::string& op, std::int64_t toVersion) {
  for (const StepKey& k : kSteps)
    if (op == k.op && toVersion == k.to)
      return k.adapter;
  return nullptr;
}

bool keepsItsOwnForm(UpgradeContext& c, std::int64_t version) {
  // Upsample (7, 9) and Resize-10 sample "asymmetric" coordinates with their own nearest
  // rounding (down when enlarging, up when shrinking) that no Resize-11 mode has; the
  // lowering implements them by their own rules, told apart by op and input count.
  // Upsample-7's scales attribute becomes the input of Upsample-9, the one form kept.
  const std::string& op = c.node.op_type();
  if (op == "Upsample" && version < 9) {
    std::optional<AttributeProto> s = takeAttribute(c.node, "scales");
    if (!s)
      c.refuse("Upsample-7 needs its scales attribute");
    TensorProto t;
    t.set_data_type(TensorProto::FLOAT);
    t.add_dims(s->floats_size());
    for (float f : s->floats())
      t.add_float_data(f);
    setInput(c.node, 1, c.constant("scales", t));
  }
  return op == "Upsample" || (op == "Resize" && version == 10);
}

const char* semanticChange(const std::string& op, std::int64_t toVersion) {
  if (op == "Scan" && toVersion == 9)
    return "Scan-8 has a batch axis, sequence lengths and a fixed scan axis that Scan-9 "
           "dropped; re-export the model with opset 9 or later";
  return nullptr;
}

} // namespace lathe::frontend
