#!/usr/bin/python3
"""Regenerates engine/graph/ops.def: Lathe's op table.

Categories, fusion roles and summaries are Lathe's own (below); input/output arity is taken
from the ONNX operator schemas at opset 17 so that it cannot drift from the standard.
Usage: /usr/bin/python3 tools/gen_ops_def.py > engine/graph/ops.def
       /usr/bin/python3 tools/gen_ops_def.py --attributes > engine/graph/op_attributes.def
"""
import sys

import onnx.defs

MAXI = 2**31 - 1

# name: (category, fusion role, summary)
# role: anchor = heavy op that starts a fused kernel; ew = elementwise, may join an epilogue;
#       opaque = its own kernel.
OPS = {
    # convolution
    "Conv": ("convolution", "anchor", "N-d convolution with groups, strides, dilation and padding"),
    "ConvTranspose": ("convolution", "anchor", "transposed (fractionally strided) convolution"),
    "ConvInteger": ("convolution", "opaque", "integer convolution with zero points, int32 result"),
    "QLinearConv": ("convolution", "opaque", "quantized convolution, requantized to 8 bits"),
    # matmul
    "Gemm": ("matmul", "anchor", "alpha*A'*B' + beta*C with optional transposes"),
    "MatMul": ("matmul", "anchor", "batched matrix product with numpy broadcasting"),
    "Einsum": ("matmul", "opaque", "tensor contraction given in Einstein notation"),
    "Det": ("matmul", "opaque", "determinant of square matrices (batched)"),
    "MatMulInteger": ("matmul", "opaque", "integer matrix product with zero points, int32 result"),
    "QLinearMatMul": ("matmul", "opaque", "quantized matrix product, requantized to 8 bits"),
    # elementwise arithmetic
    "Add": ("elementwise", "ew", "a + b with broadcasting"),
    "Sub": ("elementwise", "ew", "a - b with broadcasting"),
    "Mul": ("elementwise", "ew", "a * b with broadcasting"),
    "Div": ("elementwise", "ew", "a / b with broadcasting"),
    "Pow": ("elementwise", "ew", "a raised to b with broadcasting"),
    "Mod": ("elementwise", "ew", "remainder, C-style (fmod=1) or Python-style"),
    "Max": ("elementwise", "ew", "elementwise maximum of any number of inputs"),
    "Min": ("elementwise", "ew", "elementwise minimum of any number of inputs"),
    "Sum": ("elementwise", "ew", "elementwise sum of any number of inputs"),
    "Mean": ("elementwise", "ew", "elementwise mean of any number of inputs"),
    "Neg": ("elementwise", "ew", "negation"),
    "Abs": ("elementwise", "ew", "absolute value"),
    "Reciprocal": ("elementwise", "ew", "1 / x"),
    "Sqrt": ("elementwise", "ew", "square root"),
    "Exp": ("elementwise", "ew", "natural exponential"),
    "Log": ("elementwise", "ew", "natural logarithm"),
    "Floor": ("elementwise", "ew", "round down"),
    "Ceil": ("elementwise", "ew", "round up"),
    "Round": ("elementwise", "ew", "round half to even"),
    "Sign": ("elementwise", "ew", "-1, 0 or 1 by sign"),
    "Erf": ("elementwise", "ew", "Gauss error function"),
    "Sin": ("elementwise", "ew", "sine"),
    "Cos": ("elementwise", "ew", "cosine"),
    "Tan": ("elementwise", "ew", "tangent"),
    "Asin": ("elementwise", "ew", "arcsine"),
    "Acos": ("elementwise", "ew", "arccosine"),
    "Atan": ("elementwise", "ew", "arctangent"),
    "Sinh": ("elementwise", "ew", "hyperbolic sine"),
    "Cosh": ("elementwise", "ew", "hyperbolic cosine"),
    "Asinh": ("elementwise", "ew", "inverse hyperbolic sine"),
    "Acosh": ("elementwise", "ew", "inverse hyperbolic cosine"),
    "Atanh": ("elementwise", "ew", "inverse hyperbolic tangent"),
    "IsNaN": ("elementwise", "ew", "true where x is NaN"),
    "IsInf": ("elementwise", "ew", "true where x is +/- infinity"),
    "Cast": ("elementwise", "ew", "convert to another element type"),
    "CastLike": ("elementwise", "ew", "convert to the element type of a second tensor"),
    "Where": ("elementwise", "ew", "select from a or b by a boolean condition, broadcasting"),
    "BitShift": ("elementwise", "ew", "shift unsigned integers left or right"),
    "QuantizeLinear": ("elementwise", "ew", "saturate(round(x / scale) + zero_point) to 8 bits"),
    "DequantizeLinear": ("elementwise", "ew", "(x - zero_point) * scale"),
    "DynamicQuantizeLinear": ("elementwise", "opaque", "uint8 quantization with scale from min/max"),
    # activations (elementwise)
    "Relu": ("elementwise", "ew", "max(x, 0)"),
    "LeakyRelu": ("elementwise", "ew", "x, or alpha*x for negative x"),
    "PRelu": ("elementwise", "ew", "x, or slope*x for negative x, slope broadcast"),
    "Elu": ("elementwise", "ew", "x, or alpha*(exp(x)-1) for negative x"),
    "Selu": ("elementwise", "ew", "scaled ELU"),
    "Celu": ("elementwise", "ew", "continuously differentiable ELU"),
    "ThresholdedRelu": ("elementwise", "ew", "x where x > alpha, else 0"),
    "Sigmoid": ("elementwise", "ew", "1 / (1 + exp(-x))"),
    "HardSigmoid": ("elementwise", "ew", "clamp(alpha*x + beta, 0, 1)"),
    "HardSwish": ("elementwise", "ew", "x * HardSigmoid(x) with alpha 1/6, beta 0.5"),
    "Tanh": ("elementwise", "ew", "hyperbolic tangent"),
    "Softplus": ("elementwise", "ew", "log(1 + exp(x))"),
    "Softsign": ("elementwise", "ew", "x / (1 + |x|)"),
    "Clip": ("elementwise", "ew", "clamp between optional min and max"),
    "Shrink": ("elementwise", "ew", "x+bias below -lambd, x-bias above lambd, else 0"),
    "Identity": ("data movement", "ew", "returns its input unchanged"),
    "Dropout": ("elementwise", "ew", "identity at inference (optional mask output)"),
    # comparison and logic
    "Equal": ("elementwise", "ew", "a == b"),
    "Greater": ("elementwise", "ew", "a > b"),
    "GreaterOrEqual": ("elementwise", "ew", "a >= b"),
    "Less": ("elementwise", "ew", "a < b"),
    "LessOrEqual": ("elementwise", "ew", "a <= b"),
    "And": ("elementwise", "ew", "logical and"),
    "Or": ("elementwise", "ew", "logical or"),
    "Xor": ("elementwise", "ew", "logical exclusive or"),
    "Not": ("elementwise", "ew", "logical not"),
    # normalization
    "BatchNormalization": ("normalization", "ew", "per-channel (x-mean)/sqrt(var+eps)*scale+bias"),
    "InstanceNormalization": ("normalization", "opaque", "normalize each channel of each sample"),
    "LayerNormalization": ("normalization", "opaque", "normalize over the trailing axes"),
    "LpNormalization": ("normalization", "opaque", "divide by the Lp norm along an axis"),
    "LRN": ("normalization", "opaque", "local response normalization across channels"),
    "MeanVarianceNormalization": ("normalization", "opaque", "zero mean, unit variance over axes"),
    "Softmax": ("normalization", "opaque", "exp(x)/sum(exp(x)) along an axis"),
    "LogSoftmax": ("normalization", "opaque", "log of Softmax along an axis"),
    "Hardmax": ("normalization", "opaque", "one-hot of the maximum along an axis"),
    # reduction and pooling
    "ReduceSum": ("reduction", "opaque", "sum over axes"),
    "ReduceMean": ("reduction", "opaque", "mean over axes"),
    "ReduceMax": ("reduction", "opaque", "maximum over axes"),
    "ReduceMin": ("reduction", "opaque", "minimum over axes"),
    "ReduceProd": ("reduction", "opaque", "product over axes"),
    "ReduceL1": ("reduction", "opaque", "sum of absolute values over axes"),
    "ReduceL2": ("reduction", "opaque", "Euclidean norm over axes"),
    "ReduceLogSum": ("reduction", "opaque", "log of the sum over axes"),
    "ReduceLogSumExp": ("reduction", "opaque", "log of the sum of exponentials over axes"),
    "ReduceSumSquare": ("reduction", "opaque", "sum of squares over axes"),
    "ArgMax": ("reduction", "opaque", "index of the maximum along an axis"),
    "ArgMin": ("reduction", "opaque", "index of the minimum along an axis"),
    "CumSum": ("reduction", "opaque", "running sum along an axis"),
    "TopK": ("reduction", "opaque", "k largest or smallest values and their indices"),
    "NegativeLogLikelihoodLoss": ("reduction", "opaque", "-input[n, target, ...] * weight, reduced"),
    "SoftmaxCrossEntropyLoss": ("reduction", "opaque", "NLL loss of LogSoftmax over axis 1"),
    "MaxPool": ("reduction", "opaque", "maximum over sliding windows"),
    "AveragePool": ("reduction", "opaque", "average over sliding windows"),
    "LpPool": ("reduction", "opaque", "Lp norm over sliding windows"),
    "GlobalAveragePool": ("reduction", "opaque", "average over all spatial positions"),
    "GlobalMaxPool": ("reduction", "opaque", "maximum over all spatial positions"),
    "GlobalLpPool": ("reduction", "opaque", "Lp norm over all spatial positions"),
    # data movement and shapes
    "Reshape": ("data movement", "opaque", "same data, new shape (0 copies, -1 infers)"),
    "Flatten": ("data movement", "opaque", "reshape to 2-D around an axis"),
    "Squeeze": ("data movement", "opaque", "drop size-1 axes"),
    "Unsqueeze": ("data movement", "opaque", "insert size-1 axes"),
    "Transpose": ("data movement", "opaque", "permute axes"),
    "Concat": ("data movement", "opaque", "join tensors along an axis"),
    "Split": ("data movement", "opaque", "cut a tensor into parts along an axis"),
    "Slice": ("data movement", "opaque", "strided sub-range along axes"),
    "Gather": ("data movement", "opaque", "take entries along an axis by index"),
    "GatherElements": ("data movement", "opaque", "take elements by a same-rank index tensor"),
    "GatherND": ("data movement", "opaque", "take slices by N-d index tuples"),
    "ScatterElements": ("data movement", "opaque", "write elements at a same-rank index tensor"),
    "ScatterND": ("data movement", "opaque", "write slices at N-d index tuples"),
    "Expand": ("data movement", "opaque", "broadcast to a shape"),
    "Tile": ("data movement", "opaque", "repeat along each axis"),
    "Pad": ("data movement", "opaque", "pad with a constant, edge or reflection"),
    "Resize": ("data movement", "opaque", "resample with nearest, linear or cubic interpolation"),
    "Upsample": ("data movement", "opaque", "older form of Resize"),
    "DepthToSpace": ("data movement", "opaque", "move channel blocks into spatial blocks"),
    "SpaceToDepth": ("data movement", "opaque", "move spatial blocks into channels"),
    "Shape": ("data movement", "opaque", "the shape of a tensor as an i64 vector"),
    "Size": ("data movement", "opaque", "the element count of a tensor"),
    "ConstantOfShape": ("data movement", "opaque", "a tensor of a given shape filled with one value"),
    "Constant": ("data movement", "opaque", "a constant tensor held in an attribute"),
    "Range": ("data movement", "opaque", "start, start+delta, ... below limit"),
    "OneHot": ("data movement", "opaque", "one-hot encode indices"),
    "EyeLike": ("data movement", "opaque", "identity matrix shaped like the input"),
    "Trilu": ("data movement", "opaque", "upper or lower triangle of matrices"),
    "NonZero": ("data movement", "opaque", "indices of non-zero elements"),
    "Compress": ("data movement", "opaque", "select slices by a boolean mask"),
    "ReverseSequence": ("data movement", "opaque", "reverse variable-length prefixes"),
    "GridSample": ("data movement", "opaque", "sample an image at grid points (nearest, bilinear, bicubic)"),
    "MaxUnpool": ("data movement", "opaque", "scatter pooled maxima back to their indices, zeros elsewhere"),
    "HannWindow": ("data movement", "opaque", "Hann window of a given length"),
    "HammingWindow": ("data movement", "opaque", "Hamming window of a given length"),
    "BlackmanWindow": ("data movement", "opaque", "Blackman window of a given length"),
    "MelWeightMatrix": ("data movement", "opaque", "triangular mel filter bank for spectrograms"),
    # recurrent and control flow
    "LSTM": ("control flow", "opaque", "long short-term memory layer"),
    "GRU": ("control flow", "opaque", "gated recurrent unit layer"),
    "RNN": ("control flow", "opaque", "simple recurrent layer"),
    "If": ("control flow", "opaque", "run one of two subgraphs by a condition"),
    "Loop": ("control flow", "opaque", "run a subgraph repeatedly with carried state"),
    "Scan": ("control flow", "opaque", "run a subgraph over slices of its inputs"),
}

# Attributes of the opset-17 schemas that no lowering or shape rule reads, each with how
# the importer treats it. "inert": it cannot change an inference result, so any value is
# accepted. "unsupported": a value other than the schema's default is refused by name.
# Every other schema attribute must be read by Lathe's rules; the conformance test
# conformance/attribute_reads checks that against the attributes rules actually look up.
NOT_READ = {
    "BatchNormalization": {"momentum": ("inert", "only training updates the running statistics")},
    "Dropout": {"seed": ("inert", "Dropout is the identity at inference")},
    "TopK": {"sorted": ("inert", "the k values always come out sorted, which sorted = 0 allows")},
    "Constant": {"sparse_value": ("unsupported", "sparse constants"),
                 "value_string": ("unsupported", "string tensors"),
                 "value_strings": ("unsupported", "string tensors")},
}

CATEGORY = {"convolution": "Convolution", "matmul": "MatMul", "elementwise": "Elementwise",
            "normalization": "Normalization", "reduction": "Reduction",
            "data movement": "DataMovement", "control flow": "ControlFlow"}
ROLE = {"anchor": "Anchor", "ew": "Elementwise", "opaque": "Opaque"}


def attributes_def():
    print("// Schema attributes that Lathe's rules do not read, generated by tools/gen_ops_def.py")
    print("// --attributes -- edit that script, not this file.")
    print("// LATHE_OP_ATTRIBUTE(Op, attribute, Inert|Unsupported, reason)")
    for op in sorted(NOT_READ):
        schema = onnx.defs.get_schema(op, 17)
        for attr in sorted(NOT_READ[op]):
            assert attr in schema.attributes, f"{op} has no attribute {attr} at opset 17"
            kind, reason = NOT_READ[op][attr]
            print(f'LATHE_OP_ATTRIBUTE({op}, {attr}, {kind.capitalize()}, "{reason}")')


def main():
    if sys.argv[1:] == ["--attributes"]:
        attributes_def()
        return
    print("// Lathe's op table, generated by tools/gen_ops_def.py -- edit that script, not this file.")
    print("// LATHE_OP(Name, Category, FusionRole, MinInputs, MaxInputs, MinOutputs, MaxOutputs, Summary)")
    print("// Max* = -1 means variadic. Arity follows the ONNX schema at opset 17.")
    for name in sorted(OPS):
        cat, role, summary = OPS[name]
        s = onnx.defs.get_schema(name, 17)
        max_in = -1 if s.max_input >= MAXI else s.max_input
        max_out = -1 if s.max_output >= MAXI else s.max_output
        print(f'LATHE_OP({name}, {CATEGORY[cat]}, {ROLE[role]}, {s.min_input}, {max_in}, '
              f'{s.min_output}, {max_out}, "{summary}")')


if __name__ == "__main__":
    main()
