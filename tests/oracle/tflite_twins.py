#!/usr/bin/python3
"""The TFLite importer against ONNX Runtime: each .tflite test model (tests/models/gen_tflite.py)
is run by Lathe and its ONNX twin (same network, same weights, same input and output names)
by ONNX Runtime, on the same seeded inputs.

  tfl_cnn, tfl_misc,  float32: Lathe on the .tflite against ONNX Runtime on the twin
  tfl_more
  tfl_cnn_int8        int8: against ONNX Runtime on the QDQ twin (same scales and codes)
                      within a few output codes, and against the float32 twin within the
                      quantization error

The twins themselves are checked against the generator's numpy semantics first, so a twin
that drifted from the network it stands for fails here too. Prints every max error.

Usage: tflite_twins.py LATHE NODE_MODULES MODEL_DIR WORKDIR [--seeds N]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
from compare_with_ort import ORT_TYPES, compare_arrays, make_inputs  # noqa: E402
import gen_tflite  # noqa: E402


def run_lathe(lathe, model, inputs, out):
    r = subprocess.run([lathe, "run", model, "--inputs", inputs, "--outputs", out, "--threads", "2"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"lathe run {os.path.basename(model)} failed:\n{r.stderr}")
    return dict(np.load(out))


def run_ort(node_modules, model, inputs, out_dir):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_run.js")
    r = subprocess.run(["node", script, model, inputs, out_dir, "--threads", "2"],
                       capture_output=True, text=True, env=dict(os.environ, NODE_PATH=node_modules))
    if r.returncode != 0:
        raise RuntimeError(f"ONNX Runtime on {os.path.basename(model)} failed:\n{r.stderr}")
    meta = json.load(open(os.path.join(out_dir, "outputs.json")))
    return {m["name"]: np.fromfile(os.path.join(out_dir, f"{i}.bin"),
                                   dtype=ORT_TYPES[m["type"]]).reshape(m["dims"])
            for i, m in enumerate(meta)}


def compare(label, got, ref, atol, rtol):
    """Prints one line per output; True when every output is within tolerance."""
    if not ref:
        print(f"{label}: no outputs to compare")
        return False
    ok = True
    for name, r in ref.items():
        g = got.get(name)
        if g is None or g.shape != r.shape:
            print(f"{label}: output {name}: {'missing' if g is None else g.shape} vs {r.shape}")
            ok = False
            continue
        worst, bad, nans = compare_arrays(g, r, atol, rtol)
        print(f"{label}: output {name} {list(r.shape)}: max abs error {worst:.3g}"
              f"{f', {bad} elements out of tolerance (atol {atol})' if bad else ''}"
              f"{', NaN: ' + nans if nans else ''}")
        ok = ok and bad == 0
    return ok


def numpy_reference(name, feeds):
    net = {"tfl_cnn": gen_tflite.cnn_net, "tfl_misc": gen_tflite.misc_net,
           "tfl_more": gen_tflite.more_net}[name](np.random.RandomState(0))
    values = gen_tflite.evaluate(net, {k: v.astype(np.float64) for k, v in feeds.items()})
    return {o: values[o].astype(np.float32) for o in net.outputs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("node_modules")
    ap.add_argument("model_dir")
    ap.add_argument("workdir")
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    ok = True
    worst = {}
    for seed in range(a.seeds):
        for name in ("tfl_cnn", "tfl_misc", "tfl_more"):
            twin = os.path.join(a.model_dir, name + ".onnx")
            work = os.path.join(a.workdir, f"{name}_{seed}")
            os.makedirs(work, exist_ok=True)
            inputs = os.path.join(work, "inputs.npz")
            feeds = make_inputs(twin, seed)
            np.savez(inputs, **feeds)
            ort = run_ort(a.node_modules, twin, inputs, os.path.join(work, "ort"))
            ok &= compare(f"{name} twin vs numpy (seed {seed})", ort, numpy_reference(name, feeds), 1e-4, 1e-3)
            ours = run_lathe(a.lathe, os.path.join(a.model_dir, name + ".tflite"), inputs,
                             os.path.join(work, "lathe.npz"))
            ok &= compare(f"{name}.tflite vs ORT twin (seed {seed})", ours, ort, 1e-4, 1e-3)
            for k, r in ort.items():
                worst[name] = max(worst.get(name, 0.0), float(np.abs(ours[k] - r).max()))

        name = "tfl_cnn_int8"
        work = os.path.join(a.workdir, f"{name}_{seed}")
        os.makedirs(work, exist_ok=True)
        inputs = os.path.join(work, "inputs.npz")
        np.savez(inputs, **make_inputs(os.path.join(a.model_dir, "tfl_cnn.onnx"), seed))
        ours = run_lathe(a.lathe, os.path.join(a.model_dir, name + ".tflite"), inputs,
                         os.path.join(work, "lathe.npz"))
        qdq = run_ort(a.node_modules, os.path.join(a.model_dir, name + ".onnx"), inputs,
                      os.path.join(work, "ort_qdq"))
        f32 = run_ort(a.node_modules, os.path.join(a.model_dir, "tfl_cnn.onnx"), inputs,
                      os.path.join(work, "ort_f32"))
        # The output is a softmax quantized at 1/256: a few codes of rounding differences
        # (fixed-point versus float requantization, ties) are allowed against the QDQ twin.
        ok &= compare(f"{name}.tflite vs ORT QDQ twin (seed {seed})", ours, qdq, 4.0 / 256, 0.0)
        ok &= compare(f"{name}.tflite vs ORT float twin (seed {seed})", ours, f32, 0.05, 0.0)
        for k in qdq:
            worst["tfl_cnn_int8 vs QDQ"] = max(worst.get("tfl_cnn_int8 vs QDQ", 0.0),
                                               float(np.abs(ours[k] - qdq[k]).max()))
            worst["tfl_cnn_int8 vs f32"] = max(worst.get("tfl_cnn_int8 vs f32", 0.0),
                                               float(np.abs(ours[k] - f32[k]).max()))
    print("max abs errors over", a.seeds, "seeds:",
          ", ".join(f"{k} {v:.3g}" for k, v in worst.items()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
