#!/usr/bin/python3
"""Runs one model with Lathe and with ONNX Runtime on the same seeded inputs and compares
every output (the project's correctness oracle).

Usage: compare_with_ort.py LATHE MODEL.onnx NODE_MODULES WORKDIR [--atol A] [--rtol R] [--threads T]
Exit 0 when every output matches within atol + rtol*|ort|; prints the max abs difference.
A NaN in either output fails (unless --allow-nan, where NaNs must be in the same places),
and so does a model without outputs.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx

NP_TYPES = {1: np.float32, 11: np.float64, 7: np.int64, 6: np.int32, 9: np.bool_, 2: np.uint8, 3: np.int8}
ORT_TYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32,
             "bool": np.bool_, "uint8": np.uint8, "int8": np.int8}


def make_inputs(model_path, seed, shapes_from=None):
    """Seeded inputs for the model's graph inputs; shapes from `shapes_from` (a model with
    the same inputs and static shapes) where given, else unknown dims are 1."""
    model = onnx.load(model_path, load_external_data=False)
    if shapes_from:
        model = onnx.load(shapes_from, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.RandomState(seed)
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tt.shape.dim]
        dtype = NP_TYPES[tt.elem_type]
        if np.issubdtype(dtype, np.floating):
            feeds[vi.name] = rng.uniform(-1, 1, size=shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[vi.name] = rng.randint(0, 2, size=shape).astype(np.bool_)
        else:
            feeds[vi.name] = rng.randint(0, 2, size=shape).astype(dtype)
    return feeds


def host_has(*flags):
    """Whether /proc/cpuinfo lists every one of `flags` (True where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    present = set(line.split(":", 1)[1].split())
                    return all(flag in present for flag in flags)
    except OSError:
        pass
    return True


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("model")
    ap.add_argument("node_modules")
    ap.add_argument("workdir")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", default="llvm", help="lathe run --target (runs on this host)")
    ap.add_argument("--allow-nan", action="store_true",
                    help="a NaN matches a NaN in the same place (otherwise any NaN fails)")
    ap.add_argument("--shapes-from", help="take input shapes from this model (same inputs, static)")
    ap.add_argument("--inputs", help="use these inputs (.npz) instead of seeded random ones")
    ap.add_argument("--disable-pass", action="append", default=[],
                    help="lathe run --disable-pass (repeatable), e.g. winograd-nchwc")
    a = ap.parse_args(argv)
    if "-mcpu=haswell" in a.target and not host_has("avx2", "fma"):
        print(f"skipped: this host cannot run code for '{a.target}' (no AVX2/FMA)")
        return 77  # CTest's SKIP_RETURN_CODE for these tests

    os.makedirs(a.workdir, exist_ok=True)
    inputs = os.path.join(a.workdir, "inputs.npz")
    if a.inputs:
        inputs = a.inputs
    else:
        np.savez(inputs, **make_inputs(a.model, a.seed, a.shapes_from))
    lathe_out = os.path.join(a.workdir, "lathe.npz")
    r = subprocess.run([a.lathe, "run", a.model, "--inputs", inputs, "--outputs", lathe_out,
                        "--threads", str(a.threads), "--target", a.target,
                        *[arg for p in a.disable_pass for arg in ("--disable-pass", p)]],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("lathe run failed:", r.stderr)
        return 1
    ort_dir = os.path.join(a.workdir, "ort")
    env = dict(os.environ, NODE_PATH=a.node_modules)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_run.js")
    r = subprocess.run(["node", script, a.model, inputs, ort_dir, "--threads", str(a.threads)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print("ONNX Runtime failed:", r.stderr)
        return 1
    ours = np.load(lathe_out)
    meta = json.load(open(os.path.join(ort_dir, "outputs.json")))
    if not meta:
        print("the model has no outputs: nothing to compare")
        return 1
    ok = True
    for i, m in enumerate(meta):
        ref = np.fromfile(os.path.join(ort_dir, f"{i}.bin"), dtype=ORT_TYPES[m["type"]]).reshape(m["dims"])
        if m["name"] not in ours:
            print(f"output {m['name']}: missing from Lathe's outputs")
            ok = False
            continue
        got = ours[m["name"]]
        if got.shape != ref.shape:
            print(f"output {m['name']}: shape {got.shape} vs ONNX Runtime {ref.shape}")
            ok = False
            continue
        worst, bad, nans = compare_arrays(got, ref, a.atol, a.rtol, a.allow_nan)
        print(f"output {m['name']} {list(ref.shape)}: max abs diff {worst:.3g}, "
              f"{bad} elements out of tolerance" + (f", NaN: {nans}" if nans else ""))
        ok = ok and bad == 0
    return 0 if ok else 1


def compare_arrays(got, ref, atol, rtol, allow_nan=False):
    """(max abs diff, elements out of tolerance, NaN description) of two same-shape arrays.
    A NaN is out of tolerance (a comparison with NaN is false, so `diff > bound` alone
    would let it pass), unless allow_nan and both sides have it in the same place; equal
    infinities match."""
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where(g == r, 0.0, np.abs(g - r))
    bound = np.where(np.isfinite(r), atol + rtol * np.abs(r), 0.0)  # an infinity must be equal
    within = diff <= bound
    nan_g, nan_r = np.isnan(g), np.isnan(r)
    if allow_nan:
        within |= nan_g & nan_r
    worst = float(diff.max()) if diff.size else 0.0  # NaN when a NaN is in either
    nans = ""
    if nan_g.any() or nan_r.any():
        nans = f"{int(nan_g.sum())} in Lathe's output, {int(nan_r.sum())} in ONNX Runtime's"
    return worst, int((~within).sum()), nans

if __name__ == "__main__":
    sys.exit(main())
