// Elementwise operators, activations, softmax and reductions.
#include "engine/frontend/tflite/tflite_convert.h"

#include <algorithm>

namespace lathe::frontend::tflite {
namespace {

using A = lathe_tflite::ActivationFunctionType;
using B = lathe_tflite::BuiltinOperator;
using graph::Attribute;
using graph::Value;

template <typename Options>
A fusedActivation(const OpContext& ctx) {
  const Options* o = ctx.options<Options>();
  return o ? o->fused_activation_function() : A::NONE;
}

void binary(OpContext& ctx, const char* onnxOp, A act) {
  ctx.requireInputs(2, 2);
  Value* v = ctx.add(onnxOp, {ctx.input(0), ctx.input(1)});
  ctx.setOutput(0, applyActivation(ctx, v, act));
}

void add(OpContext& ctx) {
  binary(ctx, "Add", fusedActivation<lathe_tflite::AddOptions>(ctx));
}
void sub(OpContext& ctx) {
  binary(ctx, "Sub", fusedActivation<lathe_tflite::SubOptions>(ctx));
}
void mul(OpContext& ctx) {
  binary(ctx, "Mul", fusedActivation<lathe_tflite::MulOptions>(ctx));
}
void div(OpContext& ctx) {
  binary(ctx, "Div", fusedActivation<lathe_tflite::DivOptions>(ctx));
}
void maximum(OpContext& ctx) {
  binary(ctx, "Max", A::NONE);
}
void minimum(OpContext& ctx) {
  binary(ctx, "Min", A::NONE);
}
void pow(OpContext& ctx) {
  binary(ctx, "Pow", A::NONE);
}

void squaredDifference(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  Value* d = ctx.add("Sub", {ctx.input(0), ctx.input(1)});
  ctx.setOutput(0, ctx.add("Mul", {d, d}));
}

void unary(OpContext& ctx, const char* onnxOp) {
  ctx.requireInputs(1, 1);
  ctx.setOutput(0, ctx.add(onnxOp, {ctx.input(0)}));
}

void relu(OpContext& ctx) {
  unary(ctx, "Relu");
}
void logistic(OpContext& ctx) {
  unary(ctx, "Sigmoid");
}
void tanh(OpContext& ctx) {
  unary(ctx, "Tanh");
}
void hardSwish(OpContext& ctx) {
  unary(ctx, "HardSwish");
}
void exp(OpContext& ctx) {
  unary(ctx, "Exp");
}
void log(OpContext& ctx) {
  unary(ctx, "Log");
}
void sqrt(OpContext& ctx) {
  unary(ctx, "Sqrt");
}
void abs(OpContext& ctx) {
  unary(ctx, "Abs");
}
void neg(OpContext& ctx) {
  unary(ctx, "Neg");
}
void floor(OpContext& ctx) {
  unary(ctx, "Floor");
}
void ceil(OpContext& ctx) {
  unary(ctx, "Ceil");
}
void sin(OpContext& ctx) {
  unary(ctx, "Sin");
}
void cos(OpContext& ctx) {
  unary(ctx, "Cos");
}
void elu(OpContext& ctx) {
  unary(ctx, "Elu");
}

// GELU: x * (1 + erf(x / sqrt 2)) / 2, or with approximate the tanh form
// x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2.
void gelu(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  const auto* o = ctx.options<lathe_tflite::GeluOptions>();
  Value* x = ctx.input(0);
  Value* inner = nullptr;
  if (o && o->approximate()) {
    Value* cube = ctx.add("Mul", {ctx.add("Mul", {x, x}), x});
    Value* poly = ctx.add("Add", {x, ctx.add("Mul", {cube, ctx.floats("c", {0.044715f})})});
    inner = ctx.add("Tanh", {ctx.add("Mul", {poly, ctx.floats("k", {0.7978845608f})})});
  } else {
    inner = ctx.add("Erf", {ctx.add("Mul", {x, ctx.floats("inv_sqrt2", {0.7071067812f})})});
  }
  Value* half = ctx.add("Mul", {x, ctx.floats("half", {0.5f})});
  ctx.setOutput(0, ctx.add("Mul", {half, ctx.add("Add", {inner, ctx.floats("one", {1.0f})})}));
}

void relu6(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  ctx.setOutput(0, applyActivation(ctx, ctx.input(0), A::RELU6));
}

void reluN1To1(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  ctx.setOutput(0, applyActivation(ctx, ctx.input(0), A::RELU_N1_TO_1));
}

void rsqrt(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  ctx.setOutput(0, ctx.add("Reciprocal", {ctx.add("Sqrt", {ctx.input(0)})}));
}

void square(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  Value* x = ctx.input(0);
  ctx.setOutput(0, ctx.add("Mul", {x, x}));
}

void leakyRelu(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  const auto* o = ctx.options<lathe_tflite::LeakyReluOptions>();
  const float alpha = o ? o->alpha() : 0.2f;
  ctx.setOutput(0, ctx.add("LeakyRelu", {ctx.input(0)}, {{"alpha", Attribute{alpha}}}));
}

void prelu(OpContext& ctx) {
  ctx.requireInputs(2, 2);
  ctx.setOutput(0, ctx.add("PRelu", {ctx.input(0), ctx.input(1)}));
}

// softmax(beta * x) over the last axis.
void softmax(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  const auto* o = ctx.options<lathe_tflite::SoftmaxOptions>();
  const float beta = o ? o->beta() : 1.0f;
  Value* x = ctx.input(0);
  if (beta != 1.0f)
    x = ctx.add("Mul", {x, ctx.floats("beta", {beta})});
  ctx.setOutput(0, ctx.add("Softmax", {x}, {{"axis", Attribute{std::int64_t(-1)}}}));
}

void logSoftmax(OpContext& ctx) {
  ctx.requireInputs(1, 1);
  ctx.setOutput(0, ctx.add("LogSoftmax", {ctx.input(0)}, {{"axis", Attribute{std::int64_t(-1)}}}));
}

// MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD: axes from a constant input. An empty
// axis list reduces nothing (TensorFlow's meaning), unlike ONNX's "all axes".
void reduce(OpContext& ctx, const char* onnxOp, bool axesAsInput) {
  ctx.requireInputs(2, 2);
  const std::size_t rank = ctx.inputInfo(0).shape.size();
  std::vector<std::int64_t> axes;
  for (std::int64_t a : ctx.constantInts(1, "the axes"))
    axes.push_back(normalizeAxis(ctx, a, rank));
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const auto* o = ctx.options<lathe_tflite::ReducerOptions>();
  const std::int64_t keep = o && o->keep_dims() ? 1 : 0;
  Value* x = ctx.input(0);
  if (axes.empty()) {
    ctx.setOutput(0, x);
    return;
  }
  std::map<std::string, Attribute> attrs{{"keepdims", Attribute{keep}}};
  if (axesAsInput) {
    ctx.setOutput(0, ctx.add(onnxOp, {x, ctx.ints("axes", axes)}, std::move(attrs)));
  } else {
    attrs["axes"] = Attribute{axes};
    ctx.setOutput(0, ctx.add(onnxOp, {x}, std::move(attrs)));
  }
}

void mean(OpContext& ctx) {
  reduce(ctx, "ReduceMean", false);
}
void sum(OpContext& ctx) {
  reduce(ctx, "ReduceSum", true);
}
void reduceMax(OpContext& ctx) {
  reduce(ctx, "ReduceMax", false);
}
void reduceMin(OpContext& ctx) {
  reduce(ctx, "ReduceMin", false);
}
void reduceProd(OpContext& ctx) {
  reduce(ctx, "ReduceProd", false);
}

} // namespace

void registerElementwiseOps(std::unordered_map<int, OpEntry>& t) {
  auto reg = [&](B op, Handler h) { t[static_cast<int>(op)] = {h, QuantMode::Float}; };
  reg(B::ADD, add);
  reg(B::SUB, sub);
  reg(B::MUL, mul);
  reg(B::DIV, div);
  reg(B::MAXIMUM, maximum);
  reg(B::MINIMUM, minimum);
  reg(B::POW, pow);
  reg(B::SQUARED_DIFFERENCE, squaredDifference);
  reg(B::RELU, relu);
  reg(B::RELU6, relu6);
  reg(B::RELU_N1_TO_1, reluN1To1);
  reg(B::LOGISTIC, logistic);
  reg(B::TANH, tanh);
  reg(B::HARD_SWISH, hardSwish);
  reg(B::GELU, gelu);
  reg(B::LEAKY_RELU, leakyRelu);
  reg(B::PRELU, prelu);
  reg(B::ELU, elu);
  reg(B::EXP, exp);
  reg(B::LOG, log);
  reg(B::SQRT, sqrt);
  reg(B::RSQRT, rsqrt);
  reg(B::SQUARE, square);
  reg(B::ABS, abs);
  reg(B::NEG, neg);
  reg(B::FLOOR, floor);
  reg(B::CEIL, ceil);
  reg(B::SIN, sin);
  reg(B::COS, cos);
  reg(B::SOFTMAX, softmax);
  reg(B::LOG_SOFTMAX, logSoftmax);
  reg(B::MEAN, mean);
  reg(B::SUM, sum);
  reg(B::REDUCE_MAX, reduceMax);
  reg(B::REDUCE_MIN, reduceMin);
  reg(B::REDUCE_PROD, reduceProd);
}

} // namespace lathe::frontend::tflite
