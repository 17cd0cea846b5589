#!/usr/bin/python3
"""The ONNX Runtime comparison must be able to fail: it once passed when an output was NaN
(a comparison with NaN is false, so `diff > bound` counted nothing). Checks that
compare_with_ort.py fails on a NaN output, on a model without outputs and on outputs that
differ, and passes on a model that matches.

Usage: oracle_self_test.py LATHE NODE_MODULES WORKDIR
"""
import contextlib
import io
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_with_ort  # noqa: E402


def model(path, nodes, outputs, inits=()):
    graph = helper.make_graph(nodes, "self_test",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)
    return path


def main():
    lathe, node_modules, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    y = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])]
    cases = [
        # inputs are U(-1, 1): about half the square roots are NaN, in both runtimes
        ("NaN output", False, model(f"{work}/nan.onnx", [helper.make_node("Sqrt", ["x"], ["y"])], y)),
        ("no outputs", False, model(f"{work}/none.onnx", [helper.make_node("Relu", ["x"], ["r"])], [])),
        ("matching output", True, model(f"{work}/ok.onnx", [helper.make_node("Relu", ["x"], ["y"])], y)),
    ]
    failures = 0
    for name, should_pass, path in cases:
        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            rc = compare_with_ort.main([lathe, path, node_modules, f"{work}/{os.path.basename(path)}.d"])
        ok = (rc == 0) == should_pass
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'}  {name}: the comparison {'passed' if rc == 0 else 'failed'}"
              f" (expected to {'pass' if should_pass else 'fail'})")
        if not ok:
            print(log.getvalue())
    # Arrays that differ, and NaN against a number, compared directly.
    worst, bad, _ = compare_with_ort.compare_arrays(np.array([1.0, np.nan]), np.array([1.0, 2.0]),
                                                    1e-4, 1e-3)
    ok = bad == 1
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'}  NaN against a number counts as out of tolerance")
    print(f"{4 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
