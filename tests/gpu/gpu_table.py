#!/usr/bin/python3
"""Runs each model on the GPU (lathe run --target cuda) and on the CPU, and prints one table:
the largest difference between their outputs and the GPU's median latency.

Usage: gpu_table.py LATHE MODEL_DIR [ARCH]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(lathe, *args):
    p = subprocess.run([lathe, *args], capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout + p.stderr


def median_ms(text):
    for line in text.splitlines():
        if "median" in line:
            tail = line.split("median", 1)[1].split()
            for w in tail:
                try:
                    return float(w)
                except ValueError:
                    continue
    return float("nan")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    lathe, models = sys.argv[1], sys.argv[2]
    arch = sys.argv[3] if len(sys.argv) > 3 else "sm_90"
    work = tempfile.mkdtemp(prefix="lathe_gpu_")
    rows = []
    for name in ("sample_cnn", "big/mobilenetv2", "big/resnet50", "big/bert"):
        model = os.path.join(models, name + ".onnx")
        if not os.path.exists(model):
            rows.append((name, "missing", "", ""))
            continue
        cpu = os.path.join(work, os.path.basename(name) + "_cpu.npz")
        gpu = os.path.join(work, os.path.basename(name) + "_gpu.npz")
        rc, out = run(lathe, "run", model, "--outputs", cpu)
        if rc != 0:
            rows.append((name, "CPU run failed", "", out.strip().splitlines()[-1]))
            continue
        rc, out = run(lathe, "run", model, "--target", f"cuda -arch={arch}", "--outputs", gpu,
                      "--repeat", "20", "--print-time")
        if rc != 0:
            rows.append((name, "GPU run failed", "", out.strip().splitlines()[-1]))
            continue
        a, b = np.load(cpu), np.load(gpu)
        err = max(float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) for k in a.files)
        rows.append((name, f"{err:.3g}", f"{median_ms(out):.3f}", ""))
    print(f"{'model':18} {'max |gpu-cpu|':>14} {'GPU median ms':>14}  note")
    for r in rows:
        print(f"{r[0]:18} {r[1]:>14} {r[2]:>14}  {r[3]}")
    try:
        import torch  # noqa: F401
        print("PyTorch is installed: its eager and torch.compile figures are not measured by "
              "this script yet")
    except ImportError:
        print("PyTorch is not installed here: no comparison with it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
