#!/usr/bin/python3
"""Small models in the op forms of other opsets than 17, for Lathe's opset conversion: the
old forms that real exporters still emit (opsets 7 to 12) and the forms of opsets 18 to 21
that current exporters emit (newer than Debian's ONNX library). Old forms: Clip-6 attributes, Pad-2, Slice-1, Split-2/11, Squeeze,
Unsqueeze and ReduceSum with axes attributes, TopK-1, BatchNormalization-7 (spatial),
Dropout-7/10, the 2-D coercion of Softmax/LogSoftmax/Hardmax before 13, Cast-6,
MaxPool/AveragePool before ceil_mode, Gemm with a required C, Upsample-7/9, Resize-10 and
Scatter-9.

Each model is written twice: `NAME.onnx` with static shapes, and `NAME_dynamic.onnx`
whose input dims are symbols and whose values carry no shapes, so that the ONNX
library's version converter (whose adapters need shapes) gives up and Lathe's own
converter does the work.

Usage: /usr/bin/python3 tests/models/gen_old_forms.py --out DIR [--list]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_FOR_OPSET = {7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 18: 8, 20: 9, 21: 10}
NEWEST_KNOWN = 17  # Debian's ONNX library checks and infers up to this opset
F32 = TensorProto.FLOAT


class Model:
    def __init__(self, name, opset, seed):
        self.name, self.opset = name, opset
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []

    def input(self, name, dims, elem=F32):
        self.inputs.append((name, elem, dims))
        return name

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, low=-1.0, high=1.0):
        return self.const(name, self.rng.uniform(low, high, size=shape).astype(np.float32))

    def op(self, op_type, inputs, outputs, **attrs):
        outs = [outputs] if isinstance(outputs, str) else list(outputs)
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=outs[0] + "_node", **attrs))
        return outputs

    def output(self, name, elem=F32, rank=None):
        """A graph output; `rank` where the library's inference leaves its shape unknown."""
        self.outputs.append((name, elem, rank))

    def build(self, dynamic):
        def info(name, elem, dims):
            if dynamic:
                dims = [f"{name}_d{i}" for i in range(len(dims))]
            return helper.make_tensor_value_info(name, elem, dims)

        inputs = [info(*i) for i in self.inputs]
        if IR_FOR_OPSET[self.opset] < 4:  # initializers were graph inputs before IR 4
            inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                       for t in self.inits]
        if self.opset > NEWEST_KNOWN:  # the library knows neither the ops nor the opset
            outputs = [helper.make_tensor_value_info(n, e, [f"{n}_d{i}" for i in range(rank)])
                       for n, e, rank in self.outputs]
            return self._model(inputs, outputs)
        # Output shapes come from the library's inference; dynamic models name every dim.
        probe = self._model(inputs, [helper.make_tensor_value_info(n, e, None)
                                     for n, e, _ in self.outputs])
        done = onnx.shape_inference.infer_shapes(probe).graph
        inferred = {v.name: v for v in list(done.value_info) + list(done.output)}
        outputs = []
        for n, e, rank in self.outputs:
            tt = inferred[n].type.tensor_type
            if rank is not None:
                outputs.append(helper.make_tensor_value_info(
                    n, e, [f"{n}_d{i}" for i in range(rank)]))
                continue
            assert tt.HasField("shape"), f"{self.name}: the library infers no shape for {n}"
            dims = [d.dim_value if d.HasField("dim_value") and not dynamic else f"{n}_d{i}"
                    for i, d in enumerate(tt.shape.dim)]
            outputs.append(helper.make_tensor_value_info(n, e, dims))
        model = self._model(inputs, outputs)
        onnx.checker.check_model(model)
        return model

    def _model(self, inputs, outputs):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, initializer=self.inits)
        model = helper.make_model(graph, producer_name="lathe-gen_old_forms",
                                  opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = IR_FOR_OPSET[self.opset]
        return model


def clip_softmax(seed):
    """Opset 9: Clip-6 with min/max attributes (and with only one), then the softmax family
    at an inner axis (2-D coercion), at the last axis and at the default axis."""
    m = Model("clip_softmax", 9, seed)
    x = m.input("x", [2, 3, 4, 5])
    a = m.op("Clip", [x], "a", min=-0.3, max=0.4)
    b = m.op("Clip", [x], "b", max=0.2)
    c = m.op("Clip", [x], "c")
    m.op("Softmax", [a], "soft_inner", axis=1)
    m.op("LogSoftmax", [b], "logsoft_last", axis=3)
    m.op("Hardmax", [x], "hard_default")
    m.op("Softmax", [c], "soft_neg", axis=-1)
    m.op("LogSoftmax", [x], "logsoft_2", axis=2)
    for o in ("soft_inner", "logsoft_last", "hard_default", "soft_neg", "logsoft_2"):
        m.output(o)
    return m


def pad_slice(seed):
    """Opset 9: Pad-2 (pads and value attributes, three modes) and Slice-1 (starts, ends and
    axes attributes, clamped and negative bounds)."""
    m = Model("pad_slice", 9, seed)
    x = m.input("x", [2, 3, 4, 5])
    m.op("Pad", [x], "pad_const", pads=[0, 1, 1, 2, 0, 0, 2, 1], value=1.5)
    m.op("Pad", [x], "pad_reflect", pads=[0, 0, 1, 2, 0, 0, 2, 1], mode="reflect")
    m.op("Pad", [x], "pad_edge", pads=[0, 0, 0, 3, 0, 0, 1, 0], mode="edge")
    m.op("Slice", [x], "slice_axes", starts=[1, 0], ends=[3, 1000], axes=[1, 3])
    m.op("Slice", [x], "slice_all", starts=[0, 1, -3, 0], ends=[2, 3, -1, -1])
    for o in ("pad_const", "pad_reflect", "pad_edge", "slice_axes", "slice_all"):
        m.output(o)
    return m


def axes_attributes(seed):
    """Opset 11: Split with and without `split`, Unsqueeze/Squeeze with axes attributes
    (negative too), ReduceSum with axes and without."""
    m = Model("axes_attributes", 11, seed)
    x = m.input("x", [2, 3, 4, 5])
    m.op("Split", [x], ["split_a", "split_b"], axis=1, split=[1, 2])
    m.op("Split", [x], ["half_a", "half_b"], axis=-2)
    u = m.op("Unsqueeze", [x], "unsq", axes=[0, -1])
    m.op("Squeeze", [u], "sq", axes=[0, 5])
    m.op("ReduceSum", [x], "sum_axes", axes=[1, -1], keepdims=0)
    m.op("ReduceSum", [x], "sum_all")
    for o in ("split_a", "split_b", "half_a", "half_b", "unsq", "sq", "sum_axes", "sum_all"):
        m.output(o)
    return m


def split_topk(seed):
    """Opset 9: Split-2 with a `split` attribute, Squeeze-1 without axes, TopK-1 (k attribute)."""
    m = Model("split_topk", 9, seed)
    x = m.input("x", [2, 1, 4, 6])
    m.op("Split", [x], ["p", "q", "r"], axis=3, split=[1, 2, 3])
    m.op("Squeeze", [x], "squeezed")
    m.op("TopK", [x], ["top_v", "top_i"], k=3)
    for o in ("p", "q", "r", "top_v"):
        m.output(o)
    m.output("squeezed", rank=3)
    m.output("top_i", TensorProto.INT64)
    return m


def bn_pool_gemm(seed):
    """Opset 7: BatchNormalization-7 with spatial=1, Dropout-7 with a ratio, MaxPool-7 and
    AveragePool-7 (count_include_pad, before ceil_mode), Gemm-7 with its required C, Cast-6."""
    m = Model("bn_pool_gemm", 7, seed)
    x = m.input("x", [2, 3, 6, 6])
    scale = m.weight("scale", [3], 0.5, 1.5)
    bias = m.weight("bias", [3])
    mean = m.weight("mean", [3])
    var = m.weight("var", [3], 0.5, 2.0)
    y = m.op("BatchNormalization", [x, scale, bias, mean, var], "bn", spatial=1, epsilon=1e-3)
    y = m.op("Dropout", [y], "drop", ratio=0.3)
    m.op("MaxPool", [y], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    a = m.op("AveragePool", [y], "avgpool", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1], count_include_pad=1)
    f = m.op("Reshape", [a, m.const("flat", np.array([2, 27], dtype=np.int64))], "flat_a")
    m.op("Gemm", [f, m.weight("w", [4, 27]), m.weight("c", [4])], "gemm", transB=1, alpha=0.5,
         beta=2.0)
    scaled = m.op("Mul", [x, m.const("ten", np.array(10.0, dtype=np.float32))], "scaled")
    m.op("Cast", [scaled], "as_int", to=TensorProto.INT32)
    for o in ("maxpool", "avgpool", "gemm"):
        m.output(o)
    m.output("as_int", TensorProto.INT32)
    return m


def upsample7(seed):
    """Opset 7: Upsample-7 with a scales attribute, nearest and linear."""
    m = Model("upsample7", 7, seed)
    x = m.input("x", [1, 2, 3, 4])
    m.op("Upsample", [x], "up_nearest", scales=[1.0, 1.0, 2.0, 3.0])
    m.op("Upsample", [x], "up_linear", scales=[1.0, 1.0, 2.0, 2.0], mode="linear")
    m.output("up_nearest")
    m.output("up_linear")
    return m


def upsample9(seed):
    """Opset 9: Upsample-9 with a scales input; Scatter-9."""
    m = Model("upsample9", 9, seed)
    x = m.input("x", [1, 2, 3, 4])
    s = m.const("scales", np.array([1.0, 1.0, 2.0, 2.0], dtype=np.float32))
    m.op("Upsample", [x, s], "up9", mode="nearest")
    idx = m.const("idx", np.array([[[[3, 0, 1, 2]]]], dtype=np.int64))
    upd = m.weight("upd", [1, 1, 1, 4])
    m.op("Scatter", [x, idx, upd], "scattered", axis=3)
    m.output("up9")
    m.output("scattered")
    return m


def resize10(seed):
    """Opset 10: Resize-10 (scales input), nearest up and down, linear up; Dropout-10."""
    m = Model("resize10", 10, seed)
    x = m.input("x", [1, 2, 4, 6])
    up = m.const("up", np.array([1.0, 1.0, 2.0, 1.5], dtype=np.float32))
    down = m.const("down", np.array([1.0, 1.0, 0.5, 0.5], dtype=np.float32))
    m.op("Resize", [x, up], "r_up", mode="nearest")
    m.op("Resize", [x, down], "r_down", mode="nearest")
    m.op("Resize", [x, up], "r_linear", mode="linear")
    m.op("Dropout", [x], "d10", ratio=0.2)
    for o in ("r_up", "r_down", "r_linear", "d10"):
        m.output(o)
    return m


def opset18(seed):
    """Opset 18 (IR 8), newer than Debian's ONNX library: Reduce* with axes as an input and
    noop_with_empty_axes, Split with num_outputs (uneven), Resize and Pad with the new
    attributes and inputs at their defaults, ScatterElements, Mish."""
    m = Model("opset18", 18, seed)
    x = m.input("x", [2, 3, 4, 7])
    m.op("ReduceMean", [x, m.const("axes", np.array([1, -1], dtype=np.int64))], "mean", keepdims=1)
    m.op("ReduceMax", [x], "max_noop", noop_with_empty_axes=1)
    m.op("ReduceL2", [x], "l2_all", keepdims=0)
    m.op("Split", [x], ["s0", "s1", "s2"], axis=3, num_outputs=3)
    m.op("Resize", [x, "", m.const("scales", np.array([1, 1, 2, 0.5], dtype=np.float32))],
         "resized", mode="linear", antialias=0, keep_aspect_ratio_policy="stretch")
    m.op("Pad", [x, m.const("pads", np.array([0, 0, 1, 0, 0, 0, 0, 2], dtype=np.int64))],
         "padded", mode="reflect")
    m.op("Mish", [x], "mish")
    for o, r in (("mean", 4), ("max_noop", 4), ("l2_all", 0), ("s0", 4), ("s1", 4), ("s2", 4),
                 ("resized", 4), ("padded", 4), ("mish", 4)):
        m.output(o, rank=r)
    return m


def opset21(seed):
    """Opset 21 (IR 10): Gelu-20 exact and tanh, ReduceMin-20, Cast-21, Transpose-21."""
    m = Model("opset21", 21, seed)
    x = m.input("x", [2, 3, 5])
    m.op("Gelu", [x], "gelu")
    m.op("Gelu", [x], "gelu_tanh", approximate="tanh")
    m.op("ReduceMin", [x, m.const("axes", np.array([2], dtype=np.int64))], "rmin", keepdims=0)
    m.op("Cast", [x], "as_f64", to=TensorProto.DOUBLE)
    m.op("Transpose", [x], "transposed", perm=[2, 0, 1])
    for o, r in (("gelu", 3), ("gelu_tanh", 3), ("rmin", 2), ("transposed", 3)):
        m.output(o, rank=r)
    m.output("as_f64", TensorProto.DOUBLE, rank=3)
    return m


CATALOGUE = {f.__name__: f for f in (clip_softmax, pad_slice, axes_attributes, split_topk,
                                     bn_pool_gemm, upsample7, upsample9, resize10, opset18,
                                     opset21)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--list", action="store_true", help="print the model names")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if a.list:
        print("\n".join(CATALOGUE))
        return 0
    if not a.out:
        ap.error("--out DIR is required")
    os.makedirs(a.out, exist_ok=True)
    for name, build in CATALOGUE.items():
        m = build(a.seed)
        for dynamic in (False, True):
            path = os.path.join(a.out, name + ("_dynamic" if dynamic else "") + ".onnx")
            data = m.build(dynamic).SerializeToString()
            try:
                with open(path, "rb") as f:
                    if f.read() == data:
                        continue
            except FileNotFoundError:
                pass
            with open(path + ".tmp", "wb") as f:
                f.write(data)
            os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
