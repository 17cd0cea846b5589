#!/usr/bin/python3
"""Cost of `lathe run --profile`: the same bundle timed with and without profiling.

Usage: profile_overhead.py LATHE MODEL.onnx|BUNDLE.tar [--threads 1,2] [--rounds 10]
       [--repeat 20]
Rounds alternate which mode goes first. Prints, per thread count, the per-round medians of
both modes and the change of the median of medians and of the minimum (the least noisy
figure on a shared machine). Not part of `make test`: it measures wall time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def median_ms(lathe, bundle, threads, repeat, profile):
    cmd = [lathe, "run", bundle, "--threads", str(threads), "--repeat", str(repeat), "--json"]
    out = subprocess.run(cmd + (["--profile"] if profile else []), capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)["median_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("model")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    bundle = a.model
    if not bundle.endswith(".tar"):
        bundle = os.path.join(tempfile.mkdtemp(prefix="lathe_prof_"), "model.tar")
        subprocess.run([a.lathe, "compile", a.model, "-o", bundle], check=True,
                       capture_output=True)
    threads = [int(t) for t in a.threads.split(",")]
    times = {}
    for r in range(a.rounds):
        for t in threads:
            for profile in ((True, False) if r % 2 else (False, True)):
                times.setdefault((t, profile), []).append(
                    median_ms(a.lathe, bundle, t, a.repeat, profile))
    for t in threads:
        off, on = times[(t, False)], times[(t, True)]
        print(f"threads {t}: off {' '.join(f'{x:.1f}' for x in off)}")
        print(f"           on  {' '.join(f'{x:.1f}' for x in on)}")
        mo, mn = statistics.median(off), statistics.median(on)
        print(f"           median of medians {mo:.2f} -> {mn:.2f} ms ({100 * (mn / mo - 1):+.1f} %), "
              f"min {min(off):.2f} -> {min(on):.2f} ms ({100 * (min(on) / min(off) - 1):+.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
