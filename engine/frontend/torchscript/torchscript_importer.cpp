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

} // namespace

// "x.1" -> "x": TorchScript numbers the SSA values of one Python name.
std::string pythonName(const std::string& debugName) {
  const auto dot = debugName.rfind('.');
  if (dot != std::string::npos && dot + 1 < debugName.size() &&
      std::all_of(debugName.begin() + static_cast<std::ptrdiff_t>(dot) + 1, debugName.end(),
                  [](char c) { return c >= '0' && c <= '9'; }))
    return debugName.substr(0, dot);
  return debugName;
}

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
