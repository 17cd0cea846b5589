#!/usr/bin/python3
"""Writes the TFLite test models and their ONNX twins (same networks, same weights).

Usage: /usr/bin/python3 tests/models/gen_tflite.py --out DIR [--seed 0]

The .tflite files are written through engine/frontend/tflite/tflite_schema.fbs (the schema
subset Lathe reads), compiled here with flatc --python into a temporary folder and written
with Debian's python3-flatbuffers. Each network is described once (a list of layers with
float weights) and emitted four ways: as TFLite float32, as an ONNX float32 twin, through a
numpy evaluator (to calibrate), and, for the convolutional one, as TFLite int8 and as its
ONNX QDQ twin (QuantizeLinear/DequantizeLinear around float ops, the same scales and codes).
Inputs and outputs keep their names and their NHWC layout in every form, so one input file
feeds all of them.

Catalogue:
  tfl_cnn          `image` [1,16,16,3] -> CONV_2D (RELU6), DEPTHWISE_CONV_2D (x2, RELU),
                   CONV_2D 1x1, ADD (RELU), HARD_SWISH, MAX_POOL_2D, AVERAGE_POOL_2D (SAME),
                   CONCATENATION, PAD, CONV_2D (VALID), MEAN, FULLY_CONNECTED -> `logits` [1,10],
                   SOFTMAX -> `probs` [1,10]
  tfl_cnn_int8     tfl_cnn quantized: QUANTIZE, then int8 activations (per-tensor) and int8
                   weights (per-channel for convolutions), int32 biases, DEQUANTIZE
  tfl_misc         `seq` [2,6,8] -> FULLY_CONNECTED (keep_num_dims), BATCH_MATMUL (adj_y),
                   SOFTMAX (beta 0.5), SUB, MUL, LOGISTIC, TANH, RESHAPE, TRANSPOSE,
                   STRIDED_SLICE (masks, shrink), RESIZE_BILINEAR (half-pixel and
                   align-corners), RESIZE_NEAREST_NEIGHBOR (three modes), GELU (exact and
                   tanh), SPACE_TO_DEPTH, DEPTH_TO_SPACE, ARG_MAX (int64), SQUEEZE,
                   EXPAND_DIMS, RELU, DIV, EXP, SUM, GATHER, CONCATENATION -> 13 outputs
  tfl_more         `image` [1,6,5,3] -> TRANSPOSE_CONV (SAME; VALID with output padding; SAME
                   stride 3 with bias and fused ReLU), SPLIT, SPLIT_V (a -1 size), MIRROR_PAD
                   (REFLECT, SYMMETRIC), ARG_MAX + CAST, and last the custom
                   Convolution2DTransposeBias (MediaPipe's) -> 11 outputs
  tfl_bad_*        malformed files for the importer's refusals (tests/cli)
"""
import argparse
import importlib
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "engine", "frontend", "tflite", "tflite_schema.fbs")


def load_schema(tmp):
    subprocess.run(["flatc", "--python", "--gen-object-api", "-o", tmp, SCHEMA], check=True)
    sys.path.insert(0, tmp)
    names = ["Model", "SubGraph", "Tensor", "Buffer", "Operator", "OperatorCode",
             "QuantizationParameters", "BuiltinOperator", "BuiltinOptions", "TensorType",
             "Conv2DOptions", "DepthwiseConv2DOptions", "Pool2DOptions", "FullyConnectedOptions",
             "SoftmaxOptions", "ConcatenationOptions", "AddOptions", "SubOptions", "MulOptions",
             "DivOptions", "ReshapeOptions", "ReducerOptions", "StridedSliceOptions",
             "ResizeBilinearOptions", "BatchMatMulOptions", "SqueezeOptions", "GatherOptions",
             "TransposeOptions", "PadOptions", "ExpandDimsOptions", "HardSwishOptions",
             "ResizeNearestNeighborOptions", "GeluOptions", "SpaceToDepthOptions",
             "DepthToSpaceOptions", "ArgMaxOptions", "TransposeConvOptions", "SplitOptions",
             "SplitVOptions", "MirrorPadOptions", "CastOptions"]
    return {n: importlib.import_module("lathe_tflite." + n) for n in names}


# ---------------------------------------------------------------- numpy semantics (NHWC)

def same_pads(size, k, s, d=1):
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def np_conv(x, w, b, stride, padding, group=1, dil=1):
    """x [N,H,W,C], w [O,kh,kw,I] (I = C/group) -> [N,OH,OW,O]."""
    n, h, wd, c = x.shape
    o, kh, kw, ci = w.shape
    if padding == "SAME":
        pt, pb = same_pads(h, kh, stride, dil)
        pl, pr = same_pads(wd, kw, stride, dil)
    else:
        pt = pb = pl = pr = 0
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    oh = (xp.shape[1] - (kh - 1) * dil - 1) // stride + 1
    ow = (xp.shape[2] - (kw - 1) * dil - 1) // stride + 1
    y = np.zeros((n, oh, ow, o), np.float64)
    opg = o // group
    for g in range(group):
        xs = xp[..., g * ci:(g + 1) * ci].astype(np.float64)
        ws = w[g * opg:(g + 1) * opg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, i * dil:i * dil + stride * oh:stride, j * dil:j * dil + stride * ow:stride, :]
                y[..., g * opg:(g + 1) * opg] += patch @ ws[:, i, j, :].T
    if b is not None:
        y += b
    return y


def np_pool(x, k, s, padding, kind):
    n, h, w, c = x.shape
    if padding == "SAME":
        pt, pb = same_pads(h, k, s)
        pl, pr = same_pads(w, k, s)
    else:
        pt = pb = pl = pr = 0
    fill = -np.inf if kind == "max" else np.nan
    xp = np.pad(x.astype(np.float64), ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    oh = (xp.shape[1] - k) // s + 1
    ow = (xp.shape[2] - k) // s + 1
    wins = np.stack([xp[:, i:i + s * oh:s, j:j + s * ow:s, :] for i in range(k) for j in range(k)])
    return wins.max(0) if kind == "max" else np.nanmean(wins, 0)


def act(y, a):
    return {"NONE": y, "RELU": np.maximum(y, 0), "RELU6": np.clip(y, 0, 6)}[a]


def resize_bilinear(x, oh, ow, align, half):
    n, h, w, c = x.shape

    def coords(out, size):
        o = np.arange(out, dtype=np.float64)
        if align and out > 1:
            return o * (size - 1) / (out - 1)
        scale = size / out
        return np.maximum((o + 0.5) * scale - 0.5, 0) if half else o * scale

    ys, xs = coords(oh, h), coords(ow, w)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    dy, dx = (ys - y0)[None, :, None, None], (xs - x0)[None, None, :, None]
    a = x[:, y0][:, :, x0] * (1 - dx) + x[:, y0][:, :, x1] * dx
    b = x[:, y1][:, :, x0] * (1 - dx) + x[:, y1][:, :, x1] * dx
    return a * (1 - dy) + b * dy


def resize_nearest(x, oh, ow, align, half):
    """TensorFlow's nearest neighbour: floor(o * in / out), floor((o + 0.5) * in / out) with
    half-pixel centres, round(o * (in - 1) / (out - 1)) (halves up) with aligned corners."""
    n, h, w, c = x.shape

    def src(out, size):
        o = np.arange(out, dtype=np.float64)
        if align:
            v = np.floor(o * (size - 1) / max(out - 1, 1) + 0.5)
        elif half:
            v = np.floor((o + 0.5) * size / out)
        else:
            v = np.floor(o * size / out)
        return np.minimum(v, size - 1).astype(int)

    return x[:, src(oh, h)][:, :, src(ow, w)]


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def hard_swish(x):
    return x * np.clip(x + 3, 0, 6) / 6


# ---------------------------------------------------------------- the networks

class Net:
    """Layers as (kind, inputs, output, params); weights are float32 numpy arrays."""

    def __init__(self, name, inputs):
        self.name = name
        self.inputs = inputs  # [(name, shape)]
        self.layers = []
        self.outputs = []

    def add(self, kind, inputs, output, **params):
        self.layers.append((kind, list(inputs), output, params))
        return output


def cnn_net(rng):
    def w(*shape, fan):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan)).astype(np.float32)

    def b(n):
        return (rng.standard_normal(n) * 0.1).astype(np.float32)

    n = Net("tfl_cnn", [("image", [1, 16, 16, 3])])
    n.add("conv", ["image"], "conv1", w=w(8, 3, 3, 3, fan=27), b=b(8), stride=1, pad="SAME", act="RELU6")
    n.add("dwconv", ["conv1"], "dw1", w=w(1, 3, 3, 16, fan=9), b=b(16), stride=2, pad="SAME", act="RELU")
    n.add("conv", ["dw1"], "pw1", w=w(16, 1, 1, 16, fan=16), b=b(16), stride=1, pad="VALID", act="NONE")
    n.add("add", ["dw1", "pw1"], "res1", act="RELU")
    n.add("hard_swish", ["res1"], "hs1")
    n.add("maxpool", ["hs1"], "maxp", k=2, s=2, pad="VALID")
    n.add("avgpool", ["hs1"], "avgp", k=3, s=2, pad="SAME")
    n.add("concat", ["maxp", "avgp"], "cat", axis=3)
    n.add("pad", ["cat"], "padded", pads=[[0, 0], [1, 1], [1, 1], [0, 0]])
    n.add("conv", ["padded"], "conv2", w=w(16, 3, 3, 32, fan=288), b=b(16), stride=1, pad="VALID", act="RELU")
    n.add("mean", ["conv2"], "gap", axes=[1, 2], keep=False)
    n.add("fc", ["gap"], "logits", w=w(10, 16, fan=16), b=b(10), act="NONE", keep=False)
    n.add("softmax", ["logits"], "probs", beta=1.0)
    n.outputs = ["logits", "probs"]
    return n


def misc_net(rng):
    n = Net("tfl_misc", [("seq", [2, 6, 8])])
    n.add("fc", ["seq"], "query", w=(rng.standard_normal((8, 8)) * 0.4).astype(np.float32),
          b=(rng.standard_normal(8) * 0.1).astype(np.float32), act="NONE", keep=True)
    n.add("batch_matmul", ["query", "seq"], "scores", adj_x=False, adj_y=True)
    n.add("softmax", ["scores"], "weights", beta=0.5)
    n.add("batch_matmul", ["weights", "seq"], "context", adj_x=False, adj_y=False)
    n.add("sub", ["context", "seq"], "delta", act="NONE")
    n.add("logistic", ["seq"], "gate")
    n.add("mul", ["delta", "gate"], "gated", act="NONE")
    n.add("tanh", ["gated"], "attn_out")
    n.add("reshape", ["attn_out"], "as_image", shape=[2, 6, 4, 2])
    n.add("transpose", ["as_image"], "swapped", perm=[0, 2, 1, 3])
    # axis 0 whole (masks), axis 1 from 1, axis 2 every other from the end, axis 3 index 1.
    n.add("strided_slice", ["swapped"], "sliced", begin=[0, 1, -1, 1], end=[0, 4, 0, 2],
          strides=[1, 1, -2, 1], begin_mask=1, end_mask=1 | 4, shrink=8)
    n.add("resize_bilinear", ["as_image"], "resized_half", size=[9, 7], align=False, half=True)
    n.add("resize_bilinear", ["as_image"], "resized_corners", size=[11, 5], align=True, half=False)
    n.add("relu", ["gated"], "rectified")
    n.add("exp", ["rectified"], "grown")
    n.add("div", ["grown", "gate"], "ratio", act="NONE")
    n.add("sum", ["ratio"], "summed", axes=[2], keep=True)
    n.add("squeeze", ["summed"], "squeezed", dims=[2])
    n.add("gather", ["squeezed"], "picked", indices=np.array([5, 0, 3], np.int32), axis=1)
    n.add("expand_dims", ["picked"], "picked3", axis=2)
    n.add("concat", ["picked3", "picked3"], "pair", axis=2)
    # Nearest-neighbour resizing in TensorFlow's three modes (sizes chosen so that no source
    # coordinate lands exactly on a rounding boundary), and GELU exact and approximate.
    n.add("resize_nearest", ["as_image"], "nearest_half", size=[8, 8], align=False, half=True)
    n.add("resize_nearest", ["as_image"], "nearest_corners", size=[11, 5], align=True, half=False)
    n.add("resize_nearest", ["as_image"], "nearest_plain", size=[12, 2], align=False, half=False)
    n.add("gelu", ["gated"], "gelu_exact", approximate=False)
    n.add("gelu", ["gated"], "gelu_tanh", approximate=True)
    # Blocks of space to depth and back (TensorFlow's row, column, channel order), argmax.
    n.add("space_to_depth", ["as_image"], "s2d", block=2)
    n.add("depth_to_space", ["s2d"], "d2s", block=2)
    n.add("arg_max", ["gated"], "best", axis=2)
    n.outputs = ["attn_out", "sliced", "resized_half", "resized_corners", "pair", "nearest_half",
                 "nearest_corners", "nearest_plain", "gelu_exact", "gelu_tanh", "s2d", "d2s", "best"]
    return n


def more_net(rng):
    """Transposed convolutions (SAME; VALID with one row past the last input's reach; SAME
    with a bias and a fused ReLU, stride 3; MediaPipe's custom Convolution2DTransposeBias),
    SPLIT and SPLIT_V, both MIRROR_PAD modes, and CAST."""
    def w(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    n = Net("tfl_more", [("image", [1, 6, 5, 3])])
    n.add("transpose_conv", ["image"], "tconv_same", w=w(4, 3, 3, 3), b=None, stride=2, pad="SAME",
          act="NONE", out=[12, 10])
    n.add("transpose_conv", ["image"], "tconv_valid", w=w(2, 3, 2, 3), b=None, stride=2, pad="VALID",
          act="NONE", out=[14, 10])
    n.add("split", ["image"], "split_0", axis=3, parts=["split_0", "split_1", "split_2"])
    n.add("split_v", ["image"], "splitv_0", axis=1, sizes=[2, -1, 1],
          parts=["splitv_0", "splitv_1", "splitv_2"])
    n.add("mirror_pad", ["image"], "mirror_reflect", pads=[[0, 0], [2, 1], [1, 3], [0, 0]], mode="REFLECT")
    n.add("mirror_pad", ["image"], "mirror_symmetric", pads=[[0, 0], [1, 3], [5, 0], [0, 0]],
          mode="SYMMETRIC")
    n.add("arg_max", ["image"], "best", axis=3)
    n.add("cast", ["best"], "best_f")
    # Last, the two Arm NN 22 (tests/oracle/tflite_armnn.py) does not read: a TRANSPOSE_CONV
    # with a bias input and a fused activation, and the custom operator.
    n.add("transpose_conv", ["image"], "tconv_bias_relu", w=w(2, 4, 4, 3), b=w(2), stride=3,
          pad="SAME", act="RELU", out=[17, 15])
    n.add("transpose_conv_bias", ["split_1"], "tconv_bias", w=w(1, 2, 2, 1), b=w(1), stride=2,
          pad="SAME", act="NONE", out=[12, 10])
    n.outputs = ["tconv_same", "tconv_valid", "split_0", "split_2", "splitv_1", "splitv_2",
                 "mirror_reflect", "mirror_symmetric", "best_f", "tconv_bias_relu", "tconv_bias"]
    return n


def transpose_conv_pads(i, k, o, stride, pad):
    """TensorFlow's padding of a transposed convolution: that of the convolution from the
    output (size o) back to the input (size i), the smaller half before."""
    if pad == "VALID":
        return 0
    return max((i - 1) * stride + k - o, 0) // 2


def np_transpose_conv(x, w, b, stride, pad, out):
    """x NHWC, w [O, kh, kw, I]: each input pixel scatters its weighted window."""
    n, ih, iw, _ = x.shape
    co, kh, kw, _ = w.shape
    oh, ow = out
    ph, pw = transpose_conv_pads(ih, kh, oh, stride, pad), transpose_conv_pads(iw, kw, ow, stride, pad)
    y = np.zeros((n, oh, ow, co))
    for r in range(ih):
        for c in range(iw):
            for a in range(kh):
                for d in range(kw):
                    orow, ocol = r * stride + a - ph, c * stride + d - pw
                    if 0 <= orow < oh and 0 <= ocol < ow:
                        y[:, orow, ocol, :] += x[:, r, c, :] @ w[:, a, d, :].T.astype(np.float64)
    return y + (0 if b is None else b)


def evaluate(net, feeds):
    """Runs `net` in float64 numpy; returns every value by name."""
    v = {k: x.astype(np.float64) for k, x in feeds.items()}
    for kind, ins, out, p in net.layers:
        x = [v[i] for i in ins]
        if kind == "conv":
            y = act(np_conv(x[0], p["w"], p["b"], p["stride"], p["pad"]), p["act"])
        elif kind == "dwconv":
            c = x[0].shape[3]
            wt = np.transpose(p["w"], (3, 1, 2, 0))  # [C*m, kh, kw, 1]
            y = act(np_conv(x[0], wt, p["b"], p["stride"], p["pad"], group=c), p["act"])
        elif kind in ("add", "sub", "mul", "div"):
            f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[kind]
            y = act(f(x[0], x[1]), p["act"])
        elif kind == "hard_swish":
            y = hard_swish(x[0])
        elif kind == "logistic":
            y = 1 / (1 + np.exp(-x[0]))
        elif kind == "tanh":
            y = np.tanh(x[0])
        elif kind == "relu":
            y = np.maximum(x[0], 0)
        elif kind == "exp":
            y = np.exp(x[0])
        elif kind in ("maxpool", "avgpool"):
            y = np_pool(x[0], p["k"], p["s"], p["pad"], kind[:3])
        elif kind == "concat":
            y = np.concatenate(x, axis=p["axis"])
        elif kind == "pad":
            y = np.pad(x[0], p["pads"])
        elif kind == "mean":
            y = x[0].mean(axis=tuple(p["axes"]), keepdims=p["keep"])
        elif kind == "sum":
            y = x[0].sum(axis=tuple(p["axes"]), keepdims=p["keep"])
        elif kind == "fc":
            flat = x[0].reshape(-1, p["w"].shape[1])
            y = act(flat @ p["w"].T.astype(np.float64) + p["b"], p["act"])
            if p["keep"]:
                y = y.reshape(list(x[0].shape[:-1]) + [p["w"].shape[0]])
        elif kind == "softmax":
            y = softmax(x[0] * p["beta"])
        elif kind == "batch_matmul":
            a, bb = x
            if p["adj_x"]:
                a = np.swapaxes(a, -1, -2)
            if p["adj_y"]:
                bb = np.swapaxes(bb, -1, -2)
            y = a @ bb
        elif kind == "reshape":
            y = x[0].reshape(p["shape"])
        elif kind == "transpose":
            y = np.transpose(x[0], p["perm"])
        elif kind == "strided_slice":
            idx = []
            for d in range(len(p["begin"])):
                if (p["shrink"] >> d) & 1:
                    idx.append(p["begin"][d])
                    continue
                bgn = None if (p["begin_mask"] >> d) & 1 else p["begin"][d]
                end = None if (p["end_mask"] >> d) & 1 else p["end"][d]
                idx.append(slice(bgn, end, p["strides"][d]))
            y = x[0][tuple(idx)]
        elif kind == "resize_bilinear":
            y = resize_bilinear(x[0], p["size"][0], p["size"][1], p["align"], p["half"])
        elif kind == "space_to_depth":
            n_, h, w_, c = x[0].shape
            b = p["block"]
            y = x[0].reshape(n_, h // b, b, w_ // b, b, c).transpose(0, 1, 3, 2, 4, 5).reshape(n_, h // b, w_ // b, b * b * c)
        elif kind == "depth_to_space":
            n_, h, w_, c = x[0].shape
            b = p["block"]
            y = x[0].reshape(n_, h, w_, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5).reshape(n_, h * b, w_ * b, c // (b * b))
        elif kind == "arg_max":
            y = np.argmax(x[0], axis=p["axis"])
        elif kind == "resize_nearest":
            y = resize_nearest(x[0], p["size"][0], p["size"][1], p["align"], p["half"])
        elif kind == "gelu":
            if p["approximate"]:
                y = 0.5 * x[0] * (1 + np.tanh(np.sqrt(2 / np.pi) * (x[0] + 0.044715 * x[0] ** 3)))
            else:
                y = 0.5 * x[0] * (1 + np.vectorize(math.erf)(x[0] / np.sqrt(2)))
        elif kind == "squeeze":
            y = np.squeeze(x[0], axis=tuple(p["dims"]) if p["dims"] else None)
        elif kind == "expand_dims":
            y = np.expand_dims(x[0], p["axis"])
        elif kind == "gather":
            y = np.take(x[0], p["indices"], axis=p["axis"])
        elif kind in ("transpose_conv", "transpose_conv_bias"):
            y = act(np_transpose_conv(x[0], p["w"], p["b"], p["stride"], p["pad"], p["out"]), p["act"])
        elif kind in ("split", "split_v"):
            dim = x[0].shape[p["axis"]]
            if kind == "split":
                sizes = [dim // len(p["parts"])] * len(p["parts"])
            else:
                sizes = [s if s >= 0 else dim - sum(t for t in p["sizes"] if t >= 0) for s in p["sizes"]]
            pieces = np.split(x[0], np.cumsum(sizes)[:-1], axis=p["axis"])
            for name, piece in zip(p["parts"], pieces):
                v[name] = piece
            continue
        elif kind == "mirror_pad":
            y = np.pad(x[0], p["pads"], mode="reflect" if p["mode"] == "REFLECT" else "symmetric")
        elif kind == "cast":
            y = x[0].astype(np.float32).astype(np.float64)
        else:
            raise ValueError(kind)
        v[out] = y
    return v


# ---------------------------------------------------------------- quantization

class QParams:
    def __init__(self, scale, zero):
        self.scale = np.asarray(scale, np.float32).reshape(-1)
        self.zero = np.asarray(zero, np.int64).reshape(-1)


def activation_params(lo, hi):
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = max((hi - lo) / 255.0, 1e-8)
    zero = int(np.clip(np.round(-128 - lo / scale), -128, 127))
    return QParams(scale, zero)


def weight_params(w, axis):
    if axis is None:
        m = max(float(np.abs(w).max()), 1e-8)
        return QParams(m / 127.0, 0)
    red = tuple(d for d in range(w.ndim) if d != axis)
    m = np.maximum(np.abs(w).max(axis=red), 1e-8)
    return QParams(m / 127.0, np.zeros_like(m, np.int64))


def quantize_array(x, q, axis=None, dtype=np.int8):
    if axis is None:
        r = np.round(x / q.scale[0]) + q.zero[0]
    else:
        shape = [1] * x.ndim
        shape[axis] = -1
        r = np.round(x / q.scale.reshape(shape)) + q.zero.reshape(shape)
    info = np.iinfo(dtype)
    return np.clip(r, info.min, info.max).astype(dtype)


def calibrate(net, rng, runs=16):
    """Per-value (min, max) over seeded inputs in [-1, 1]."""
    ranges = {}
    for _ in range(runs):
        feeds = {name: rng.uniform(-1, 1, shape) for name, shape in net.inputs}
        for k, v in evaluate(net, feeds).items():
            lo, hi = ranges.get(k, (np.inf, -np.inf))
            ranges[k] = (min(lo, v.min()), max(hi, v.max()))
    params = {k: activation_params(*r) for k, r in ranges.items()}
    # Operators that TFLite's int8 kernels require to keep their input's parameters.
    for kind, ins, out, p in net.layers:
        if kind in ("maxpool", "avgpool", "pad"):
            params[out] = params[ins[0]]
        if kind == "softmax":
            params[out] = QParams(1.0 / 256.0, -128)
    return params


# ---------------------------------------------------------------- TFLite writer

class TfliteWriter:
    def __init__(self, fb):
        self.fb = fb
        self.tensors, self.buffers, self.ops, self.codes = [], [fb["Buffer"].BufferT()], [], []
        self.index = {}

    def tensor(self, name, shape, dtype="FLOAT32", data=None, q=None, qaxis=0):
        t = self.fb["Tensor"].TensorT()
        t.name = name
        t.shape = list(int(d) for d in shape)
        t.type = getattr(self.fb["TensorType"].TensorType, dtype)
        t.buffer = 0
        if data is not None:
            buf = self.fb["Buffer"].BufferT()
            buf.data = list(np.ascontiguousarray(data).tobytes())
            self.buffers.append(buf)
            t.buffer = len(self.buffers) - 1
        if q is not None:
            qp = self.fb["QuantizationParameters"].QuantizationParametersT()
            qp.scale = [float(s) for s in q.scale]
            qp.zeroPoint = [int(z) for z in q.zero]
            qp.quantizedDimension = qaxis
            t.quantization = qp
        self.tensors.append(t)
        self.index[name] = len(self.tensors) - 1
        return name

    def const(self, name, array, dtype="FLOAT32", q=None, qaxis=0):
        return self.tensor(name, array.shape, dtype, array, q, qaxis)

    def op(self, code, inputs, outputs, options_type=None, options=None):
        c = getattr(self.fb["BuiltinOperator"].BuiltinOperator, code)
        if c not in self.codes:
            self.codes.append(c)
        o = self.fb["Operator"].OperatorT()
        o.opcodeIndex = self.codes.index(c)
        o.inputs = [self.index[i] if i is not None else -1 for i in inputs]
        o.outputs = [self.index[i] for i in outputs]
        if options_type:
            o.builtinOptionsType = getattr(self.fb["BuiltinOptions"].BuiltinOptions, options_type)
            o.builtinOptions = options
        self.ops.append(o)

    def options(self, name, **fields):
        o = getattr(self.fb[name], name + "T")()
        for k, v in fields.items():
            setattr(o, k, v)
        return o

    def finish(self, inputs, outputs, description, extra_subgraphs=()):
        import flatbuffers
        sg = self.fb["SubGraph"].SubGraphT()
        sg.tensors, sg.operators = self.tensors, self.ops
        sg.inputs = [self.index[i] for i in inputs]
        sg.outputs = [self.index[o] for o in outputs]
        sg.name = "main"
        m = self.fb["Model"].ModelT()
        m.version = 3
        m.subgraphs = [sg] + list(extra_subgraphs)
        m.buffers = self.buffers
        m.description = description
        m.operatorCodes = []
        for c in self.codes:
            oc = self.fb["OperatorCode"].OperatorCodeT()
            oc.deprecatedBuiltinCode = min(c, 127)
            oc.builtinCode = c
            oc.version = 1
            if c == self.fb["BuiltinOperator"].BuiltinOperator.CUSTOM:
                oc.customCode = getattr(self, "custom_code", None)
            m.operatorCodes.append(oc)
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


ACT = {"NONE": 0, "RELU": 1, "RELU6": 3}
PAD = {"SAME": 0, "VALID": 1}


def write_tflite(net, fb, shapes, qparams=None):
    """Float32 TFLite, or int8 when `qparams` (name -> QParams) is given."""
    w = TfliteWriter(fb)
    quant = qparams is not None
    i8 = "INT8"

    key = None  # the network's name of the value being written

    def value(name, shape):
        if quant:
            return w.tensor(name, shape, i8, q=qparams[key])
        return w.tensor(name, shape)

    for name, shape in net.inputs:
        w.tensor(name, shape)
        if quant:
            w.tensor(name + "_int8", shape, i8, q=qparams[name])
            w.op("QUANTIZE", [name], [name + "_int8"])
    rename = {name: name + "_int8" for name, _ in net.inputs} if quant else {}
    for kind, ins, out, p in net.layers:
        ins = [rename.get(i, i) for i in ins]
        oname = out + "_int8" if quant and out in net.outputs else out
        if quant and out in net.outputs:
            rename[out] = oname
        shape = shapes[out]
        key = out
        if kind in ("conv", "dwconv"):
            if quant:
                axis = 0 if kind == "conv" else 3
                wq = weight_params(p["w"], axis)
                xs = qparams[ins[0].replace("_int8", "")].scale[0]
                wt = w.const(out + "/weights", quantize_array(p["w"], wq, axis), i8, wq, axis)
                bq = QParams(xs * wq.scale, np.zeros(len(wq.scale), np.int64))
                bt = w.const(out + "/bias", np.round(p["b"] / (xs * wq.scale)).astype(np.int32),
                             "INT32", bq, 0)
            else:
                wt = w.const(out + "/weights", p["w"])
                bt = w.const(out + "/bias", p["b"])
            value(oname, shape)
            if kind == "conv":
                opts = w.options("Conv2DOptions", padding=PAD[p["pad"]], strideW=p["stride"],
                                 strideH=p["stride"], fusedActivationFunction=ACT[p["act"]])
                w.op("CONV_2D", [ins[0], wt, bt], [oname], "Conv2DOptions", opts)
            else:
                mult = p["w"].shape[3] // shapes_in(net, shapes, ins[0])[3]
                opts = w.options("DepthwiseConv2DOptions", padding=PAD[p["pad"]], strideW=p["stride"],
                                 strideH=p["stride"], depthMultiplier=mult,
                                 fusedActivationFunction=ACT[p["act"]])
                w.op("DEPTHWISE_CONV_2D", [ins[0], wt, bt], [oname], "DepthwiseConv2DOptions", opts)
        elif kind in ("add", "sub", "mul", "div"):
            value(oname, shape)
            oname_t = {"add": "AddOptions", "sub": "SubOptions", "mul": "MulOptions", "div": "DivOptions"}[kind]
            w.op(kind.upper(), ins, [oname], oname_t,
                 w.options(oname_t, fusedActivationFunction=ACT[p["act"]]))
        elif kind in ("hard_swish", "logistic", "tanh", "relu", "exp"):
            value(oname, shape)
            w.op(kind.upper(), ins, [oname])
        elif kind in ("maxpool", "avgpool"):
            value(oname, shape)
            opts = w.options("Pool2DOptions", padding=PAD[p["pad"]], strideW=p["s"], strideH=p["s"],
                             filterWidth=p["k"], filterHeight=p["k"], fusedActivationFunction=0)
            w.op("MAX_POOL_2D" if kind == "maxpool" else "AVERAGE_POOL_2D", ins, [oname],
                 "Pool2DOptions", opts)
        elif kind == "concat":
            value(oname, shape)
            w.op("CONCATENATION", ins, [oname], "ConcatenationOptions",
                 w.options("ConcatenationOptions", axis=p["axis"], fusedActivationFunction=0))
        elif kind == "pad":
            pads = w.const(out + "/paddings", np.array(p["pads"], np.int32), "INT32")
            value(oname, shape)
            w.op("PAD", [ins[0], pads], [oname], "PadOptions", w.options("PadOptions"))
        elif kind in ("mean", "sum"):
            axes = w.const(out + "/axes", np.array(p["axes"], np.int32), "INT32")
            value(oname, shape)
            w.op(kind.upper(), [ins[0], axes], [oname], "ReducerOptions",
                 w.options("ReducerOptions", keepDims=p["keep"]))
        elif kind == "fc":
            if quant:
                wq = weight_params(p["w"], None)
                xs = qparams[ins[0].replace("_int8", "")].scale[0]
                wt = w.const(out + "/weights", quantize_array(p["w"], wq), i8, wq)
                bt = w.const(out + "/bias", np.round(p["b"] / (xs * wq.scale[0])).astype(np.int32),
                             "INT32", QParams(xs * wq.scale[0], 0))
            else:
                wt = w.const(out + "/weights", p["w"])
                bt = w.const(out + "/bias", p["b"])
            value(oname, shape)
            w.op("FULLY_CONNECTED", [ins[0], wt, bt], [oname], "FullyConnectedOptions",
                 w.options("FullyConnectedOptions", fusedActivationFunction=ACT[p["act"]],
                           keepNumDims=p["keep"]))
        elif kind == "softmax":
            value(oname, shape)
            w.op("SOFTMAX", ins, [oname], "SoftmaxOptions", w.options("SoftmaxOptions", beta=p["beta"]))
        elif kind == "batch_matmul":
            value(oname, shape)
            w.op("BATCH_MATMUL", ins, [oname], "BatchMatMulOptions",
                 w.options("BatchMatMulOptions", adjX=p["adj_x"], adjY=p["adj_y"]))
        elif kind == "reshape":
            s = w.const(out + "/shape", np.array(p["shape"], np.int32), "INT32")
            value(oname, shape)
            w.op("RESHAPE", [ins[0], s], [oname], "ReshapeOptions",
                 w.options("ReshapeOptions", newShape=list(p["shape"])))
        elif kind == "transpose":
            s = w.const(out + "/perm", np.array(p["perm"], np.int32), "INT32")
            value(oname, shape)
            w.op("TRANSPOSE", [ins[0], s], [oname])
        elif kind == "strided_slice":
            b = w.const(out + "/begin", np.array(p["begin"], np.int32), "INT32")
            e = w.const(out + "/end", np.array(p["end"], np.int32), "INT32")
            s = w.const(out + "/strides", np.array(p["strides"], np.int32), "INT32")
            value(oname, shape)
            w.op("STRIDED_SLICE", [ins[0], b, e, s], [oname], "StridedSliceOptions",
                 w.options("StridedSliceOptions", beginMask=p["begin_mask"], endMask=p["end_mask"],
                           shrinkAxisMask=p["shrink"]))
        elif kind == "resize_bilinear":
            s = w.const(out + "/size", np.array(p["size"], np.int32), "INT32")
            value(oname, shape)
            w.op("RESIZE_BILINEAR", [ins[0], s], [oname], "ResizeBilinearOptions",
                 w.options("ResizeBilinearOptions", alignCorners=p["align"], halfPixelCenters=p["half"]))
        elif kind in ("space_to_depth", "depth_to_space"):
            value(oname, shape)
            opt = "SpaceToDepthOptions" if kind == "space_to_depth" else "DepthToSpaceOptions"
            w.op(kind.upper(), ins, [oname], opt, w.options(opt, blockSize=p["block"]))
        elif kind == "arg_max":
            a = w.const(out + "/axis", np.array([p["axis"]], np.int32), "INT32")
            w.tensor(oname, shape, "INT64")
            w.op("ARG_MAX", [ins[0], a], [oname], "ArgMaxOptions",
                 w.options("ArgMaxOptions", outputType=fb["TensorType"].TensorType.INT64))
        elif kind == "resize_nearest":
            sz = w.const(out + "/size", np.array(p["size"], np.int32), "INT32")
            value(oname, shape)
            w.op("RESIZE_NEAREST_NEIGHBOR", [ins[0], sz], [oname], "ResizeNearestNeighborOptions",
                 w.options("ResizeNearestNeighborOptions", alignCorners=p["align"], halfPixelCenters=p["half"]))
        elif kind == "gelu":
            value(oname, shape)
            w.op("GELU", ins, [oname], "GeluOptions", w.options("GeluOptions", approximate=p["approximate"]))
        elif kind == "squeeze":
            value(oname, shape)
            w.op("SQUEEZE", ins, [oname], "SqueezeOptions",
                 w.options("SqueezeOptions", squeezeDims=list(p["dims"])))
        elif kind == "expand_dims":
            a = w.const(out + "/axis", np.array([p["axis"]], np.int32), "INT32")
            value(oname, shape)
            w.op("EXPAND_DIMS", [ins[0], a], [oname])
        elif kind == "gather":
            idx = w.const(out + "/indices", p["indices"], "INT32")
            value(oname, shape)
            w.op("GATHER", [ins[0], idx], [oname], "GatherOptions",
                 w.options("GatherOptions", axis=p["axis"]))
        elif kind == "transpose_conv":
            s = w.const(out + "/output_shape", np.array(shape, np.int32), "INT32")
            wt = w.const(out + "/weights", p["w"])
            value(oname, shape)
            inputs = [s, wt, ins[0]] + ([w.const(out + "/bias", p["b"])] if p["b"] is not None else [])
            w.op("TRANSPOSE_CONV", inputs, [oname], "TransposeConvOptions",
                 w.options("TransposeConvOptions", padding=PAD[p["pad"]], strideW=p["stride"],
                           strideH=p["stride"], fusedActivationFunction=ACT[p["act"]]))
        elif kind == "transpose_conv_bias":
            # MediaPipe's custom operator: options are TfLiteTransposeConvParams' bytes
            # (padding 1 = same, 2 = valid; stride width; stride height).
            wt = w.const(out + "/weights", p["w"])
            bt = w.const(out + "/bias", p["b"])
            value(oname, shape)
            w.op("CUSTOM", [ins[0], wt, bt], [oname])
            w.custom_code = "Convolution2DTransposeBias"
            w.ops[-1].customOptions = list(np.array([1 if p["pad"] == "SAME" else 2, p["stride"], p["stride"]],
                                                    "<i4").tobytes())
        elif kind in ("split", "split_v"):
            a = w.const(out + "/axis", np.array(p["axis"], np.int32), "INT32")
            for part in p["parts"]:
                w.tensor(part, shapes[part])
            if kind == "split":
                w.op("SPLIT", [a, ins[0]], p["parts"], "SplitOptions",
                     w.options("SplitOptions", numSplits=len(p["parts"])))
            else:
                sz = w.const(out + "/sizes", np.array(p["sizes"], np.int32), "INT32")
                w.op("SPLIT_V", [ins[0], sz, a], p["parts"], "SplitVOptions",
                     w.options("SplitVOptions", numSplits=len(p["parts"])))
        elif kind == "mirror_pad":
            pads = w.const(out + "/paddings", np.array(p["pads"], np.int32), "INT32")
            value(oname, shape)
            w.op("MIRROR_PAD", [ins[0], pads], [oname], "MirrorPadOptions",
                 w.options("MirrorPadOptions", mode=0 if p["mode"] == "REFLECT" else 1))
        elif kind == "cast":
            value(oname, shape)
            w.op("CAST", ins, [oname], "CastOptions",
                 w.options("CastOptions", inDataType=fb["TensorType"].TensorType.INT64,
                           outDataType=fb["TensorType"].TensorType.FLOAT32))
        else:
            raise ValueError(kind)
    outs = []
    for o in net.outputs:
        if quant:
            w.tensor(o, shapes[o])
            w.op("DEQUANTIZE", [o + "_int8"], [o])
        outs.append(o)
    return w.finish([n for n, _ in net.inputs], outs,
                    f"Lathe test model {net.name}{' (int8)' if quant else ''}")


def shapes_in(net, shapes, name):
    return shapes[name.replace("_int8", "")]


# ---------------------------------------------------------------- ONNX twins

class OnnxWriter:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def fresh(self, base):
        self.count += 1
        return f"{base}/t{self.count}"

    def const(self, base, array):
        name = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, ins, out=None, **attrs):
        out = out or self.fresh(op)
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out


def write_onnx(net, shapes, qparams=None):
    """The ONNX twin: NHWC at the edges; spatial ops in NCHW between Transposes, with
    ONNX's own SAME_UPPER padding; with `qparams`, QDQ around every float op."""
    g = OnnxWriter()
    quant = qparams is not None
    v = {}

    def qdq(name, x):
        if not quant:
            return x
        q = qparams[name]
        s = g.const(name + "/scale", np.float32(q.scale[0]))
        z = g.const(name + "/zero", np.int8(q.zero[0]))
        return g.node("DequantizeLinear", [g.node("QuantizeLinear", [x, s, z]), s, z])

    def finish(out, x):
        v[out] = qdq(out, x)

    for name, _ in net.inputs:
        v[name] = qdq(name, name)

    def nchw(x):
        return g.node("Transpose", [x], perm=[0, 3, 1, 2])

    def nhwc(x):
        return g.node("Transpose", [x], perm=[0, 2, 3, 1])

    def activation(x, a):
        if a == "RELU":
            return g.node("Relu", [x])
        if a == "RELU6":
            return g.node("Clip", [x, g.const("min", np.float32(0)), g.const("max", np.float32(6))])
        return x

    for kind, ins, out, p in net.layers:
        x = [v[i] for i in ins]
        if kind in ("conv", "dwconv"):
            c = shapes[ins[0]][3]
            if kind == "conv":
                wt, axis, group = np.transpose(p["w"], (0, 3, 1, 2)), 0, 1
            else:
                wt, axis, group = np.transpose(p["w"], (3, 0, 1, 2)), 3, c
            if quant:
                wq = weight_params(p["w"], axis)
                codes = np.transpose(quantize_array(p["w"], wq, axis),
                                     (0, 3, 1, 2) if kind == "conv" else (3, 0, 1, 2))
                ws = g.const(out + "/wscale", wq.scale)
                wz = g.const(out + "/wzero", np.zeros(len(wq.scale), np.int8))
                wv = g.node("DequantizeLinear", [g.const(out + "/w", codes), ws, wz], axis=0)
                xs = qparams[ins[0]].scale[0]
                bcodes = np.round(p["b"] / (xs * wq.scale)).astype(np.int32)
                bv = g.node("DequantizeLinear", [g.const(out + "/b", bcodes),
                                                 g.const(out + "/bscale", (xs * wq.scale).astype(np.float32)),
                                                 g.const(out + "/bzero", np.zeros(len(wq.scale), np.int32))],
                            axis=0)
            else:
                wv, bv = g.const(out + "/w", wt), g.const(out + "/b", p["b"])
            y = g.node("Conv", [nchw(x[0]), wv, bv], auto_pad="SAME_UPPER" if p["pad"] == "SAME" else "VALID",
                       strides=[p["stride"]] * 2, group=group)
            finish(out, nhwc(activation(y, p["act"])))
        elif kind in ("add", "sub", "mul", "div"):
            finish(out, activation(g.node(kind.capitalize(), x), p["act"]))
        elif kind in ("hard_swish", "logistic", "tanh", "relu", "exp"):
            op = {"hard_swish": "HardSwish", "logistic": "Sigmoid", "tanh": "Tanh", "relu": "Relu",
                  "exp": "Exp"}[kind]
            finish(out, g.node(op, x))
        elif kind in ("maxpool", "avgpool"):
            attrs = dict(kernel_shape=[p["k"]] * 2, strides=[p["s"]] * 2,
                         auto_pad="SAME_UPPER" if p["pad"] == "SAME" else "VALID")
            op = "MaxPool" if kind == "maxpool" else "AveragePool"
            finish(out, nhwc(g.node(op, [nchw(x[0])], **attrs)))
        elif kind == "concat":
            finish(out, g.node("Concat", x, axis=p["axis"]))
        elif kind == "pad":
            pads = [a for a, _ in p["pads"]] + [b for _, b in p["pads"]]
            finish(out, g.node("Pad", [x[0], g.const("pads", np.array(pads, np.int64))]))
        elif kind == "mean":
            finish(out, g.node("ReduceMean", x, axes=p["axes"], keepdims=int(p["keep"])))
        elif kind == "sum":
            finish(out, g.node("ReduceSum", [x[0], g.const("axes", np.array(p["axes"], np.int64))],
                               keepdims=int(p["keep"])))
        elif kind == "fc":
            in_dim = p["w"].shape[1]
            flat = g.node("Reshape", [x[0], g.const("shape", np.array([-1, in_dim], np.int64))])
            if quant:
                wq = weight_params(p["w"], None)
                xs = qparams[ins[0]].scale[0]
                s = g.const(out + "/wscale", np.float32(wq.scale[0]))
                z = g.const(out + "/wzero", np.int8(0))
                wv = g.node("DequantizeLinear", [g.const(out + "/w", quantize_array(p["w"], wq).T.copy()), s, z])
                bv = g.node("DequantizeLinear", [
                    g.const(out + "/b", np.round(p["b"] / (xs * wq.scale[0])).astype(np.int32)),
                    g.const(out + "/bscale", np.float32(xs * wq.scale[0])), g.const(out + "/bzero", np.int32(0))])
            else:
                wv, bv = g.const(out + "/w", p["w"].T.copy()), g.const(out + "/b", p["b"])
            y = activation(g.node("Add", [g.node("MatMul", [flat, wv]), bv]), p["act"])
            if p["keep"]:
                y = g.node("Reshape", [y, g.const("shape", np.array(shapes[out], np.int64))])
            finish(out, y)
        elif kind == "softmax":
            y = x[0]
            if p["beta"] != 1.0:
                y = g.node("Mul", [y, g.const("beta", np.float32(p["beta"]))])
            finish(out, g.node("Softmax", [y], axis=-1))
        elif kind == "batch_matmul":
            a, b = x

            def swap(t, rank):
                perm = list(range(rank))
                perm[-1], perm[-2] = perm[-2], perm[-1]
                return g.node("Transpose", [t], perm=perm)
            if p["adj_x"]:
                a = swap(a, len(shapes[ins[0]]))
            if p["adj_y"]:
                b = swap(b, len(shapes[ins[1]]))
            finish(out, g.node("MatMul", [a, b]))
        elif kind == "reshape":
            finish(out, g.node("Reshape", [x[0], g.const("shape", np.array(p["shape"], np.int64))]))
        elif kind == "transpose":
            finish(out, g.node("Transpose", x, perm=p["perm"]))
        elif kind == "strided_slice":
            # Written from numpy's view of the slice: explicit bounds, then a Reshape.
            ref = np.arange(np.prod(shapes[ins[0]])).reshape(shapes[ins[0]])
            idx = []
            for d in range(len(p["begin"])):
                if (p["shrink"] >> d) & 1:
                    idx.append(slice(p["begin"][d], p["begin"][d] + 1, 1))
                    continue
                bgn = None if (p["begin_mask"] >> d) & 1 else p["begin"][d]
                end = None if (p["end_mask"] >> d) & 1 else p["end"][d]
                idx.append(slice(bgn, end, p["strides"][d]))
            flat_idx = ref[tuple(idx)].reshape(-1)
            flat = g.node("Reshape", [x[0], g.const("flat", np.array([-1], np.int64))])
            picked = g.node("Gather", [flat, g.const("idx", flat_idx.astype(np.int64))], axis=0)
            finish(out, g.node("Reshape", [picked, g.const("shape", np.array(shapes[out], np.int64))]))
        elif kind == "resize_bilinear":
            n, h, wd, c = shapes[ins[0]]
            mode = "align_corners" if p["align"] else "half_pixel" if p["half"] else "asymmetric"
            sizes = g.const("sizes", np.array([n, c, p["size"][0], p["size"][1]], np.int64))
            y = g.node("Resize", [nchw(x[0]), "", "", sizes], mode="linear",
                       coordinate_transformation_mode=mode)
            finish(out, nhwc(y))
        elif kind in ("space_to_depth", "depth_to_space"):
            op = "SpaceToDepth" if kind == "space_to_depth" else "DepthToSpace"
            attrs = {"blocksize": p["block"]}
            if kind == "depth_to_space":
                attrs["mode"] = "DCR"
            finish(out, nhwc(g.node(op, [nchw(x[0])], **attrs)))
        elif kind == "arg_max":
            finish(out, g.node("ArgMax", x, axis=p["axis"], keepdims=0))
        elif kind == "resize_nearest":
            n_, h_, w_, c_ = shapes[ins[0]]
            mode = "align_corners" if p["align"] else "tf_half_pixel_for_nn" if p["half"] else "asymmetric"
            sizes = g.const("sizes", np.array([n_, c_, p["size"][0], p["size"][1]], np.int64))
            y = g.node("Resize", [nchw(x[0]), "", "", sizes], mode="nearest", coordinate_transformation_mode=mode,
                       nearest_mode="round_prefer_ceil" if p["align"] else "floor")
            finish(out, nhwc(y))
        elif kind == "gelu":
            f32 = np.float32
            if p["approximate"]:
                cube = g.node("Mul", [g.node("Mul", [x[0], x[0]]), x[0]])
                poly = g.node("Add", [x[0], g.node("Mul", [cube, g.const("c", f32(0.044715))])])
                inner = g.node("Tanh", [g.node("Mul", [poly, g.const("k", f32(np.sqrt(2 / np.pi)))])])
            else:
                inner = g.node("Erf", [g.node("Div", [x[0], g.const("sqrt2", f32(np.sqrt(2)))])])
            half = g.node("Mul", [x[0], g.const("half", f32(0.5))])
            finish(out, g.node("Mul", [half, g.node("Add", [inner, g.const("one", f32(1))])]))
        elif kind == "squeeze":
            finish(out, g.node("Squeeze", [x[0], g.const("axes", np.array(p["dims"], np.int64))]))
        elif kind == "expand_dims":
            finish(out, g.node("Unsqueeze", [x[0], g.const("axes", np.array([p["axis"]], np.int64))]))
        elif kind == "gather":
            finish(out, g.node("Gather", [x[0], g.const("idx", p["indices"].astype(np.int64))], axis=p["axis"]))
        elif kind in ("transpose_conv", "transpose_conv_bias"):
            _, ih, iw, _ = shapes[ins[0]]
            _, kh, kw, _ = p["w"].shape
            begin, end, extra = [], [], []
            for i, k, o in ((ih, kh, p["out"][0]), (iw, kw, p["out"][1])):
                b0 = transpose_conv_pads(i, k, o, p["stride"], p["pad"])
                reach = (i - 1) * p["stride"] + k - b0
                begin.append(b0)
                end.append(max(reach - o, 0))
                extra.append(max(o - reach, 0))
            ins_ = [nchw(x[0]), g.const(out + "/w", np.transpose(p["w"], (3, 0, 1, 2)))]
            if p["b"] is not None:
                ins_.append(g.const(out + "/b", p["b"]))
            y = g.node("ConvTranspose", ins_, strides=[p["stride"]] * 2, pads=begin + end,
                       output_padding=extra, kernel_shape=[kh, kw])
            finish(out, nhwc(activation(y, p["act"])))
        elif kind in ("split", "split_v"):
            sizes = [shapes[part][p["axis"]] for part in p["parts"]]
            names = [g.fresh("split") for _ in p["parts"]]
            g.nodes.append(helper.make_node("Split", [x[0], g.const("sizes", np.array(sizes, np.int64))],
                                            names, axis=p["axis"]))
            for part, name in zip(p["parts"], names):
                v[part] = qdq(part, name)
        elif kind == "mirror_pad":
            if p["mode"] == "REFLECT":
                pads = [a for a, _ in p["pads"]] + [b for _, b in p["pads"]]
                finish(out, g.node("Pad", [x[0], g.const("pads", np.array(pads, np.int64))], mode="reflect"))
            else:
                # SYMMETRIC repeats the edge: gather the mirrored indices along each axis.
                y = x[0]
                for d, (before, after) in enumerate(p["pads"]):
                    if before or after:
                        n_ = shapes[ins[0]][d]
                        idx = list(range(before - 1, -1, -1)) + list(range(n_)) + \
                            list(range(n_ - 1, n_ - 1 - after, -1))
                        y = g.node("Gather", [y, g.const("idx", np.array(idx, np.int64))], axis=d)
                finish(out, y)
        elif kind == "cast":
            finish(out, g.node("Cast", x, to=TensorProto.FLOAT))
        else:
            raise ValueError(kind)
    for o in net.outputs:
        g.node("Identity", [v[o]], o)
    int_outputs = {out for kind, _, out, _ in net.layers if kind == "arg_max"}
    graph = helper.make_graph(
        g.nodes, net.name + ("_qdq" if quant else "_twin"),
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in net.inputs],
        [helper.make_tensor_value_info(o, TensorProto.INT64 if o in int_outputs else TensorProto.FLOAT,
                                       list(shapes[o])) for o in net.outputs],
        g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                              producer_name="lathe gen_tflite.py")
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    return model.SerializeToString()


# ---------------------------------------------------------------- malformed files

def bad_files(good):
    """Malformed variants of a valid .tflite file (bytes), by name."""
    out = {}
    out["tfl_bad_truncated"] = good[:len(good) // 3]
    out["tfl_bad_identifier"] = good[:4] + b"TFL2" + good[8:]
    corrupt = bytearray(good)
    root = int.from_bytes(corrupt[0:4], "little")
    corrupt[root:root + 4] = (0x7FFFFFF0).to_bytes(4, "little")  # the root table's vtable offset
    out["tfl_bad_offsets"] = bytes(corrupt)
    return out


def bad_op_files(fb):
    """Well-formed files Lathe must refuse by operator: one it does not translate, a custom
    one, and one that reads a tensor index outside the table."""
    out = {}
    w = TfliteWriter(fb)
    w.tensor("x", [1, 4, 4, 4])
    w.tensor("y", [1, 2, 2, 16])
    w.op("LSH_PROJECTION", ["x"], ["y"])
    out["tfl_bad_unsupported_op"] = w.finish(["x"], ["y"], "unsupported operator")
    w = TfliteWriter(fb)
    w.tensor("x", [1, 4])
    w.tensor("y", [1, 4])
    w.op("CUSTOM", ["x"], ["y"])
    w.custom_code = "MyFancyOp"
    out["tfl_bad_custom_op"] = w.finish(["x"], ["y"], "custom operator")
    w = TfliteWriter(fb)
    w.tensor("x", [1, 4])
    w.tensor("y", [1, 4])
    w.op("RELU", ["x"], ["y"])
    w.ops[0].inputs = [99]
    out["tfl_bad_tensor_index"] = w.finish(["x"], ["y"], "tensor index out of range")
    w = TfliteWriter(fb)
    w.tensor("x", [1, 4, 4, 2])
    w.const("w", np.ones((1, 2, 2, 2), np.float32))
    w.const("b", np.zeros(1, np.float32))
    w.tensor("y", [1, 8, 8, 1])
    w.op("CUSTOM", ["x", "w", "b"], ["y"])
    w.custom_code = "Convolution2DTransposeBias"
    w.ops[0].customOptions = [1, 0, 0, 0]  # padding only: the strides are missing
    out["tfl_bad_custom_options"] = w.finish(["x"], ["y"], "custom operator with short options")
    # Control flow: a WHILE in the main subgraph, running a second one.
    body = fb["SubGraph"].SubGraphT()
    body.tensors, body.operators, body.inputs, body.outputs = [], [], [], []
    w = TfliteWriter(fb)
    w.tensor("x", [1, 4])
    w.tensor("y", [1, 4])
    w.op("WHILE", ["x"], ["y"])
    out["tfl_bad_while"] = w.finish(["x"], ["y"], "control flow", [body])
    return out


def second_subgraph_file(fb):
    """A valid model with a second subgraph nothing calls (as signature or initialisation
    subgraphs are): subgraph 0 imports."""
    w = TfliteWriter(fb)
    w.tensor("x", [1, 4])
    w.tensor("y", [1, 4])
    w.op("RELU", ["x"], ["y"])
    other = fb["SubGraph"].SubGraphT()
    other.tensors, other.operators, other.inputs, other.outputs = [], [], [], []
    return w.finish(["x"], ["y"], "two subgraphs", [other])


def write(path, data):
    old = open(path, "rb").read() if os.path.exists(path) else None
    if old != data:
        with open(path, "wb") as f:
            f.write(data)
    print(("unchanged " if old == data else "wrote     ") + path, len(data), "bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="lathe_tflite_schema_")
    try:
        fb = load_schema(tmp)
        for builder in (cnn_net, misc_net, more_net):
            rng = np.random.RandomState(a.seed)
            net = builder(rng)
            feeds = {name: np.zeros(shape) for name, shape in net.inputs}
            shapes = {k: list(x.shape) for k, x in evaluate(net, feeds).items()}
            write(os.path.join(a.out, net.name + ".tflite"), write_tflite(net, fb, shapes))
            write(os.path.join(a.out, net.name + ".onnx"), write_onnx(net, shapes))
            if builder is cnn_net:
                qparams = calibrate(net, np.random.RandomState(a.seed + 1))
                write(os.path.join(a.out, net.name + "_int8.tflite"), write_tflite(net, fb, shapes, qparams))
                write(os.path.join(a.out, net.name + "_int8.onnx"), write_onnx(net, shapes, qparams))
                bad = bad_files(write_tflite(net, fb, shapes))
                bad.update(bad_op_files(fb))
                write(os.path.join(a.out, "tfl_two_subgraphs.tflite"), second_subgraph_file(fb))
                for name, data in bad.items():
                    write(os.path.join(a.out, name + ".tflite"), data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
