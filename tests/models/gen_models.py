#!/usr/bin/python3
"""Lathe test-model generator: builds the ONNX models the test suite and the
workbench use, with seeded random weights, from onnx.helper alone.

Requirements: Debian's python3-onnx (1.12) and python3-numpy (1.24). Run it with
/usr/bin/python3 -- a pyenv/venv `python3` earlier on PATH usually cannot see
the Debian packages.

Usage:
    /usr/bin/python3 tests/models/gen_models.py --out DIR [--seed 0] [--models LIST]
    /usr/bin/python3 tests/models/gen_models.py --list
    /usr/bin/python3 tests/models/gen_models.py --ref-input OUT.npy [--shape 1,3,224,224] [--seed 0]

LIST is a comma-separated list of catalogue names (below). Without --models every
model except the three large ones (resnet50, mobilenetv2, bert) is written;
`all` selects everything, `bad` every malformed model. A file whose bytes would
not change is left alone, so its timestamp is kept. Each file gets one output
line: status, path, size, node count (subgraph nodes included).

Weights come from numpy.random.RandomState(seed), a stream numpy keeps frozen,
so the same seed gives byte-identical files. Each model starts its own stream,
so selecting a subset never changes the other files. Every valid model passes
onnx.checker.check_model(full_check=True) and strict shape inference (with
data propagation, declared output shapes must agree with inferred ones) before
it is written.

Catalogue (float32, NCHW, batch 1, opset 13 unless noted):
  resnet50          ResNet-50 v1 in the layout of model-zoo resnet50-v1-7: bias-free
                    Conv -> BatchNormalization -> Relu, stride on the first 1x1 conv of
                    each downsampling bottleneck, residual Add -> Relu. `data`
                    [1,3,224,224] -> `resnetv17_dense0_fwd` [1,1000]. ~25.6 M params.
  mobilenetv2       MobileNetV2 1.0/224, torchvision layout, Clip(0,6) with min/max
                    initializers, depthwise Conv. `input` -> `output` [1,1000].
  bert              BERT-mini encoder (4 layers, hidden 256, 4 heads, FFN 1024, vocab
                    30522, seq 128) as PyTorch exports it at opset 13: decomposed
                    LayerNorm, Shape/Gather/Unsqueeze/Concat/Reshape head splitting,
                    additive mask, Erf GELU, Gather+Gemm+Tanh pooler. int64
                    `input_ids`, `attention_mask`, `token_type_ids` [1,128] ->
                    `last_hidden_state` [1,128,256], `pooler_output` [1,256].
  sample_cnn        the workbench's sample: small residual CNN, `image` [1,3,64,64] ->
                    `logits` [1,10]; contains an Identity, a Dropout, a duplicated Relu
                    pair and a shape-computing flatten chain for the graph passes.
  kws_cnn           keyword spotting for microcontrollers (DS-CNN style, ~27 k params):
                    `mfcc` [1,1,49,10] -> Conv/depthwise/pointwise with BatchNorm and
                    Relu -> GlobalAveragePool -> Gemm/Relu/Gemm -> Softmax -> `scores` [1,12].
  kws_int8          kws_cnn's layers in int8 (QLinearConv, QLinearMatMul), calibrated scales
  conv_bn_relu      `x` [1,3,8,8] -> Conv(4, 3x3, bias) -> BatchNormalization -> Relu -> `y`.
  gemm_bn           `x` [2,16] -> Gemm(32) -> BatchNormalization on [N,C] -> `y`.
  shape_chain       `x` [2,3,4,5] -> Shape/Gather/Unsqueeze/Concat([-1]) -> Reshape -> Relu
                    -> `y` [2,60].
  residual_add      `x` [1,8,16,16] -> Conv -> Relu -> Conv -> Add(x) -> Relu -> `y`.
  old_opset7        small Conv/Relu/Reshape/Gemm/Add/Softmax/Unsqueeze model at opset 7
                    (IR 3), for version conversion.
  symbolic_batch    conv_bn_relu with batch dimension "N" on input and output.
  rare_attributes   LpPool (p=3), GlobalLpPool (p=1), LpNormalization (axis 2, p=1),
                    Constant with value_floats and value_ints.
  if_subgraph       If on a bool scalar `cond`; the then-branch reads an outer-scope value.
  loop_subgraph     Loop with a constant trip count, a loop-carried value and a scan output.
  external_data     external_data/model.onnx + external_data/weights.bin: Conv whose
                    weight and bias live in weights.bin (offset/length set).
  bad/escape_abs    external_data with location `/etc/passwd`      } importer must
  bad/escape_dotdot external_data with location `../weights.bin`   } refuse these
  bad/truncated     first 60 % of the bytes of conv_bn_relu.onnx
  bad/garbage       4096 seeded random bytes
  bad/unknown_op    a node `FancyNewOp` in the default domain
  bad/absurd_shape  input [1, 10^12, 10^12] feeding a Relu
  bad/missing_input a node consuming a value nobody produces
  bad/bad_raw_size  initializer of dims [1000,1000] float with 16 bytes of raw_data
  bad/empty         a zero-byte file
"""
import argparse
import io
import math
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

DEFAULT_OPSET = 13
# IR version that goes with each opset we emit (older runtimes reject newer IR).
IR_FOR_OPSET = {7: 3, 13: 7}
PRODUCER = "lathe-gen_models"


# --------------------------------------------------------------------------- builder

class GraphBuilder:
    """Accumulates nodes and initializers for one graph, with its own RNG."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes = []
        self.initializers = []
        self._taken = set()

    def _fresh(self, name):
        """Return `name`, or `name_<k>` with the smallest k that is still free."""
        candidate, k = name, 0
        while candidate in self._taken:
            k += 1
            candidate = f"{name}_{k}"
        self._taken.add(candidate)
        return candidate

    # -- initializers
    def tensor(self, name, array):
        name = self._fresh(name)
        self.initializers.append(numpy_helper.from_array(np.array(array, order="C"), name))
        return name

    def f32(self, name, values):
        return self.tensor(name, np.array(values, dtype=np.float32))

    def i64(self, name, values):
        return self.tensor(name, np.array(values, dtype=np.int64))

    def he_normal(self, name, shape, fan_in):
        """Kaiming-normal weight (std = sqrt(2 / fan_in)) for layers followed by ReLU."""
        w = self.rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)
        return self.tensor(name, w.astype(np.float32))

    def normal(self, name, shape, std):
        return self.tensor(name, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def uniform(self, name, shape, low, high):
        return self.tensor(name, self.rng.uniform(low, high, shape).astype(np.float32))

    # -- nodes
    def op(self, op_type, inputs, name, outputs=None, **attrs):
        """Append a node. Its single output is named after the node unless
        `outputs` is given; returns the output name (or the list of them)."""
        name = self._fresh(name)
        if outputs is None:
            outputs = [name]
        else:
            for out in outputs:
                self._taken.add(out)
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs), name=name, **attrs))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    # -- common layers
    def conv(self, x, cin, cout, k, name, weight_name, stride=1, pad=0, group=1, bias_name=None, out=None):
        w = self.he_normal(weight_name, (cout, cin // group, k, k), (cin // group) * k * k)
        inputs = [x, w]
        if bias_name:
            inputs.append(self.uniform(bias_name, (cout,), -0.1, 0.1))
        return self.op("Conv", inputs, name, outputs=[out] if out else None, kernel_shape=[k, k],
                       strides=[stride, stride], pads=[pad] * 4, dilations=[1, 1], group=group)

    def batchnorm(self, x, c, name, param_prefix, gamma_scale=1.0, gamma_range=(0.6, 1.0), out=None):
        """Inference BatchNormalization with plausible running statistics. The
        running variance is not calibrated, so gamma sets the gain per layer:
        `gamma_range` is tuned per network and `gamma_scale` < 1 damps the last
        BN of a residual branch, keeping activations O(1) through deep stacks."""
        gamma = (self.rng.uniform(*gamma_range, c) * gamma_scale).astype(np.float32)
        beta = self.rng.normal(0.0, 0.05, c).astype(np.float32)
        mean = self.rng.normal(0.0, 0.05, c).astype(np.float32)
        var = self.rng.uniform(0.8, 1.25, c).astype(np.float32)
        params = [self.tensor(f"{param_prefix}{suffix}", arr) for suffix, arr in
                  (("gamma", gamma), ("beta", beta), ("running_mean", mean), ("running_var", var))]
        return self.op("BatchNormalization", [x] + params, name, outputs=[out] if out else None,
                       epsilon=1e-5, momentum=0.9)

    def dense(self, x, cin, cout, name, weight_name, bias_name, out=None):
        """Gemm with a [cout, cin] weight (transB=1), as frameworks export Linear."""
        w = self.normal(weight_name, (cout, cin), math.sqrt(1.0 / cin))
        b = self.uniform(bias_name, (cout,), -0.01, 0.01)
        return self.op("Gemm", [x, w, b], name, outputs=[out] if out else None,
                       alpha=1.0, beta=1.0, transA=0, transB=1)

    def model(self, graph_name, inputs, outputs, opset=DEFAULT_OPSET):
        inputs = list(inputs)
        if IR_FOR_OPSET[opset] < 4:
            # before IR 4 every initializer also had to be listed as a graph input
            inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                       for t in self.initializers]
        graph = helper.make_graph(self.nodes, graph_name, inputs, outputs, initializer=self.initializers)
        return finish_model(graph, opset)


def finish_model(graph, opset=DEFAULT_OPSET):
    model = helper.make_model(graph, producer_name=PRODUCER, producer_version="1",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_FOR_OPSET[opset]
    return model


def tensor_info(name, elem_type, dims):
    return helper.make_tensor_value_info(name, elem_type, dims)


def f32_info(name, dims):
    return tensor_info(name, TensorProto.FLOAT, dims)


# --------------------------------------------------------------------------- large models

def resnet50(seed):
    """ResNet-50 v1 with MXNet-gluon names (resnetv17_*), as in resnet50-v1-7."""
    g = GraphBuilder(seed)
    counters = {}

    def layer_name(scope, kind):
        """Gluon numbers layers per scope and kind: stage1_conv0, stage1_conv1, ..."""
        key = (scope, kind)
        idx = counters.get(key, 0)
        counters[key] = idx + 1
        return f"resnetv17_{scope + '_' if scope else ''}{kind}{idx}"

    def conv_bn(x, scope, cin, cout, k, stride, pad, relu=True, gamma_scale=1.0):
        conv = layer_name(scope, "conv")
        y = g.conv(x, cin, cout, k, conv + "_fwd", conv + "_weight", stride=stride, pad=pad)
        bn = layer_name(scope, "batchnorm")
        y = g.batchnorm(y, cout, bn + "_fwd", bn + "_", gamma_scale=gamma_scale)
        if relu:
            y = g.op("Relu", [y], layer_name(scope, "relu") + "_fwd")
        return y

    y = conv_bn("data", "", 3, 64, 7, 2, 3)
    y = g.op("MaxPool", [y], layer_name("", "pool") + "_fwd", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    cin = 64
    stages = [(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)]
    for stage, (blocks, width, first_stride) in enumerate(stages, start=1):
        scope = f"stage{stage}"
        cout = 4 * width
        for block in range(blocks):
            stride = first_stride if block == 0 else 1
            h = conv_bn(y, scope, cin, width, 1, stride, 0)          # v1: the 1x1 conv strides
            h = conv_bn(h, scope, width, width, 3, 1, 1)
            h = conv_bn(h, scope, width, cout, 1, 1, 0, relu=False, gamma_scale=0.3)
            shortcut = y
            if block == 0:
                shortcut = conv_bn(y, scope, cin, cout, 1, stride, 0, relu=False)
            s = g.op("Add", [h, shortcut], f"resnetv17_{scope}__plus{block}")
            y = g.op("Relu", [s], f"resnetv17_{scope}_activation{block}")
            cin = cout

    y = g.op("GlobalAveragePool", [y], layer_name("", "pool") + "_fwd")
    y = g.op("Flatten", [y], layer_name("", "flatten") + "_fwd", axis=1)
    # the Gemm node's name doubles as its output name: resnetv17_dense0_fwd
    g.dense(y, 2048, 1000, "resnetv17_dense0_fwd", "resnetv17_dense0_weight", "resnetv17_dense0_bias")
    return g.model("resnet50_v1",
                   [f32_info("data", [1, 3, 224, 224])],
                   [f32_info("resnetv17_dense0_fwd", [1, 1000])])


def mobilenetv2(seed):
    """MobileNetV2 1.0/224 with torchvision parameter names (features.N...)."""
    g = GraphBuilder(seed)
    relu6_min = g.f32("relu6_min", 0.0)
    relu6_max = g.f32("relu6_max", 6.0)

    def conv_bn(x, conv_mod, bn_mod, cin, cout, k, stride, groups=1, relu6=True, gamma_scale=1.0):
        """Conv + BN (+ ReLU6); conv_mod / bn_mod are the torchvision module paths."""
        y = g.conv(x, cin, cout, k, f"/{conv_mod}/Conv", conv_mod + ".weight", stride=stride,
                   pad=k // 2, group=groups)
        y = g.batchnorm(y, cout, f"/{bn_mod}/BatchNormalization", bn_mod + ".", gamma_scale=gamma_scale,
                        gamma_range=(0.75, 1.1))  # measured: logits stay within a few units
        if relu6:
            y = g.op("Clip", [y, relu6_min, relu6_max], f"/{conv_mod}/Clip")
        return y

    def conv_bn_relu6(x, module, cin, cout, k, stride, groups=1):
        """torchvision Conv2dNormActivation: `module.0` is the conv, `module.1` the BN."""
        return conv_bn(x, module + ".0", module + ".1", cin, cout, k, stride, groups)

    y = conv_bn_relu6("input", "features.0", 3, 32, 3, 2)
    cin, index = 32, 1
    # (expansion t, channels c, repeats n, first stride s) as in the paper / torchvision
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            residual = stride == 1 and cin == c
            block = f"features.{index}.conv"
            h, part = y, 0
            if t != 1:
                h = conv_bn_relu6(h, f"{block}.{part}", cin, hidden, 1, 1)
                part += 1
            h = conv_bn_relu6(h, f"{block}.{part}", hidden, hidden, 3, stride, groups=hidden)
            h = conv_bn(h, f"{block}.{part + 1}", f"{block}.{part + 2}", hidden, c, 1, 1,
                        relu6=False, gamma_scale=0.3 if residual else 1.0)
            if residual:
                h = g.op("Add", [y, h], f"/features.{index}/Add")
            y, cin, index = h, c, index + 1
    y = conv_bn_relu6(y, f"features.{index}", cin, 1280, 1, 1)
    y = g.op("GlobalAveragePool", [y], "/GlobalAveragePool")
    y = g.op("Flatten", [y], "/Flatten", axis=1)
    g.dense(y, 1280, 1000, "/classifier.1/Gemm", "classifier.1.weight", "classifier.1.bias", out="output")
    return g.model("mobilenetv2_1.0_224",
                   [f32_info("input", [1, 3, 224, 224])],
                   [f32_info("output", [1, 1000])])


def bert(seed, layers=4, hidden=256, heads=4, ffn=1024, vocab=30522, seq=128, max_positions=512):
    """BERT encoder in the shape of a PyTorch (HF transformers) opset-13 export."""
    g = GraphBuilder(seed)
    head_dim = hidden // heads
    init_std = 0.02

    # scalar constants, shared the way the exporter shares identical constants
    c_two = g.f32("onnx::Pow_two", 2.0)
    c_eps = g.f32("onnx::Add_eps", 1e-12)
    c_one = g.f32("onnx::Sub_one", 1.0)
    c_half = g.f32("onnx::Mul_half", 0.5)
    c_sqrt2 = g.f32("onnx::Div_sqrt2", math.sqrt(2.0))
    c_scale = g.f32("onnx::Div_scale", math.sqrt(head_dim))
    c_neg = g.f32("onnx::Mul_neg", -10000.0)
    c_idx0 = g.i64("onnx::Gather_idx0", 0)
    c_idx1 = g.i64("onnx::Gather_idx1", 1)
    c_axes0 = g.i64("onnx::Unsqueeze_axes0", [0])
    c_heads = g.i64("onnx::Concat_heads", [heads])
    c_head_dim = g.i64("onnx::Concat_head_dim", [head_dim])
    c_hidden = g.i64("onnx::Concat_hidden", [hidden])

    def layer_norm(x, module, scope, out=None):
        weight = g.tensor(module + ".weight", (1.0 + g.rng.standard_normal(hidden) * 0.05).astype(np.float32))
        bias = g.normal(module + ".bias", (hidden,), 0.01)
        mean = g.op("ReduceMean", [x], f"{scope}/ReduceMean", axes=[-1], keepdims=1)
        centered = g.op("Sub", [x, mean], f"{scope}/Sub")
        square = g.op("Pow", [centered, c_two], f"{scope}/Pow")
        var = g.op("ReduceMean", [square], f"{scope}/ReduceMean_1", axes=[-1], keepdims=1)
        var_eps = g.op("Add", [var, c_eps], f"{scope}/Add")
        std = g.op("Sqrt", [var_eps], f"{scope}/Sqrt")
        normed = g.op("Div", [centered, std], f"{scope}/Div")
        scaled = g.op("Mul", [normed, weight], f"{scope}/Mul")
        return g.op("Add", [scaled, bias], f"{scope}/Add_1", outputs=[out] if out else None)

    def linear(x, din, dout, module, scope):
        # PyTorch stores Linear as [out, in] and the exporter emits the transposed copy for MatMul.
        w = g.normal(f"onnx::MatMul_{module}", (din, dout), init_std)
        b = g.normal(module + ".bias", (dout,), 0.01)
        y = g.op("MatMul", [x, w], f"{scope}/MatMul")
        return g.op("Add", [b, y], f"{scope}/Add")

    def dynamic_shape(x, scope, tail):
        """Shape(x)[0], Shape(x)[1] re-assembled with constant `tail` dims, as the
        exporter traces `x.size()[:-1] + (...)`."""
        shape = g.op("Shape", [x], f"{scope}/Shape")
        batch = g.op("Gather", [shape, c_idx0], f"{scope}/Gather", axis=0)
        shape_1 = g.op("Shape", [x], f"{scope}/Shape_1")
        length = g.op("Gather", [shape_1, c_idx1], f"{scope}/Gather_1", axis=0)
        batch = g.op("Unsqueeze", [batch, c_axes0], f"{scope}/Unsqueeze")
        length = g.op("Unsqueeze", [length, c_axes0], f"{scope}/Unsqueeze_1")
        return g.op("Concat", [batch, length] + tail, f"{scope}/Concat", axis=0)

    def split_heads(x, scope, perm):
        shape = dynamic_shape(x, scope, [c_heads, c_head_dim])
        y = g.op("Reshape", [x, shape], f"{scope}/Reshape")
        return g.op("Transpose", [y], f"{scope}/Transpose", perm=perm)

    # embeddings
    word = g.normal("embeddings.word_embeddings.weight", (vocab, hidden), init_std)
    position = g.normal("embeddings.position_embeddings.weight", (max_positions, hidden), init_std)
    token_type = g.normal("embeddings.token_type_embeddings.weight", (2, hidden), init_std)
    position_ids = g.i64("embeddings.position_ids", np.arange(seq).reshape(1, seq))
    e_word = g.op("Gather", [word, "input_ids"], "/embeddings/word_embeddings/Gather", axis=0)
    e_type = g.op("Gather", [token_type, "token_type_ids"], "/embeddings/token_type_embeddings/Gather",
                  axis=0)
    e = g.op("Add", [e_word, e_type], "/embeddings/Add")
    e_pos = g.op("Gather", [position, position_ids], "/embeddings/position_embeddings/Gather", axis=0)
    e = g.op("Add", [e, e_pos], "/embeddings/Add_1")
    x = layer_norm(e, "embeddings.LayerNorm", "/embeddings/LayerNorm")

    # extended attention mask: (1 - mask[:, None, None, :]) * -10000
    mask_axes = g.i64("onnx::Unsqueeze_mask_axes", [1, 2])
    m = g.op("Unsqueeze", ["attention_mask", mask_axes], "/Unsqueeze")
    m = g.op("Cast", [m], "/Cast", to=TensorProto.FLOAT)
    m = g.op("Sub", [c_one, m], "/Sub")
    mask = g.op("Mul", [m, c_neg], "/Mul")

    for layer in range(layers):
        mod = f"encoder.layer.{layer}"
        sc = f"/encoder/layer.{layer}"
        att = f"{sc}/attention/self"
        q = linear(x, hidden, hidden, f"{mod}.attention.self.query", f"{att}/query")
        k = linear(x, hidden, hidden, f"{mod}.attention.self.key", f"{att}/key")
        v = linear(x, hidden, hidden, f"{mod}.attention.self.value", f"{att}/value")
        k = split_heads(k, f"{att}/key_heads", [0, 2, 3, 1])       # pre-transposed for Q.K^T
        v = split_heads(v, f"{att}/value_heads", [0, 2, 1, 3])
        q = split_heads(q, f"{att}/query_heads", [0, 2, 1, 3])
        scores = g.op("MatMul", [q, k], f"{att}/MatMul")
        scores = g.op("Div", [scores, c_scale], f"{att}/Div")
        scores = g.op("Add", [scores, mask], f"{att}/Add")
        probs = g.op("Softmax", [scores], f"{att}/Softmax", axis=-1)
        ctx = g.op("MatMul", [probs, v], f"{att}/MatMul_1")
        ctx = g.op("Transpose", [ctx], f"{att}/Transpose_3", perm=[0, 2, 1, 3])
        merged = dynamic_shape(ctx, f"{att}/merge_heads", [c_hidden])
        ctx = g.op("Reshape", [ctx, merged], f"{att}/Reshape_3")

        out = linear(ctx, hidden, hidden, f"{mod}.attention.output.dense", f"{sc}/attention/output/dense")
        out = g.op("Add", [out, x], f"{sc}/attention/output/Add")
        x = layer_norm(out, f"{mod}.attention.output.LayerNorm", f"{sc}/attention/output/LayerNorm")

        h = linear(x, hidden, ffn, f"{mod}.intermediate.dense", f"{sc}/intermediate/dense")
        # exact GELU as torch exports it: (x * (1 + erf(x / sqrt(2)))) * 0.5
        act = f"{sc}/intermediate/intermediate_act_fn"
        gelu = g.op("Div", [h, c_sqrt2], f"{act}/Div")
        gelu = g.op("Erf", [gelu], f"{act}/Erf")
        gelu = g.op("Add", [gelu, c_one], f"{act}/Add")
        gelu = g.op("Mul", [h, gelu], f"{act}/Mul")
        gelu = g.op("Mul", [gelu, c_half], f"{act}/Mul_1")
        out = linear(gelu, ffn, hidden, f"{mod}.output.dense", f"{sc}/output/dense")
        out = g.op("Add", [out, x], f"{sc}/output/Add")
        x = layer_norm(out, f"{mod}.output.LayerNorm", f"{sc}/output/LayerNorm",
                       out="last_hidden_state" if layer == layers - 1 else None)

    first = g.op("Gather", [x, c_idx0], "/pooler/Gather", axis=1)
    pooled = g.dense(first, hidden, hidden, "/pooler/dense/Gemm", "pooler.dense.weight", "pooler.dense.bias")
    g.op("Tanh", [pooled], "/pooler/activation/Tanh", outputs=["pooler_output"])

    int_inputs = [tensor_info(n, TensorProto.INT64, [1, seq])
                  for n in ("input_ids", "attention_mask", "token_type_ids")]
    return g.model(f"bert_L{layers}_H{hidden}_A{heads}_S{seq}", int_inputs,
                   [f32_info("last_hidden_state", [1, seq, hidden]), f32_info("pooler_output", [1, hidden])])


# --------------------------------------------------------------------------- small models

def sample_cnn(seed):
    """Small residual CNN with some redundancy for the graph passes to clean up."""
    g = GraphBuilder(seed)

    def conv_bn(x, scope, cin, cout, k, stride=1, relu=True, gamma_scale=1.0):
        module = scope[1:].replace("/", ".")          # "/layer1/conv1" -> "layer1.conv1"
        y = g.conv(x, cin, cout, k, f"{scope}/conv/Conv", f"{module}.conv.weight", stride=stride, pad=k // 2)
        y = g.batchnorm(y, cout, f"{scope}/bn/BatchNormalization", f"{module}.bn.", gamma_scale=gamma_scale)
        return g.op("Relu", [y], f"{scope}/relu/Relu") if relu else y

    def basic_block(x, scope, cin, cout, stride):
        h = conv_bn(x, f"{scope}/conv1", cin, cout, 3, stride)
        h = conv_bn(h, f"{scope}/conv2", cout, cout, 3, relu=False, gamma_scale=0.5)
        shortcut = x
        if stride != 1 or cin != cout:
            shortcut = conv_bn(x, f"{scope}/downsample", cin, cout, 1, stride, relu=False)
        s = g.op("Add", [h, shortcut], f"{scope}/Add")
        return g.op("Relu", [s], f"{scope}/Relu")

    y = conv_bn("image", "/stem", 3, 16, 3)                                     # 16 x 64 x 64
    y = g.op("Identity", [y], "/stem/Identity")                                 # no-op
    y = g.op("MaxPool", [y], "/stem/MaxPool", kernel_shape=[2, 2], strides=[2, 2])   # 16 x 32 x 32
    y = basic_block(y, "/layer1", 16, 16, 1)
    y = basic_block(y, "/layer2", 16, 32, 2)                                    # 32 x 16 x 16

    # depthwise-separable tail with ReLU6
    y = g.conv(y, 32, 32, 3, "/dw/Conv", "dw.weight", pad=1, group=32, bias_name="dw.bias")
    y = g.op("Clip", [y, g.f32("relu6_min", 0.0), g.f32("relu6_max", 6.0)], "/dw/Clip")
    y = g.conv(y, 32, 64, 1, "/pw/Conv", "pw.weight", bias_name="pw.bias")     # 64 x 16 x 16

    # the same Relu twice on the same input, both results used (a CSE target)
    a = g.op("Relu", [y], "/head/Relu")
    b = g.op("Relu", [y], "/head/Relu")
    y = g.op("Add", [a, b], "/head/Add")
    half = g.f32("head.half", 0.5)
    y = g.op("Mul", [y, half], "/head/Mul")

    y = g.op("GlobalAveragePool", [y], "/head/GlobalAveragePool")               # 64 x 1 x 1
    y = g.op("Dropout", [y], "/head/Dropout")                                   # inference no-op
    # x.view(x.size(0), -1) as traced by an exporter
    shape = g.op("Shape", [y], "/head/Shape")
    batch = g.op("Gather", [shape, g.i64("head.idx0", 0)], "/head/Gather", axis=0)
    batch = g.op("Unsqueeze", [batch, g.i64("head.axes0", [0])], "/head/Unsqueeze")
    target = g.op("Concat", [batch, g.i64("head.minus1", [-1])], "/head/Concat", axis=0)
    y = g.op("Reshape", [y, target], "/head/Reshape")
    g.dense(y, 64, 10, "/fc/Gemm", "fc.weight", "fc.bias", out="logits")
    return g.model("lathe_sample_cnn", [f32_info("image", [1, 3, 64, 64])], [f32_info("logits", [1, 10])])


def kws_cnn(seed):
    """Keyword spotting sized for a Cortex-M: 49 frames x 10 MFCCs in, 12 classes out, a
    small arena (the largest activation is 32 x 13 x 3 floats) so that it runs within a
    Cortex-M0's 16 KB of RAM: no padded 3x3 Conv late in the net, whose input copy would
    need 9 KB of scratch; most parameters are in the fully connected head."""
    g = GraphBuilder(seed)

    def conv_bn_relu(x, scope, cin, cout, k, stride=1, group=1):
        y = g.conv(x, cin, cout, k, f"{scope}/Conv", f"{scope}.weight", stride=stride,
                   pad=k // 2, group=group)
        y = g.batchnorm(y, cout, f"{scope}/BatchNormalization", f"{scope}.bn.")
        return g.op("Relu", [y], f"{scope}/Relu")

    y = conv_bn_relu("mfcc", "conv1", 1, 8, 3, stride=2)              # 8 x 25 x 5
    y = conv_bn_relu(y, "dw1", 8, 8, 3, stride=2, group=8)           # 8 x 13 x 3
    y = conv_bn_relu(y, "pw1", 8, 32, 1)                              # 32 x 13 x 3
    y = conv_bn_relu(y, "dw2", 32, 32, 3, stride=2, group=32)        # 32 x 7 x 2
    y = conv_bn_relu(y, "pw2", 32, 64, 1)                             # 64 x 7 x 2
    y = conv_bn_relu(y, "pw3", 64, 64, 1)                             # 64 x 7 x 2
    y = g.op("GlobalAveragePool", [y], "pool/GlobalAveragePool")
    y = g.op("Flatten", [y], "pool/Flatten", axis=1)
    y = g.dense(y, 64, 256, "fc1/Gemm", "fc1.weight", "fc1.bias")
    y = g.op("Relu", [y], "fc1/Relu")
    y = g.dense(y, 256, 12, "fc2/Gemm", "fc2.weight", "fc2.bias")
    g.op("Softmax", [y], "fc/Softmax", outputs=["scores"], axis=1)
    return g.model("lathe_kws_cnn", [f32_info("mfcc", [1, 1, 49, 10])], [f32_info("scores", [1, 12])])


def _int_conv(xq, x_zero, wq, bias, stride, pad, group):
    """QLinearConv's int32 accumulator, in numpy: sum over the window of (x - x_zero) * w,
    plus the int32 bias. Padding holds the zero point, i.e. contributes 0."""
    x = np.pad(xq.astype(np.int64) - x_zero, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    m_out, cin_g, k, _ = wq.shape
    n, _, h, w = x.shape
    ho, wo = (h - k) // stride + 1, (w - k) // stride + 1
    acc = np.zeros((n, m_out, ho, wo), np.int64)
    per_group = m_out // group
    for m in range(m_out):
        g = m // per_group
        xs = x[:, g * cin_g:(g + 1) * cin_g]
        for i in range(k):
            for j in range(k):
                window = xs[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
                acc[:, m] += (window * wq[m, :, i, j].astype(np.int64)[None, :, None, None]).sum(1)
    return acc + bias.astype(np.int64)[None, :, None, None]


def kws_int8(seed):
    """kws_cnn's layers quantized to int8 in ONNX's operator form (QLinearConv, QLinearMatMul,
    QuantizeLinear/DequantizeLinear around the float pooling, biases and softmax): weights int8
    per tensor, activations int8 with the ReLU folded into each conv's output range (zero point
    -128). The scales are calibrated here, by running the integer network in numpy on random
    inputs like the tests' (uniform in [-1, 1)), so that the activations use their range without
    saturating. For the Cortex-M0, which has no FPU: the integer MACs need none."""
    g = GraphBuilder(seed)
    rng = np.random.RandomState(seed + 1)
    calib = rng.uniform(-1, 1, (8, 1, 49, 10)).astype(np.float32)
    in_scale = 1.0 / 127
    xq = np.clip(np.rint(calib / in_scale), -128, 127).astype(np.int64)
    x_zero = 0
    s_x = in_scale
    cur = g.op("QuantizeLinear", ["mfcc", g.f32("mfcc.scale", in_scale),
                                  g.tensor("mfcc.zero_point", np.array(0, np.int8))], "quant/in")

    def qconv(name, cin, cout, k, stride=1, group=1):
        nonlocal cur, xq, x_zero, s_x
        wq = rng.randint(-127, 128, (cout, cin // group, k, k)).astype(np.int8)
        acc = _int_conv(xq, x_zero, wq, np.zeros(cout, np.int64), stride, k // 2, group)
        w_scale = 1.0 / (s_x * max(float(acc.std()), 1.0))  # real outputs of about unit size
        bias = np.rint(rng.uniform(-0.3, 0.3, cout) * acc.std()).astype(np.int32)
        acc = acc + bias.astype(np.int64)[None, :, None, None]
        # ReLU in the output range: zero point -128, the 99.9th percentile of the positive
        # part at the top.
        top = max(float(np.percentile(np.maximum(acc, 0), 99.9)), 1.0)
        s_y = s_x * w_scale * top / 255.0
        y_zero = -128
        yq = np.clip(np.rint(acc * (s_x * w_scale / s_y)) + y_zero, -128, 127).astype(np.int64)
        cur = g.op("QLinearConv",
                   [cur, g.f32(f"{name}.x_scale", s_x), g.tensor(f"{name}.x_zero_point", np.array(x_zero, np.int8)),
                    g.tensor(f"{name}.weight", wq), g.f32(f"{name}.w_scale", w_scale),
                    g.tensor(f"{name}.w_zero_point", np.array(0, np.int8)),
                    g.f32(f"{name}.y_scale", s_y), g.tensor(f"{name}.y_zero_point", np.array(y_zero, np.int8)),
                    g.tensor(f"{name}.bias", bias)],
                   f"{name}/QLinearConv", kernel_shape=[k, k], strides=[stride, stride],
                   pads=[k // 2] * 4, group=group)
        xq, x_zero, s_x = yq, y_zero, s_y

    qconv("conv1", 1, 8, 3, stride=2)
    qconv("dw1", 8, 8, 3, stride=2, group=8)
    qconv("pw1", 8, 32, 1)
    qconv("dw2", 32, 32, 3, stride=2, group=32)
    qconv("pw2", 32, 64, 1)
    qconv("pw3", 64, 64, 1)
    y = g.op("DequantizeLinear", [cur, g.f32("pw3.out_scale", s_x),
                                  g.tensor("pw3.out_zero_point", np.array(x_zero, np.int8))], "pool/dequant")
    y = g.op("GlobalAveragePool", [y], "pool/GlobalAveragePool")
    y = g.op("Flatten", [y], "pool/Flatten", axis=1)
    h = ((xq - x_zero) * s_x).mean(axis=(2, 3))  # the pooled features, for calibration

    def qdense(x, h, name, cin, cout, spread):
        """QLinearMatMul (int8 in and out, zero point -128 for the non-negative input), then
        the float bias; returns the output name and its calibration values, whose standard
        deviation is about `spread`."""
        h_scale = max(float(np.percentile(h, 99.9)), 1e-6) / 255.0
        hq = np.clip(np.rint(h / h_scale) - 128, -128, 127).astype(np.int64)
        wq = rng.randint(-127, 128, (cin, cout)).astype(np.int8)
        acc = (hq + 128) @ wq.astype(np.int64)
        w_scale = spread / (h_scale * max(float(acc.std()), 1.0))  # outputs' spread
        s_y = h_scale * w_scale * max(float(np.percentile(np.abs(acc), 99.9)), 1.0) / 127.0
        yq = np.clip(np.rint(acc * (h_scale * w_scale / s_y)), -128, 127)
        xq_name = g.op("QuantizeLinear", [x, g.f32(f"{name}.in_scale", h_scale),
                                          g.tensor(f"{name}.in_zero_point", np.array(-128, np.int8))],
                       f"{name}/quant")
        zero = g.tensor(f"{name}.zero_point", np.array(0, np.int8))
        out = g.op("QLinearMatMul",
                   [xq_name, f"{name}.in_scale", f"{name}.in_zero_point", g.tensor(f"{name}.weight", wq),
                    g.f32(f"{name}.w_scale", w_scale), zero, g.f32(f"{name}.y_scale", s_y), zero],
                   f"{name}/QLinearMatMul")
        out = g.op("DequantizeLinear", [out, f"{name}.y_scale", zero], f"{name}/dequant")
        value = yq * s_y
        bias = (rng.uniform(-0.3, 0.3, cout) * value.std()).astype(np.float32)
        out = g.op("Add", [out, g.tensor(f"{name}.bias", bias)], f"{name}/Add")
        return out, value + bias

    y, h = qdense(y, h, "fc1", 64, 256, 1.0)
    y = g.op("Relu", [y], "fc1/Relu")
    y, _ = qdense(y, np.maximum(h, 0), "fc2", 256, 12, 1.5)  # logits: a softmax not saturated
    g.op("Softmax", [y], "fc/Softmax", outputs=["scores"], axis=1)
    return g.model("lathe_kws_int8", [f32_info("mfcc", [1, 1, 49, 10])], [f32_info("scores", [1, 12])])


def conv_zoo(seed):
    """Conv geometries for the register-tiled schedule: strides, dilations, asymmetric
    pads, 1-D and 3-D, channel counts that do and do not fill a tile."""
    g = GraphBuilder(seed)

    def conv(x, cin, cout, kernel, name, **attrs):
        w = g.uniform(f"{name}.weight", (cout, cin) + tuple(kernel), -0.3, 0.3)
        b = g.uniform(f"{name}.bias", (cout,), -0.1, 0.1)
        return g.op("Conv", [x, w, b], name, **attrs)

    y = conv("x", 3, 16, (7, 7), "stem", strides=[2, 2], pads=[3, 3, 3, 3])      # 16 x 20 x 20
    y = g.op("Relu", [y], "stem_relu")
    y = conv(y, 16, 8, (3, 3), "s2", strides=[2, 2], pads=[1, 0, 1, 2])          # asymmetric pads
    y = conv(y, 8, 12, (3, 3), "dil", dilations=[2, 2], pads=[2, 2, 2, 2])       # 12 channels
    y = conv(y, 1, 12, (3, 3), "dw", group=12, pads=[1, 1, 1, 1])               # depthwise
    y = conv(y, 4, 12, (3, 3), "grouped", group=3, pads=[1, 1, 1, 1])           # 3 groups of 4
    y = conv(y, 12, 24, (5, 3), "s3", strides=[3, 1], pads=[2, 1, 2, 1])
    y = conv(y, 24, 6, (1, 1), "narrow")                                         # M = 6: other schedule
    g.op("Relu", [y], "head_relu", outputs=["y2d"])
    z = conv("seq", 4, 8, (5,), "c1d", strides=[2], pads=[2, 1], dilations=[1])  # 1-D
    z = conv(z, 1, 8, (3,), "dw1d", group=8, strides=[2], pads=[1, 1])          # strided depthwise
    g.op("Relu", [z], "c1d_relu", outputs=["y1d"])
    z = conv("seq", 4, 6, (3,), "c1d_row", pads=[1, 1])                          # 1-D traced
    g.op("Relu", [z], "c1d_row_relu", outputs=["y1drow"])
    v = conv("vol", 2, 8, (3, 3, 3), "c3d", strides=[2, 1, 2], pads=[1, 1, 1, 1, 1, 1])  # 3-D
    g.op("Relu", [v], "c3d_relu", outputs=["y3d"])
    # Depthwise rows of vectors (odd widths, strides, dilations, asymmetric pads) and epilogues
    # applied to registers: broadcast operands, one that varies along W only, Sigmoid.
    d = conv("img", 1, 8, (3, 3), "dw_s2", group=8, strides=[2, 2], pads=[1, 1, 1, 1])  # 12 x 19
    d = g.op("Clip", [d, g.f32("dw_min", 0.0), g.f32("dw_max", 6.0)], "dw_s2_clip")
    d = conv(d, 1, 8, (3, 3), "dw_dil", group=8, dilations=[2, 2], pads=[2, 2, 2, 2])
    d = g.op("Add", [d, g.uniform("dw_row", (1, 1, 1, 19), -0.5, 0.5)], "dw_dil_add")
    d = conv(d, 1, 8, (5, 5), "dw_5x5", group=8, pads=[2, 1, 2, 3])
    d = g.op("Sigmoid", [d], "dw_5x5_sigmoid")
    d = conv(d, 8, 16, (1, 1), "pw")                                            # 228 positions
    d = g.op("Add", [d, g.uniform("pw_channel", (16, 1, 1), -0.5, 0.5)], "pw_add")
    d = g.op("Relu", [d], "pw_relu")
    d = conv(d, 16, 8, (1, 1), "pw_row")
    d = g.op("Mul", [d, g.uniform("pw_row_scale", (1, 19), 0.5, 1.5)], "pw_row_mul", outputs=["ydw"])
    t = conv("thin", 1, 4, (3, 3), "dw_thin", group=4, strides=[1, 2], pads=[1, 1, 1, 1])  # W 5
    g.op("Relu", [t], "dw_thin_relu", outputs=["ythin"])
    # Padded 3x3 whose output rows hold whole tiles: tiles run along rows and store into Y
    # with bias and an epilogue varying along W applied in registers (no second pass).
    r = conv("rows", 8, 16, (3, 3), "row_tiles", pads=[1, 1, 1, 1])              # 16 x 11 x 32
    r = g.op("Add", [r, g.uniform("row_w", (1, 1, 1, 32), -0.5, 0.5)], "row_tiles_add")
    g.op("Relu", [r], "row_tiles_relu", outputs=["yrows"])
    # Few channels on wide rows (NCHW, not blocked): the traced tile of output channels x
    # vectors of a row, with remainder tiles, a strided read and an epilogue along W.
    u = conv("wide", 3, 5, (3, 3), "wide_3x3", pads=[1, 1, 1, 1])                # 5 x 20 x 70
    u = g.op("Relu", [u], "wide_relu")
    u = conv(u, 5, 4, (5, 5), "wide_s2", strides=[2, 2], pads=[2, 2, 2, 2])       # 4 x 10 x 35
    u = conv(u, 4, 6, (3, 3), "wide_dil", dilations=[2, 2], pads=[1, 2, 3, 0])    # 6 x 10 x 33
    g.op("Add", [u, g.uniform("wide_col", (1, 1, 1, 33), -0.5, 0.5)], "wide_add",
         outputs=["ywide"])
    # 3-D Convs on rows of whole vectors and remainders (traced: the depth is one more task
    # loop, its taps one more reduction loop): depth stride and padding, a dilated row tap,
    # an epilogue along W.
    q = conv("volw", 3, 6, (3, 3, 3), "c3d_rows", strides=[2, 1, 1],
             pads=[1, 1, 1, 1, 1, 1])                                              # 6 x 3 x 8 x 37
    q = g.op("Relu", [q], "c3d_rows_relu")
    q = conv(q, 6, 4, (3, 1, 3), "c3d_dil", dilations=[1, 1, 2], pads=[1, 0, 2, 1, 0, 2])
    g.op("Add", [q, g.uniform("c3d_col", (1, 1, 1, 1, 37), -0.5, 0.5)], "c3d_add",
         outputs=["y3dw"])                                                          # 4 x 3 x 8 x 37
    # Depthwise 1x1 windows (a scale a plane): padded and strided, and plain with an epilogue.
    e = conv("img", 1, 8, (1, 1), "dw_1x1", group=8, strides=[1, 2], pads=[1, 0, 1, 1])
    g.op("Relu", [e], "dw_1x1_relu", outputs=["ydw1"])                             # 8 x 25 x 19
    e = conv("img", 1, 8, (1, 1), "dw_1x1_plain", group=8)
    g.op("Add", [e, g.uniform("dw_1x1_col", (1, 1, 1, 37), -0.5, 0.5)], "dw_1x1_add",
         outputs=["ydw1p"])                                                         # 8 x 23 x 37
    # A strided 1x1 Conv without padding: one phase plane, its wide rows stored straight into
    # Y with an epilogue along W (the position of element f is row f / 19, column f % 19).
    e = conv("img", 4, 6, (1, 1), "pw_s2", group=2, strides=[2, 2])               # 6 x 12 x 19
    g.op("Add", [e, g.uniform("pw_s2_col", (1, 1, 1, 19), -0.5, 0.5)], "pw_s2_add",
         outputs=["ypws2"])
    # Rows of 3 positions (too narrow for vectors of a row): the plane's rows as one wide row.
    n3 = conv("tall", 4, 12, (3, 3), "narrow_rows", group=2, pads=[1, 1, 1, 1])  # 12 x 6 x 3
    g.op("Relu", [n3], "narrow_rows_relu", outputs=["ytall"])
    # Rows of whole tiles run row by row (a depth dilation).
    conv("volr", 2, 4, (2, 3, 3), "c3d_whole_rows", dilations=[2, 1, 1], pads=[0, 1, 1, 0, 1, 1],
         outputs=["y3dr"])                                                          # 4 x 3 x 4 x 64
    # Planes smaller than a vector even as one wide row: the wide row is one shorter vector
    # (padded 2x2, finished by a second pass; strided through phase planes; a 1-D row of 3
    # stored straight into Y).
    sp = conv("small", 16, 24, (3, 3), "small_plane", pads=[1, 1, 1, 1])          # 24 x 2 x 2
    g.op("Relu", [sp], "small_plane_relu", outputs=["ysmall"])
    # One output position: a product over the input values it reads (the padding's taps
    # dropped; two images as two columns).
    sp = conv("small", 16, 8, (3, 3), "small_s2", strides=[2, 2], pads=[1, 1, 1, 1])  # 8 x 1 x 1
    g.op("Relu", [sp], "small_s2_relu", outputs=["ysmall2"])
    sp = conv("short", 6, 8, (3,), "short_one")                                    # 8 x 1
    g.op("Relu", [sp], "short_one_relu", outputs=["yshort1"])
    # A fully connected layer written as a Conv (the window covers the whole input):
    # layout-weights makes it a Gemm on transposed weights.
    sp = conv("small3", 8, 10, (3, 3), "fc_conv")
    g.op("Relu", [sp], "fc_conv_relu", outputs=["yfc"])                              # 10 x 1 x 1
    # A classifier as a 1x1 Conv over a 1x1 plane, 21 classes: tiles of 7 rows.
    gp = g.op("GlobalAveragePool", ["small"], "small_pool")
    sp = conv(gp, 16, 21, (1, 1), "classifier")
    g.op("Relu", [sp], "classifier_relu", outputs=["yclass"])
    # Every output one input value times a weight: a channel multiplier (2 outputs an input
    # channel; padded and strided, planes copied) and one channel fanned out to 6.
    sm = conv("img", 1, 16, (1, 1), "multiplier", group=8, strides=[2, 1], pads=[1, 0, 1, 2])
    g.op("Relu", [sm], "multiplier_relu", outputs=["ymult"])                      # 16 x 13 x 39
    sm = conv("mono", 1, 6, (1, 1), "fan_out")
    g.op("Sigmoid", [sm], "fan_out_sigmoid", outputs=["yfan"])                     # 6 x 20 x 70
    sp = conv("small3", 8, 12, (3, 3), "small_s2p", strides=[2, 2], pads=[1, 1, 1, 1])  # 12 x 2 x 2
    g.op("Sigmoid", [sp], "small_s2p_sigmoid", outputs=["ysmall3"])
    sp = conv("short", 6, 10, (3,), "short_row", pads=[1, 1])                     # 10 x 3
    g.op("Add", [sp, g.uniform("short_col", (1, 1, 3), -0.5, 0.5)], "short_row_add",
         outputs=["yshort"])
    # NCHW pools on wide rows (traced: vectors of a row kept across the window): strided with
    # padding, ceil_mode, count_include_pad, LpPool, an epilogue.
    g.op("MaxPool", ["pools"], "pool_max", kernel_shape=[3, 3], strides=[2, 2],
         pads=[1, 1, 1, 1], outputs=["ypmax"])                                     # 3 x 12 x 35
    a = g.op("AveragePool", ["pools"], "pool_avg", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    g.op("Mul", [a, g.f32("pool_avg_scale", 2.0)], "pool_avg_mul", outputs=["ypavg"])
    g.op("AveragePool", ["pools"], "pool_avg_ceil", kernel_shape=[3, 3], strides=[2, 2],
         pads=[1, 0, 1, 0], ceil_mode=1, count_include_pad=1, outputs=["ypceil"])  # 3 x 13 x 35
    g.op("LpPool", ["pools"], "pool_lp", kernel_shape=[2, 3], pads=[0, 1, 1, 1], p=2,
         outputs=["yplp"])                                                          # 3 x 24 x 70
    return g.model("conv_zoo",
                   [f32_info("x", [1, 3, 40, 40]), f32_info("seq", [2, 4, 37]),
                    f32_info("vol", [1, 2, 7, 9, 11]), f32_info("img", [1, 8, 23, 37]),
                    f32_info("thin", [1, 4, 6, 9]), f32_info("rows", [1, 8, 11, 32]),
                    f32_info("wide", [1, 3, 20, 70]), f32_info("pools", [1, 3, 24, 70]),
                    f32_info("volw", [1, 3, 6, 8, 37]), f32_info("volr", [1, 2, 5, 4, 64]),
                    f32_info("tall", [1, 8, 6, 3]), f32_info("small", [1, 16, 2, 2]),
                    f32_info("small3", [1, 8, 3, 3]), f32_info("short", [2, 6, 3]),
                    f32_info("mono", [1, 1, 20, 70])],
                   [f32_info("y2d", [1, 6, 4, 10]), f32_info("y1d", [2, 8, 9]),
                    f32_info("y1drow", [2, 6, 37]),
                    f32_info("y3d", [1, 8, 4, 9, 6]), f32_info("ydw", [1, 8, 12, 19]),
                    f32_info("ythin", [1, 4, 6, 5]), f32_info("yrows", [1, 16, 11, 32]),
                    f32_info("ywide", [1, 6, 10, 33]), f32_info("ypmax", [1, 3, 12, 35]),
                    f32_info("ypavg", [1, 3, 24, 70]), f32_info("ypceil", [1, 3, 13, 35]),
                    f32_info("yplp", [1, 3, 24, 70]), f32_info("y3dw", [1, 4, 3, 8, 37]),
                    f32_info("y3dr", [1, 4, 3, 4, 64]), f32_info("ytall", [1, 12, 6, 3]),
                    f32_info("ydw1", [1, 8, 25, 19]), f32_info("ydw1p", [1, 8, 23, 37]),
                    f32_info("ypws2", [1, 6, 12, 19]), f32_info("ysmall", [1, 24, 2, 2]),
                    f32_info("ysmall2", [1, 8, 1, 1]), f32_info("ysmall3", [1, 12, 2, 2]),
                    f32_info("yshort", [2, 10, 3]), f32_info("yshort1", [2, 8, 1]),
                    f32_info("ymult", [1, 16, 13, 39]), f32_info("yfan", [1, 6, 20, 70]),
                    f32_info("yclass", [1, 21, 1, 1]), f32_info("yfc", [1, 10, 1, 1])])


def nchwc_zoo(seed):
    """A chain of Convs the layout-nchwc pass runs in the blocked layout: batch 2, odd plane
    sizes, strides, dilation, asymmetric pads, a 5x3 kernel, a Conv without bias, a residual
    Add, scalar operands, epilogues with and without a vector form, and a value that leaves
    the chain both as a graph output and into the next Conv."""
    g = GraphBuilder(seed)

    def conv(x, cin, cout, kernel, name, bias=True, **attrs):
        w = g.uniform(f"{name}.weight", (cout, cin) + tuple(kernel), -0.2, 0.2)
        ins = [x, w] + ([g.uniform(f"{name}.bias", (cout,), -0.1, 0.1)] if bias else [])
        return g.op("Conv", ins, name, **attrs)

    y = conv("x", 32, 48, (3, 3), "c1", pads=[1, 1, 1, 1])                      # 48 x 13 x 17
    y = g.op("Relu", [y], "c1_relu")
    y = conv(y, 48, 32, (3, 3), "c2", bias=False, strides=[2, 2], pads=[1, 0, 2, 1])  # 32 x 7 x 8
    y = g.op("Mul", [y, g.f32("c2_scale", 0.5)], "c2_scale_mul")
    r = conv(y, 32, 64, (1, 1), "c3", strides=[2, 2])                            # 64 x 4 x 4
    y = conv(r, 64, 64, (3, 3), "c4", dilations=[2, 2], pads=[2, 2, 2, 2])
    y = g.op("Add", [y, r], "c4_add")
    g.op("Relu", [y], "c4_relu", outputs=["ymid"])
    y = conv("ymid", 64, 16, (5, 3), "c5", pads=[2, 1, 2, 1])
    y = g.op("Clip", [y, g.f32("c5_min", 0.0), g.f32("c5_max", 6.0)], "c5_clip")
    y = conv(y, 16, 32, (1, 1), "c6", bias=False)
    y = g.op("Sigmoid", [y], "c6_sigmoid")
    y = conv(y, 32, 16, (3, 3), "c7", pads=[1, 1, 1, 1])
    g.op("LeakyRelu", [y], "c7_leaky", outputs=["y"], alpha=0.1)
    return g.model("nchwc_zoo", [f32_info("x", [2, 32, 13, 17])],
                   [f32_info("y", [2, 16, 4, 4]), f32_info("ymid", [2, 64, 4, 4])])


def depthwise_zoo(seed):
    """A depthwise-separable chain the layout-nchwc pass runs in the blocked layout from end to
    end: a stem Conv reading the 3-channel image in NCHW, depthwise Convs (strides,
    asymmetric pads, a 5x5 with dilation 2, one without bias, planes down to 2 x 2 where no
    position has its whole window inside), 24-channel values held in two blocks with padding
    channels, a residual Add on them, epilogues, and pools of blocked values (a padded 3x3
    MaxPool after the stem, a 2x2 one with ceil_mode, AveragePools with and without
    count_include_pad, an LpPool, global ones); batch 2."""
    g = GraphBuilder(seed)

    def conv(x, cin, cout, kernel, name, bias=True, group=1, **attrs):
        w = g.uniform(f"{name}.weight", (cout, cin // group) + tuple(kernel), -0.3, 0.3)
        ins = [x, w] + ([g.uniform(f"{name}.bias", (cout,), -0.1, 0.1)] if bias else [])
        return g.op("Conv", ins, name, group=group, **attrs)

    def clip(x, name):
        return g.op("Clip", [x, g.f32(f"{name}_min", 0.0), g.f32(f"{name}_max", 6.0)], name)

    y = clip(conv("x", 3, 16, (3, 3), "stem", strides=[2, 2], pads=[1, 1, 1, 1]), "stem_clip")
    y = g.op("MaxPool", [y], "stem_pool", kernel_shape=[3, 3], pads=[1, 1, 1, 1])   # 12 x 15
    y = clip(conv(y, 16, 16, (3, 3), "dw1", group=16, pads=[1, 1, 1, 1]), "dw1_clip")  # 12 x 15
    r = conv(y, 16, 24, (1, 1), "pw1")                                                # 24 channels
    y = g.op("Relu", [conv(r, 24, 48, (1, 1), "ex2")], "ex2_relu")
    y = conv(y, 48, 48, (3, 3), "dw2", group=48, strides=[2, 2], pads=[1, 0, 2, 1])    # 7 x 7
    y = g.op("LeakyRelu", [y], "dw2_leaky", alpha=0.1)
    y = conv(y, 48, 48, (5, 5), "dw3", bias=False, group=48, dilations=[2, 2], pads=[4, 4, 4, 4])
    r = conv(y, 48, 24, (1, 1), "pw3")
    y = clip(conv(r, 24, 48, (1, 1), "ex4"), "ex4_clip")
    y = clip(conv(y, 48, 48, (3, 3), "dw4", group=48, pads=[1, 1, 1, 1]), "dw4_clip")
    y = g.op("Add", [conv(y, 48, 24, (1, 1), "pw4"), r], "res4")                       # padded Add
    y = g.op("Sigmoid", [conv(y, 24, 32, (1, 1), "pw5")], "pw5_sigmoid", outputs=["ymid"])
    y = g.op("Relu", [conv("ymid", 32, 32, (3, 3), "dw6", group=32, strides=[2, 2],
                           pads=[1, 1, 1, 1])], "dw6_relu")                            # 4 x 4
    y = g.op("Tanh", [conv(y, 32, 32, (3, 3), "dw7", group=32, strides=[2, 2],
                           pads=[1, 1, 1, 1])], "dw7_tanh")                            # 2 x 2
    conv(y, 32, 32, (3, 3), "dw8", group=32, pads=[1, 1, 1, 1], outputs=["y"])
    g.op("GlobalAveragePool", ["y"], "gap", outputs=["yavg"])                          # blocked pools
    g.op("GlobalMaxPool", ["ymid"], "gmp", outputs=["ymax"])
    g.op("MaxPool", ["ymid"], "mp_ceil", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
         outputs=["ypool"])                                                            # 4 x 4
    # Blocked AveragePools (taps inside the input only; with count_include_pad and
    # ceil_mode) and an LpPool, one after the other: one more exit, not three
    y = g.op("AveragePool", ["ymid"], "ap3", kernel_shape=[3, 3], pads=[1, 1, 1, 1])  # 7 x 7
    y = g.op("AveragePool", [y], "ap_ceil", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1], count_include_pad=1, ceil_mode=1)                      # 4 x 4
    g.op("LpPool", [y], "lp2", kernel_shape=[2, 2], strides=[2, 2], p=2,
         outputs=["ylp"])                                                              # 2 x 2
    return g.model("depthwise_zoo", [f32_info("x", [2, 3, 23, 29])],
                   [f32_info("y", [2, 32, 2, 2]), f32_info("ymid", [2, 32, 7, 7]),
                    f32_info("yavg", [2, 32, 1, 1]), f32_info("ymax", [2, 32, 1, 1]),
                    f32_info("ypool", [2, 32, 4, 4]), f32_info("ylp", [2, 32, 2, 2])])


def winograd_zoo(seed):
    """3x3 Convs the winograd-nchwc pass computes by Winograd's filtering: F(4x4, 3x3) on a
    plane read in place and on one whose last tiles reach past it, F(2x2, 3x3) with and
    without bias, asymmetric pads, residual Add and Relu epilogues, batch 2; a 1x1 Conv and
    a 3x3 Conv on a plane too small for Winograd keep the direct blocked path beside them."""
    g = GraphBuilder(seed)

    def conv(x, cin, cout, kernel, name, bias=True, **attrs):
        w = g.uniform(f"{name}.weight", (cout, cin) + tuple(kernel), -0.2, 0.2)
        ins = [x, w] + ([g.uniform(f"{name}.bias", (cout,), -0.1, 0.1)] if bias else [])
        return g.op("Conv", ins, name, **attrs)

    y = conv("x", 32, 48, (3, 3), "w0")                                        # 48 x 28 x 28, F4
    y = g.op("Relu", [y], "w0_relu")
    y = conv(y, 48, 48, (3, 3), "w1", pads=[1, 0, 1, 1])                       # 48 x 28 x 27, F4
    r = conv(y, 48, 32, (1, 1), "w2", strides=[3, 3])                          # 32 x 10 x 9
    y = conv(r, 32, 32, (3, 3), "w3", bias=False, pads=[1, 1, 1, 1])          # F2
    y = g.op("Add", [y, r], "w3_add")
    y = g.op("Relu", [y], "w3_relu")
    y = conv(y, 32, 64, (3, 3), "w4", pads=[0, 1, 2, 1])                       # 64 x 10 x 9, F2
    y = conv(y, 64, 32, (3, 3), "w5")                                          # 32 x 8 x 7, direct
    g.op("Relu", [y], "w5_relu", outputs=["y"])
    return g.model("winograd_zoo", [f32_info("x", [2, 32, 30, 30])],
                   [f32_info("y", [2, 32, 8, 7])])


def matmul_zoo(seed):
    """Matrix products for the register-tiled schedule: batched MatMul with broadcasting,
    Gemm with transA, alpha, beta and a bias, row counts that do and do not fill a tile."""
    g = GraphBuilder(seed)
    b1 = g.uniform("b1", (40, 48), -0.5, 0.5)
    g.op("MatMul", ["a1", b1], "mm_broadcast", outputs=["y1"])                 # N = 48
    b2 = g.uniform("b2", (32, 64), -0.5, 0.5)
    c2 = g.uniform("c2", (64,), -0.5, 0.5)
    y2 = g.op("Gemm", ["a2", b2, c2], "gemm", transA=1, alpha=0.5, beta=2.0)   # 6 x 64
    g.op("Relu", [y2], "gemm_relu", outputs=["y2"])
    g.op("MatMul", ["a3", "b3"], "mm_batched", outputs=["y3"])                 # 3 rows, N = 32
    b4 = g.uniform("b4", (40, 24), -0.5, 0.5)                                  # transB: 40 columns
    g.op("Gemm", ["a4", b4], "gemv", transB=1, outputs=["y4"])                 # tiles + 8 columns
    # 40 columns: the last tile shifts back over the first; epilogue on the registers.
    b5 = g.uniform("b5", (24, 40), -0.5, 0.5)
    y5 = g.op("MatMul", ["a5", b5], "mm_shift")
    y5 = g.op("Add", [y5, g.uniform("c5", (40,), -0.5, 0.5)], "mm_shift_bias")
    g.op("Relu", [y5], "mm_shift_relu", outputs=["y5"])
    b6 = g.uniform("b6", (24, 300), -0.5, 0.5)                                 # one row: wide tiles
    g.op("Gemm", ["a6", b6, g.uniform("c6", (300,), -0.5, 0.5)], "gemv_wide", outputs=["y6"])
    # transB on a B computed at run time: copied transposed, then tiled (32 + 4 columns).
    g.op("Gemm", ["a7", "b7", g.uniform("c7", (36,), -0.5, 0.5)], "gemm_tb_runtime",
         transB=1, alpha=0.5, outputs=["y7"])
    # One column (a matrix times a vector): tiles of rows, one lane each.
    g.op("MatMul", ["a8", g.uniform("b8", (24,), -0.5, 0.5)], "matvec", outputs=["y8"])
    # int32: the same register tiles, in integer lanes.
    b9 = g.tensor("b9", g.rng.randint(-50, 50, (20, 40)).astype(np.int32))
    g.op("MatMul", ["a9", b9], "mm_int32", outputs=["y9"])
    # One term per element (K = 1): an outer product, rows in vectors (a remainder of 4).
    g.op("MatMul", ["a10", g.uniform("b10", (1, 36), -0.5, 0.5)], "mm_outer", outputs=["y10"])
    return g.model("matmul_zoo",
                   [f32_info("a1", [2, 3, 5, 40]), f32_info("a2", [32, 6]),
                    f32_info("a3", [4, 3, 16]), f32_info("b3", [1, 16, 32]), f32_info("a4", [1, 24]),
                    f32_info("a5", [5, 24]), f32_info("a6", [1, 24]), f32_info("a7", [20, 24]),
                    f32_info("b7", [36, 24]), f32_info("a8", [2, 12, 24]),
                    tensor_info("a9", TensorProto.INT32, [6, 20]), f32_info("a10", [5, 1])],
                   [f32_info("y1", [2, 3, 5, 48]), f32_info("y2", [6, 64]), f32_info("y3", [4, 3, 32]),
                    f32_info("y4", [1, 40]), f32_info("y5", [5, 40]), f32_info("y6", [1, 300]),
                    f32_info("y7", [20, 36]), f32_info("y8", [2, 12]),
                    tensor_info("y9", TensorProto.INT32, [6, 40]), f32_info("y10", [5, 36])])


def conv_bn_relu(seed, batch=1):
    g = GraphBuilder(seed)
    y = g.conv("x", 3, 4, 3, "conv", "conv.weight", pad=1, bias_name="conv.bias")
    y = g.batchnorm(y, 4, "bn", "bn.")
    g.op("Relu", [y], "relu", outputs=["y"])
    return g.model("conv_bn_relu", [f32_info("x", [batch, 3, 8, 8])], [f32_info("y", [batch, 4, 8, 8])])


def symbolic_batch(seed):
    model = conv_bn_relu(seed, batch="N")
    model.graph.name = "symbolic_batch"
    return model


def gemm_bn(seed):
    g = GraphBuilder(seed)
    y = g.dense("x", 16, 32, "fc", "fc.weight", "fc.bias")
    g.batchnorm(y, 32, "bn", "bn.", out="y")
    return g.model("gemm_bn", [f32_info("x", [2, 16])], [f32_info("y", [2, 32])])


def shape_chain(seed):
    g = GraphBuilder(seed)
    shape = g.op("Shape", ["x"], "shape")
    batch = g.op("Gather", [shape, g.i64("idx0", 0)], "gather", axis=0)
    batch = g.op("Unsqueeze", [batch, g.i64("axes0", [0])], "unsqueeze")
    target = g.op("Concat", [batch, g.i64("minus1", [-1])], "concat", axis=0)
    y = g.op("Reshape", ["x", target], "reshape")
    g.op("Relu", [y], "relu", outputs=["y"])
    return g.model("shape_chain", [f32_info("x", [2, 3, 4, 5])], [f32_info("y", [2, 60])])


def residual_add(seed):
    g = GraphBuilder(seed)
    h = g.conv("x", 8, 8, 3, "conv1", "conv1.weight", pad=1, bias_name="conv1.bias")
    h = g.op("Relu", [h], "relu1")
    h = g.conv(h, 8, 8, 3, "conv2", "conv2.weight", pad=1, bias_name="conv2.bias")
    s = g.op("Add", [h, "x"], "add")
    g.op("Relu", [s], "relu2", outputs=["y"])
    return g.model("residual_add", [f32_info("x", [1, 8, 16, 16])], [f32_info("y", [1, 8, 16, 16])])


def old_opset7(seed):
    """Opset-7 idioms: Gemm with mandatory C, Unsqueeze axes as attribute,
    Reshape shape as an input, Softmax with 2-D coercion, broadcasting Add."""
    g = GraphBuilder(seed)
    y = g.conv("x", 3, 4, 3, "conv", "conv.weight", pad=1, bias_name="conv.bias")   # 4 x 8 x 8
    y = g.op("Relu", [y], "relu")
    y = g.op("Reshape", [y, g.i64("flat_shape", [1, 256])], "reshape")
    y = g.dense(y, 256, 10, "fc", "fc.weight", "fc.bias")
    y = g.op("Add", [y, g.uniform("offset", (10,), -0.1, 0.1)], "add")                # [1,10] + [10]
    y = g.op("Softmax", [y], "softmax", axis=1)
    g.op("Unsqueeze", [y], "unsqueeze", outputs=["y"], axes=[1])
    return g.model("old_opset7", [f32_info("x", [1, 3, 8, 8])], [f32_info("y", [1, 1, 10])], opset=7)


def rare_attributes(seed):
    """Attributes the ONNX backend data of ONNX 1.12 does not exercise: LpPool,
    GlobalLpPool and LpNormalization with non-default p and axis, Constant with
    value_floats and value_ints."""
    g = GraphBuilder(seed)
    g.op("LpPool", ["x"], "lppool", outputs=["pooled"], kernel_shape=[2, 3], strides=[2, 1],
         pads=[0, 1, 0, 1], p=3)
    g.op("GlobalLpPool", ["x"], "globallp", outputs=["global"], p=1)
    normed = g.op("LpNormalization", ["x"], "lpnorm", axis=2, p=1)
    floats = g.op("Constant", [], "floats", value_floats=[0.5, -1.0, 2.0, 0.25, 3.0])
    g.op("Add", [normed, floats], "add_floats", outputs=["normed"])
    ints = g.op("Constant", [], "ints", value_ints=[3, 1, 4])
    g.op("Mul", [ints, ints], "square_ints", outputs=["ints_squared"])
    return g.model("rare_attributes", [f32_info("x", [2, 3, 6, 5])],
                   [f32_info("pooled", [2, 3, 3, 5]), f32_info("global", [2, 3, 1, 1]),
                    f32_info("normed", [2, 3, 6, 5]),
                    tensor_info("ints_squared", TensorProto.INT64, [3])])


def if_subgraph(seed):
    g = GraphBuilder(seed)
    h = g.op("Relu", ["x"], "relu")
    scale = g.uniform("scale", (2, 3), 0.5, 1.5)

    # then: reads `h` and `scale` from the enclosing graph
    then_nodes = [
        helper.make_node("Mul", [h, scale], ["then_mul"], name="then_mul"),
        helper.make_node("Sigmoid", ["then_mul"], ["then_out"], name="then_sigmoid"),
    ]
    then_graph = helper.make_graph(then_nodes, "then_branch", [], [f32_info("then_out", [2, 3])])
    # else: self-contained
    else_value = numpy_helper.from_array(g.rng.uniform(-1, 1, (2, 3)).astype(np.float32), "else_value")
    else_nodes = [
        helper.make_node("Constant", [], ["else_const"], name="else_const", value=else_value),
        helper.make_node("Abs", ["else_const"], ["else_out"], name="else_abs"),
    ]
    else_graph = helper.make_graph(else_nodes, "else_branch", [], [f32_info("else_out", [2, 3])])

    r = g.op("If", ["cond"], "if", then_branch=then_graph, else_branch=else_graph)
    g.op("Add", [r, h], "add", outputs=["y"])
    return g.model("if_subgraph",
                   [tensor_info("cond", TensorProto.BOOL, []), f32_info("x", [2, 3])],
                   [f32_info("y", [2, 3])])


def loop_subgraph(seed):
    """acc_{i+1} = acc_i + x * i for i in 0..2, also scanning every acc."""
    g = GraphBuilder(seed)
    trips = g.i64("trip_count", 3)
    keep_going = g.tensor("keep_going", np.array(True))
    acc0 = g.uniform("acc_init", (4,), -1, 1)

    body_nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
        helper.make_node("Cast", ["iter"], ["iter_f"], name="body_cast", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x", "iter_f"], ["step"], name="body_mul"),   # x: outer scope
        helper.make_node("Add", ["acc_in", "step"], ["acc_out"], name="body_add"),
        helper.make_node("Identity", ["acc_out"], ["scan_out"], name="body_scan"),
    ]
    body = helper.make_graph(
        body_nodes, "loop_body",
        [tensor_info("iter", TensorProto.INT64, []), tensor_info("cond_in", TensorProto.BOOL, []),
         f32_info("acc_in", [4])],
        [tensor_info("cond_out", TensorProto.BOOL, []), f32_info("acc_out", [4]), f32_info("scan_out", [4])])
    g.op("Loop", [trips, keep_going, acc0], "loop", outputs=["acc", "history"], body=body)
    return g.model("loop_subgraph", [f32_info("x", [4])],
                   [f32_info("acc", [4]), f32_info("history", [3, 4])])


# --------------------------------------------------------------------------- external data

EXTERNAL_ALIGN = 64


def external_conv(seed, location):
    """Conv model plus the bytes of its side file; weight and bias are stored
    externally at EXTERNAL_ALIGN-aligned offsets. Returns (model, bin_bytes, inline_model),
    the last being the same model with its data inline, for validation."""
    g = GraphBuilder(seed)
    g.conv("x", 3, 4, 3, "conv", "conv.weight", pad=1, bias_name="conv.bias", out="y")
    inline = g.model("external_data", [f32_info("x", [1, 3, 8, 8])], [f32_info("y", [1, 4, 8, 8])])

    model = onnx.ModelProto()
    model.CopyFrom(inline)
    blob = bytearray()
    for tensor in model.graph.initializer:
        blob += b"\0" * (-len(blob) % EXTERNAL_ALIGN)
        offset = len(blob)
        data = tensor.raw_data
        blob += data
        tensor.ClearField("raw_data")
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", str(offset)), ("length", str(len(data)))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
    return model, bytes(blob), inline


# --------------------------------------------------------------------------- malformed models

def bad_unknown_op(seed):
    g = GraphBuilder(seed)
    g.op("FancyNewOp", ["x"], "fancy", outputs=["y"], flavour=b"spicy")
    return g.model("unknown_op", [f32_info("x", [1, 4])], [f32_info("y", [1, 4])])


def bad_absurd_shape(seed):
    g = GraphBuilder(seed)
    dims = [1, 10 ** 12, 10 ** 12]
    g.op("Relu", ["x"], "relu", outputs=["y"])
    return g.model("absurd_shape", [f32_info("x", dims)], [f32_info("y", dims)])


def bad_missing_input(seed):
    g = GraphBuilder(seed)
    g.op("Add", ["x", "nobody_makes_this"], "add", outputs=["y"])
    return g.model("missing_input", [f32_info("x", [1, 4])], [f32_info("y", [1, 4])])


def bad_raw_size(seed):
    g = GraphBuilder(seed)
    w = g.tensor("w", g.rng.standard_normal((2, 2)).astype(np.float32))   # 16 bytes of raw_data...
    del g.initializers[-1].dims[:]
    g.initializers[-1].dims.extend([1000, 1000])                           # ...claiming 4 MB
    g.op("MatMul", ["x", w], "matmul", outputs=["y"])
    return g.model("bad_raw_size", [f32_info("x", [1, 1000])], [f32_info("y", [1, 1000])])


# --------------------------------------------------------------------------- validation

def shape_of(value_info):
    """Declared dims of a ValueInfo: ints, strings for symbols, None for unknown."""
    dims = []
    for d in value_info.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dims


def validate(model):
    """Full checker and strict shape inference (which is what full_check runs),
    then a second inference pass on a copy whose graph outputs carry no shape:
    whatever it infers for an output must agree with what the model declares."""
    onnx.checker.check_model(model, full_check=True)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for out in probe.graph.output:
        out.type.tensor_type.ClearField("shape")
    inferred = shape_inference.infer_shapes(probe, check_type=True, strict_mode=True, data_prop=True)
    for declared, got in zip(model.graph.output, inferred.graph.output):
        if not got.type.tensor_type.HasField("shape"):
            continue  # not inferable statically (e.g. behind a computed Reshape)
        want, have = shape_of(declared), shape_of(got)
        # an inferred number must match exactly; an inferred symbol only another symbol
        conflict = any(a != b for a, b in zip(want, have)
                       if isinstance(b, int) or (isinstance(a, str) and isinstance(b, str)))
        if len(want) != len(have) or conflict:
            raise ValueError(f"output {declared.name}: declared {want}, inferred {have}")


def count_nodes(graph):
    total = 0
    for node in graph.node:
        total += 1
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                total += count_nodes(attr.g)
            for sub in attr.graphs:
                total += count_nodes(sub)
    return total


# --------------------------------------------------------------------------- catalogue

class Artifact:
    """One file to write: relative path, bytes, node count (None for non-ONNX data)."""

    def __init__(self, path, data, nodes=None):
        self.path, self.data, self.nodes = path, data, nodes


def valid(path, model):
    validate(model)
    return Artifact(path, model.SerializeToString(), count_nodes(model.graph))


def unchecked(path, model):
    return Artifact(path, model.SerializeToString(), count_nodes(model.graph))


def simple(builder, path):
    return lambda seed: [valid(path, builder(seed))]


def make_external_data(seed):
    model, blob, inline = external_conv(seed, "weights.bin")
    validate(inline)
    # the checker would look for weights.bin relative to the cwd, so check the layout by hand
    for ext, orig in zip(model.graph.initializer, inline.graph.initializer):
        fields = {e.key: e.value for e in ext.external_data}
        start, length = int(fields["offset"]), int(fields["length"])
        assert blob[start:start + length] == orig.raw_data, ext.name
    return [unchecked("external_data/model.onnx", model), Artifact("external_data/weights.bin", blob)]


def make_escape(location, path):
    def build(seed):
        model, _, _ = external_conv(seed, location)
        return [unchecked(path, model)]
    return build


def make_truncated(seed):
    data = conv_bn_relu(seed).SerializeToString()
    return [Artifact("bad/truncated.onnx", data[:len(data) * 6 // 10])]


def make_garbage(seed):
    data = np.random.RandomState(seed).randint(0, 256, size=4096, dtype=np.uint8).tobytes()
    return [Artifact("bad/garbage.onnx", data)]


def make_bad(builder, path):
    return lambda seed: [unchecked(path, builder(seed))]


CATALOGUE = {
    "resnet50": simple(resnet50, "resnet50.onnx"),
    "mobilenetv2": simple(mobilenetv2, "mobilenetv2.onnx"),
    "bert": simple(bert, "bert.onnx"),
    "sample_cnn": simple(sample_cnn, "sample_cnn.onnx"),
    "kws_cnn": simple(kws_cnn, "kws_cnn.onnx"),
    "kws_int8": simple(kws_int8, "kws_int8.onnx"),
    "conv_bn_relu": simple(conv_bn_relu, "conv_bn_relu.onnx"),
    "conv_zoo": simple(conv_zoo, "conv_zoo.onnx"),
    "matmul_zoo": simple(matmul_zoo, "matmul_zoo.onnx"),
    "nchwc_zoo": simple(nchwc_zoo, "nchwc_zoo.onnx"),
    "winograd_zoo": simple(winograd_zoo, "winograd_zoo.onnx"),
    "depthwise_zoo": simple(depthwise_zoo, "depthwise_zoo.onnx"),
    "gemm_bn": simple(gemm_bn, "gemm_bn.onnx"),
    "shape_chain": simple(shape_chain, "shape_chain.onnx"),
    "residual_add": simple(residual_add, "residual_add.onnx"),
    "old_opset7": simple(old_opset7, "old_opset7.onnx"),
    "symbolic_batch": simple(symbolic_batch, "symbolic_batch.onnx"),
    "rare_attributes": simple(rare_attributes, "rare_attributes.onnx"),
    "if_subgraph": simple(if_subgraph, "if_subgraph.onnx"),
    "loop_subgraph": simple(loop_subgraph, "loop_subgraph.onnx"),
    "external_data": make_external_data,
    "bad/escape_abs": make_escape("/etc/passwd", "bad/escape_abs.onnx"),
    "bad/escape_dotdot": make_escape("../weights.bin", "bad/escape_dotdot.onnx"),
    "bad/truncated": make_truncated,
    "bad/garbage": make_garbage,
    "bad/unknown_op": make_bad(bad_unknown_op, "bad/unknown_op.onnx"),
    "bad/absurd_shape": make_bad(bad_absurd_shape, "bad/absurd_shape.onnx"),
    "bad/missing_input": make_bad(bad_missing_input, "bad/missing_input.onnx"),
    "bad/bad_raw_size": make_bad(bad_raw_size, "bad/bad_raw_size.onnx"),
    "bad/empty": lambda seed: [Artifact("bad/empty.onnx", b"")],
}
LARGE = ("resnet50", "mobilenetv2", "bert")


def select(spec):
    """Resolve a --models value into catalogue names, in catalogue order."""
    if spec is None:
        return [n for n in CATALOGUE if n not in LARGE]
    wanted = set()
    for item in (s.strip() for s in spec.split(",")):
        if item == "all":
            wanted.update(CATALOGUE)
        elif item == "bad":
            wanted.update(n for n in CATALOGUE if n.startswith("bad/"))
        elif item in CATALOGUE:
            wanted.add(item)
        elif "bad/" + item in CATALOGUE:
            wanted.add("bad/" + item)
        else:
            raise ValueError(f"unknown model '{item}' (see --list)" if item
                             else "empty model name in --models")
    return [n for n in CATALOGUE if n in wanted]


# --------------------------------------------------------------------------- output

def write_if_changed(path, data):
    """Write atomically unless the file already holds exactly `data`. Returns True if written."""
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except FileNotFoundError:
        pass
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".gen_models.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def human_size(n):
    for unit in ("B", "KB", "MB"):
        if n < 1000 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0


def report(status, path, data, nodes):
    node_text = "-" if nodes is None else f"{nodes} node{'' if nodes == 1 else 's'}"
    print(f"{status:9s} {path:44s} {human_size(len(data)):>10s} {len(data):>11d} B  {node_text}", flush=True)


def write_ref_input(path, shape, seed):
    x = np.random.RandomState(seed).uniform(-1.0, 1.0, size=shape).astype(np.float32)
    buf = io.BytesIO()
    np.save(buf, x)
    changed = write_if_changed(path, buf.getvalue())
    report("wrote" if changed else "unchanged", path, buf.getvalue(), None)


def parse_shape(text):
    try:
        dims = tuple(int(d) for d in text.split(","))
    except ValueError:
        dims = ()
    if not dims or any(d <= 0 for d in dims):
        raise ValueError(f"--shape must be comma-separated positive integers, got '{text}'")
    return dims


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Run with --list to see the catalogue; the module docstring describes every model.")
    parser.add_argument("--out", metavar="DIR", help="output directory (created if missing)")
    parser.add_argument("--seed", type=int, default=0, help="RandomState seed, 0..2**32-1 (default 0)")
    parser.add_argument("--models", metavar="LIST",
                        help="comma-separated catalogue names, 'bad' or 'all' (default: all but "
                             + ", ".join(LARGE) + ")")
    parser.add_argument("--list", action="store_true", help="print the catalogue names and exit")
    parser.add_argument("--ref-input", metavar="OUT.npy", help="write a seeded U(-1,1) float32 .npy and exit")
    parser.add_argument("--shape", default="1,3,224,224", help="shape for --ref-input (default 1,3,224,224)")
    args = parser.parse_args(argv)

    if not 0 <= args.seed < 2 ** 32:
        parser.error("--seed must be in [0, 2**32)")
    if args.list:
        for name in CATALOGUE:
            print(name + ("  (large)" if name in LARGE else ""))
        return 0
    if args.ref_input:
        if args.models is not None or args.out is not None:
            parser.error("--ref-input cannot be combined with --out/--models")
        try:
            shape = parse_shape(args.shape)
        except ValueError as e:
            parser.error(str(e))
        write_ref_input(args.ref_input, shape, args.seed)
        return 0
    if args.out is None:
        parser.error("--out DIR is required")
    try:
        names = select(args.models)
    except ValueError as e:
        parser.error(str(e))
    if not names:
        parser.error("--models selected nothing")

    for name in names:
        try:
            artifacts = CATALOGUE[name](args.seed)
        except Exception as e:
            print(f"gen_models.py: error: building '{name}' failed: {e}", file=sys.stderr)
            return 1
        for art in artifacts:
            path = os.path.join(args.out, art.path)
            changed = write_if_changed(path, art.data)
            report("wrote" if changed else "unchanged", path, art.data, art.nodes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
