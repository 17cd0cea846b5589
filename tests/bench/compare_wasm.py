#!/usr/bin/python3
"""Latency of Lathe's WebAssembly export against onnxruntime-web's wasm backend, both in Node
on one thread, measured in one run, interleaved.

Usage: compare_wasm.py LATHE NODE_MODULES MODEL.onnx [MODEL.onnx ...] [--repeat 20]
       [--rounds 3] [--tolerance 1e-3] [--node-flags=--no-liftoff]
NODE_MODULES holds onnxruntime-web (packaging/install-npm-bench.sh DIR installs it into
DIR/node_modules; `make bench-wasm` does both). Each model is exported with `lathe export
--target "llvm -mtriple=wasm32-unknown-unknown -mattr=+simd128"`, its model.wasm built with the
export's Makefile (clang-19, wasm-ld) and compiled once to a bundle for the native figure. One
input per model input is written as .npy (floats uniform in [-1, 1), integers 0/1). Then, for
every round, Lathe's wasm (`node main.js -r N`: one warm-up run, N timed runs), onnxruntime-web
(tests/bench/ort_web_time.js: SIMD, numThreads 1, no proxy worker; three warm-up runs, N timed)
and, for context, Lathe's native code (`lathe run BUNDLE --threads 1 --repeat N`) are timed one
after the other on that input. Prints per model the median of the per-round medians, the ratios
Lathe wasm/ORT-web and Lathe wasm/native, and the largest absolute difference of the wasm
outputs from onnxruntime-web's and from native `lathe run`'s on the same input. Exits 1 when
a difference exceeds --tolerance times max(1, largest |value|), so a fast but wrong model.wasm
does not pass. Both wasm programs run under `node --no-liftoff` (--node-flags): V8 compiles
every function with its optimising compiler before the first run, so no timed run executes
baseline (Liftoff) code that has not tiered up yet; with V8's default dynamic tiering, a few
warm-up runs of onnxruntime-web's much larger module leave some of it unoptimised and its
median can come out several times its steady-state time on a small model.
This machine is shared and noisy: read ratios, not absolutes.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx

WASM_TARGET = "llvm -mtriple=wasm32-unknown-unknown -mattr=+simd128"
HERE = os.path.dirname(os.path.abspath(__file__))


def np_dtype(elem_type):
    """The numpy dtype of an ONNX tensor element type (onnx.mapping before onnx 1.13)."""
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]


def check_output(cmd, env=None, cwd=None):
    """stdout of a command that must succeed; its stderr is shown when it does not."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if p.returncode != 0:
        sys.exit(f"compare_wasm: {' '.join(cmd)} failed ({p.returncode}):\n"
                 f"{(p.stderr or p.stdout).strip()}")
    return p.stdout


def write_inputs(model, work, rng):
    """Random inputs of the model's types and shapes (symbolic dims 1): the .npy files in the
    model's input order, the .npz of them by name, and whether any dim was symbolic."""
    graph = onnx.load(model, load_external_data=False).graph
    initializers = {i.name for i in graph.initializer}
    files, by_name, symbolic = [], {}, False
    for i, vi in enumerate(v for v in graph.input if v.name not in initializers):
        t = vi.type.tensor_type
        shape = []
        for d in t.shape.dim:
            symbolic |= not (d.HasField("dim_value") and d.dim_value > 0)
            shape.append(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1)
        dtype = np_dtype(t.elem_type)
        if np.issubdtype(dtype, np.floating):
            value = rng.uniform(-1, 1, shape).astype(dtype)
        else:
            value = rng.integers(0, 2, shape).astype(dtype)
        files.append(os.path.join(work, f"input_{i}.npy"))
        np.save(files[-1], value)
        by_name[vi.name] = value
    npz = os.path.join(work, "inputs.npz")
    np.savez(npz, **by_name)
    return files, npz, symbolic, [o.name for o in graph.output]


def wasm_median(node, export, inputs, repeat, out_dir):
    out = check_output(node + [os.path.join(export, "main.js"), "-r", str(repeat), "-o", out_dir]
                       + inputs)
    m = re.search(r"runs on 1 thread: median ([0-9.]+) ms", out)
    if not m:
        sys.exit(f"compare_wasm: no median in main.js's output:\n{out}")
    return float(m.group(1))


def ort_web_median(node, node_modules, model, inputs, repeat, out_dir):
    env = dict(os.environ, NODE_PATH=node_modules)
    cmd = node + [os.path.join(HERE, "ort_web_time.js"), model, "--repeat", str(repeat),
           "--outputs", out_dir]
    for f in inputs:
        cmd += ["--input", f]
    return json.loads(check_output(cmd, env))


def native_median(lathe, bundle, npz, repeat, outputs):
    out = check_output([lathe, "run", bundle, "--threads", "1", "--repeat", str(repeat), "--json",
                        "--inputs", npz, "--outputs", outputs])
    return json.loads(out)["median_ms"]


def max_error(got_dir, want, names):
    """(largest |got - want| over all outputs, the largest such difference divided by
    max(1, largest |want|) of its output); outputs are output_<i>.npy in `names`' order."""
    worst_abs, worst_rel = 0.0, 0.0
    for o, name in enumerate(names):
        got = np.load(os.path.join(got_dir, f"output_{o}.npy"))
        ref = want(o, name)
        if got.shape != ref.shape:
            sys.exit(f"compare_wasm: output {name}: shape {list(got.shape)}, "
                     f"expected {list(ref.shape)}")
        got, ref = got.astype(np.float64), ref.astype(np.float64)
        if not np.all(np.isfinite(got)) or not np.all(np.isfinite(ref)):
            return float("inf"), float("inf")  # NaN would compare as no difference
        diff = float(np.max(np.abs(got - ref))) if got.size else 0.0
        worst_abs = max(worst_abs, diff)
        worst_rel = max(worst_rel, diff / max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0))
    return worst_abs, worst_rel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("node_modules")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--node-flags", default="--no-liftoff",
                    help="flags for node running either program (default: %(default)s)")
    a = ap.parse_args()
    node = ["node"] + a.node_flags.split()
    if not os.path.isfile(os.path.join(a.node_modules, "onnxruntime-web", "package.json")):
        sys.exit(f"compare_wasm: no onnxruntime-web in {a.node_modules}: run "
                 "packaging/install-npm-bench.sh DIR and give DIR/node_modules")
    if not shutil.which("node"):
        sys.exit("compare_wasm: node is not installed")
    node_modules = os.path.abspath(a.node_modules)
    work = tempfile.mkdtemp(prefix="lathe_bench_wasm_")
    rng = np.random.default_rng(7)
    setup = {}
    for m in a.models:
        base = os.path.join(work, os.path.splitext(os.path.basename(m))[0])
        os.makedirs(base)
        inputs, npz, symbolic, names = write_inputs(m, base, rng)
        export = os.path.join(base, "export")
        check_output([a.lathe, "export", m, "--target", WASM_TARGET, "-o", export]
                     + (["--inputs", npz] if symbolic else []))
        compiler = ""
        for line in open(os.path.join(export, "Makefile")):
            if line.startswith("CC = "):
                compiler = line[5:].split()[0]
        if not compiler or not shutil.which(compiler):
            sys.exit(f"compare_wasm: the export's compiler ({compiler or 'CC'}) is not installed")
        check_output(["make", "-s", "-C", export])
        bundle = base + ".tar"
        check_output([a.lathe, "compile", m, "-o", bundle]
                     + (["--inputs", npz] if symbolic else []))
        setup[m] = dict(inputs=inputs, npz=npz, names=names, export=export, bundle=bundle,
                        wasm_out=os.path.join(base, "wasm_out"),
                        ort_out=os.path.join(base, "ort_out"),
                        native_out=os.path.join(base, "native.npz"))
        os.makedirs(setup[m]["wasm_out"])
        size = os.path.getsize(os.path.join(export, "model.wasm"))
        print(f"{os.path.basename(m)}: model.wasm {size} bytes, {len(inputs)} input(s), "
              f"{len(names)} output(s)")
    results = {m: {"wasm": [], "ort": [], "native": [], "err_ort": [0.0, 0.0],
                   "err_native": [0.0, 0.0]} for m in a.models}
    info = None
    for _ in range(a.rounds):
        for m in a.models:
            s, r = setup[m], results[m]
            r["wasm"].append(wasm_median(node, s["export"], s["inputs"], a.repeat, s["wasm_out"]))
            info = ort_web_median(node, node_modules, m, s["inputs"], a.repeat, s["ort_out"])
            r["ort"].append(info["median_ms"])
            r["native"].append(native_median(a.lathe, s["bundle"], s["npz"], a.repeat,
                                             s["native_out"]))
            # Every round's outputs are checked: each is the last timed run's.
            ort_dir, native = s["ort_out"], np.load(s["native_out"])
            for key, want in (("err_ort", lambda o, n: np.load(os.path.join(ort_dir,
                                                                             f"output_{o}.npy"))),
                              ("err_native", lambda o, n: native[n])):
                e = max_error(s["wasm_out"], want, s["names"])
                r[key] = [max(r[key][0], e[0]), max(r[key][1], e[1])]
    print(f"\nonnxruntime-web {info['version']} ({info['backend']}, {info['threads']} thread, "
          f"SIMD) and Lathe's model.wasm in Node {check_output(['node', '--version']).strip()} "
          f"({' '.join(node)}); {a.rounds} rounds of {a.repeat} runs")
    print(f"{'model':<18}{'wasm ms':>9}{'ORT-web ms':>12}{'wasm/ORT':>10}{'native ms':>11}"
          f"{'wasm/native':>13}{'err vs ORT':>12}{'err vs native':>15}")
    failed = []
    for m, r in results.items():
        wm, om, nm = (statistics.median(r[k]) for k in ("wasm", "ort", "native"))
        print(f"{os.path.basename(m):<18}{wm:>9.2f}{om:>12.2f}{wm / om:>10.2f}{nm:>11.2f}"
              f"{wm / nm:>13.2f}{r['err_ort'][0]:>12.2g}{r['err_native'][0]:>15.2g}")
        for key, what in (("err_ort", "onnxruntime-web's"), ("err_native", "native lathe run's")):
            if not r[key][1] <= a.tolerance:
                failed.append(f"{os.path.basename(m)}: model.wasm's outputs differ from {what} by "
                              f"{r[key][1]:.3g} of max(1, |value|) (tolerance {a.tolerance:g})")
    for f in failed:
        print("FAIL: " + f)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
