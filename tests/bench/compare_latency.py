#!/usr/bin/python3
"""Latency of Lathe against ONNX Runtime, measured in one run, interleaved.

Usage: compare_latency.py LATHE NODE_MODULES MODEL.onnx [MODEL.onnx ...] [--threads 1,2]
       [--repeat 20] [--rounds 3]
Each model is compiled once to a bundle; then, for every round and thread count, Lathe
(`lathe run BUNDLE --repeat N --json`) and ONNX Runtime (tests/bench/ort_time.js) are timed
one after the other. Prints per model and thread count the median of the per-round medians,
the ratio Lathe/ORT, and the fraction of this machine's peak FLOP/s each reaches: the
model's FLOPs (2 x multiply-adds of Conv, MatMul and Gemm) and the peak at that thread
count (an FMA microbenchmark) both come from `lathe run BUNDLE --profile --report json`,
measured in the same run. This machine is shared and noisy: read ratios, not absolutes.
A second table gives each model's compile time (`lathe compile`, wall clock) and the peak
resident memory of one timed run of each (`lathe run BUNDLE` against the node process running
ONNX Runtime, whose figure includes node itself).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_measured(cmd, env=None):
    """(stdout, peak resident MiB) of a command that must succeed."""
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise subprocess.CalledProcessError(p.returncode, cmd)
        out.seek(0)
        return out.read(), usage.ru_maxrss / 1024.0


def lathe_median(lathe, bundle, threads, repeat):
    out, rss = run_measured([lathe, "run", bundle, "--threads", str(threads), "--repeat",
                             str(repeat), "--json"])
    return json.loads(out)["median_ms"], rss


def ort_median(node_modules, model, threads, repeat):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_time.js")
    env = dict(os.environ, NODE_PATH=node_modules)
    out, rss = run_measured(["node", script, model, "--threads", str(threads), "--repeat",
                             str(repeat)], env)
    return json.loads(out)["median_ms"], rss


def flops_and_peak(lathe, bundle, threads):
    """(FLOPs of one run of the model, peak GFLOP/s with `threads` threads)."""
    out = subprocess.run([lathe, "run", bundle, "--threads", str(threads), "--profile", "--report",
                          "json"], capture_output=True, text=True, check=True).stdout
    profile = json.loads(out)
    flops = sum((k["flops_per_call"] or 0) * k["calls"] for k in profile["kernels"]) / profile["runs"]
    return flops, profile["peak_gflops"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("node_modules")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tuning-records", help="also time bundles compiled with these records "
                    "(lathe tune), one per thread count: records apply to their thread count")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    work = tempfile.mkdtemp(prefix="lathe_bench_")
    bundles, compile_s, rss = {}, {}, {}
    for m in a.models:
        bundle = os.path.join(work, os.path.basename(m) + ".tar")
        start = time.monotonic()
        r = subprocess.run([a.lathe, "compile", m, "-o", bundle], capture_output=True, text=True)
        compile_s[m] = time.monotonic() - start
        if r.returncode != 0:
            print(f"{m}: compile failed: {r.stderr.strip()}")
            return 1
        bundles[m] = bundle
        print(r.stdout.strip().splitlines()[0])
    tuned = {}
    if a.tuning_records:
        for m in a.models:
            for t in threads:
                bundle = os.path.join(work, f"{os.path.basename(m)}.tuned{t}.tar")
                r = subprocess.run([a.lathe, "compile", m, "-o", bundle, "--tuning-records",
                                    a.tuning_records, "--threads", str(t)],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"{m}: compile with records failed: {r.stderr.strip()}")
                    return 1
                tuned[(m, t)] = bundle
                line = [x for x in r.stdout.splitlines() if x.startswith("tuning records:")]
                print(f"{os.path.basename(m)}, {t} threads: {line[0] if line else ''}")
    flops, peak = {}, {}
    for m in a.models:
        for t in threads:
            # The bundle carries the FLOP estimate: no second compile.
            flops[m], measured = flops_and_peak(a.lathe, bundles[m], t)
            # The best of the measurements: a busy core only ever lowers one.
            peak[t] = max(peak.get(t, 0.0), measured)
    results = {}
    for _ in range(a.rounds):
        for m in a.models:
            for t in threads:
                results.setdefault((m, t), {"lathe": [], "ort": [], "tuned": []})
                lm, lrss = lathe_median(a.lathe, bundles[m], t, a.repeat)
                if (m, t) in tuned:
                    results[(m, t)]["tuned"].append(
                        lathe_median(a.lathe, tuned[(m, t)], t, a.repeat)[0])
                om, orss = ort_median(a.node_modules, m, t, a.repeat)
                results[(m, t)]["lathe"].append(lm)
                results[(m, t)]["ort"].append(om)
                old = rss.get(m, (0.0, 0.0))
                rss[m] = (max(old[0], lrss), max(old[1], orss))
    print(f"\n{'model':<16}{'threads':>8}{'Lathe ms':>11}{'ORT ms':>10}{'Lathe/ORT':>11}"
          f"{'GFLOP':>8}{'peak GFLOP/s':>14}{'Lathe % peak':>14}{'ORT % peak':>12}"
          + (f"{'tuned ms':>10}{'tuned/ORT':>11}" if tuned else ""))
    for (m, t), r in results.items():
        lm, om = statistics.median(r["lathe"]), statistics.median(r["ort"])
        gflop, pk = flops[m] / 1e9, peak[t]
        print(f"{os.path.basename(m):<16}{t:>8}{lm:>11.2f}{om:>10.2f}{lm / om:>11.2f}"
              f"{gflop:>8.3f}{pk:>14.1f}{100 * gflop / (lm / 1e3) / pk:>14.1f}"
              f"{100 * gflop / (om / 1e3) / pk:>12.1f}"
              + (f"{statistics.median(r['tuned']):>10.2f}"
                 f"{statistics.median(r['tuned']) / om:>11.2f}" if r["tuned"] else ""))
    print(f"\n{'model':<16}{'compile s':>10}{'Lathe RSS MiB':>15}{'ORT RSS MiB':>13}{'ratio':>7}")
    for m in a.models:
        lr, orr = rss[m]
        print(f"{os.path.basename(m):<16}{compile_s[m]:>10.1f}{lr:>15.0f}{orr:>13.0f}"
              f"{lr / orr:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
