#!/usr/bin/python3
"""Writes a copy of an ONNX model with one initializer multiplied by a factor, for the
Numerics test's reference model. Usage: scale_conv_weight.py IN OUT INITIALIZER FACTOR"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

src, dst, name, factor = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
model = onnx.load(src)
for i, init in enumerate(model.graph.initializer):
    if init.name == name:
        scaled = (numpy_helper.to_array(init) * factor).astype(np.float32)
        model.graph.initializer[i].CopyFrom(numpy_helper.from_array(scaled, name))
        break
else:
    sys.exit(f"{src}: no initializer {name}")
onnx.save(model, dst)
