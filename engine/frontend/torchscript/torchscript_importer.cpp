#include "engine/frontend/torchscript/torchscript_importer.h"

#include "engine/frontend/torchscript/ts_translate.h"
#include "engine/graph/verifier.h"
#include "engine/graph_passes/infer_shapes.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>

namespace lathe::frontend {
namespace torchscript {
namespace {

std::optional<graph::DType> dtypeOf(c10::ScalarType t) {
  switch (t) {
  case c10::ScalarType::Float:
    return graph::DType::F32;
  case c10::ScalarType::Double:
    return graph::DType::F64;
  case c10::ScalarType::Half:
    return graph::DType::F16;
  case c10::ScalarType::BFloat16:
    return graph::DType::BF16;
  case c10::ScalarType::Long:
    return graph::DType::I64;
  case c10::ScalarType::Int:
    return graph::DType::I32;
  case c10::ScalarType::Short:
    return graph::DType::I16;
  case c10::ScalarType::Char:
    return graph::DType::I8;
  case c10::ScalarType::Byte:
    return graph::DType::U8;
  case c10::ScalarType::Bool:
    return graph::DType::Bool;
  default:
    return std::nullopt;
  }
}

// "x.1" -> "x": TorchScript numbers the SSA values of one Python name.
std::string pythonName(const std::string& debugName) {
  const auto dot = debugName.rfind('.');
  if (dot != std::string::npos && dot + 1 < debugName.size() &&
      std::all_of(debugName.begin() + static_cast<std::ptrdiff_t>(dot) + 1, debugName.end(),
                  [](char c) { return c >= '0' && c <= '9'; }))
    return debugName.substr(0, dot);
  return debugName;
}

// A traced model's debug information is the Python stack at the call, innermost first, as
// lines "FILE(LINE): FUNCTION". The first frame outside torch's own package is the model's
// line ("model.py:52"); nullopt when `text` is not such a stack.
std::optional<std::string> modelFrame(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  std::optional<std::string> innermost;
  while (std::getline(lines, line)) {
    const std::size_t close = line.find("): ");
    const std::size_t open = close == std::string::npos ? close : line.rfind('(', close);
    if (open == std::string::npos || open == 0 || open + 1 == close ||
        !std::all_of(line.begin() + static_cast<std::ptrdiff_t>(open) + 1,
                     line.begin() + static_cast<std::ptrdiff_t>(close),
                     [](char c) { return c >= '0' && c <= '9'; }))
      return innermost;
    const std::string file = line.substr(0, open);
    const std::string frame = file + ":" + line.substr(open + 1, close - open - 1);
    if (file.find("/torch/") == std::string::npos)
      return frame;
    if (!innermost)
      innermost = frame;
  }
  return innermost;
}

void flatten(const TsValue& v, std::vector<graph::Value*>& out, const std::string& path) {
  switch (v.kind) {
  case TsValue::Kind::Tensor:
    out.push_back(v.tensor);
    return;
  case TsValue::Kind::List:
  case TsValue::Kind::Tuple:
    for (const TsValue& e : v.elements)
      flatten(e, out, path);
    return;
  case TsValue::Kind::Constant:
    throw Error(ErrorKind::Unsupported,
                "the forward returns a non-tensor value (" + v.constant.tagKind() + ")",
                {path, {}, {}});
  }
}

} // namespace

graph::TensorData tensorData(const at::Tensor& t, const std::string& what) {
  const std::optional<graph::DType> dtype = dtypeOf(t.scalar_type());
  if (!dtype)
    throw Error(ErrorKind::Unsupported,
                what + " has element type " + std::string(c10::toString(t.scalar_type())), {});
  if (t.is_quantized() || t.is_sparse() || t.device().type() != c10::DeviceType::CPU)
    throw Error(ErrorKind::Unsupported, what + " is quantized, sparse or not on the CPU", {});
  const at::Tensor c = t.contiguous();
  std::vector<std::int64_t> dims(c.sizes().begin(), c.sizes().end());
  auto bytes = std::make_shared<std::string>(c.nbytes(), '\0');
  if (c.nbytes() > 0)
    std::memcpy(bytes->data(), c.data_ptr(), c.nbytes());
  return graph::TensorData(*dtype, std::move(dims), std::move(bytes));
}

// --- values ---

TsValue& Translator::value(const torch::jit::Value* v) {
  auto it = values_.find(v);
  if (it != values_.end())
    return it->second;
  if (v->node()->kind() == c10::prim::Constant) {
    TsValue c;
    c10::optional<c10::IValue> iv = torch::jit::toIValue(v);
    if (!iv)
      unsupported("a constant of type " + v->type()->str());
    if (iv->isTensor()) {
      c.kind = TsValue::Kind::Tensor;
      graph::TensorData data;
      try {
        data = tensorData(iv->toTensor(), "constant '" + v->debugName() + "'");
      } catch (const Error& e) {
        unsupported(e.reason());
      }
      c.tensor = constant(std::move(data), pythonName(v->debugName()));
    } else {
      c.constant = *iv;
    }
    return values_.emplace(v, std::move(c)).first->second;
  }
  invalid("reads value %" + v->debugName() + ", which nothing before it defines");
}

bool Translator::isNone(std::size_t i) {
  const TsValue& v = value(node_->input(i));
  return v.kind == TsValue::Kind::Constant && v.constant.isNone();
}

bool Translator::isConstant(std::size_t i) {
  return value(node_->input(i)).kind == TsValue::Kind::Constant;
}

graph::Value* Translator::tensor(std::size_t i, graph::Value* like) {
  if (i >= node_->inputs().size())
    invalid("lacks input " + std::to_string(i));
  const TsValue& v = value(node_->input(i));
  if (v.kind == TsValue::Kind::Tensor)
    return v.tensor;
  if (v.kind == TsValue::Kind::Constant &&
      (v.constant.isDouble() || v.constant.isInt() || v.constant.isBool())) {
    const graph::DType t =
        like ? dtype(like) : (v.constant.isDouble() ? graph::DType::F32 : graph::DType::I64);
    const double x = v.constant.isDouble() ? v.constant.toDouble()
                     : v.constant.isInt()  ? static_cast<double>(v.constant.toInt())
                                           : (v.constant.toBool() ? 1.0 : 0.0);
    return scalar(x, t == graph::DType::Undefined ? graph::DType::F32 : t);
  }
  unsupported("input " + std::to_string(i) + " must be a tensor");
}

std::int64_t Translator::constInt(std::size_t i, const char* what) {
  const TsValue& v = value(node_->input(i));
  if (v.kind != TsValue::Kind::Constant || !v.constant.isInt())
    unsupported(std::string(what) + " must be a constant int");
  return v.constant.toInt();
}

double Translator::constDouble(std::size_t i, const char* what) {
  const TsValue& v = value(node_->input(i));
  if (v.kind != TsValue::Kind::Constant || !(v.constant.isDouble() || v.constant.isInt()))
    unsupported(std::string(what) + " must be a constant number");
  return v.constant.isDouble() ? v.constant.toDouble() : static_cast<double>(v.constant.toInt());
}

bool Translator::constBool(std::size_t i, const char* what) {
  const TsValue& v = value(node_->input(i));
  if (v.kind != TsValue::Kind::Constant || !(v.constant.isBool() || v.constant.isInt()))
    unsupported(std::string(what) + " must be a constant bool");
  return v.constant.isBool() ? v.constant.toBool() : v.constant.toInt() != 0;
}

std::string Translator::constString(std::size_t i, const char* what) {
  const TsValue& v = value(node_->input(i));
  if (v.kind != TsValue::Kind::Constant || !v.constant.isString())
    unsupported(std::string(what) + " must be a constant string");
  return v.constant.toStringRef();
}

std::vector<std::int64_t> Translator::constInts(std::size_t i, const char* what) {
  const TsValue& v = value(node_->input(i));
  if (v.kind == TsValue::Kind::Constant) {
    if (v.constant.isIntList())
      return v.constant.toIntVector();
    if (v.constant.isInt())
      return {v.constant.toInt()};
  }
  if (v.kind == TsValue::Kind::List) {
    std::vector<std::int64_t> out;
    for (const TsValue& e : v.elements) {
      if (e.kind != TsValue::Kind::Constant || !e.constant.isInt())
        unsupported(std::string(what) + " must be constant ints");
      out.push_back(e.constant.toInt());
    }
    return out;
  }
  unsupported(std::string(what) + " must be a constant int list");
}

std::vector<graph::Value*> Translator::tensorList(std::size_t i, const char* what) {
  const TsValue& v = value(node_->input(i));
  // A frozen module's list of parameters is one constant.
  if (v.kind == TsValue::Kind::Constant && v.constant.isTensorList()) {
    std::vector<graph::Value*> out;
    for (const at::Tensor& tensor : v.constant.toTensorVector()) {
      try {
        out.push_back(constant(tensorData(tensor, what), "param"));
      } catch (const Error& e) {
        unsupported(e.reason());
      }
    }
    return out;
  }
  if (v.kind != TsValue::Kind::List && v.kind != TsValue::Kind::Tuple)
    unsupported(std::string(what) + " must be a list of tensors");
  std::vector<graph::Value*> out;
  for (const TsValue& e : v.elements) {
    if (e.kind != TsValue::Kind::Tensor)
      unsupported(std::string(what) + " must be a list of tensors");
    out.push_back(e.tensor);
  }
  return out;
}

graph::Value* Translator::shapeTensor(std::size_t i, const char* what) {
  const TsValue& v = value(node_->input(i));
  if (v.kind == TsValue::Kind::Constant)
    return ints(constInts(i, what));
  if (v.kind != TsValue::Kind::List)
    unsupported(std::string(what) + " must be an int list");
  std::vector<graph::Value*> parts;
  for (const TsValue& e : v.elements) {
    if (e.kind == TsValue::Kind::Constant && e.constant.isInt())
      parts.push_back(ints({e.constant.toInt()}));
    else if (e.kind == TsValue::Kind::Tensor)
      parts.push_back(
          add("Reshape",
              {add("Cast", {e.tensor}, {{"to", graph::Attribute{std::int64_t(7)}}}), ints({1})}));
    else
      unsupported(std::string(what) + " must hold ints");
  }
  return add("Concat", parts, {{"axis", graph::Attribute{std::int64_t(0)}}});
}

// --- building ---

graph::Value* Translator::add(const std::string& op, std::vector<graph::Value*> inputs,
                              std::map<std::string, graph::Attribute> attributes) {
  // Nodes are named after the aten op they come from ("batch_norm/BatchNormalization_3"):
  // a traced graph's value names ("input.5", "61") say little.
  std::string base = op;
  if (node_) {
    base = node_->kind().toUnqualString();
    base.erase(0, base.find_first_not_of('_'));
  }
  const std::string name = g_.uniqueName(base + "/" + op);
  graph::Node* n = g_.addNode(op, std::move(inputs), {name});
  n->name = name;
  n->attributes = std::move(attributes);
  typesStale_ = true;
  return n->output();
}

graph::Value* Translator::constant(graph::TensorData data, const std::string& hint) {
  return g_.addConstant(g_.uniqueName(hint), std::move(data));
}

graph::Value* Translator::ints(const std::vector<std::int64_t>& values) {
  return constant(graph::TensorData::fromValues(graph::DType::I64,
                                                {static_cast<std::int64_t>(values.size())}, values),
                  "ints");
}

graph::Value* Translator::scalar(double v, graph::DType dtype) {
  switch (dtype) {
  case graph::DType::F64:
    return constant(graph::TensorData::fromValues(dtype, {}, std::vector<double>{v}), "scalar");
  case graph::DType::I64:
    return constant(graph::TensorData::fromValues(
                        dtype, {}, std::vector<std::int64_t>{static_cast<std::int64_t>(v)}),
                    "scalar");
  case graph::DType::I32:
    return constant(graph::TensorData::fromValues(
                        dtype, {}, std::vector<std::int32_t>{static_cast<std::int32_t>(v)}),
                    "scalar");
  default:
    return constant(graph::TensorData::fromValues(graph::DType::F32, {},
                                                  std::vector<float>{static_cast<float>(v)}),
                    "scalar");
  }
}

void Translator::setOutput(std::size_t k, graph::Value* v) {
  TsValue t;
  t.kind = TsValue::Kind::Tensor;
  t.tensor = v;
  setOutput(k, std::move(t));
}

void Translator::setOutput(std::size_t k, TsValue v) {
  values_[node_->output(k)] = std::move(v);
}

std::size_t Translator::rank(graph::Value* v) {
  if (!v->type.hasRank() && typesStale_) {
    passes::inferShapes(g_);
    typesStale_ = false;
  }
  if (!v->type.hasRank())
    unsupported("the rank of '" + v->name() + "' is not known (give the inputs' shapes)");
  return v->type.rank();
}

std::optional<std::vector<std::int64_t>> Translator::knownDims(graph::Value* v) {
  if (!v->type.isStatic() && typesStale_) {
    passes::inferShapes(g_);
    typesStale_ = false;
  }
  if (!v->type.isStatic())
    return std::nullopt;
  return v->type.staticDims();
}

graph::DType Translator::dtype(graph::Value* v) {
  if (v->type.dtype == graph::DType::Undefined && typesStale_) {
    passes::inferShapes(g_);
    typesStale_ = false;
  }
  return v->type.dtype;
}

std::int64_t Translator::axis(std::int64_t a, graph::Value* v) {
  const auto r = static_cast<std::int64_t>(rank(v));
  if (a < -r || a >= r)
    invalid("has dim " + std::to_string(a) + " for a tensor of rank " + std::to_string(r));
  return a < 0 ? a + r : a;
}

namespace {

// "file.py:12" of a range: the archive's debug information maps the serialized code back to
// the Python source the model was scripted or traced from (for a traced model, the Python
// stack of the call); without it, the serialized code's own line.
std::optional<std::string> rangeLocation(const torch::jit::SourceRange& range) {
  if (!range.source())
    return std::nullopt;
  // Code compiled from a string (torch's builtins) has no file.
  auto fileLine = [](const torch::jit::SourceRange& r) -> std::optional<std::string> {
    auto flc = r.file_line_col();
    if (!flc || std::get<0>(*flc).empty())
      return std::nullopt;
    return std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc));
  };
  if (auto original = range.findSourceRangeThatGenerated()) {
    if (auto frame = modelFrame(original->text().str()))
      return frame;
    if (auto line = fileLine(*original))
      return line;
  }
  return fileLine(range);
}

bool insideTorch(const std::string& location) {
  return location.find("/torch/") != std::string::npos;
}

} // namespace

std::string Translator::location() const {
  if (!node_)
    return {};
  const std::optional<std::string> here = rangeLocation(node_->sourceRange());
  if (here && !insideTorch(*here))
    return *here;
  // In torch's own code (a library module's forward, inlined into the model's): the nearest
  // call site in the model's code, from the call stack that inlining recorded.
  if (auto stack = node_->callstack()) {
    const std::vector<torch::jit::InlinedCallStackEntry> frames = (*stack)->vec();
    for (auto it = frames.rbegin(); it != frames.rend(); ++it)
      if (auto site = rangeLocation(std::get<1>(*it)); site && !insideTorch(*site))
        return *site;
  }
  return here.value_or(std::string());
}

void Translator::unsupported(const std::string& reason) const {
  const std::string where = location();
  throw Error(ErrorKind::Unsupported, reason + (where.empty() ? "" : " (at " + where + ")"),
              {path_, node_ && node_->outputs().size() ? node_->output(0)->debugName() : "",
               node_ ? node_->kind().toQualString() : ""});
}

void Translator::invalid(const std::string& reason) const {
  const std::string where = location();
  throw Error(ErrorKind::Invalid, reason + (where.empty() ? "" : " (at " + where + ")"),
              {path_, node_ && node_->outputs().size() ? node_->output(0)->debugName() : "",
               node_ ? node_->kind().toQualString() : ""});
}

// --- the graph walk ---

// dim / len / comparisons / not on values known at import become constants, so that the
// prim::If they feed can be decided.
bool Translator::foldScalarLogic(const torch::jit::Node& n) {
  const std::string kind = n.kind().toQualString();
  if (n.outputs().size() != 1)
    return false;
  if (kind == "aten::dim") {
    const TsValue& x = value(n.input(0));
    if (x.kind != TsValue::Kind::Tensor)
      return false;
    TsValue r;
    r.constant = c10::IValue(static_cast<std::int64_t>(rank(x.tensor)));
    setOutput(0, std::move(r));
    return true;
  }
  if (kind == "aten::len") {
    const TsValue& x = value(n.input(0));
    std::int64_t length = -1;
    if (x.kind == TsValue::Kind::List || x.kind == TsValue::Kind::Tuple)
      length = static_cast<std::int64_t>(x.elements.size());
    else if (x.kind == TsValue::Kind::Constant && x.constant.isList())
      length = static_cast<std::int64_t>(x.constant.toListRef().size());
    if (length < 0)
      return false;
    TsValue r;
    r.constant = c10::IValue(length);
    setOutput(0, std::move(r));
    return true;
  }
  static const std::map<std::string, int> compare{{"aten::eq", 0}, {"aten::ne", 1},
                                                  {"aten::lt", 2}, {"aten::le", 3},
                                                  {"aten::gt", 4}, {"aten::ge", 5}};
  auto number = [&](std::size_t i, double& out) {
    const TsValue& v = value(n.input(i));
    if (v.kind != TsValue::Kind::Constant)
      return false;
    if (v.constant.isInt() || v.constant.isBool())
      out = v.constant.isInt() ? static_cast<double>(v.constant.toInt()) : v.constant.toBool();
    else if (v.constant.isDouble())
      out = v.constant.toDouble();
    else
      return false;
    return true;
  };
  if (auto c = compare.find(kind); c != compare.end() && n.inputs().size() == 2) {
    double a = 0, b = 0;
    if (!number(0, a) || !number(1, b))
      return false;
    const bool results[] = {a == b, a != b, a<b, a <= b, a> b, a >= b};
    TsValue r;
    r.constant = c10::IValue(results[c->second]);
    setOutput(0, std::move(r));
    return true;
  }
  if (kind == "aten::__not__") {
    double a = 0;
    if (!number(0, a))
      return false;
    TsValue r;
    r.constant = c10::IValue(a == 0);
    setOutput(0, std::move(r));
    return true;
  }
  return false;
}

// Arithmetic on numbers known at import (sizes of tensors whose shapes are known, Python
// constants) is done here, as tracing with these shapes would have recorded constants.
bool Translator::foldScalarArithmetic(const torch::jit::Node& n) {
  static const std::map<std::string, int> ops{
      {"aten::add", 0},          {"aten::sub", 1}, {"aten::mul", 2}, {"aten::floordiv", 3},
      {"aten::floor_divide", 3}, {"aten::div", 4}, {"aten::pow", 5}};
  auto op = ops.find(n.kind().toQualString());
  if (op == ops.end() || n.inputs().size() < 2 || n.outputs().size() != 1)
    return false;
  // Numbers: int / float constants, and 0-d constant tensors (tracing records `d // 4` on a
  // size as floor_divide with a tensor 4).
  auto number = [](const TsValue& v) -> std::optional<TsValue> {
    if (v.kind == TsValue::Kind::Constant && (v.constant.isInt() || v.constant.isDouble()))
      return v;
    if (v.kind == TsValue::Kind::Tensor && v.tensor->isConstant() &&
        !v.tensor->constant().isElided() && v.tensor->constant().dims().empty()) {
      const graph::TensorData& d = v.tensor->constant();
      TsValue c;
      if (graph::isInteger(d.dtype()))
        c.constant = c10::IValue(d.elementAsInt(0));
      else if (graph::isFloat(d.dtype()))
        c.constant = c10::IValue(d.elementAsDouble(0));
      else
        return std::nullopt;
      return c;
    }
    return std::nullopt;
  };
  const std::optional<TsValue> na = number(value(n.input(0))), nb = number(value(n.input(1)));
  if (!na || !nb)
    return false;
  const TsValue& a = *na;
  const TsValue& b = *nb;
  if (n.inputs().size() > 2) { // alpha of add / sub
    const TsValue& alpha = value(n.input(2));
    if (!(alpha.kind == TsValue::Kind::Constant && alpha.constant.isInt() &&
          alpha.constant.toInt() == 1))
      return false;
  }
  const bool ints = a.constant.isInt() && b.constant.isInt();
  const double x =
      a.constant.isInt() ? static_cast<double>(a.constant.toInt()) : a.constant.toDouble();
  const double y =
      b.constant.isInt() ? static_cast<double>(b.constant.toInt()) : b.constant.toDouble();
  TsValue r;
  switch (op->second) {
  case 0:
    r.constant = ints ? c10::IValue(a.constant.toInt() + b.constant.toInt()) : c10::IValue(x + y);
    break;
  case 1:
    r.constant = ints ? c10::IValue(a.constant.toInt() - b.constant.toInt()) : c10::IValue(x - y);
    break;
  case 2:
    r.constant = ints ? c10::IValue(a.constant.toInt() * b.constant.toInt()) : c10::IValue(x * y);
    break;
  case 3:
    if (y == 0)
      return false;
    r.constant = ints ? c10::IValue(static_cast<std::int64_t>(std::floor(x / y)))
                      : c10::IValue(std::floor(x / y));
    break;
  case 4:
    if (y == 0)
      return false;
    r.constant = c10::IValue(x / y);
    break;
  default:
    r.constant = c10::IValue(std::pow(x, y));
    break;
  }
  setOutput(0, std::move(r));
  return true;
}

void Translator::translateNode(const torch::jit::Node& n) {
  node_ = &n;
  const c10::Symbol kind = n.kind();
  if (kind == c10::prim::Constant)
    return; // made on first use
  if (kind == c10::prim::ListConstruct || kind == c10::prim::TupleConstruct) {
    TsValue list;
    list.kind = kind == c10::prim::ListConstruct ? TsValue::Kind::List : TsValue::Kind::Tuple;
    bool allConstantInts = kind == c10::prim::ListConstruct;
    for (const torch::jit::Value* in : n.inputs()) {
      list.elements.push_back(value(in));
      const TsValue& e = list.elements.back();
      allConstantInts = allConstantInts && e.kind == TsValue::Kind::Constant && e.constant.isInt();
    }
    if (allConstantInts) {
      std::vector<std::int64_t> v;
      for (const TsValue& e : list.elements)
        v.push_back(e.constant.toInt());
      TsValue c;
      c.constant = c10::IValue(v);
      setOutput(0, std::move(c));
      return;
    }
    setOutput(0, std::move(list));
    return;
  }
  if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
    const TsValue& list = value(n.input(0));
    if ((list.kind != TsValue::Kind::List && list.kind != TsValue::Kind::Tuple) ||
        list.elements.size() != n.outputs().size())
      unsupported("unpacking a value that is not a list of " + std::to_string(n.outputs().size()));
    const std::vector<TsValue> elements = list.elements;
    for (std::size_t k = 0; k < elements.size(); ++k)
      setOutput(k, elements[k]);
    return;
  }
  if (kind == c10::prim::TupleIndex || kind == c10::aten::__getitem__) {
    const TsValue& list = value(n.input(0));
    const std::int64_t i = constInt(1, "the index");
    const auto size = static_cast<std::int64_t>(list.elements.size());
    if ((list.kind != TsValue::Kind::List && list.kind != TsValue::Kind::Tuple) || i < -size ||
        i >= size)
      unsupported("indexing a value that is not a list, or out of its range");
    setOutput(0, list.elements[static_cast<std::size_t>(i < 0 ? i + size : i)]);
    return;
  }
  if (kind == c10::prim::NumToTensor || kind == c10::aten::Int || kind == c10::aten::Float ||
      kind == c10::aten::ScalarImplicit || kind == c10::aten::contiguous ||
      kind == c10::aten::detach || kind == c10::aten::clone) {
    setOutput(0, value(n.input(0)));
    return;
  }
  if (foldScalarArithmetic(n) || foldScalarLogic(n))
    return;
  if (kind == c10::prim::If) {
    // Scripted models branch on what is known at import (a rank, a length, a flag that
    // freezing made constant): the taken block is translated in place of the node.
    const TsValue& cond = value(n.input(0));
    if (cond.kind != TsValue::Kind::Constant || !(cond.constant.isBool() || cond.constant.isInt()))
      unsupported("prim::If on a condition computed at run time (control flow that depends on "
                  "tensor values)");
    const bool taken = cond.constant.isBool() ? cond.constant.toBool() : cond.constant.toInt() != 0;
    const torch::jit::Block* block = n.blocks()[taken ? 0 : 1];
    for (const torch::jit::Node* inner : block->nodes())
      translateNode(*inner);
    node_ = &n;
    for (std::size_t k = 0; k < n.outputs().size(); ++k)
      setOutput(k, value(block->outputs()[k]));
    return;
  }
  if (kind == c10::prim::Loop) {
    translateLoop(n);
    return;
  }
  if (kind == c10::prim::RaiseException)
    unsupported("the model raises an exception for these input shapes");
  const std::string name = kind.toQualString();
  const auto& handlers = atenHandlers();
  auto it = handlers.find(name);
  if (it == handlers.end())
    unsupported(name + " is not supported by Lathe's TorchScript importer");
  it->second(*this);
  for (std::size_t k = 0; k < n.outputs().size(); ++k)
    if (!values_.count(n.output(k)))
      failInternal(__FILE__, __LINE__, name + " left output " + std::to_string(k) + " unset");
  authored_.take(describeCall(n));
}

// prim::Loop(max_trip_count, initial_condition, carried...) with a body block (i, carried...)
// -> (condition, carried...): unrolled at import when the trip count and every condition are
// known then (a `for` over a range of known length; a `while` whose condition constants
// decide), translating the body once per iteration.
void Translator::translateLoop(const torch::jit::Node& n) {
  constexpr std::int64_t kMaxIterations = 4096;
  const TsValue& trips = value(n.input(0));
  const TsValue& first = value(n.input(1));
  if (trips.kind != TsValue::Kind::Constant || !trips.constant.isInt())
    unsupported("prim::Loop whose trip count is computed at run time");
  auto decided = [&](const TsValue& c) -> bool {
    if (c.kind != TsValue::Kind::Constant || !(c.constant.isBool() || c.constant.isInt()))
      unsupported("prim::Loop whose condition is computed at run time (control flow that "
                  "depends on tensor values)");
    return c.constant.isBool() ? c.constant.toBool() : c.constant.toInt() != 0;
  };
  const std::int64_t maxTrips = trips.constant.toInt();
  bool running = decided(first);
  const torch::jit::Block* body = n.blocks()[0];
  std::vector<TsValue> carried;
  for (std::size_t k = 2; k < n.inputs().size(); ++k)
    carried.push_back(value(n.input(k)));
  if (body->inputs().size() != carried.size() + 1 || body->outputs().size() != carried.size() + 1)
    invalid("has a loop body that does not match its carried values");
  for (std::int64_t i = 0; running && i < maxTrips; ++i) {
    if (i == kMaxIterations)
      unsupported("prim::Loop of more than " + std::to_string(kMaxIterations) +
                  " iterations (Lathe unrolls loops at import)");
    TsValue index;
    index.constant = c10::IValue(i);
    values_[body->inputs()[0]] = index;
    for (std::size_t k = 0; k < carried.size(); ++k)
      values_[body->inputs()[k + 1]] = carried[k];
    for (const torch::jit::Node* inner : body->nodes())
      translateNode(*inner);
    node_ = &n;
    running = decided(value(body->outputs()[0]));
    for (std::size_t k = 0; k < carried.size(); ++k)
      carried[k] = value(body->outputs()[k + 1]);
  }
  for (std::size_t k = 0; k < carried.size(); ++k)
    setOutput(k, carried[k]);
}

// The call as the archive has it: op name, the Python name of its result, its source line,
// and its arguments known at import (stride, padding, dims...) by their schema names.
AuthoredOp Translator::describeCall(const torch::jit::Node& n) {
  AuthoredOp op;
  op.opType = n.kind().toQualString();
  op.name = n.outputs().empty() ? std::string() : pythonName(n.output(0)->debugName());
  // Inside a submodule's forward (inlined), the module's path ("layer1.0.conv1") names the
  // call better than the SSA value.
  if (auto stack = n.callstack()) {
    std::string path;
    for (const torch::jit::InlinedCallStackEntry& frame : (*stack)->vec())
      // A scripted method's calls on its own module say "SELF".
      if (const auto& module = std::get<2>(frame);
          module && !module->instance_name().empty() && module->instance_name() != "SELF")
        path += (path.empty() ? "" : ".") + module->instance_name();
    if (!path.empty())
      op.name = path;
  }
  op.location = location();
  const c10::FunctionSchema* schema = n.maybeSchema();
  for (std::size_t i = 0; i < n.inputs().size(); ++i) {
    const TsValue& v = value(n.input(i));
    if (v.kind != TsValue::Kind::Constant || v.constant.isNone())
      continue;
    std::string key = schema && i < schema->arguments().size() ? schema->arguments()[i].name()
                                                               : "input " + std::to_string(i);
    std::ostringstream text;
    text << v.constant;
    op.attributes.emplace_back(std::move(key), text.str().substr(0, 200));
  }
  return op;
}

void Translator::run(torch::jit::Graph& forward,
                     const std::map<std::string, std::vector<std::int64_t>>& shapes,
                     const std::map<std::string, graph::DType>& types) {
  // Argument 0 is the module itself.
  std::vector<std::string> missing;
  for (std::size_t i = 1; i < forward.inputs().size(); ++i) {
    const torch::jit::Value* in = forward.inputs()[i];
    const std::string name = pythonName(in->debugName());
    if (!in->type()->cast<c10::TensorType>())
      throw Error(ErrorKind::Unsupported,
                  "forward argument '" + name + "' is a " + in->type()->str() +
                      "; Lathe imports forwards that take tensors",
                  {path_, name, {}});
    auto shape = shapes.find(name);
    if (shape == shapes.end()) {
      missing.push_back(name);
      continue;
    }
    TsValue v;
    v.kind = TsValue::Kind::Tensor;
    // Element types come from the input file; without one, an input that indexes an
    // embedding table holds int64 token ids and any other float32.
    graph::DType dtype = graph::DType::F32;
    for (const torch::jit::Use& use : in->uses())
      if (use.user->kind() == c10::aten::embedding && use.offset == 1)
        dtype = graph::DType::I64;
    if (auto type = types.find(name); type != types.end())
      dtype = type->second;
    v.tensor = g_.addInput(name, graph::TensorType::of(dtype, shape->second));
    values_[in] = std::move(v);
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing)
      list += (list.empty() ? "" : ", ") + m;
    throw Error(ErrorKind::Invalid,
                "a TorchScript model records no input shapes: give them for " + list +
                    " (--input-shapes \"" + missing[0] + ":[1,3,224,224]\", or --inputs FILE.npz)",
                {path_, {}, {}});
  }
  for (const torch::jit::Node* n : forward.nodes())
    translateNode(*n);
  node_ = nullptr;
  std::vector<graph::Value*> outputs;
  for (const torch::jit::Value* out : forward.outputs())
    flatten(value(out), outputs, path_);
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    graph::Value* v = outputs[k];
    // Outputs are named output0, output1, ...: an Identity where the value has a name already
    // or is also an input or another output.
    graph::Node* id = g_.addNode("Identity", {v}, {g_.uniqueName("output" + std::to_string(k))});
    id->name = id->output()->name();
    g_.outputs.push_back(id->output());
  }
}

} // namespace torchscript

ImportResult importTorchScriptInProcess(const std::string& path, const ImportOptions& options) {
  auto progress = [&](int percent, const std::string& stage) {
    reportImportProgress(options, path, percent, stage);
  };
  progress(0, "loading the TorchScript archive");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::Io, "no such file", {path, {}, {}});
  std::shared_ptr<torch::jit::Graph> forward;
  torch::jit::Module frozen;
  try {
    torch::jit::Module module = torch::jit::load(path, c10::Device(c10::DeviceType::CPU));
    module.eval();
    progress(30, "freezing");
    frozen = torch::jit::freeze_module(module);
    if (!frozen.find_method("forward"))
      throw Error(ErrorKind::Invalid, "the module has no forward method", {path, {}, {}});
    forward = frozen.get_method("forward").graph()->copy();
    torch::jit::Inline(*forward);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // libtorch appends a C++ backtrace; the first non-empty line says what is wrong.
    std::string what = e.what();
    what.erase(0, what.find_first_not_of("\n "));
    what = what.substr(0, what.find('\n'));
    if (what.empty())
      what = "the archive is damaged";
    throw Error(ErrorKind::Invalid, "cannot load the TorchScript archive: " + what, {path, {}, {}});
  }
  progress(60, "translating ops");
  ImportResult result;
  result.format = ModelFormat::TorchScript;
  result.graph = std::make_unique<graph::Graph>();
  result.graph->name = std::filesystem::path(path).stem().string();
  result.graph->opsetVersion = 17;
  result.sourceOpset = 17;
  torchscript::Translator translator(path, *result.graph);
  try {
    translator.run(*forward, options.inputShapes, options.inputTypes);
  } catch (const c10::Error& e) {
    std::string what = e.what();
    throw Error(ErrorKind::Invalid, what.substr(0, what.find('\n')), {path, {}, {}});
  }
  progress(90, "inferring shapes");
  result.graph->pruneUnusedValues();
  result.authored = translator.authoredOps();
  passes::inferShapes(*result.graph);
  graph::verifyGraphOrThrow(*result.graph, path);
  progress(100, "imported");
  return result;
}

} // namespace lathe::frontend
