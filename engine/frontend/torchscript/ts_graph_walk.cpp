// The walk over a frozen, inlined forward graph: prim nodes (constants, lists, tuples, If and
// Loop decided at import), scalar arithmetic and logic folded on values known at import, each
// aten call handed to its translation (torchscript_ops.cpp) and recorded as authored, and the
// Python source line of a call for messages.
#include "engine/frontend/torchscript/ts_translate.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <torch/csrc/jit/ir/constants.h>

namespace lathe::frontend::torchscript {
namespace {

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

} // namespace lathe::frontend::torchscript
