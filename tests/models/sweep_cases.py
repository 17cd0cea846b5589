#!/usr/bin/python3
"""Seeded single-node test cases for the opset-version sweep (tests/oracle/opset_sweep.py).

For every op in Lathe's op table (engine/graph/ops.def) but control flow, Constant and ops
with random outputs, and for every schema version of it that is in force at some opset from
7 to 21, this module draws small cases: one node with its own inputs and outputs, random
shapes and attribute values that the schema allows. A *recipe* per op family knows what
makes a case valid (axes within rank, kernels that fit, indices in range); which attributes
and inputs exist, and which element types are allowed, come from the schema of that version:
Debian's ONNX library (1.12) for versions up to 17, and for the versions after 17 the
library's opset-17 schema changed by hand (SCHEMA_CHANGES_AFTER_17, from the ONNX
changelog), so that the same recipe draws the new attributes and inputs too.

Each case is drawn from its own numpy RandomState seeded by a hash of the seed and the
case's id ("Pad-18@18#2": op, schema version, opset, draw), so one case does not change when
others are added or removed. REGRESSIONS adds fixed cases for bugs the sweep found.

    /usr/bin/python3 tests/models/sweep_cases.py --list [--only REGEX]   # ids of the cases
"""
import argparse
import copy
import os
import re
import sys
import zlib

import numpy as np
from onnx import TensorProto, defs, helper

# The ONNX IR version that goes with each opset (onnx/helper.py's VERSION_TABLE).
IR_FOR_OPSET = {7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8,
                18: 8, 19: 9, 20: 9, 21: 10}
FIRST_OPSET, LAST_OPSET, LIBRARY_OPSET = 7, 21, 17

# Element types the harness can feed and compare (numpy .npz, ort_run.js and
# compare_with_ort.py all know them); other types the schemas allow are not drawn.
NP_FOR_TYPE = {"float": np.float32, "double": np.float64, "int8": np.int8, "uint8": np.uint8,
               "int32": np.int32, "int64": np.int64, "bool": np.bool_}
ONNX_FOR_NP = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
               np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
               np.int32: TensorProto.INT32, np.int64: TensorProto.INT64,
               np.bool_: TensorProto.BOOL}
FLOATS = (np.float32, np.float64)

# Ops the sweep leaves out: control flow (subgraphs), Constant (no inputs to vary).
SKIPPED_OPS = {"If", "Loop", "Scan", "Constant"}

# Schema versions after 17 of ops in Lathe's table, and of the two ops that opset 18/20
# added with an opset-17 expansion that Lathe converts (Mish, Gelu). From the ONNX changelog.
VERSIONS_AFTER_17 = {
    "AveragePool": [19], "Cast": [19, 21], "CastLike": [19, 21], "ConstantOfShape": [20, 21],
    "DequantizeLinear": [19, 21], "Equal": [19], "Flatten": [21], "GridSample": [20],
    "Identity": [19, 21], "IsInf": [20], "IsNaN": [20], "LpPool": [18], "Pad": [18, 19, 21],
    "QLinearMatMul": [21], "QuantizeLinear": [19, 21], "ReduceL1": [18], "ReduceL2": [18],
    "ReduceLogSum": [18], "ReduceLogSumExp": [18], "ReduceMax": [18, 20], "ReduceMean": [18],
    "ReduceMin": [18, 20], "ReduceProd": [18], "ReduceSumSquare": [18], "Reshape": [19, 21],
    "Resize": [18, 19], "ScatterElements": [18], "ScatterND": [18], "Shape": [19, 21],
    "Size": [19, 21], "Split": [18], "Squeeze": [21], "Transpose": [21], "Unsqueeze": [21],
    "Mish": [18], "Gelu": [20],
}


# --------------------------------------------------------------------------------------
# Schemas


class Attr:
    def __init__(self, kind, default=None, required=False):
        self.kind, self.default, self.required = kind, default, required


class Formal:
    """A formal input or output: name, type-constraint string, 'single'/'optional'/'variadic'."""

    def __init__(self, name, type_str, option):
        self.name, self.type_str, self.option = name, type_str, option


class Schema:
    """What a case needs from an ONNX OpSchema, copyable so versions after 17 can be made."""

    def __init__(self, op, version):
        self.op, self.version = op, version
        self.attrs, self.inputs, self.outputs, self.constraints = {}, [], [], {}

    @staticmethod
    def from_library(op, opset):
        s = defs.get_schema(op, opset)
        out = Schema(op, s.since_version)
        options = {0: "single", 1: "optional", 2: "variadic"}
        for name, a in s.attributes.items():
            d = a.default_value
            out.attrs[name] = Attr(a.type, helper.get_attribute_value(d) if d.type else None,
                                   a.required)
        out.inputs = [Formal(f.name, f.typeStr, options[int(f.option)]) for f in s.inputs]
        out.outputs = [Formal(f.name, f.typeStr, options[int(f.option)]) for f in s.outputs]
        for tc in s.type_constraints:
            out.constraints[tc.type_param_str] = [t[len("tensor("):-1] for t in tc.allowed_type_strs
                                                  if t.startswith("tensor(")]
        return out

    def input_index(self, name):
        return next((i for i, f in enumerate(self.inputs) if f.name == name), None)


def _reduce_18(s):
    # Reduce*-18: the axes attribute became an optional int64 input; noop_with_empty_axes.
    del s.attrs["axes"]
    s.inputs.append(Formal("axes", "tensor(int64)", "optional"))
    s.attrs["noop_with_empty_axes"] = Attr(helper.AttributeProto.INT, 0)


def _add_types(tc, *types):
    def change(s):
        s.constraints[tc] = s.constraints[tc] + [t for t in types if t not in s.constraints[tc]]
    return change


def _new_attr(name, kind, default=None):
    def change(s):
        s.attrs[name] = Attr(kind, default)
    return change


INT, INTS = helper.AttributeProto.INT, helper.AttributeProto.INTS
STRING = helper.AttributeProto.STRING

# How each version after 17 differs from the one before it, as far as cases can tell (new
# element types the harness does not draw, such as float8 or int4, are left out).
SCHEMA_CHANGES_AFTER_17 = {
    ("AveragePool", 19): [_new_attr("dilations", INTS)],
    ("Cast", 19): [_new_attr("saturate", INT, 1)],
    ("CastLike", 19): [_new_attr("saturate", INT, 1)],
    ("DequantizeLinear", 21): [_new_attr("block_size", INT, 0)],
    ("QuantizeLinear", 19): [_new_attr("saturate", INT, 1)],
    ("QuantizeLinear", 21): [_new_attr("block_size", INT, 0), _new_attr("output_dtype", INT, 0)],
    ("GridSample", 20): [_new_attr("mode", STRING, "linear")],
    ("LpPool", 18): [_new_attr("ceil_mode", INT, 0), _new_attr("dilations", INTS)],
    ("Pad", 18): [lambda s: s.inputs.append(Formal("axes", "Tind", "optional")),
                  lambda s: s.constraints.__setitem__("Tind", ["int32", "int64"])],
    ("Resize", 18): [_new_attr("antialias", INT, 0), _new_attr("axes", INTS),
                     _new_attr("keep_aspect_ratio_policy", STRING, "stretch")],
    ("ReduceMax", 20): [_add_types("T", "bool")],
    ("ReduceMin", 20): [_add_types("T", "bool")],
    ("Split", 18): [_new_attr("num_outputs", INT)],
}
for _op in ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
            "ReduceMin", "ReduceProd", "ReduceSumSquare"):
    SCHEMA_CHANGES_AFTER_17[(_op, 18)] = [_reduce_18]


def _new_op_schema(op, version):
    """Schemas of the ops added after 17 that the sweep covers."""
    s = Schema(op, version)
    s.inputs = [Formal("X", "T", "single")]
    s.outputs = [Formal("Y", "T", "single")]
    s.constraints["T"] = ["float", "double"]
    if op == "Gelu":
        s.attrs["approximate"] = Attr(STRING, "none")
    return s


def schema_for(op, version):
    """The schema of `op` at schema version `version` (any version from 1 to 21)."""
    if version <= LIBRARY_OPSET:
        return Schema.from_library(op, version)
    later = [v for v in VERSIONS_AFTER_17.get(op, []) if v <= version]
    if op in ("Mish", "Gelu"):
        s = _new_op_schema(op, later[0])
    else:
        s = copy.deepcopy(Schema.from_library(op, LIBRARY_OPSET))
    for v in later:
        for change in SCHEMA_CHANGES_AFTER_17.get((op, v), []):
            change(s)
        s.version = v
    return s


def version_at(op, opset):
    """The schema version of `op` in force at `opset`, or None where the op does not exist."""
    later = [v for v in VERSIONS_AFTER_17.get(op, []) if v <= opset]
    if later:
        return later[-1]
    if op in ("Mish", "Gelu"):
        return None
    try:
        return defs.get_schema(op, min(opset, LIBRARY_OPSET)).since_version
    except Exception:  # not yet defined at this opset
        return None


# --------------------------------------------------------------------------------------
# Cases


class Case:
    """One node with its own graph inputs (arrays), initializers and outputs."""

    def __init__(self, cid, op, version, opset, draw, seed):
        self.cid, self.op, self.version, self.opset, self.draw = cid, op, version, opset, draw
        self.seed = seed
        self.prefix = ""           # unique name prefix inside a batched model, set by the caller
        self.node = None           # onnx NodeProto (names without prefix)
        self.inputs = {}           # graph input name -> array (its shape is the static shape)
        self.initializers = {}     # name -> array
        self.outputs = []          # output names
        self.atol, self.rtol = 1e-4, 1e-3
        self.tolerance_note = ""   # why a looser tolerance is right, where it is looser
        self.allow_nan = False
        self.must_pass = False     # a refusal fails the case too (fixed regression cases)

    @property
    def label(self):
        """The op-version and opset: 'Pad-13@13'; several cases (draws) share a label."""
        return f"{self.op}-{self.version}@{self.opset}"

    def describe(self):
        """Attributes and shapes, for reports and reproductions."""
        attrs = {a.name: helper.get_attribute_value(a) for a in self.node.attribute}
        attrs = {k: (v.decode() if isinstance(v, bytes) else
                     [x.decode() if isinstance(x, bytes) else x for x in v] if isinstance(v, list)
                     else v) for k, v in attrs.items()}
        parts = []
        for n in self.node.input:
            if not n:
                parts.append("_")
            elif n in self.inputs:
                a = self.inputs[n]
                parts.append(f"{n}: {a.dtype}{list(a.shape)}")
            else:
                a = self.initializers[n]
                shown = a.tolist() if a.size <= 8 else f"{a.dtype}{list(a.shape)}"
                parts.append(f"{n} = {shown}")
        return f"{self.op}({', '.join(parts)}) {attrs} -> {list(self.node.output)}"


class Skip(Exception):
    """A recipe cannot make a valid case for this draw (e.g. no allowed type)."""


class Ctx:
    """What a recipe uses to build its case: the schema, a seeded RandomState, and helpers
    that add graph inputs, initializers and the node."""

    def __init__(self, case, schema):
        self.case, self.schema = case, schema
        self.op, self.version = case.op, schema.version
        self.opset, self.draw = case.opset, case.draw
        self.rng = np.random.RandomState(zlib.crc32(f"{case.seed}/{case.cid}".encode()))
        self.no_default_fill = set()

    # Schema queries.
    def has_attr(self, name):
        return name in self.schema.attrs

    def has_input(self, name):
        return self.schema.input_index(name) is not None

    def types(self, tc):
        """numpy dtypes the harness supports among those that constraint `tc` allows."""
        return [NP_FOR_TYPE[t] for t in self.schema.constraints.get(tc, []) if t in NP_FOR_TYPE]

    def dtype(self, tc, prefer=np.float32, among=None):
        """Even draws take `prefer` where allowed; odd ones any allowed type (of `among`)."""
        allowed = [t for t in self.types(tc) if among is None or t in among]
        if not allowed:
            raise Skip(f"no supported element type for {tc}")
        if (not isinstance(self.draw, int) or self.draw % 2 == 0) and prefer in allowed:
            return prefer
        return allowed[self.rng.randint(len(allowed))]

    # Random draws.
    def chance(self, p):
        return self.rng.uniform() < p

    def pick(self, seq):
        return seq[self.rng.randint(len(seq))]

    def randint(self, lo, hi):
        """An int in [lo, hi] (both ends included)."""
        return int(self.rng.randint(lo, hi + 1))

    def uniform(self, lo, hi):
        return float(np.float32(self.rng.uniform(lo, hi)))

    def shape(self, rank, max_elems=64, lo=1, hi=5):
        """A shape of `rank` dims in [lo, hi] with at most `max_elems` elements."""
        for _ in range(100):
            s = [self.randint(lo, hi) for _ in range(rank)]
            if int(np.prod(s)) <= max_elems:
                return s
        return [lo] * rank

    def axis(self, rank, negative_since=11):
        """An axis in [-rank, rank-1] (negative ones from schema version `negative_since`)."""
        a = self.randint(0, rank - 1)
        if self.version >= negative_since and self.chance(0.4):
            a -= rank
        return a

    def values(self, shape, dtype, lo=-1.0, hi=1.0, nonzero=False, ilo=None, ihi=None):
        """Random values: floats in [lo, hi] (|x| >= 0.2 when nonzero), small integers
        (in [ilo, ihi] where given), random booleans."""
        if dtype == np.bool_:
            return self.rng.randint(0, 2, size=shape).astype(np.bool_)
        if dtype in FLOATS:
            v = self.rng.uniform(lo, hi, size=shape)
            if nonzero:
                v = np.where(np.abs(v) < 0.2, np.copysign(0.2, v) + v, v)
            return v.astype(dtype)
        info = np.iinfo(dtype)
        if ilo is None:
            ilo, ihi = (0, 9) if info.min == 0 else (-5, 5)
        v = self.rng.randint(max(ilo, info.min), min(ihi, info.max) + 1, size=shape)
        if nonzero:
            v = np.where(v == 0, 1, v)
        return v.astype(dtype)

    # Building the case.
    def data(self, name, array):
        """A graph input (dynamic in the dynamic variant)."""
        self.case.inputs[name] = np.asarray(array)
        return name

    def const(self, name, array):
        """An initializer."""
        self.case.initializers[name] = np.asarray(array)
        return name

    def node(self, inputs, outputs, op=None, **attrs):
        """The case's node. Attributes the recipe leaves out are written at their schema
        default now and then, so that explicit defaults are exercised as well."""
        attrs = {k: v for k, v in attrs.items() if v is not None}
        unknown = sorted(set(attrs) - set(self.schema.attrs))
        assert not unknown, f"{self.case.cid}: {unknown} not in {self.op}-{self.version}"
        for name, a in sorted(self.schema.attrs.items()):
            if (name not in attrs and a.default is not None and name not in self.no_default_fill
                    and self.chance(0.2)):
                attrs[name] = a.default
        while inputs and inputs[-1] == "":
            inputs = inputs[:-1]
        self.case.node = helper.make_node(op or self.op, inputs, outputs, name=self.op, **attrs)
        self.case.outputs = [o for o in outputs if o]

    def loosen(self, atol, rtol, why):
        self.case.atol, self.case.rtol, self.case.tolerance_note = atol, rtol, why


# --------------------------------------------------------------------------------------
# Recipes. Each takes a Ctx and builds one node; RECIPES maps op -> recipe. Data inputs are
# graph inputs (so that kernels really run); shape-like parameters (axes, pads, shapes,
# scales, k) are initializers, as exporters write them.

RECIPES = {}


def recipe(*ops, draws=3):
    def register(fn):
        for op in ops:
            RECIPES[op] = (fn, draws)
        return fn
    return register


def _rank_and_shape(c, lo_rank=1, hi_rank=4, max_elems=64):
    return c.shape(c.randint(lo_rank, hi_rank), max_elems)


# Input ranges of unary float ops whose domain is not all of [-1, 1] (or where a wider
# range shows more of the function).
UNARY_RANGE = {
    "Acos": (-0.95, 0.95), "Asin": (-0.95, 0.95), "Atanh": (-0.95, 0.95), "Acosh": (1.05, 3.0),
    "Log": (0.05, 2.0), "Sqrt": (0.0, 2.0), "Round": (-3.0, 3.0), "Ceil": (-3.0, 3.0),
    "Floor": (-3.0, 3.0), "Exp": (-3.0, 3.0), "Sinh": (-2.0, 2.0), "Cosh": (-2.0, 2.0),
    "Tan": (-1.2, 1.2), "Softplus": (-3.0, 3.0), "Sigmoid": (-4.0, 4.0), "Tanh": (-3.0, 3.0),
    "Erf": (-2.0, 2.0), "HardSwish": (-4.0, 4.0), "Gelu": (-3.0, 3.0), "Mish": (-3.0, 3.0),
}

# Attributes of unary ops: name -> a draw of a sensible value.
UNARY_ATTRS = {
    "Elu": {"alpha": lambda c: c.uniform(0.1, 2.0)},
    "Celu": {"alpha": lambda c: c.uniform(0.3, 2.0)},
    "Selu": {"alpha": lambda c: c.uniform(1.0, 2.0), "gamma": lambda c: c.uniform(0.5, 1.5)},
    "HardSigmoid": {"alpha": lambda c: c.uniform(0.1, 0.6), "beta": lambda c: c.uniform(0.2, 0.8)},
    "LeakyRelu": {"alpha": lambda c: c.uniform(0.01, 0.5)},
    "ThresholdedRelu": {"alpha": lambda c: c.uniform(-0.5, 0.8)},
    "Shrink": {"bias": lambda c: c.uniform(0.0, 0.5), "lambd": lambda c: c.uniform(0.0, 0.8)},
    "IsInf": {"detect_negative": lambda c: c.randint(0, 1),
              "detect_positive": lambda c: c.randint(0, 1)},
    "Gelu": {"approximate": lambda c: c.pick(["none", "tanh"])},
}


@recipe("Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Erf",
        "Exp", "Floor", "Log", "Neg", "Reciprocal", "Relu", "Round", "Sigmoid", "Sign", "Sin",
        "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "Elu", "Celu", "Selu",
        "HardSigmoid", "HardSwish", "LeakyRelu", "ThresholdedRelu", "Shrink", "Identity",
        "IsNaN", "IsInf", "Not", "Gelu", "Mish")
def unary(c):
    f = c.schema.inputs[0]
    tc = f.type_str
    dt = c.dtype(tc, prefer=np.bool_ if c.types(tc) == [np.bool_] else np.float32)
    shape = _rank_and_shape(c, 0 if c.chance(0.1) else 1)
    lo, hi = UNARY_RANGE.get(c.op, (-1.0, 1.0))
    x = c.values(shape, dt, lo, hi, nonzero=c.op == "Reciprocal")
    if c.op in ("IsNaN", "IsInf") and x.size:
        # Some NaNs and infinities among the values.
        flat = x.reshape(-1)
        for special in (np.nan, np.inf, -np.inf):
            flat[c.randint(0, flat.size - 1)] = special
    if c.op == "Sign" and dt in FLOATS and x.size:
        x.reshape(-1)[0] = 0
    attrs = {}
    for name, draw in UNARY_ATTRS.get(c.op, {}).items():
        if c.has_attr(name) and c.chance(0.7):
            attrs[name] = draw(c)
            if c.op == "Shrink" and dt not in FLOATS:
                # Whole numbers on integer inputs: ONNX Runtime computes x - bias in float
                # and truncates, the ONNX function body (and Lathe) casts bias and lambd to
                # the input's type first; the two agree on whole numbers.
                attrs[name] = float(round(attrs[name] * 4))
    c.node([c.data(f.name, x)], [c.schema.outputs[0].name], **attrs)


def _broadcast_shapes(c, n, max_elems=48):
    """An output shape and n input shapes that broadcast to it (numpy rules)."""
    out = _rank_and_shape(c, 0 if c.chance(0.05) else 1, 4, max_elems)
    shapes = []
    for _ in range(n):
        drop = c.randint(0, len(out)) if c.chance(0.4) else 0
        s = [1 if c.chance(0.3) else d for d in out[drop:]]
        shapes.append(s)
    if shapes and all(len(s) < len(out) or any(a != b for a, b in zip(s, out)) for s in shapes):
        shapes[c.randint(0, n - 1)] = list(out)  # one input has the full shape
    return out, shapes


@recipe("Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal", "Greater", "Less",
        "GreaterOrEqual", "LessOrEqual", "BitShift")
def binary(c):
    a_f, b_f = c.schema.inputs[0], c.schema.inputs[1]
    logical = c.op in ("And", "Or", "Xor")
    dt = c.dtype(a_f.type_str, prefer=np.bool_ if logical else
                 np.uint8 if c.op == "BitShift" else np.float32)
    dt_b = dt
    if a_f.type_str != b_f.type_str:  # Pow's exponent may have another type
        dt_b = c.dtype(b_f.type_str, prefer=dt)
    _, (sa, sb) = _broadcast_shapes(c, 2)
    attrs = {}
    if c.op == "Pow":
        a = c.values(sa, dt, 0.1, 2.0, ilo=0, ihi=3)
        b = c.values(sb, dt_b, -2.0, 2.0, ilo=0, ihi=3)
    elif c.op == "Div":
        a = c.values(sa, dt, ilo=-20, ihi=20)
        b = c.values(sb, dt, -1.0, 1.0, nonzero=True, ilo=-5, ihi=5)
    elif c.op == "Mod":
        attrs["fmod"] = 1 if dt in FLOATS else c.randint(0, 1)
        a = c.values(sa, dt, -3.0, 3.0, ilo=-20, ihi=20)
        b = c.values(sb, dt, -1.0, 1.0, nonzero=True, ilo=-6, ihi=6)
    elif c.op == "BitShift":
        attrs["direction"] = c.pick(["LEFT", "RIGHT"])
        bits = 8 * np.dtype(dt).itemsize
        a = c.values(sa, dt, ilo=0, ihi=255)
        b = c.values(sb, dt, ilo=0, ihi=bits - 1)
    elif c.op in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual") and dt in FLOATS:
        # Few distinct values, so that ties happen.
        a = c.rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=sa).astype(dt)
        b = c.rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=sb).astype(dt)
    else:
        a, b = c.values(sa, dt), c.values(sb, dt_b)
    c.node([c.data(a_f.name, a), c.data(b_f.name, b)], [c.schema.outputs[0].name], **attrs)


@recipe("Max", "Min", "Mean", "Sum")
def variadic(c):
    f = c.schema.inputs[0]
    dt = c.dtype(f.type_str)
    n = c.randint(1, 3)
    if c.version < 8:  # no broadcasting before version 8
        shape = _rank_and_shape(c)
        shapes = [shape] * n
    else:
        _, shapes = _broadcast_shapes(c, n)
    names = [c.data(f"data_{i}", c.values(s, dt)) for i, s in enumerate(shapes)]
    c.node(names, [c.schema.outputs[0].name])


@recipe("PRelu")
def prelu(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c)
    # The slope broadcasts to X one way: trailing dims of X, some of them 1.
    tail = shape[c.randint(0, len(shape) - 1):] if c.chance(0.8) else shape
    slope = [1 if c.chance(0.3) else d for d in tail]
    c.node([c.data("X", c.values(shape, dt, -2.0, 2.0, ilo=-5, ihi=5)),
            c.data("slope", c.values(slope, dt, ilo=-3, ihi=3))], ["Y"])


@recipe("Where")
def where(c):
    dt = c.dtype("T")
    _, (sc, sx, sy) = _broadcast_shapes(c, 3)
    c.node([c.data("condition", c.values(sc, np.bool_)), c.data("X", c.values(sx, dt)),
            c.data("Y", c.values(sy, dt))], ["output"])


@recipe("Clip")
def clip(c):
    dt = c.dtype("T")
    x = c.values(_rank_and_shape(c), dt, -2.0, 2.0, ilo=-10, ihi=10)
    lo = c.values([], dt, -1.0, 0.0, ilo=-5, ihi=0)
    hi = c.values([], dt, 0.0, 1.0, ilo=0, ihi=5)
    use_lo, use_hi = c.chance(0.7), c.chance(0.7)
    if c.has_attr("min"):  # Clip-6: attributes
        c.node([c.data("input", x)], ["output"], min=float(lo) if use_lo else None,
               max=float(hi) if use_hi else None)
        return
    ins = [c.data("input", x), c.const("min", lo) if use_lo else "",
           c.const("max", hi) if use_hi else ""]
    c.node(ins, ["output"])


def _distinct_axes(c, rank, count):
    axes = sorted(c.rng.choice(rank, size=count, replace=False).tolist())
    return [a - rank if c.version >= 11 and c.chance(0.3) else a for a in axes]


REDUCE_RANGE = {"ReduceLogSum": (0.05, 1.0), "ReduceProd": (0.6, 1.4)}


@recipe("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
        "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", draws=5)
def reduce_(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c)
    lo, hi = REDUCE_RANGE.get(c.op, (-1.0, 1.0))
    ilo, ihi = (1, 4) if c.op in ("ReduceLogSum", "ReduceL2", "ReduceLogSumExp") else (-3, 3)
    x = c.values(shape, dt, lo, hi, ilo=ilo, ihi=ihi)
    if c.op == "ReduceProd" and dt in FLOATS:
        x *= np.where(c.rng.uniform(size=shape) < 0.3, -1, 1).astype(dt)
    attrs = {"keepdims": c.randint(0, 1) if c.chance(0.7) else None}
    which = c.pick(["some", "some", "all", "none"])  # axes given, absent, or given empty
    axes = _distinct_axes(c, len(shape), c.randint(1, len(shape))) if which == "some" else None
    ins = [c.data("data", x)]
    if c.has_input("axes"):  # ReduceSum-13, the others from 18
        if which == "some":
            ins.append(c.const("axes", np.array(axes, np.int64)))
        elif which == "none":
            ins.append(c.const("axes", np.zeros([0], np.int64)))
        if which != "some" and c.chance(0.5):
            attrs["noop_with_empty_axes"] = c.randint(0, 1)
    elif axes is not None:
        attrs["axes"] = axes
    c.node(ins, ["reduced"], **attrs)


@recipe("ArgMax", "ArgMin", draws=4)
def argmax(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c)
    # Ties in some draws (few distinct values), where select_last_index decides.
    if dt in FLOATS and c.chance(0.5):
        x = c.rng.choice([-1.0, 0.0, 0.5, 1.0], size=shape).astype(dt)
    else:
        x = c.values(shape, dt, ilo=-3, ihi=3)
    attrs = {"axis": c.axis(len(shape)) if c.chance(0.8) else None,
             "keepdims": c.randint(0, 1) if c.chance(0.6) else None}
    if c.has_attr("select_last_index") and c.chance(0.6):
        attrs["select_last_index"] = c.randint(0, 1)
    c.node([c.data("data", x)], ["reduced"], **attrs)


@recipe("CumSum")
def cumsum(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c)
    ax_t = c.pick([np.int64, np.int32])
    c.node([c.data("x", c.values(shape, dt)),
            c.const("axis", np.array(c.axis(len(shape)), ax_t))], ["y"],
           exclusive=c.randint(0, 1) if c.chance(0.6) else None,
           reverse=c.randint(0, 1) if c.chance(0.6) else None)


def _distinct_values(c, shape, dt):
    """Values with no ties (a shuffled range), so that sort orders are unique."""
    n = int(np.prod(shape))
    v = c.rng.permutation(n).astype(np.float64)
    if dt in FLOATS:
        v = (v - n / 2) / n * 2
    elif dt == np.int8:
        v = v - n // 2
    return v.reshape(shape).astype(dt)


@recipe("TopK", draws=4)
def topk(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c)
    axis = c.axis(len(shape)) if c.chance(0.7) else -1
    k = c.randint(1, shape[axis])
    attrs = {"axis": axis if axis != -1 or c.chance(0.5) else None}
    ins = [c.data("X", _distinct_values(c, shape, dt))]
    if c.has_input("K"):
        ins.append(c.const("K", np.array([k], np.int64)))
    else:
        attrs["k"] = k
    if c.has_attr("largest") and c.chance(0.6):
        attrs["largest"] = c.randint(0, 1)
    # sorted=0 leaves the order of the results unspecified: only sorted results compare.
    c.no_default_fill.add("sorted")
    if c.has_attr("sorted") and c.chance(0.3):
        attrs["sorted"] = 1
    c.node(ins, ["Values", "Indices"], **attrs)


def _window(c, spatial, allow_dilation=True, allow_ceil=False, max_pad_frac=True):
    """Kernel, strides, dilations and pads for a sliding window over `spatial` dims that
    fit: every effective kernel fits the padded input, every pad is below the kernel."""
    k, s, d, pads_begin, pads_end = [], [], [], [], []
    for n in spatial:
        dil = c.randint(1, 2) if allow_dilation and n >= 3 and c.chance(0.3) else 1
        kmax = max(1, (n - 1) // dil + 1)
        kk = c.randint(1, min(3, kmax))
        k.append(kk)
        d.append(dil)
        s.append(c.randint(1, 2) if c.chance(0.5) else 1)
        pads_begin.append(c.randint(0, kk - 1) if c.chance(0.5) else 0)
        pads_end.append(c.randint(0, kk - 1) if c.chance(0.5) else 0)
    return k, s, d, pads_begin + pads_end


def _spatial_input(c, dt, n_spatial=None, channels=None, max_elems=96):
    n_spatial = n_spatial or c.pick([1, 2, 2, 2, 3])
    n = c.randint(1, 2)
    ch = channels or c.randint(1, 3)
    lo = 3 if n_spatial < 3 else 2
    hi = {1: 8, 2: 6, 3: 4}[n_spatial]
    for _ in range(100):
        sp = [c.randint(lo, hi) for _ in range(n_spatial)]
        if n * ch * int(np.prod(sp)) <= max_elems:
            return [n, ch] + sp
    return [1, ch] + [lo] * n_spatial  # the smallest, where nothing drawn fits


def _window_attrs(c, shape, attrs, has_dilations, has_ceil):
    """Pooling/conv window attributes on `attrs`: explicit pads or an auto_pad mode."""
    k, s, d, pads = _window(c, shape[2:], allow_dilation=has_dilations)
    attrs["kernel_shape"] = k
    if c.chance(0.6):
        attrs["strides"] = s
    auto = c.pick(["NOTSET", "NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])
    if auto == "NOTSET":
        if any(pads) or c.chance(0.3):
            attrs["pads"] = pads
        if auto == "NOTSET" and c.chance(0.2):
            attrs["auto_pad"] = "NOTSET"
    else:
        attrs["auto_pad"] = auto
        d = [1] * len(d)  # auto_pad with dilations is left out: implementations disagree
    if has_dilations and any(x != 1 for x in d):
        attrs["dilations"] = d
    elif has_dilations and c.chance(0.2):
        attrs["dilations"] = [1] * len(d)
    if has_ceil and auto == "NOTSET" and c.chance(0.4):
        attrs["ceil_mode"] = 1
    return k


@recipe("AveragePool", "MaxPool", "LpPool", draws=8)
def pool(c):
    x_dt = c.dtype("T")
    shape = _spatial_input(c, x_dt)
    attrs = {}
    _window_attrs(c, shape, attrs, c.has_attr("dilations"), c.has_attr("ceil_mode"))
    outs = ["Y"]
    if c.op == "AveragePool" and c.chance(0.5):
        attrs["count_include_pad"] = c.randint(0, 1)
    if c.op == "LpPool" and c.chance(0.7):
        attrs["p"] = c.randint(1, 3)
    if c.op == "MaxPool" and c.has_attr("storage_order"):
        if c.chance(0.4):
            outs.append("Indices")
        if c.chance(0.3):
            attrs["storage_order"] = c.randint(0, 1)
    x = _distinct_values(c, shape, x_dt)  # no ties, so the max's index is unique
    c.node([c.data("X", x)], outs, **attrs)


@recipe("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def global_pool(c):
    dt = c.dtype("T")
    shape = _spatial_input(c, dt)
    attrs = {"p": c.randint(1, 3)} if c.op == "GlobalLpPool" and c.chance(0.7) else {}
    c.node([c.data("X", c.values(shape, dt))], ["Y"], **attrs)


@recipe("MaxUnpool")
def max_unpool(c):
    dt = c.dtype("T1")
    n_sp = c.pick([1, 2, 2, 3])
    pooled = _spatial_input(c, dt, n_sp, max_elems=24)
    pooled[2:] = [min(p, 3) for p in pooled[2:]]
    k = [c.randint(1, 3) for _ in range(n_sp)]
    s = k  # non-overlapping windows: each pooled value has its own place
    full = pooled[:2] + [(p - 1) * st + kk for p, st, kk in zip(pooled[2:], s, k)]
    ins_extra = []
    out_shape = list(full)
    if c.chance(0.4):
        # An output_shape larger than the default, on the first spatial axis and with N = C
        # = 1 only: the ONNX test data takes the indices as flat in the default shape and
        # keeps their coordinates, ONNX Runtime takes them as flat in output_shape; here
        # both readings give the same places.
        pooled[0] = pooled[1] = 1
        full[0] = full[1] = 1
        out_shape = full[:2] + [full[2] + c.randint(0, 2)] + full[3:]
        ins_extra = [c.const("output_shape", np.array(out_shape, np.int64))]
    # Each pooled element comes from one position of its window (flat index in the output).
    idx = np.zeros(pooled, np.int64)
    for pos in np.ndindex(*pooled):
        spatial = [p * st + c.randint(0, kk - 1) for p, st, kk in zip(pos[2:], s, k)]
        idx[pos] = np.ravel_multi_index(tuple(pos[:2]) + tuple(spatial), out_shape)
    c.node([c.data("X", c.values(pooled, dt)), c.data("I", idx)] + ins_extra, ["output"],
           kernel_shape=k, strides=s if any(x != 1 for x in s) or c.chance(0.5) else None)


@recipe("Conv", "ConvTranspose", draws=10)
def conv(c):
    dt = c.dtype("T")
    group = c.pick([1, 1, 1, 2, 3])
    n_sp = c.pick([1, 2, 2, 2, 3])
    shape = _spatial_input(c, dt, n_sp, channels=group * c.randint(1, 2), max_elems=128)
    m = group * c.randint(1, 2)
    attrs = {}
    k = _window_attrs(c, shape, attrs, True, False)
    if c.chance(0.4):
        del attrs["kernel_shape"]  # inferred from W
    if group > 1 or c.chance(0.2):
        attrs["group"] = group
    if c.op == "Conv":
        w_shape = [m, shape[1] // group] + k
    else:
        w_shape = [shape[1], m // group] + k
        # ConvTranspose pads are output crops: below the kernel's extent, like Conv's.
        strides = attrs.get("strides", [1] * n_sp)
        dil = attrs.get("dilations", [1] * n_sp)
        if c.chance(0.3):
            attrs["output_padding"] = [c.randint(0, max(st, dl) - 1)
                                       for st, dl in zip(strides, dil)]
        elif attrs.get("auto_pad", "NOTSET") == "NOTSET" and c.chance(0.2):
            # output_shape instead of pads: the natural size, or one more where it can be.
            base = [(i - 1) * st + (kk - 1) * dl + 1 for i, st, kk, dl in
                    zip(shape[2:], strides, k, dil)]
            attrs.pop("pads", None)
            attrs["output_shape"] = [b + (c.randint(0, 1) if st > 1 else 0)
                                     for b, st in zip(base, strides)]
    ins = [c.data("X", c.values(shape, dt)), c.const("W", c.values(w_shape, dt))]
    if c.chance(0.6):
        ins.append(c.const("B", c.values([m], dt)))
    c.node(ins, ["Y"], **attrs)


@recipe("ConvInteger", "QLinearConv", draws=5)
def conv_integer(c):
    xt = c.dtype("T1", prefer=np.uint8)
    wt = c.dtype("T2", prefer=np.uint8)
    group = c.pick([1, 1, 2])
    shape = _spatial_input(c, xt, c.pick([1, 2, 2]), channels=group * c.randint(1, 2))
    m = group * c.randint(1, 2)
    attrs = {}
    k = _window_attrs(c, shape, attrs, True, False)
    if group > 1:
        attrs["group"] = group
    x = c.values(shape, xt, ilo=-100, ihi=200)
    w = c.values([m, shape[1] // group] + k, wt, ilo=-100, ihi=200)
    zx = c.values([], xt, ilo=-10, ihi=140)
    # A weight zero point per tensor, or per output channel (QLinearConv; ONNX Runtime's
    # ConvInteger takes a scalar only).
    zw = c.values([m] if c.op == "QLinearConv" and c.chance(0.4) else [], wt, ilo=-10, ihi=140)
    if c.op == "ConvInteger":
        ins = [c.data("x", x), c.const("w", w)]
        if c.chance(0.8):
            ins.append(c.const("x_zero_point", zx))
            if c.chance(0.7):
                ins.append(c.const("w_zero_point", zw))
        c.node(ins, ["y"], **attrs)
        return
    yt = c.dtype("T3", prefer=xt, among=[xt])
    ws = np.float32(c.rng.uniform(0.001, 0.01, size=zw.shape))
    ins = [c.data("x", x), c.const("x_scale", np.float32(c.uniform(0.01, 0.05))),
           c.const("x_zero_point", zx), c.const("w", w), c.const("w_scale", ws),
           c.const("w_zero_point", zw), c.const("y_scale", np.float32(c.uniform(0.05, 0.5))),
           c.const("y_zero_point", c.values([], yt, ilo=-10, ihi=140))]
    if c.chance(0.6):
        ins.append(c.const("B", c.values([m], np.int32, ilo=-500, ihi=500)))
    c.loosen(1, 0, "requantized 8-bit results may round the other way when two float "
             "computations of x*scale land within an ulp of a .5 tie")
    c.node(ins, ["y"], **attrs)


def _matmul_shapes(c, max_elems=48):
    """Shapes of A and B for numpy matmul: ranks 1 to 4, batch dims that broadcast."""
    m, k, n = c.randint(1, 5), c.randint(1, 6), c.randint(1, 5)
    ra, rb = c.pick([1, 2, 2, 3, 4]), c.pick([1, 2, 2, 3, 4])
    batch = c.shape(max(ra, rb) - 2, 12, 1, 3) if max(ra, rb) > 2 else []
    def batch_of(r):
        b = batch[len(batch) - (r - 2):] if r > 2 else []
        return [1 if c.chance(0.3) else d for d in b]
    a = [k] if ra == 1 else batch_of(ra) + [m, k]
    b = [k] if rb == 1 else batch_of(rb) + [k, n]
    return a, b


@recipe("MatMul", draws=5)
def matmul(c):
    dt = c.dtype("T")
    sa, sb = _matmul_shapes(c)
    c.node([c.data("A", c.values(sa, dt)), c.data("B", c.values(sb, dt))], ["Y"])


@recipe("MatMulInteger", "QLinearMatMul", draws=5)
def matmul_integer(c):
    at = c.dtype("T1", prefer=np.uint8)
    bt = c.dtype("T2", prefer=np.uint8)
    m, k, n = c.randint(1, 5), c.randint(1, 6), c.randint(1, 5)
    batch = [c.randint(1, 2)] if c.chance(0.3) else []
    a = c.values(batch + [m, k], at, ilo=-100, ihi=200)
    b = c.values([k, n], bt, ilo=-100, ihi=200)
    za = c.values([], at, ilo=-10, ihi=140)
    zb = c.values([n] if c.chance(0.3) else [], bt, ilo=-10, ihi=140)  # per column
    if c.op == "MatMulInteger":
        ins = [c.data("A", a), c.data("B", b)]
        if c.chance(0.8):
            ins.append(c.const("a_zero_point", za))
            if c.chance(0.7):
                ins.append(c.const("b_zero_point", zb))
        c.node(ins, ["Y"])
        return
    yt = c.dtype("T3", prefer=at, among=[at])
    bs = np.float32(c.rng.uniform(0.001, 0.01, size=zb.shape))
    c.loosen(1, 0, "requantized 8-bit results may round the other way when two float "
             "computations of x*scale land within an ulp of a .5 tie")
    c.node([c.data("a", a), c.const("a_scale", np.float32(c.uniform(0.01, 0.05))),
            c.const("a_zero_point", za), c.data("b", b), c.const("b_scale", bs),
            c.const("b_zero_point", zb), c.const("y_scale", np.float32(c.uniform(0.02, 0.2))),
            c.const("y_zero_point", c.values([], yt, ilo=-10, ihi=140))], ["y"])


@recipe("Gemm", draws=5)
def gemm(c):
    dt = c.dtype("T")
    m, k, n = c.randint(1, 5), c.randint(1, 6), c.randint(1, 5)
    ta, tb = c.randint(0, 1), c.randint(0, 1)
    a = c.values([k, m] if ta else [m, k], dt)
    b = c.values([n, k] if tb else [k, n], dt)
    attrs = {"transA": ta if ta or c.chance(0.3) else None,
             "transB": tb if tb or c.chance(0.3) else None}
    if dt in FLOATS:
        if c.chance(0.5):
            attrs["alpha"] = c.uniform(-2.0, 2.0)
        if c.chance(0.5):
            attrs["beta"] = c.uniform(-2.0, 2.0)
    ins = [c.data("A", a), c.data("B", b)]
    c_required = c.schema.inputs[2].option == "single"
    if c_required or c.chance(0.7):
        # C broadcasts one way to [M, N].
        shape = c.pick([[], [n], [1, n], [m, 1], [m, n], [1]])
        add = c.const if c.chance(0.5) else c.data
        ins.append(add("C", c.values(shape, dt)))
    c.node(ins, ["Y"], **attrs)


# Einsum equations with the letters' roles; sizes are drawn per letter.
EINSUM_EQUATIONS = [
    "ij,jk->ik", "bij,bjk->bik", "ij,kj->ik", "i,i->", "i,j->ij", "ij->ji", "ii->i", "ij->",
    "ijk->ikj", "bhqd,bhkd->bhqk", "ij,j->i", "ijk,k->ij", "ij,ij->ij", "...ij,...jk->...ik",
    "ij", "ba", "ijk->j", "i,i", "ab,bc,cd->ad",
]


@recipe("Einsum", draws=8)
def einsum(c):
    dt = c.dtype("T")
    eq = c.pick(EINSUM_EQUATIONS)
    sizes = {ch: c.randint(1, 4) for ch in "abcdhijkq"}
    ellipsis = c.shape(c.randint(0, 2), 6, 1, 3)
    ins = []
    for i, term in enumerate(eq.split("->")[0].split(",")):
        shape = []
        for ch in term.replace("...", "."):
            shape.extend(ellipsis if ch == "." else [sizes[ch]])
        ins.append(c.data(f"Inputs_{i}", c.values(shape, dt)))
    c.node(ins, ["Output"], equation=eq)


@recipe("Det")
def det(c):
    dt = c.dtype("T")
    n = c.randint(1, 4)
    batch = c.shape(c.randint(0, 2), 6, 1, 3)
    c.node([c.data("X", c.values(batch + [n, n], dt))], ["Y"])


@recipe("BatchNormalization", draws=4)
def batch_norm(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c, 2, 4)
    attrs = {"epsilon": c.uniform(1e-5, 1e-2) if c.chance(0.5) else None}
    per = [shape[1]]
    if c.has_attr("spatial") and c.chance(0.3):
        attrs["spatial"] = 0  # statistics per activation: one per (C, D1, ...) element
        per = shape[1:]
    elif c.has_attr("spatial") and c.chance(0.3):
        attrs["spatial"] = 1
    if c.has_attr("training_mode") and c.chance(0.3):
        attrs["training_mode"] = 0
    if c.chance(0.3):
        attrs["momentum"] = c.uniform(0.5, 0.99)
    ins = [c.data("X", c.values(shape, dt))]
    # Scale, bias, mean and variance, as weights usually; as graph inputs now and then.
    for name, lo, hi in (("scale", 0.5, 1.5), ("B", -1.0, 1.0), ("mean", -1.0, 1.0),
                         ("var", 0.2, 2.0)):
        formal = c.schema.inputs[len(ins)].name
        v = c.values(per, dt, lo, hi)
        ins.append(c.data(formal, v) if c.chance(0.2) else c.const(formal, v))
    c.node(ins, ["Y"], **attrs)


@recipe("InstanceNormalization")
def instance_norm(c):
    dt = c.dtype("T")
    shape = _spatial_input(c, dt, c.pick([1, 2, 3]), max_elems=64)
    ch = shape[1]
    c.node([c.data("input", c.values(shape, dt)), c.const("scale", c.values([ch], dt, 0.5, 1.5)),
            c.const("B", c.values([ch], dt))], ["output"],
           epsilon=c.uniform(1e-5, 1e-2) if c.chance(0.5) else None)


@recipe("LayerNormalization", draws=5)
def layer_norm(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c, 1, 4)
    axis = c.axis(len(shape)) if c.chance(0.7) else -1
    scale_shape = shape[axis:]  # the normalized dims
    ins = [c.data("X", c.values(shape, dt)), c.const("Scale", c.values(scale_shape, dt, 0.5, 1.5))]
    if c.chance(0.6):
        ins.append(c.const("B", c.values(scale_shape, dt)))
    outs = ["Y"] + (["Mean", "InvStdDev"] if c.chance(0.3) else [])
    c.node(ins, outs, axis=axis if axis != -1 or c.chance(0.5) else None,
           epsilon=c.uniform(1e-5, 1e-2) if c.chance(0.5) else None)


@recipe("LpNormalization")
def lp_norm(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c, 1, 4)
    c.node([c.data("input", c.values(shape, dt))], ["output"],
           axis=c.axis(len(shape), negative_since=1) if c.chance(0.7) else None,
           p=c.randint(1, 2) if c.chance(0.7) else None)


@recipe("LRN")
def lrn(c):
    dt = c.dtype("T")
    shape = _spatial_input(c, dt, 2, channels=c.randint(1, 6))
    # ONNX Runtime takes odd sizes only (the schema allows any).
    c.node([c.data("X", c.values(shape, dt))], ["Y"], size=c.pick([1, 3, 5]),
           alpha=c.uniform(1e-4, 1e-1) if c.chance(0.5) else None,
           beta=c.uniform(0.5, 1.0) if c.chance(0.5) else None,
           bias=c.uniform(0.5, 2.0) if c.chance(0.5) else None)


@recipe("MeanVarianceNormalization")
def mvn(c):
    dt = c.dtype("T")
    # At least two elements reduced: over one element the variance is 0, and the schema's
    # (x - mean) / (sqrt(var) + 1e-9) gives 0 where ONNX Runtime's kernel gives 0/0 = NaN.
    if c.chance(0.5):  # the default axes [0, 2, 3] on a 4-D input
        shape = c.shape(4, 64, 1, 4)
        while shape[0] * shape[2] * shape[3] < 2:
            shape = c.shape(4, 64, 1, 4)
        c.node([c.data("X", c.values(shape, dt))], ["Y"])
        return
    shape = _rank_and_shape(c, 1, 4)
    while int(np.prod(shape)) < 2:
        shape = _rank_and_shape(c, 1, 4)
    axes = [0]
    while int(np.prod([shape[a] for a in axes])) < 2:
        axes = _distinct_axes(c, len(shape), c.randint(1, len(shape)))
    c.node([c.data("X", c.values(shape, dt))], ["Y"], axes=axes)


@recipe("Softmax", "LogSoftmax", "Hardmax", draws=4)
def softmax(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c, 1, 4)
    rank = len(shape)
    default = c.schema.attrs["axis"].default
    x = c.values(shape, dt, -3.0, 3.0)
    if rank <= default or c.chance(0.7):  # the default axis only where it is in range
        c.node([c.data("input", x)], ["output"], axis=c.axis(rank))
    else:
        c.node([c.data("input", x)], ["output"])


def _cast_values(c, shape, src, dst):
    """Values of type `src` that convert to `dst` without overflow or undefined behaviour
    (no negative floats to unsigned types); some zeros where the target is bool."""
    unsigned_dst = dst == np.uint8 or dst == np.bool_
    if src in FLOATS:
        v = c.rng.uniform(0.0 if unsigned_dst else -5.0, 5.0, size=shape)
    elif src == np.bool_:
        return c.values(shape, src)
    else:
        v = c.rng.randint(0 if unsigned_dst else -5, 10, size=shape)
        if np.iinfo(src).min == 0:
            v = np.abs(v)
    v = np.where(c.rng.uniform(size=shape) < 0.2, 0, v)
    return v.astype(src)


@recipe("Cast", draws=8)
def cast(c):
    src = c.dtype("T1")
    dst = c.dtype("T2", prefer=c.pick([np.int32, np.int64, np.float64, np.uint8, np.bool_]))
    shape = _rank_and_shape(c, 0 if c.chance(0.1) else 1)
    attrs = {"to": ONNX_FOR_NP[dst]}
    # saturate only means something for float8 targets; ONNX Runtime refuses it otherwise,
    # so it is rare here.
    if c.has_attr("saturate") and c.chance(0.15):
        attrs["saturate"] = c.randint(0, 1)
    c.node([c.data("input", _cast_values(c, shape, src, dst))], ["output"], **attrs)


@recipe("CastLike", draws=4)
def cast_like(c):
    src = c.dtype("T1")
    dst = c.dtype("T2", prefer=c.pick([np.int32, np.int64, np.float64, np.uint8, np.bool_]))
    shape = _rank_and_shape(c)
    attrs = {"saturate": c.randint(0, 1)} if c.has_attr("saturate") and c.chance(0.15) else {}
    c.node([c.data("input", _cast_values(c, shape, src, dst)),
            c.data("target_type", c.values([c.randint(1, 2)], dst))], ["output"], **attrs)


def _any_type(c, tc):
    return c.dtype(tc, prefer=np.float32)


@recipe("Compress")
def compress(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 3)
    axis = c.axis(len(shape)) if c.chance(0.7) else None
    length = int(np.prod(shape)) if axis is None else shape[axis]
    cond = c.values([c.randint(1, length)], np.bool_)
    # The condition decides the output's shape: a graph input in some draws, a weight in others.
    cond_name = c.data("condition", cond) if c.draw % 2 else c.const("condition", cond)
    c.node([c.data("input", c.values(shape, dt)), cond_name], ["output"], axis=axis)


@recipe("Concat", draws=4)
def concat(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 4, 32)
    axis = c.axis(len(shape))
    ins = []
    for i in range(c.randint(1, 3)):
        s = list(shape)
        s[axis] = c.randint(1, 3)
        ins.append(c.data(f"inputs_{i}", c.values(s, dt)))
    c.node(ins, ["concat_result"], axis=axis)


@recipe("ConstantOfShape")
def constant_of_shape(c):
    shape = c.shape(c.randint(0, 3), 32)
    attrs = {}
    if c.chance(0.7):
        dt = c.dtype("T2", prefer=c.pick([np.float32, np.int64, np.int32, np.bool_, np.float64]))
        attrs["value"] = helper.make_tensor("value", ONNX_FOR_NP[dt], [1],
                                            c.values([1], dt, -3.0, 3.0).tolist())
    # The shape as a graph input (values decide the output shape) or as a weight.
    arr = np.array(shape, np.int64)
    name = c.data("input", arr) if c.draw % 2 else c.const("input", arr)
    c.node([name], ["output"], **attrs)


@recipe("DepthToSpace", "SpaceToDepth")
def depth_space(c):
    dt = _any_type(c, "T")
    b = c.randint(2, 3)
    n, ch, h, w = c.randint(1, 2), c.randint(1, 2), c.randint(1, 3), c.randint(1, 3)
    attrs = {"blocksize": b}
    if c.op == "DepthToSpace":
        shape = [n, ch * b * b, h, w]
        if c.has_attr("mode") and c.chance(0.6):
            attrs["mode"] = c.pick(["DCR", "CRD"])
    else:
        shape = [n, ch, h * b, w * b]
    c.node([c.data("input", c.values(shape, dt))], ["output"], **attrs)


@recipe("Expand")
def expand(c):
    dt = _any_type(c, "T")
    out, (x,) = _broadcast_shapes(c, 1, 48)
    target = list(out)
    # The shape may itself have 1s where the input is larger (two-way broadcasting), and
    # more or fewer dims.
    target = [1 if c.chance(0.2) and i >= len(out) - len(x) and x[i - (len(out) - len(x))] > 1
              else d for i, d in enumerate(target)]
    if c.chance(0.2):
        target = target[c.randint(0, len(target)):] if len(target) else target
    c.node([c.data("input", c.values(x, dt)), c.const("shape", np.array(target, np.int64))],
           ["output"])


@recipe("EyeLike")
def eye_like(c):
    src = c.dtype("T1")
    r, co = c.randint(1, 5), c.randint(1, 5)
    attrs = {"k": c.randint(-r, co) if c.chance(0.7) else None}
    if c.chance(0.5):
        attrs["dtype"] = ONNX_FOR_NP[c.dtype("T2", prefer=np.int64)]
    c.node([c.data("input", c.values([r, co], src))], ["output"], **attrs)


@recipe("Flatten")
def flatten(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 4)
    r = len(shape)
    axis = c.randint(-r if c.version >= 11 else 0, r) if c.chance(0.8) else None
    c.node([c.data("input", c.values(shape, dt))], ["output"], axis=axis)


def _indices(c, shape, dim, dt=np.int64, negative=True):
    """Index values in [-dim, dim-1] (or [0, dim-1])."""
    v = c.rng.randint(0, dim, size=shape)
    if negative:
        v = np.where(c.rng.uniform(size=shape) < 0.3, v - dim, v)
    return v.astype(dt)


@recipe("Gather", draws=5)
def gather(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 3, 32)
    axis = c.axis(len(shape)) if c.chance(0.7) else 0
    it = c.pick(c.types("Tind"))
    idx = _indices(c, c.shape(c.randint(0, 2), 8, 1, 3), shape[axis], it,
                   negative=c.version >= 11)
    c.node([c.data("data", c.values(shape, dt)), c.data("indices", idx)], ["output"],
           axis=axis if axis or c.chance(0.5) else None)


@recipe("GatherElements")
def gather_elements(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 3, 32)
    axis = c.axis(len(shape))
    ishape = [c.randint(1, 4) if i == axis % len(shape) else c.randint(1, d)
              for i, d in enumerate(shape)]
    it = c.pick(c.types("Tind"))
    c.node([c.data("data", c.values(shape, dt)),
            c.data("indices", _indices(c, ishape, shape[axis], it))], ["output"], axis=axis)


@recipe("GatherND", draws=5)
def gather_nd(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 4, 48)
    r = len(shape)
    b = c.randint(0, r - 1) if c.has_attr("batch_dims") and c.chance(0.5) else 0
    m = c.randint(1, r - b)
    q_extra = c.shape(c.randint(0, 2), 6, 1, 3)
    ishape = shape[:b] + q_extra + [m]
    idx = np.stack([_indices(c, ishape[:-1], shape[b + j], negative=c.version >= 12)
                    for j in range(m)], axis=-1).astype(np.int64)
    c.node([c.data("data", c.values(shape, dt)), c.data("indices", idx)], ["output"],
           batch_dims=b if c.has_attr("batch_dims") and (b or c.chance(0.3)) else None)


@recipe("NonZero")
def non_zero(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 3)
    x = c.values(shape, dt, ilo=-1, ihi=1)
    if dt in FLOATS:
        x = np.where(c.rng.uniform(size=shape) < 0.4, 0, x).astype(dt)
    c.node([c.data("X", x)], ["Y"])


@recipe("OneHot", draws=4)
def one_hot(c):
    it = c.dtype("T1", prefer=np.int64)
    shape = _rank_and_shape(c, 0 if c.chance(0.1) else 1, 3, 16)
    depth = c.randint(1, 5)
    idx = _indices(c, shape, depth, np.int64, negative=c.version >= 11).astype(it) \
        if it != np.uint8 else c.rng.randint(0, depth, size=shape).astype(it)
    dep_t = c.dtype("T2", prefer=np.int64)
    val_t = c.dtype("T3", prefer=np.float32)
    values = c.values([2], val_t, ilo=-5, ihi=5)
    r = len(shape) + 1
    c.node([c.data("indices", idx), c.const("depth", np.array(depth, dep_t)),
            c.const("values", values)], ["output"],
           axis=c.randint(-r, r - 1) if c.chance(0.7) else None)


@recipe("Pad", draws=8)
def pad(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 4, 48)
    r = len(shape)
    modes = ["constant", "reflect", "edge"] + (["wrap"] if c.version >= 19 else [])
    mode = c.pick(modes)
    # Only some axes padded when the axes input exists (Pad-18).
    axes = sorted(c.rng.choice(r, size=c.randint(1, r), replace=False).tolist()) \
        if c.has_input("axes") and c.chance(0.5) else list(range(r))

    def amount(d):
        hi = d - 1 if mode == "reflect" else d if mode == "wrap" else 2
        p = c.randint(0, max(0, min(hi, 2)))
        # Negative pads (crops) in constant mode from Pad-11.
        if mode == "constant" and c.version >= 11 and d > 2 and c.chance(0.15):
            p = -1
        return p
    begins = [amount(shape[a]) for a in axes]
    ends = [amount(shape[a]) for a in axes]
    pads = begins + ends
    attrs = {"mode": mode if mode != "constant" or c.chance(0.3) else None}
    x = c.data("data", c.values(shape, dt))
    value = c.values([], dt, -2.0, 2.0, ilo=1, ihi=5)
    if c.has_attr("pads"):  # Pad-2: attributes
        attrs["pads"] = pads
        if mode == "constant" and c.chance(0.6):
            attrs["value"] = float(value)
        c.node([x], ["output"], **attrs)
        return
    ins = [x, c.const("pads", np.array(pads, np.int64)),
           c.const("constant_value", value) if mode == "constant" and c.chance(0.6) else ""]
    if c.has_input("axes") and (axes != list(range(r)) or c.chance(0.3)):
        # int64 axes: ONNX Runtime 1.30 fails to load int32 ones, which the schema allows.
        at = np.int64
        ins.append(c.const("axes", np.array([a - r if c.chance(0.3) else a for a in axes], at)))
    c.node(ins, ["output"], **attrs)


@recipe("Range")
def range_(c):
    dt = c.dtype("T", prefer=c.pick([np.float32, np.int64, np.int32]))
    if dt in FLOATS:
        start, delta = c.uniform(-3.0, 3.0), c.pick([-1, 1]) * c.uniform(0.3, 1.5)
        limit = start + delta * c.uniform(0.5, 10.0)
    else:
        start, delta = c.randint(-5, 5), c.pick([-3, -2, -1, 1, 2, 3])
        limit = start + delta * c.randint(0, 8) + c.randint(-1, 1)
    as_input = c.draw % 2 == 1  # graph inputs (the values decide the shape) or weights
    add = c.data if as_input else c.const
    c.node([add("start", np.array(start, dt)), add("limit", np.array(limit, dt)),
            add("delta", np.array(delta, dt))], ["output"])


@recipe("Reshape", draws=5)
def reshape(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 4)
    total = int(np.prod(shape))
    # A new shape with the same number of elements: factor the total.
    dims, rest = [], total
    for _ in range(c.randint(0, 3)):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = c.pick(divisors)
        dims.append(d)
        rest //= d
    dims.append(rest)
    c.rng.shuffle(dims)
    target = list(dims)
    if c.chance(0.4):
        target[c.randint(0, len(target) - 1)] = -1
    # 0 copies the input dim at that position (where it is the same).
    for i in range(min(len(target), len(shape))):
        if target[i] == shape[i] and c.chance(0.3):
            target[i] = 0
    attrs = {}
    if c.has_attr("allowzero") and 0 not in target and c.chance(0.4):
        attrs["allowzero"] = 1  # only differs where the shape has a 0
    c.node([c.data("data", c.values(shape, dt)), c.const("shape", np.array(target, np.int64))],
           ["reshaped"], **attrs)


@recipe("ReverseSequence")
def reverse_sequence(c):
    dt = _any_type(c, "T")
    t, b = c.randint(1, 5), c.randint(1, 4)
    time_axis = c.randint(0, 1)
    shape = [t, b] if time_axis == 0 else [b, t]
    shape += c.shape(c.randint(0, 2), 6, 1, 3)
    lens = c.rng.randint(1, t + 1, size=[b]).astype(np.int64)
    c.node([c.data("input", c.values(shape, dt)), c.data("sequence_lens", lens)], ["Y"],
           time_axis=time_axis, batch_axis=1 - time_axis)


@recipe("Shape", "Size")
def shape_size(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 0 if c.chance(0.1) else 1, 4)
    attrs = {}
    if c.has_attr("start") and c.chance(0.7):
        r = len(shape)
        attrs["start"] = c.randint(-r - 1, r + 1)
        if c.chance(0.6):
            attrs["end"] = c.randint(-r - 1, r + 1)
    c.node([c.data("data", c.values(shape, dt))], [c.schema.outputs[0].name], **attrs)


@recipe("Slice", draws=8)
def slice_(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 4)
    r = len(shape)
    axes = c.rng.choice(r, size=c.randint(1, r), replace=False).tolist()
    starts, ends, steps = [], [], []
    for a in axes:
        d = shape[a]
        step = c.pick([1, 1, 1, 2, -1, -2]) if c.has_input("steps") else 1
        # A non-empty range first (begin b, end e in [-1, d]), then written as exporters
        # do: negative from the back, or clamped far beyond the ends.
        b = c.randint(0, d - 1)
        e = c.randint(b + 1, d) if step > 0 else c.randint(-1, b - 1)
        s_val = b - d if c.chance(0.3) else b
        if e == d and c.chance(0.5):
            e_val = c.pick([2 ** 63 - 1, 1000, d + 3])
        elif e == -1:
            e_val = c.pick([-2 ** 63, -1000, -d - 1])
        else:
            e_val = e - d if c.chance(0.3) else e
        starts.append(s_val)
        ends.append(e_val)
        steps.append(step)
    signed_axes = [a - r if c.version >= 11 and c.chance(0.3) else a for a in axes]
    all_axes = sorted(axes) == list(range(r)) and signed_axes == list(range(r))
    if c.has_attr("starts"):  # Slice-1: attributes
        c.node([c.data("data", c.values(shape, dt))], ["output"], starts=starts,
               ends=[min(max(e, -2 ** 31), 2 ** 31 - 1) for e in ends],
               axes=signed_axes if not all_axes or c.chance(0.5) else None)
        return
    it = c.pick([np.int64, np.int32])
    if it == np.int32:
        ends = [min(max(e, -2 ** 31), 2 ** 31 - 1) for e in ends]
    ins = [c.data("data", c.values(shape, dt)), c.const("starts", np.array(starts, it)),
           c.const("ends", np.array(ends, it))]
    give_steps = any(s != 1 for s in steps) or c.chance(0.3)
    if not all_axes or give_steps or c.chance(0.5):
        ins.append(c.const("axes", np.array(signed_axes, it)))
    if give_steps:
        ins.append(c.const("steps", np.array(steps, it)))
    c.node(ins, ["output"])


@recipe("Split", draws=6)
def split(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 4)
    axis = c.axis(len(shape)) if c.chance(0.8) else 0
    d = shape[axis]
    attrs = {"axis": axis if axis or c.chance(0.5) else None}
    ins = [c.data("input", c.values(shape, dt))]
    # From Split-18 one of `split` and num_outputs must be given.
    how = c.pick(["sizes", "num_outputs"] if c.has_attr("num_outputs") else ["sizes", "equal"])
    if how == "sizes":
        n = c.randint(1, min(d, 4))
        cuts = []
        if n > 1:
            cuts = sorted(c.rng.choice(np.arange(1, d), size=n - 1, replace=False).tolist())
        sizes = np.diff([0] + cuts + [d]).tolist()
        if c.has_attr("split"):
            attrs["split"] = sizes
        else:
            ins.append(c.const("split", np.array(sizes, np.int64)))
    elif how == "equal":
        n = c.pick([k for k in range(1, 5) if d % k == 0])
    else:  # num_outputs: ceil(d/n) each, the last one smaller
        n = c.randint(1, min(d, 4))
        # Split-18 needs every part non-empty: ceil(d/n)*(n-1) < d.
        while n > 1 and -(-d // n) * (n - 1) >= d:
            n -= 1
        attrs["num_outputs"] = n
    c.node(ins, [f"outputs_{i}" for i in range(n)], **attrs)


@recipe("Squeeze")
def squeeze(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 4)
    ones = c.rng.choice(len(shape) + 1, size=c.randint(1, 2), replace=False)
    for o in sorted(ones):
        shape.insert(int(o), 1)
    r = len(shape)
    unit = [i for i, d in enumerate(shape) if d == 1]
    axes = sorted(c.rng.choice(unit, size=c.randint(1, len(unit)), replace=False).tolist())
    axes = [a - r if c.version >= 11 and c.chance(0.3) else a for a in axes]
    ins = [c.data("data", c.values(shape, dt))]
    give = c.chance(0.8)
    if c.has_input("axes"):
        if give:
            ins.append(c.const("axes", np.array(axes, np.int64)))
        c.node(ins, ["squeezed"])
    else:
        c.node(ins, ["squeezed"], axes=axes if give else None)


@recipe("Unsqueeze")
def unsqueeze(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 0 if c.chance(0.1) else 1, 3)
    out_rank = len(shape) + c.randint(1, 2)
    axes = sorted(c.rng.choice(out_rank, size=out_rank - len(shape), replace=False).tolist())
    axes = [a - out_rank if c.version >= 11 and c.chance(0.3) else a for a in axes]
    x = c.data("data", c.values(shape, dt))
    if c.has_input("axes"):
        c.node([x, c.const("axes", np.array(axes, np.int64))], ["expanded"])
    else:
        c.node([x], ["expanded"], axes=axes)


@recipe("Tile")
def tile(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 3, 16)
    reps = [c.randint(1, 3) for _ in shape]
    c.node([c.data("input", c.values(shape, dt)), c.const("repeats", np.array(reps, np.int64))],
           ["output"])


@recipe("Transpose")
def transpose(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 5)
    perm = c.rng.permutation(len(shape)).tolist() if c.chance(0.8) else None
    c.node([c.data("data", c.values(shape, dt))], ["transposed"], perm=perm)


@recipe("Trilu")
def trilu(c):
    dt = _any_type(c, "T")
    shape = c.shape(c.randint(2, 4), 64, 1, 5)
    ins = [c.data("input", c.values(shape, dt))]
    if c.chance(0.6):
        ins.append(c.const("k", np.array(c.randint(-shape[-2], shape[-1]), np.int64)))
    c.node(ins, ["output"], upper=c.randint(0, 1) if c.chance(0.7) else None)


RESIZE_SCALES = [0.5, 0.6, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0]


@recipe("Resize", "Upsample", draws=12)
def resize(c):
    dt = _any_type(c, "T" if "T" in c.schema.constraints else "T1")
    n_sp = c.pick([1, 2, 2, 2]) if c.op == "Resize" else 2
    x_shape = [c.randint(1, 2), c.randint(1, 2)] + [c.randint(2, 5) for _ in range(n_sp)]
    r = len(x_shape)
    attrs = {}
    modes = ["nearest", "linear"] + (["cubic"] if c.op == "Resize" and c.version >= 11 else [])
    mode = c.pick(modes)
    if mode != "nearest" or c.chance(0.3):
        attrs["mode"] = mode
    scales = [1.0, 1.0] + [c.pick(RESIZE_SCALES) for _ in range(n_sp)]
    if mode == "cubic" and c.chance(0.5):
        scales[2:] = [max(s, 1.0) for s in scales[2:]]
    if mode == "nearest":
        # Nearest picks a whole pixel, so a coordinate that lands exactly on a rounding
        # boundary must come out the same in f32 (ONNX Runtime) and f64 (Lathe): scales
        # exact in binary (not 0.6) whose products with the input lengths are whole, so
        # that the scale that sizes imply is the same exact number.
        scales[2:] = [c.pick([s for s in RESIZE_SCALES if s != 0.6 and (s * d).is_integer()])
                      for d in x_shape[2:]]
    x = c.data("X", c.values(x_shape, dt))
    if mode != "nearest" and dt not in FLOATS:
        c.loosen(1, 0, "integer results keep the integer part of a float weighted sum: where "
                 "the exact sum is a whole number, float rounding in either implementation "
                 "can land just below it (the regressions with exact weights compare exactly)")
    if c.op == "Upsample" or c.version == 10:
        scales = [max(s, 1.0) for s in scales] if c.op == "Upsample" else scales
        if c.has_attr("scales"):  # Upsample-7
            c.node([x], ["Y"], scales=scales, **attrs)
        else:
            c.node([x, c.const("scales", np.array(scales, np.float32))], ["Y"], **attrs)
        return
    # Resize from 11: coordinate modes, rounding, cubic coefficient, roi.
    coord_modes = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                   "tf_crop_and_resize"]
    if c.version == 11:
        coord_modes.append("tf_half_pixel_for_nn")
    if c.version >= 19:
        coord_modes.append("half_pixel_symmetric")
    coord = c.pick(coord_modes)
    if coord == "tf_half_pixel_for_nn" and mode != "nearest":
        coord = "asymmetric"
    if coord != "half_pixel" or c.chance(0.3):
        attrs["coordinate_transformation_mode"] = coord
    if coord == "align_corners":
        # Scales that give whole output lengths (exactly: not 0.6, inexact in binary):
        # align_corners divides by the resized length minus 1, which the ONNX reference
        # implementation takes as scale * length (Lathe does) and ONNX Runtime as the
        # output's (whole) length.
        scales[2:] = [c.pick([s for s in RESIZE_SCALES if s != 0.6 and (s * d).is_integer()])
                      for d in x_shape[2:]]
    if mode == "nearest" and c.chance(0.7):
        attrs["nearest_mode"] = c.pick(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
    if mode == "cubic":
        if c.chance(0.5):
            attrs["cubic_coeff_a"] = c.pick([-0.5, -0.75])
        if c.chance(0.4):
            attrs["exclude_outside"] = 1
    # Resize-18: only some axes; antialiasing; aspect-ratio policy for sizes.
    axes = list(range(r))
    if c.has_attr("axes") and c.chance(0.5):
        axes = list(range(2, r))
        attrs["axes"] = [a - r if c.chance(0.4) else a for a in axes]
    if c.has_attr("antialias") and mode != "nearest" and c.chance(0.4):
        attrs["antialias"] = 1
    # tf_crop_and_resize takes sizes: with scales the output size is ambiguous (the spec's
    # text scales the roi's extent, ONNX Runtime and ONNX's shape inference do not).
    use_sizes = coord == "tf_crop_and_resize" or c.chance(0.4)
    sizes = [x_shape[a] if a < 2 else int(x_shape[a] * scales[a]) if mode == "nearest"
             else c.randint(1, 8) for a in axes]
    roi_input = ""
    if coord == "tf_crop_and_resize":
        starts = [0.0] * len(axes)
        ends = [1.0] * len(axes)
        for i, a in enumerate(axes):
            # A crop only where the size changes: ONNX Runtime ignores the roi of an axis
            # whose size stays (scale 1), where the spec still crops.
            if a >= 2 and sizes[i] != x_shape[a]:
                starts[i], ends[i] = c.uniform(0.0, 0.4), c.uniform(0.6, 1.0)
        roi_input = c.const("roi", np.array(starts + ends, np.float32))
        if c.chance(0.5):
            attrs["extrapolation_value"] = c.uniform(-1.0, 1.0)
    elif c.version == 11:  # roi and scales are required inputs at 11: empty tensors
        roi_input = c.const("roi", np.zeros([0], np.float32))
    if coord == "pytorch_half_pixel" and (mode == "cubic" or attrs.get("antialias")):
        # Output length 1 is left out here: the spec maps it to coordinate 0 (ONNX Runtime
        # does), the ONNX reference implementation to -0.5 (Lathe does), which differ in
        # cubic weights; linear and nearest give the same value either way.
        sizes = [max(v, 2) if a >= 2 else v for v, a in zip(sizes, axes)]
        scales = [s if a < 2 or s * d >= 2 else 2.0
                  for a, (s, d) in enumerate(zip(scales, x_shape))]
    sel = [scales[a] for a in axes]
    if use_sizes:
        if c.has_attr("keep_aspect_ratio_policy") and c.chance(0.4):
            attrs["keep_aspect_ratio_policy"] = c.pick(["stretch", "not_larger", "not_smaller"])
        scales_input = c.const("scales", np.zeros([0], np.float32)) if c.version == 11 else ""
        ins = [x, roi_input, scales_input, c.const("sizes", np.array(sizes, np.int64))]
    else:
        ins = [x, roi_input, c.const("scales", np.array(sel, np.float32))]
    c.node(ins, ["Y"], **attrs)


def _scatter_indices(c, shape, axis, unique):
    """Indices for ScatterElements (same rank as data, each at most the data's dim); along
    `axis`, distinct within each line where duplicates would make the result ambiguous."""
    ishape = [c.randint(1, d) for d in shape]
    lines = [d for i, d in enumerate(ishape) if i != axis]
    idx = np.zeros(ishape, np.int64)
    moved = np.moveaxis(idx, axis, -1)
    for pos in np.ndindex(*lines):
        if unique:
            moved[pos] = c.rng.permutation(shape[axis])[:ishape[axis]]
        else:
            moved[pos] = c.rng.randint(0, shape[axis], size=ishape[axis])
    return idx


def _reductions(c):
    reds = ["none"]
    if c.has_attr("reduction"):
        reds += ["add", "mul"] + (["max", "min"] if c.version >= 18 else [])
    return reds


@recipe("ScatterElements", draws=5)
def scatter_elements(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 3, 32)
    axis = c.axis(len(shape)) if c.chance(0.8) else 0
    red = c.pick(_reductions(c))
    idx = _scatter_indices(c, shape, axis % len(shape), unique=red == "none")
    if c.chance(0.3):
        idx = np.where(c.rng.uniform(size=idx.shape) < 0.5, idx - shape[axis], idx)
    it = c.pick(c.types("Tind"))
    c.node([c.data("data", c.values(shape, dt)), c.data("indices", idx.astype(it)),
            c.data("updates", c.values(list(idx.shape), dt))], ["output"],
           axis=axis if axis or c.chance(0.5) else None,
           reduction=red if c.has_attr("reduction") and (red != "none" or c.chance(0.3)) else None)


@recipe("ScatterND", draws=5)
def scatter_nd(c):
    dt = _any_type(c, "T")
    shape = _rank_and_shape(c, 1, 3, 32)
    r = len(shape)
    m = c.randint(1, r)
    red = c.pick(_reductions(c))
    # Distinct index tuples (a sample of all tuples of the first m dims).
    count = c.randint(1, min(int(np.prod(shape[:m])), 6))
    flat = c.rng.choice(int(np.prod(shape[:m])), size=count, replace=False)
    if red != "none" and c.chance(0.5):
        flat = c.rng.randint(0, int(np.prod(shape[:m])), size=count)  # duplicates reduce
    tuples = np.stack(np.unravel_index(flat, shape[:m]), axis=-1).astype(np.int64)
    lead = [count] if c.chance(0.7) or count == 1 else None
    if lead is None:
        tuples = tuples.reshape([1, count, m])
    updates_shape = list(tuples.shape[:-1]) + shape[m:]
    c.node([c.data("data", c.values(shape, dt)), c.data("indices", tuples),
            c.data("updates", c.values(updates_shape, dt))], ["output"],
           reduction=red if c.has_attr("reduction") and (red != "none" or c.chance(0.3)) else None)


@recipe("GridSample", draws=8)
def grid_sample(c):
    dt = c.dtype("T1")
    gt = c.dtype("T2")
    n_sp = 3 if c.version >= 20 and c.chance(0.25) else 2
    x_shape = [c.randint(1, 2), c.randint(1, 2)] + [c.randint(2, 4) for _ in range(n_sp)]
    out_sp = [c.randint(1, 4) for _ in range(n_sp)]
    grid = c.values([x_shape[0]] + out_sp + [n_sp], gt, -1.2, 1.2)
    modes = (["nearest", "linear", "cubic"] if c.version >= 20 else
             ["nearest", "bilinear", "bicubic"])
    mode = c.pick(modes[:2] if n_sp == 3 else modes)
    c.node([c.data("X", c.values(x_shape, dt)), c.data("grid", grid)], ["Y"],
           mode=mode if c.chance(0.8) else None,
           padding_mode=c.pick(["zeros", "border", "reflection"]) if c.chance(0.7) else None,
           align_corners=c.randint(0, 1) if c.chance(0.7) else None)


@recipe("BlackmanWindow", "HammingWindow", "HannWindow")
def window(c):
    st = c.dtype("T1", prefer=np.int64)
    attrs = {"periodic": c.randint(0, 1) if c.chance(0.7) else None}
    if c.chance(0.5):
        attrs["output_datatype"] = ONNX_FOR_NP[c.dtype("T2", among=FLOATS)]
    size = np.array(c.randint(1, 16), st)
    # The size as a weight (folded) in one draw, as a graph input in the other.
    name = c.data("size", size) if c.draw % 2 else c.const("size", size)
    c.node([name], ["output"], **attrs)


@recipe("MelWeightMatrix")
def mel_weight_matrix(c):
    it = c.dtype("T1", prefer=np.int64)
    ft = c.dtype("T2", among=FLOATS)
    rate = c.pick([8000, 16000])
    lower = c.uniform(0.0, 300.0)
    c.node([c.const("num_mel_bins", np.array(c.randint(2, 8), it)),
            c.const("dft_length", np.array(c.pick([16, 32, 64]), it)),
            c.const("sample_rate", np.array(rate, it)),
            c.const("lower_edge_hertz", np.array(lower, ft)),
            c.const("upper_edge_hertz", np.array(c.uniform(lower + 500.0, rate / 2), ft))],
           ["output"], output_datatype=ONNX_FOR_NP[c.dtype("T3", among=FLOATS)]
           if c.chance(0.5) else None)


@recipe("QuantizeLinear", "DequantizeLinear", draws=6)
def quantize(c):
    quant = c.op == "QuantizeLinear"
    shape = _rank_and_shape(c, 2, 4)
    per_axis = c.has_attr("axis") and c.chance(0.5)
    axis = c.axis(len(shape)) if per_axis else None
    sshape = [shape[axis]] if per_axis else []
    scale = np.float32(c.rng.uniform(0.005, 0.05, size=sshape))
    attrs = {"axis": axis if per_axis and (axis != 1 or c.chance(0.5)) else None}
    if quant:
        xt = c.dtype("T1", among=[np.float32])
        yt = c.dtype("T2", prefer=np.uint8)
        x = c.values(shape, xt, -2.0, 2.0)
        zp = c.values(sshape, yt, ilo=-20, ihi=140)
        if c.has_attr("saturate") and c.chance(0.4):
            attrs["saturate"] = c.randint(0, 1)  # float8 only
        if c.has_attr("output_dtype") and c.chance(0.4):
            attrs["output_dtype"] = ONNX_FOR_NP[yt]
        ins = [c.data("x", x), c.const("y_scale", scale)]
        # Without a zero point the output is uint8 with zero point 0.
        if yt != np.uint8 or "output_dtype" in attrs or c.chance(0.7):
            ins.append(c.const("y_zero_point", zp))
        outs = ["y"]
    else:
        xt = c.dtype("T" if "T" in c.schema.constraints else "T1", prefer=np.uint8,
                     among=[np.int8, np.uint8, np.int32])
        x = c.values(shape, xt, ilo=-100, ihi=200)
        ins = [c.data("x", x), c.const("x_scale", scale)]
        if xt != np.int32 and c.chance(0.7):
            ins.append(c.const("x_zero_point", c.values(sshape, xt, ilo=-20, ihi=140)))
        outs = ["y"]
    if c.has_attr("block_size") and c.chance(0.3):
        attrs["block_size"] = 0  # blocked quantization is off at 0
    c.node(ins, outs, **attrs)


@recipe("DynamicQuantizeLinear")
def dynamic_quantize(c):
    shape = _rank_and_shape(c, 1, 3)
    c.loosen(1, 1e-5, "the 8-bit result may round the other way where x/scale lands "
             "within an ulp of a .5 tie")
    c.node([c.data("x", c.values(shape, np.float32, -2.0, 3.0))],
           ["y", "y_scale", "y_zero_point"])


# Activation functions the recurrent ops accept, with how many of alpha/beta each takes.
RNN_ACTIVATIONS = ["Tanh", "Sigmoid", "Relu", "HardSigmoid", "LeakyRelu", "Elu", "Softsign",
                   "Softplus", "Affine", "ThresholdedRelu", "ScaledTanh"]
RNN_GATES = {"RNN": (1, 1), "GRU": (3, 2), "LSTM": (4, 3)}  # gates, activations a direction


@recipe("RNN", "GRU", "LSTM", draws=8)
def recurrent(c):
    dt = c.dtype("T")
    gates, n_act = RNN_GATES[c.op]
    seq, batch, inp, hidden = c.randint(1, 4), c.randint(1, 3), c.randint(1, 4), c.randint(1, 4)
    direction = c.pick(["forward", "reverse", "bidirectional"])
    dirs = 2 if direction == "bidirectional" else 1
    layout = c.randint(0, 1) if c.has_attr("layout") and c.chance(0.4) else 0
    attrs = {"hidden_size": hidden,
             "direction": direction if direction != "forward" or c.chance(0.3) else None,
             "layout": layout if c.has_attr("layout") and (layout or c.chance(0.2)) else None}
    c.no_default_fill.add("activations")
    if c.chance(0.3):  # other activations than the defaults, the plain ones
        acts = [c.pick(["Tanh", "Sigmoid", "Relu"]) for _ in range(n_act * dirs)]
        attrs["activations"] = acts
    if c.chance(0.2):
        attrs["clip"] = c.uniform(0.5, 3.0)
    if c.op == "GRU" and c.chance(0.5):
        attrs["linear_before_reset"] = c.randint(0, 1)
    if c.op == "LSTM" and c.chance(0.3):
        attrs["input_forget"] = c.randint(0, 1)

    def batched(shape_seq_first):  # [seq, batch, ...] or [batch, seq, ...] by layout
        s = list(shape_seq_first)
        return [s[1], s[0]] + s[2:] if layout else s
    x = c.data("X", c.values(batched([seq, batch, inp]), dt))
    ins = [x, c.const("W", c.values([dirs, gates * hidden, inp], dt)),
           c.const("R", c.values([dirs, gates * hidden, hidden], dt))]
    optional = []
    if c.chance(0.7):
        optional.append(("B", c.const("B", c.values([dirs, 2 * gates * hidden], dt))))
    if c.chance(0.3):
        lens = c.rng.randint(1, seq + 1, size=[batch]).astype(np.int32)
        optional.append(("sequence_lens", c.data("sequence_lens", lens)))
    state = [dirs, batch, hidden] if not layout else [batch, dirs, hidden]
    if c.chance(0.5):
        optional.append(("initial_h", c.data("initial_h", c.values(state, dt))))
    if c.op == "LSTM":
        if c.chance(0.4):
            optional.append(("initial_c", c.data("initial_c", c.values(state, dt))))
        if c.chance(0.3):
            optional.append(("P", c.const("P", c.values([dirs, 3 * hidden], dt))))
    names = [f.name for f in c.schema.inputs]
    given = dict(optional)
    last = max([names.index(n) for n in given] + [2])
    ins += [given.get(n, "") for n in names[3:last + 1]]
    outs = [f.name for f in c.schema.outputs]
    chosen = [o if c.chance(0.7) else "" for o in outs]
    if not any(chosen):
        chosen[0] = outs[0]
    c.node(ins, chosen, **attrs)


@recipe("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", draws=6)
def nll_loss(c):
    dt = c.dtype("T")
    it = c.pick(c.types("Tind"))
    n, ch = c.randint(1, 4), c.randint(2, 5)
    extra = c.shape(c.randint(0, 2), 6, 1, 3)
    scores_shape = [n, ch] + extra
    target = c.rng.randint(0, ch, size=[n] + extra)
    attrs = {"reduction": c.pick(["none", "sum", "mean"]) if c.chance(0.8) else None}
    if c.chance(0.4):
        ignore = c.pick([0, ch - 1, -1, -100])
        attrs["ignore_index"] = ignore
        # Some targets take the ignored value (which may be outside [0, C)).
        target = np.where(c.rng.uniform(size=target.shape) < 0.3, ignore, target)
        if attrs["reduction"] in (None, "mean") and (target == ignore).all():
            target.reshape(-1)[0] = (ignore + 1) % ch
    lo, hi = (-3.0, 0.0) if c.op == "NegativeLogLikelihoodLoss" else (-2.0, 2.0)
    first = "input" if c.op == "NegativeLogLikelihoodLoss" else "scores"
    ins = [c.data(first, c.values(scores_shape, dt, lo, hi)),
           c.data(c.schema.inputs[1].name, target.astype(it))]
    if c.chance(0.5):
        ins.append(c.const(c.schema.inputs[2].name, c.values([ch], dt, 0.2, 2.0)))
    outs = [c.schema.outputs[0].name]
    if c.op == "SoftmaxCrossEntropyLoss" and c.chance(0.4):
        outs.append("log_prob")
    c.node(ins, outs, **attrs)


@recipe("Dropout")
def dropout(c):
    dt = c.dtype("T")
    shape = _rank_and_shape(c)
    ins = [c.data("data", c.values(shape, dt))]
    attrs = {}
    if c.has_input("ratio"):  # Dropout-12: ratio and training_mode inputs
        if c.chance(0.5):
            ins.append(c.const("ratio", np.array(c.uniform(0.1, 0.9), c.dtype("T1"))))
        if c.chance(0.3):
            if len(ins) == 1:
                ins.append("")
            ins.append(c.const("training_mode", np.array(False)))  # inference: identity
        c.no_default_fill.add("seed")
    elif c.chance(0.6):
        attrs["ratio"] = c.uniform(0.1, 0.9)
    outs = ["output"] + (["mask"] if c.chance(0.4) else [])
    c.node(ins, outs, **attrs)


# --------------------------------------------------------------------------------------
# Fixed cases: what the sweep once found, written out so that it stays covered whatever
# the draws become. Each runs like a drawn case (static and dynamic, against ONNX Runtime).

REGRESSIONS = []


def regression(op, version, opset, must_pass=True):
    """A fixed case; `must_pass`: a refusal by Lathe fails it too (the case once passed)."""
    def register(fn):
        REGRESSIONS.append((op, version, opset, fn, must_pass))
        return fn
    return register


@regression("Resize", 13, 13)
def resize_int_linear_truncates(c):
    """Linear interpolation of integers keeps the integer part, toward zero (Lathe rounded
    half to even: 0.5 -> 0 but 1.5 -> 2, -1.5 -> -2)."""
    # Scales 2 and 4: weights 1/4, 1/2, 3/4, exact in binary, so the results compare exactly.
    x = np.array([[[[0, 1, 4, -3, 0, 7], [3, 0, -4, 1, 2, 2]]]], np.int32)
    c.node([c.data("X", x), "", c.const("scales", np.array([1, 1, 2, 4], np.float32))],
           ["Y"], mode="linear", coordinate_transformation_mode="asymmetric")


@regression("Upsample", 9, 9)
def upsample_uint8_linear_truncates(c):
    """The same for Upsample-9 on uint8 images."""
    x = np.array([[[[3, 6, 8, 0], [6, 3, 0, 3], [255, 0, 9, 2]]]], np.uint8)
    c.node([c.data("X", x), c.const("scales", np.array([1, 1, 2, 2], np.float32))], ["Y"],
           mode="linear")


@regression("GridSample", 20, 20, must_pass=False)
def grid_sample_volume_refused(c):
    """GridSample-20 on a volume (5-D): Lathe refuses it as unsupported (it reported it as
    an invalid model)."""
    x = c.values([1, 2, 2, 3, 3], np.float32)
    grid = c.values([1, 2, 2, 2, 3], np.float32, -1.0, 1.0)
    c.node([c.data("X", x), c.data("grid", grid)], ["Y"], mode="linear")


@regression("Sign", 13, 13)
def sign_unsigned(c):
    """Sign of unsigned integers (Lathe failed with an internal error: -1 in u8)."""
    c.node([c.data("input", np.array([[0, 3, 255], [1, 0, 7]], np.uint8))], ["output"])


@regression("MaxPool", 12, 12)
def max_pool_indices_of_lowest(c):
    """MaxPool's Indices where a window's maximum is the type's lowest value (0 in uint8,
    -128 in int8): Lathe reported index 0 instead of the window's first element."""
    x = np.array([[[[5, 0, 0, 0, 0, 2], [0, 0, 0, 0, 0, 0]]]], np.uint8)
    c.node([c.data("X", x)], ["Y", "Indices"], kernel_shape=[1, 2], strides=[1, 2])


@regression("MaxPool", 12, 12)
def max_pool_indices_of_lowest_int8(c):
    """The same in int8, column-major Indices, with padding (padded taps are not values)."""
    x = np.full([1, 2, 3, 3], -128, np.int8)
    x[0, 0, 0, 0] = 4
    c.node([c.data("X", x)], ["Y", "Indices"], kernel_shape=[2, 2], pads=[0, 0, 1, 1],
           storage_order=1)


def _pool_lows_and_ties():
    """A float input whose windows hold -inf and ties: channel 0 all -inf, channel 1 zeros with
    a few -inf and one 3 (rows of 20, wide enough for vectors of a row)."""
    x = np.zeros([1, 2, 5, 20], np.float32)
    x[0, 0] = -np.inf
    x[0, 1, 0, ::3] = -np.inf
    x[0, 1, 3, 7] = 3.0
    return x


@regression("MaxPool", 12, 12)
def max_pool_float_lowest_padded(c):
    """MaxPool over windows of -inf with padding: Lathe's pools started from -FLT_MAX and padded
    with it, and reported -3.4e38 where ONNX Runtime says -inf. (Rows only: where a window
    meets padding along W, ONNX Runtime itself says -3.4e38, against the ONNX reference.)"""
    c.node([c.data("X", _pool_lows_and_ties())], ["Y"], kernel_shape=[3, 3], pads=[1, 0, 1, 0])


@regression("MaxPool", 12, 12)
def max_pool_float_indices_ties(c):
    """Indices of the first maximum in tap order among ties and -inf, padded taps never
    counted, strided rows (the traced pool keeps the indices in registers beside Y)."""
    c.node([c.data("X", _pool_lows_and_ties())], ["Y", "Indices"], kernel_shape=[3, 3],
           pads=[1, 1, 1, 1], strides=[1, 2])


@regression("MaxPool", 12, 12)
def max_pool_float_indices_column_major(c):
    """The same with column-major Indices and dilated columns."""
    c.node([c.data("X", _pool_lows_and_ties())], ["Y", "Indices"], kernel_shape=[2, 3],
           pads=[1, 2, 0, 2], dilations=[1, 2], storage_order=1)


@regression("Compress", 11, 11)
def compress_constant_condition(c):
    """Compress by a constant condition on an axis, the condition shorter than the axis: with
    dynamic input dims Lathe's shape rule left the output length unknown and refused."""
    c.node([c.data("input", c.values([2, 5, 3], np.float32)),
            c.const("condition", np.array([True, False, True, True], np.bool_))], ["output"],
           axis=-2)


@regression("Compress", 11, 11)
def compress_constant_condition_flat(c):
    """The same without an axis (the input flattened)."""
    c.node([c.data("input", c.values([3, 4], np.int64)),
            c.const("condition", np.array([0, 1, 1, 0, 1, 0, 0, 1], np.bool_))], ["output"])


@regression("MatMul", 13, 13)
def matmul_empty_sum(c):
    """A product summing no terms (K = 0) is zeros: the tiled default trace asked for a
    reduction loop that does not exist, and Lathe refused the model."""
    c.node([c.data("A", c.values([3, 0], np.float32)), c.data("B", c.values([0, 20], np.float32))],
           ["Y"])


@regression("MatMul", 13, 13)
def matmul_no_columns(c):
    """A product without columns (N = 0): empty, once refused the same way."""
    c.node([c.data("A", c.values([8, 5], np.float32)), c.data("B", c.values([5, 0], np.float32))],
           ["Y"])


@regression("Gemm", 13, 13)
def gemm_transposed_empty_sum(c):
    """transB on a B computed at run time, summing no terms: zeros plus C."""
    c.node([c.data("A", c.values([4, 0], np.float32)), c.data("B", c.values([20, 0], np.float32)),
            c.data("C", c.values([20], np.float32))], ["Y"], transB=1)


def regression_cases(seed, only=None):
    cases = []
    for op, version, opset, fn, must_pass in REGRESSIONS:
        cid = f"{op}-{version}@{opset}#{fn.__name__}"
        if only and not re.search(only, cid):
            continue
        case = Case(cid, op, version, opset, fn.__name__, seed)
        case.must_pass = must_pass
        ctx = Ctx(case, schema_for(op, version))
        ctx.no_default_fill = set(ctx.schema.attrs)  # exactly the node written
        fn(ctx)
        cases.append(case)
    return cases


# --------------------------------------------------------------------------------------
# The sweep's cases


def table_ops(ops_def):
    """The op names of Lathe's op table (engine/graph/ops.def)."""
    with open(ops_def) as f:
        return [m.group(1) for m in (re.match(r"LATHE_OP\((\w+),", line) for line in f) if m]


def sweep_ops(ops_def):
    """The ops the sweep covers: the table's, less SKIPPED_OPS, plus the ops after 17 that
    Lathe converts to opset-17 ops (Mish, Gelu)."""
    ops = [op for op in table_ops(ops_def) if op not in SKIPPED_OPS]
    return ops + [op for op in ("Mish", "Gelu") if op not in ops]


def case_plan(ops):
    """(op, version, opset, draws) for every op-version: each schema version at the first
    opset from 7 where it is in force ("home"), with the recipe's number of draws; and at
    every opset from 18 to 21 where an older version is still in force, one draw, to check
    that unchanged ops pass through the conversion from those opsets."""
    plan = []
    for op in ops:
        if op not in RECIPES:
            raise KeyError(f"no recipe for {op}: add one to tests/models/sweep_cases.py")
        draws = RECIPES[op][1]
        for opset in range(FIRST_OPSET, LAST_OPSET + 1):
            v = version_at(op, opset)
            if v is None:
                continue
            home = max(FIRST_OPSET, v)
            if opset == home:
                plan.append((op, v, opset, draws))
            elif opset > LIBRARY_OPSET:
                plan.append((op, v, opset, 1))
    return plan


def make_case(op, version, opset, draw, seed):
    """One drawn case, or None where the recipe cannot make one for this draw."""
    case = Case(f"{op}-{version}@{opset}#{draw}", op, version, opset, draw, seed)
    ctx = Ctx(case, schema_for(op, version))
    try:
        RECIPES[op][0](ctx)
    except Skip:
        return None
    return case


def all_cases(ops_def, seed=0, only=None):
    """Every case of the sweep, in plan order; `only` is a regex on case ids."""
    cases = []
    for op, version, opset, draws in case_plan(sweep_ops(ops_def)):
        for draw in range(draws):
            cid = f"{op}-{version}@{opset}#{draw}"
            if only and not re.search(only, cid):
                continue
            case = make_case(op, version, opset, draw, seed)
            if case is not None:
                cases.append(case)
    return cases + regression_cases(seed, only)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops-def", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "..", "..", "engine", "graph", "ops.def"))
    ap.add_argument("--list", action="store_true", help="print each case and its node")
    ap.add_argument("--only", help="regex on case ids, e.g. '^Pad-1[18]'")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    cases = all_cases(a.ops_def, a.seed, a.only)
    if a.list:
        for case in cases:
            print(f"{case.cid:40} {case.describe()}")
    print(f"{len(cases)} cases, {len({c.label for c in cases})} op-versions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
