#pragma once
// Internal to the TorchScript importer (includes libtorch): the values of a frozen, inlined
// forward graph as graph IR values or compile-time constants, and the per-op translations.

#include "engine/frontend/authored_ops.h"
#include "engine/graph/graph.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <torch/script.h>
#include <unordered_map>
#include <vector>

namespace lathe::frontend::torchscript {

// What a TorchScript value is during translation.
struct TsValue {
  enum class Kind { Tensor, Constant, List, Tuple };
  Kind kind = Kind::Constant;
  graph::Value* tensor = nullptr; // Tensor (also int scalars computed at run time)
  c10::IValue constant;           // Constant: ints, floats, bools, None, strings, lists of them
  std::vector<TsValue> elements;  // List / Tuple
};

class Translator {
public:
  Translator(std::string path, graph::Graph& g) : path_(std::move(path)), g_(g), authored_(g) {}

  void run(torch::jit::Graph& forward,
           const std::map<std::string, std::vector<std::int64_t>>& shapes,
           const std::map<std::string, graph::DType>& types);
  // After run() and once no node is added or removed any more: each aten call and its nodes.
  std::vector<AuthoredOp> authoredOps() { return authored_.finish(); }

  // --- used by the op handlers ---
  graph::Graph& graph() { return g_; }
  const torch::jit::Node& node() const { return *node_; }
  TsValue& value(const torch::jit::Value* v);
  // Input i of the current node as a tensor (numbers become scalar constants of `like`'s
  // element type, or f32).
  graph::Value* tensor(std::size_t i, graph::Value* like = nullptr);
  bool isNone(std::size_t i);
  bool isConstant(std::size_t i);
  std::int64_t constInt(std::size_t i, const char* what);
  double constDouble(std::size_t i, const char* what);
  bool constBool(std::size_t i, const char* what);
  std::string constString(std::size_t i, const char* what);
  std::vector<std::int64_t> constInts(std::size_t i, const char* what);
  // A list of tensors (cat, stack).
  std::vector<graph::Value*> tensorList(std::size_t i, const char* what);
  // An int list that may hold sizes computed at run time, as a 1-D int64 tensor.
  graph::Value* shapeTensor(std::size_t i, const char* what);

  graph::Value* add(const std::string& op, std::vector<graph::Value*> inputs,
                    std::map<std::string, graph::Attribute> attributes = {});
  graph::Value* constant(graph::TensorData data, const std::string& hint = "const");
  graph::Value* ints(const std::vector<std::int64_t>& values);
  graph::Value* scalar(double v, graph::DType dtype);
  void setOutput(std::size_t k, graph::Value* v);
  void setOutput(std::size_t k, TsValue v);
  // Rank and element type of a graph value (shape inference runs when they are not known yet).
  std::size_t rank(graph::Value* v);
  // The dims of `v` when shape inference can tell them at import (input shapes are given).
  std::optional<std::vector<std::int64_t>> knownDims(graph::Value* v);
  graph::DType dtype(graph::Value* v);
  std::int64_t axis(std::int64_t a, graph::Value* v);

  [[noreturn]] void unsupported(const std::string& reason) const;
  [[noreturn]] void invalid(const std::string& reason) const;
  std::string location() const; // "model.py:12" of the current node, or ""

private:
  void translateNode(const torch::jit::Node& n);
  bool foldScalarArithmetic(const torch::jit::Node& n);
  bool foldScalarLogic(const torch::jit::Node& n);
  AuthoredOp describeCall(const torch::jit::Node& n);
  void translateLoop(const torch::jit::Node& n);

  std::string path_;
  graph::Graph& g_;
  const torch::jit::Node* node_ = nullptr;
  std::unordered_map<const torch::jit::Value*, TsValue> values_;
  bool typesStale_ = true;
  AuthoredRecorder authored_;
};

using Handler = void (*)(Translator&);
// Handlers of ts_ops_sequence.cpp, registered with the others in atenHandlers().
void lstm(Translator& t);
void scaledDotProductAttention(Translator& t);
const std::unordered_map<std::string, Handler>& atenHandlers();

graph::TensorData tensorData(const at::Tensor& t, const std::string& what);
// "x.1" -> "x": TorchScript numbers the SSA values of one Python name.
std::string pythonName(const std::string& debugName);

} // namespace lathe::frontend::torchscript
