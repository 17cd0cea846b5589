#!/usr/bin/env python3
"""lathe export, proven by running: the model is exported for a target, the example program
is built with that target's compiler (Debian's cross gcc for other CPUs, the Arm GNU toolchain
for Cortex-M, clang for wasm32) and run (under qemu-user for other CPUs, qemu-system-arm with
semihosting on a Cortex-M board, in Node for wasm32) on the same inputs `lathe run` gets on this
machine, and the outputs must match. On a board, the program's flash and RAM must fit it.

  check_export.py LATHE MODEL WORKDIR --target "llvm ..." [--threads N] [--tolerance T]
                  [--api-check FILE.c]

--api-check builds FILE.c against the export instead of only the example and runs it too.
Exit status 77 (skipped) when the target's compiler or emulator is not installed."""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import mapping

SKIP = 77


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    print(p.stdout, end="", flush=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: exit status {p.returncode} from {cmd[0]}")
    return p.stdout


def make_var(makefile, name):
    for line in open(makefile):
        if line.startswith(name + " = "):
            return line[len(name) + 3:].strip()
    return ""


def check_fits(out):
    """Flash (code, read-only data and .data's initial values) and RAM (.data, .bss: arena,
    scratch, inputs, outputs and the stack) of model.elf against link.ld's memory map."""
    regions = {}
    for line in open(os.path.join(out, "link.ld")):
        words = line.split()
        if len(words) >= 8 and words[0] in ("FLASH", "RAM") and words[-3] == "LENGTH":
            regions[words[0]] = int(words[-1], 0)
    text, data, bss = (int(v) for v in run(["arm-none-eabi-size", os.path.join(out, "model.elf")])
                       .splitlines()[1].split()[:3])
    flash, ram = text + data, data + bss
    print(f"flash {flash} of {regions['FLASH']} bytes, RAM {ram} of {regions['RAM']} bytes")
    if flash > regions["FLASH"] or ram > regions["RAM"]:
        sys.exit("FAIL: model.elf does not fit the board")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("model")
    ap.add_argument("workdir")
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--api-check")
    a = ap.parse_args()

    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    out = os.path.join(a.workdir, "export")
    run([a.lathe, "export", a.model, "--target", a.target, "-o", out])
    mk = os.path.join(out, "Makefile")
    compiler = make_var(mk, "CC").split()[0]
    if not shutil.which(compiler):
        print(f"SKIP: {compiler} is not installed")
        return SKIP
    readme = open(os.path.join(out, "README.md")).read()
    emulator = make_var(mk, "EMULATOR").split()
    if emulator and not shutil.which(emulator[0]):
        print(f"SKIP: {emulator[0]} is not installed")
        return SKIP

    # Inputs: random values of each graph input's type and shape.
    graph = onnx.load(a.model, load_external_data=False).graph
    initializers = {i.name for i in graph.initializer}
    rng = np.random.default_rng(7)
    inputs, files = {}, []
    for i, vi in enumerate(v for v in graph.input if v.name not in initializers):
        t = vi.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        dtype = mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type]
        if np.issubdtype(dtype, np.floating):
            value = rng.uniform(-1, 1, shape).astype(dtype)
        else:
            value = rng.integers(0, 2, shape).astype(dtype)
        inputs[vi.name] = value
        files.append(os.path.join(a.workdir, f"input_{i}.npy"))
        np.save(files[-1], value)
    np.savez(os.path.join(a.workdir, "inputs.npz"), **inputs)
    reference = os.path.join(a.workdir, "reference.npz")
    run([a.lathe, "run", a.model, "--inputs", os.path.join(a.workdir, "inputs.npz"),
         "--outputs", reference, "--threads", "1"])
    expected = np.load(reference)

    run(["make", "-C", out])
    results = os.path.join(a.workdir, "outputs")
    os.makedirs(results)
    if "node main.js" in readme:  # wasm32: model.wasm in Node, one thread
        program = ["node", os.path.join(out, "main.js")]
        printed = run(program + ["-o", results] + files)
    elif os.path.exists(os.path.join(out, "link.ld")):  # a Cortex-M board under QEMU
        check_fits(out)
        args = " ".join(["-o", "outputs"] + [os.path.basename(f) for f in files])
        printed = run(emulator + [os.path.join(out, "model.elf"), "-append", args],
                      cwd=a.workdir, timeout=120)
    else:
        program = emulator + [os.path.join(out, "model"), "-t", str(a.threads)]
        printed = run(program + ["-o", results] + files)
    worst = 0.0
    for o, vi in enumerate(graph.output):
        got = np.load(os.path.join(results, f"output_{o}.npy"))
        want = expected[vi.name]
        if got.shape != want.shape or got.dtype != want.dtype:
            sys.exit(f"FAIL: output {vi.name}: {got.dtype}{list(got.shape)}, "
                     f"expected {want.dtype}{list(want.shape)}")
        if not np.all(np.isfinite(want)) or not np.all(np.isfinite(got)):
            sys.exit(f"FAIL: output {vi.name} holds NaN or infinity")
        scale = max(1.0, float(np.max(np.abs(want))))
        err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / scale
        worst = max(worst, err)
        print(f"output {vi.name}: max error {err:.3g} (relative to max |value| {scale:.3g})")
        if err > a.tolerance:
            sys.exit(f"FAIL: output {vi.name} differs from lathe run's by {err:.3g}")
    if f'output 0 "{graph.output[0].name}"' not in printed:
        sys.exit("FAIL: the example did not print its first output by name")

    if a.api_check:
        program = os.path.join(out, "api_check")
        cflags = make_var(mk, "CFLAGS").split() + make_var(mk, "RUNTIME_FLAGS").split()
        run(make_var(mk, "CC").split() + cflags + ["-Wall", "-Wextra", "-Werror", "-I", out,
            "-o", program, a.api_check, os.path.join(out, "model.c"),
            os.path.join(out, "lathe_runtime.c"), os.path.join(out, "kernels.o"),
            os.path.join(out, "weights.o")] + make_var(mk, "LDFLAGS").split())
        run(emulator + [program])
    sizes = {f: os.path.getsize(os.path.join(out, f)) for f in ("kernels.o", "weights.o")}
    print(f"PASS: {a.target}: max error {worst:.3g}; kernels.o {sizes['kernels.o']} bytes, "
          f"weights.o {sizes['weights.o']} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
