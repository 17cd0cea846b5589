#!/usr/bin/python3
"""The TorchScript importer against torch itself: each model of tests/models/gen_torchscript.py
is run by Lathe on the inputs the generator saved, and its outputs are compared with torch's
(saved by the generator from the same traced module). Prints every max error.

Usage: torchscript_vs_torch.py LATHE MODEL_DIR WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_with_ort import compare_arrays  # noqa: E402

MODELS = ["ts_resnet", "ts_mobilenet", "ts_transformer", "ts_lstm", "ts_upsample", "ts_scripted"]


def main():
    lathe, model_dir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    ok = True
    summary = []
    for name in MODELS:
        inputs = os.path.join(model_dir, name + "_inputs.npz")
        out = os.path.join(work, name + "_lathe.npz")
        r = subprocess.run([lathe, "run", os.path.join(model_dir, name + ".pt"), "--inputs", inputs,
                            "--outputs", out, "--threads", "2"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: lathe run failed:\n{r.stderr}")
            ok = False
            continue
        got = np.load(out)
        expected = np.load(os.path.join(model_dir, name + "_expected.npz"))
        if sorted(got.files) != sorted(expected.files):
            print(f"{name}: outputs {sorted(got.files)}, torch gives {sorted(expected.files)}")
            ok = False
            continue
        worst_model = 0.0
        for k in expected.files:
            if got[k].shape != expected[k].shape:
                print(f"{name}: {k} has shape {got[k].shape}, torch {expected[k].shape}")
                ok = False
                continue
            worst, bad, nans = compare_arrays(got[k], expected[k], 1e-4, 1e-3)
            print(f"{name}: {k} {list(expected[k].shape)}: max abs error {worst:.3g}"
                  f"{f', {bad} elements out of tolerance' if bad else ''}{', NaN: ' + nans if nans else ''}")
            ok = ok and bad == 0
            worst_model = max(worst_model, worst)
        summary.append(f"{name} {worst_model:.3g}")
    print("max abs error against torch:", ", ".join(summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
