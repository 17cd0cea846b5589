#pragma once
// Internal to the TFLite importer: the translation of one operator into graph IR nodes.
// A handler reads its operator's inputs and options through OpContext, adds nodes, and
// hands each result to setOutput(); the context gives the last node the output tensor's
// name. Quantized tensors reach a handler as the file stores them (int8 / uint8) when its
// table entry says it handles quantization itself; otherwise they are dequantized on the
// way in and the handler's float results are quantized on the way out.

#include "engine/frontend/tflite/tflite_model.h"
#include "engine/graph/graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace lathe::frontend::tflite {

class Converter;

class OpContext {
public:
  OpContext(Converter& converter, const lathe_tflite::Operator& op, std::size_t index,
            std::string opName, bool dequantizeInputs);

  const lathe_tflite::Operator& op() const { return op_; }
  const std::string& opName() const { return opName_; }
  graph::Graph& graph();

  // --- inputs (index into the operator's input list) ---
  std::size_t inputCount() const;
  bool hasInput(std::size_t i) const; // present and not the "absent" index -1
  const TensorInfo& inputInfo(std::size_t i) const;
  // The input as a graph value (dequantized to f32 when the context dequantizes).
  graph::Value* input(std::size_t i);
  // The input as the file stores it, quantized or not.
  graph::Value* rawInput(std::size_t i);
  // Constant contents of input i (throws naming the input when it is computed).
  graph::TensorData constantInput(std::size_t i, const std::string& what);
  std::vector<std::int64_t> constantInts(std::size_t i, const std::string& what);
  bool inputIsConstant(std::size_t i) const;
  // Whether input i is a quantized integer tensor (scales present, int8 / uint8 / int16).
  bool quantized(std::size_t i) const;
  // Whether this operator runs on the stored integers of its quantized input 0 (a
  // PassThrough or Native operator whose inputs are not dequantized).
  bool onIntegers() const { return !dequantizeInputs_ && quantized(0); }

  // --- outputs ---
  std::size_t outputCount() const;
  const TensorInfo& outputInfo(std::size_t k) const;
  void setOutput(std::size_t k, graph::Value* v);

  // --- building ---
  graph::Value* add(const std::string& opType, std::vector<graph::Value*> inputs,
                    std::map<std::string, graph::Attribute> attributes = {},
                    const std::string& suffix = {});
  graph::Value* constant(const std::string& suffix, graph::TensorData data);
  graph::Value* ints(const std::string& suffix, const std::vector<std::int64_t>& values);
  graph::Value* floats(const std::string& suffix, const std::vector<float>& values,
                       std::vector<std::int64_t> dims = {});
  // x * scale + ... : DequantizeLinear / QuantizeLinear with a tensor's parameters.
  graph::Value* dequantize(graph::Value* v, const TensorInfo& info);
  graph::Value* quantize(graph::Value* v, const TensorInfo& info, const std::string& name = {});

  template <typename T>
  const T* options() const {
    return op_.builtin_options_as<T>();
  }
  // Throws Unsupported / Invalid naming the file, the operator's output and its op.
  [[noreturn]] void unsupported(const std::string& reason) const;
  [[noreturn]] void invalid(const std::string& reason) const;
  void requireInputs(std::size_t min, std::size_t max) const;

  std::vector<graph::Value*> finalOutputs() const { return outputs_; }
  // "operator 12", for messages.
  std::string what() const;

private:
  std::string outputFileName() const;
  std::string newName(const std::string& suffix);
  std::int64_t tensorIndex(std::size_t i) const;

  Converter& cv_;
  const lathe_tflite::Operator& op_;
  std::size_t index_;
  std::string opName_;
  bool dequantizeInputs_;
  std::vector<graph::Value*> outputs_;
  std::vector<graph::Node*> created_;
};

// Graph values of the file's tensors, created on first use (inputs, constants) or by the
// operator that writes them.
class Converter {
public:
  Converter(TfliteModel& model, graph::Graph& graph) : model_(model), graph_(graph) {}

  TfliteModel& model() { return model_; }
  graph::Graph& graph() { return graph_; }
  graph::Value* tensorValue(std::int64_t index, const std::string& reader);
  graph::Value* dequantized(std::int64_t index, const std::string& reader);
  void bind(std::int64_t index, graph::Value* v);
  bool bound(std::int64_t index) const { return values_.count(index) != 0; }
  // A graph name no value has and no tensor of the file will take.
  std::string freshName(const std::string& base);
  void reserveNames();

private:
  TfliteModel& model_;
  graph::Graph& graph_;
  std::unordered_map<std::int64_t, graph::Value*> values_;
  std::unordered_map<std::int64_t, graph::Value*> dequantized_;
  std::unordered_map<std::string, int> reserved_;
};

// The operator's builtin options by field name, as text ("padding" -> "SAME"); absent fields
// show their default.
std::vector<std::pair<std::string, std::string>> describeOptions(const lathe_tflite::Operator& op);

// --- helpers shared by the handlers ---
// Zero points as a constant of the quantized type.
graph::TensorData zeroPointData(graph::DType dtype, const std::vector<std::int64_t>& dims,
                                const std::vector<std::int64_t>& zeroPoints);
// `v` with the fused activation applied (float values).
graph::Value* applyActivation(OpContext& ctx, graph::Value* v,
                              lathe_tflite::ActivationFunctionType act);
// NHWC <-> NCHW transposes.
graph::Value* toNchw(OpContext& ctx, graph::Value* v);
graph::Value* toNhwc(OpContext& ctx, graph::Value* v);
// A constant with its axes permuted (any element type).
graph::TensorData permuteConstant(const graph::TensorData& data,
                                  const std::vector<std::int64_t>& perm);
// The explicit [top, left, bottom, right] padding of a SAME / VALID window.
std::vector<std::int64_t> windowPads(lathe_tflite::Padding padding, std::int64_t inH,
                                     std::int64_t inW, std::int64_t kH, std::int64_t kW,
                                     std::int64_t strideH, std::int64_t strideW, std::int64_t dilH,
                                     std::int64_t dilW);
// A negative axis counted from the end; checked against `rank`.
std::int64_t normalizeAxis(const OpContext& ctx, std::int64_t axis, std::size_t rank);

// The handler table: how each supported builtin operator is translated.
enum class QuantMode {
  Float,       // quantized inputs dequantized, float outputs quantized (exact semantics in f32)
  Native,      // the handler reads quantized tensors itself
  PassThrough, // moves values: runs on the stored integers when all quantized tensors share
               // their parameters, otherwise as Float
};
using Handler = void (*)(OpContext&);
struct OpEntry {
  Handler handler;
  QuantMode quant;
};
const OpEntry* findOp(lathe_tflite::BuiltinOperator op);
// Custom operators Lathe knows, by their code's name (MediaPipe's Convolution2DTransposeBias).
const OpEntry* findCustomOp(const std::string& name);

// The options table of type T, or an Invalid error saying it is missing.
template <typename T>
const T& requiredOptions(const OpContext& ctx, const char* name) {
  const T* o = ctx.options<T>();
  if (!o)
    ctx.invalid(std::string("lacks its ") + name);
  return *o;
}
// Weight input i as a constant permuted by `perm` (a Transpose when computed); dequantized
// to f32 when `dequantize` and the weights are quantized.
graph::Value* permutedWeights(OpContext& ctx, std::size_t i, const std::vector<std::int64_t>& perm,
                              bool dequantize);
// A CONV_2D / DEPTHWISE_CONV_2D's window as Conv attributes, checked against its tensors.
struct ConvGeometry {
  std::vector<std::int64_t> kernel, strides, dilations, pads;
  std::int64_t group = 1;
  lathe_tflite::ActivationFunctionType activation = lathe_tflite::ActivationFunctionType::NONE;
  std::map<std::string, graph::Attribute> attributes() const;
};
ConvGeometry convGeometry(OpContext& ctx, bool depthwise);
// A transposed convolution (TRANSPOSE_CONV, Convolution2DTransposeBias): input x, weights
// [O, kH, kW, I] and an optional bias, as the inputs at these indices (bias < 0: none); the
// output's size is the output tensor's.
void transposedConv(OpContext& ctx, std::size_t x, std::size_t weights, int bias,
                    lathe_tflite::Padding padding, std::int64_t strideH, std::int64_t strideW,
                    lathe_tflite::ActivationFunctionType activation);
// FULLY_CONNECTED's input as [rows, depth] (a Reshape unless it is already so).
graph::Value* flattenForFullyConnected(OpContext& ctx);
// The quantized forms of Conv / DepthwiseConv and FullyConnected (tflite_ops_quant.cpp).
void quantizedConv(OpContext& ctx, bool depthwise);
void quantizedFullyConnected(OpContext& ctx);

// Registration, one function per source file.
void registerElementwiseOps(std::unordered_map<int, OpEntry>& table);
void registerShapeOps(std::unordered_map<int, OpEntry>& table);
void registerSpatialOps(std::unordered_map<int, OpEntry>& table);
void registerQuantOps(std::unordered_map<int, OpEntry>& table);
void registerPartOps(std::unordered_map<int, OpEntry>& table);
void registerTransposedOps(std::unordered_map<int, OpEntry>& table);
void registerCustomOps(std::unordered_map<std::string, OpEntry>& table);

} // namespace lathe::frontend::tflite
