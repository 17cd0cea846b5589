#!/usr/bin/python3
"""Opset-version sweep: every op of Lathe's op table, at every schema version in force at
some opset from 7 to 21, on small seeded cases (tests/models/sweep_cases.py), run by Lathe
and by ONNX Runtime and compared, each with static input shapes and with dynamic ones.

ONNX Runtime runs each case's model alone (many models in one node process), so a case it
rejects is skipped with its reason. Lathe runs the cases batched, many independent nodes in
one model per opset, so that compiling stays cheap. When Lathe refuses a batch it names the
node: that case is set aside and the rest run again; an error that names no case (a crash)
splits the batch until one case is left. A refusal is accepted (not a failure) only when it
is clear: exit status 1 and a message "node '...' (Op): unsupported: reason". A wrong result,
a crash, an internal error or any other error is a failure, unless KNOWN_WRONG lists that
case (and then it must still fail: a listed case that passes fails the sweep until its entry
is removed).

Usage: opset_sweep.py LATHE NODE_MODULES WORKDIR [--only REGEX] [--seed S] [--jobs J]
Prints one line per op-version (op-schema version@opset), the counts, and last
'N passed, M failed' (case-variants).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
from onnx import ValueInfoProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import compare_with_ort  # noqa: E402
import sweep_cases  # noqa: E402

OPS_DEF = os.path.join(HERE, "..", "..", "engine", "graph", "ops.def")
VARIANTS = ("static", "dynamic")


def _both(cid, observed):
    return {(cid, variant): observed for variant in VARIANTS}


# Cases where Lathe gives a wrong result (or fails otherwise) today: (case id, variant) ->
# what was observed. Each is a Lathe bug to fix; the entry goes when the fix lands. The
# sweep fails when a listed case passes, so that the list stays accurate.
KNOWN_WRONG = {
}


# --------------------------------------------------------------------------------------
# Models


def build_model(cases, opset, dynamic, outputs=None):
    """One model holding every case's node, with the case's prefix on all its names.
    `outputs` maps output names to ONNX Runtime's {type, dims} for the declarations (static
    dims, or symbols when dynamic); without it outputs are declared by name only, which
    ONNX Runtime accepts."""
    ir = sweep_cases.IR_FOR_OPSET[opset]
    nodes, inputs, inits, outs = [], [], [], []
    for case in cases:
        p = case.prefix
        node = helper.make_node(case.node.op_type, [p + n if n else "" for n in case.node.input],
                                [p + n if n else "" for n in case.node.output], name=p + case.op)
        node.attribute.extend(case.node.attribute)
        nodes.append(node)
        for name, arr in case.inputs.items():
            dims = ([f"{p}{name}_d{i}" for i in range(arr.ndim)] if dynamic else list(arr.shape))
            inputs.append(helper.make_tensor_value_info(p + name, elem_type(arr), dims))
        for name, arr in case.initializers.items():
            inits.append(numpy_helper.from_array(arr, p + name))
            if ir < 4:  # initializers were graph inputs too before IR 4
                inputs.append(helper.make_tensor_value_info(p + name, elem_type(arr),
                                                            list(arr.shape)))
        for o in case.outputs:
            if outputs is None:
                vi = ValueInfoProto()
                vi.name = p + o
                outs.append(vi)
                continue
            meta = outputs[p + o][1]
            dims = ([f"{p}{o}_d{i}" for i in range(len(meta["dims"]))] if dynamic
                    else meta["dims"])
            outs.append(helper.make_tensor_value_info(p + o, ONNX_FOR_ORT[meta["type"]], dims))
    graph = helper.make_graph(nodes, f"sweep_opset{opset}", inputs, outs, initializer=inits)
    model = helper.make_model(graph, producer_name="lathe-opset_sweep",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    return model


def elem_type(arr):
    return sweep_cases.ONNX_FOR_NP[arr.dtype.type]


ONNX_FOR_ORT = {name: sweep_cases.ONNX_FOR_NP[np.dtype(t).type]
                for name, t in compare_with_ort.ORT_TYPES.items()}


def feeds(cases):
    return {c.prefix + name: arr for c in cases for name, arr in c.inputs.items()}


def strip_names(text):
    """A message without the cases' name prefixes, so that equal reasons group together."""
    text = re.sub(r"Load model from \S+ failed: ?", "", text)
    return re.sub(r"\bc\d{4}_", "", text)


# --------------------------------------------------------------------------------------
# ONNX Runtime: each case alone


def run_ort(cases, node_modules, workdir, jobs):
    """Runs every case's static model with ONNX Runtime. Returns ({output name: array},
    {case id: reason ONNX Runtime rejected it})."""
    job_list = []
    for case in cases:
        d = os.path.join(workdir, "ort", case.prefix.rstrip("_"))
        shutil.rmtree(d, ignore_errors=True)  # no outputs of an earlier run
        os.makedirs(d)
        model = os.path.join(d, "model.onnx")
        with open(model, "wb") as f:
            f.write(build_model([case], case.opset, False).SerializeToString())
        np.savez(os.path.join(d, "inputs.npz"), **feeds([case]))
        job_list.append({"model": model, "inputs": os.path.join(d, "inputs.npz"),
                         "out": os.path.join(d, "out"), "case": case})
    env = dict(os.environ, NODE_PATH=node_modules)
    procs = []
    for i in range(jobs):
        part = job_list[i::jobs]
        path = os.path.join(workdir, f"ort_jobs_{i}.json")
        with open(path, "w") as f:
            json.dump([{k: j[k] for k in ("model", "inputs", "out")} for j in part], f)
        procs.append(subprocess.Popen(["node", os.path.join(HERE, "ort_batch.js"), path],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"ort_batch.js failed: {out}")
    refs, rejected = {}, {}
    for j in job_list:
        case = j["case"]
        err = os.path.join(j["out"], "error.txt")
        if os.path.exists(err):
            with open(err) as f:
                rejected[case.cid] = strip_names(f.read().strip().splitlines()[0])
            continue
        with open(os.path.join(j["out"], "outputs.json")) as f:
            meta = json.load(f)
        bad = [m["type"] for m in meta if m["type"] not in compare_with_ort.ORT_TYPES]
        if bad:
            rejected[case.cid] = f"output type {bad[0]} is not compared by the harness"
            continue
        for i, m in enumerate(meta):
            arr = np.fromfile(os.path.join(j["out"], f"{i}.bin"),
                              dtype=compare_with_ort.ORT_TYPES[m["type"]]).reshape(m["dims"])
            refs[m["name"]] = (arr, m)
    return refs, rejected


# --------------------------------------------------------------------------------------
# Lathe: batches, set apart what it refuses


REFUSAL = re.compile(r"node '([^']*)'(?: \(([^)]*)\))?: unsupported: (.*)")
CASE_NAME = re.compile(r"\b(c\d{4})_")


class Result:
    """How one case-variant ended: 'pass', 'wrong' (outputs differ), 'error' (crash,
    internal error, unclear refusal, other error) or 'refused' (clear refusal)."""

    def __init__(self, status, detail=""):
        self.status, self.detail = status, detail


def compare_case(case, outs, refs):
    """Result of one case from Lathe's outputs against ONNX Runtime's."""
    problems = []
    for o in case.outputs:
        name = case.prefix + o
        ref, _ = refs[name]
        if name not in outs:
            problems.append(f"{o}: missing from Lathe's outputs")
            continue
        got = outs[name]
        if got.shape != ref.shape:
            problems.append(f"{o}: shape {list(got.shape)}, ONNX Runtime {list(ref.shape)}")
            continue
        if got.dtype != ref.dtype:
            problems.append(f"{o}: type {got.dtype}, ONNX Runtime {ref.dtype}")
            continue
        worst, bad, nans = compare_with_ort.compare_arrays(got, ref, case.atol, case.rtol,
                                                           case.allow_nan)
        if bad:
            problems.append(f"{o}: {bad} of {ref.size} elements differ, max abs diff "
                            f"{worst:.3g}" + (f", NaN: {nans}" if nans else ""))
    return Result("wrong", "; ".join(problems)) if problems else Result("pass")


def run_lathe(lathe, cases, opset, variant, refs, path):
    model = build_model(cases, opset, variant == "dynamic", outputs=refs)
    with open(path + ".onnx", "wb") as f:
        f.write(model.SerializeToString())
    np.savez(path + "_in.npz", **feeds(cases))
    if os.path.exists(path + "_out.npz"):
        os.remove(path + "_out.npz")
    try:
        r = subprocess.run([lathe, "run", path + ".onnx", "--inputs", path + "_in.npz",
                            "--outputs", path + "_out.npz", "--threads", "1"],
                           capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return 124, "timed out after 300 s", None
    outs = None
    if r.returncode == 0:
        with np.load(path + "_out.npz") as z:
            outs = {k: z[k] for k in z.files}
    return r.returncode, r.stderr.strip(), outs


def settle(lathe, cases, opset, variant, refs, path):
    """Runs `cases` as one batch until every case has a Result; returns {case id: Result}
    and the number of Lathe runs it took."""
    results, runs = {}, 0
    queue = [list(cases)]
    while queue:
        group = queue.pop()
        rc, err, outs = run_lathe(lathe, group, opset, variant, refs, f"{path}_{runs}")
        runs += 1
        if rc == 0:
            for case in group:
                results[case.cid] = compare_case(case, outs, refs)
            continue
        by_prefix = {c.prefix[:-1]: c for c in group}
        named = [m for m in CASE_NAME.findall(err) if m in by_prefix]
        if rc == 1 and named:
            culprit = by_prefix[named[0]]
            m = REFUSAL.search(err)
            refuser = CASE_NAME.search(m.group(1)) if m else None
            if refuser and refuser.group(1) == named[0] and culprit.must_pass:
                results[culprit.cid] = Result("error", "refused, where this fixed case must "
                                              f"pass: {strip_names(m.group(3))}")
            elif refuser and refuser.group(1) == named[0]:
                results[culprit.cid] = Result("refused", strip_names(m.group(3)))
            else:
                results[culprit.cid] = Result("error", strip_names(err))
            rest = [c for c in group if c is not culprit]
            if rest:
                queue.append(rest)
        elif len(group) == 1:
            what = f"exit status {rc}" if rc >= 0 else f"killed by signal {-rc}"
            results[group[0].cid] = Result("error", f"{what}: {strip_names(err)[-600:]}")
        else:  # nothing names a case: halve the batch to find it
            half = len(group) // 2
            queue += [group[:half], group[half:]]
    return results, runs


# --------------------------------------------------------------------------------------
# Report


def reason_key(reason):
    """A refusal's reason without what varies from case to case (the model's opset, the
    symbolic shape), to count equal reasons together."""
    reason = re.sub(r" \(the model's opset is \d+; Lathe runs it as 17\)", "", reason)
    return re.sub(r"has shape [^;]*;", "has shape [symbolic dims];", reason)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("node_modules")
    ap.add_argument("workdir")
    ap.add_argument("--only", help="regex on case ids, e.g. '^Pad-' or '@18#'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="processes at a time")
    ap.add_argument("--batch", type=int, default=80, help="cases per Lathe model")
    a = ap.parse_args()
    start = time.time()
    os.makedirs(a.workdir, exist_ok=True)

    cases = sweep_cases.all_cases(OPS_DEF, a.seed, a.only)
    for i, case in enumerate(cases):
        case.prefix = f"c{i:04d}_"
    refs, rejected = run_ort(cases, a.node_modules, a.workdir, a.jobs)
    t_ort = time.time() - start

    # Lathe: per opset and variant, batches of the cases ONNX Runtime ran.
    runnable = collections.defaultdict(list)
    for case in cases:
        if case.cid not in rejected:
            runnable[case.opset].append(case)
    tasks = []
    for opset, group in sorted(runnable.items()):
        for k in range(0, len(group), a.batch):
            for variant in VARIANTS:
                tasks.append((group[k:k + a.batch], opset, variant,
                              os.path.join(a.workdir, "lathe", f"opset{opset}_{variant}_{k}")))
    shutil.rmtree(os.path.join(a.workdir, "lathe"), ignore_errors=True)
    os.makedirs(os.path.join(a.workdir, "lathe"))
    results, lathe_runs = {}, 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = [(variant, pool.submit(settle, a.lathe, group, opset, variant, refs, path))
                   for group, opset, variant, path in tasks]
        for variant, fut in futures:
            res, runs = fut.result()
            lathe_runs += runs
            for cid, r in res.items():
                results[(cid, variant)] = r

    # Known wrong results: still failing is expected; passing means the entry must go.
    ids = {case.cid for case in cases}
    for key, observed in KNOWN_WRONG.items():
        r = results.get(key)
        if r is None:
            if not a.only and a.seed == 0 and key[0] not in ids:
                raise SystemExit(f"KNOWN_WRONG lists {key}, which is no case of the sweep "
                                 "(the draws changed?): update the entry")
            continue  # not run here (--only, another seed, or ONNX Runtime rejects it)
        if r.status in ("wrong", "error"):
            r.status, r.detail = "known", f"{r.detail} (KNOWN_WRONG: {observed})"
        else:
            r.status, r.detail = "error", (f"listed in KNOWN_WRONG ({observed}) but now "
                                           f"{r.status}: remove the entry")

    # One line per op-version.
    by_label = collections.OrderedDict()
    for case in cases:
        by_label.setdefault(case.label, []).append(case)
    counts = collections.Counter()
    ort_reasons, refusal_reasons = collections.Counter(), collections.Counter()
    failures = []
    for label, group in by_label.items():
        notes, tally = [], collections.Counter()
        for case in group:
            if case.cid in rejected:
                tally["skipped"] += 2
                ort_reasons[rejected[case.cid]] += 1
                types = ", ".join(sorted({str(a.dtype) for a in case.inputs.values()}))
                notes.append(f"#{case.draw} ({types}): ONNX Runtime rejects it: "
                             f"{rejected[case.cid]}")
                continue
            for variant in VARIANTS:
                r = results[(case.cid, variant)]
                tally[r.status] += 1
                if r.status == "refused":
                    refusal_reasons[f"{case.op}: {reason_key(r.detail)}"] += 1
                    notes.append(f"#{case.draw} {variant}: refused: {r.detail}")
                elif r.status in ("wrong", "error", "known"):
                    notes.append(f"#{case.draw} {variant}: {r.status}: {r.detail}")
                    if r.status != "known":
                        failures.append((case, variant, r))
        counts.update(tally)
        status = ("FAIL" if tally["wrong"] or tally["error"] else
                  "known" if tally["known"] else
                  "ok" if tally["pass"] else "refused" if tally["refused"] else "skip")
        summary = ", ".join(f"{n} {k}" for k, n in sorted(tally.items()))
        print(f"{status:8} {label:34} {summary}")
        for n in notes:
            print(f"         {n[:400]}")

    if failures:
        print("\nFailures (reproduce with --only 'ID'):")
        for case, variant, r in failures:
            print(f"  {case.cid} {variant}: {r.status}: {r.detail[:600]}")
            print(f"      {case.describe()}")
    if ort_reasons:
        print(f"\nSkipped: ONNX Runtime rejects {sum(ort_reasons.values())} cases:")
        for reason, n in ort_reasons.most_common():
            print(f"  {n:4}  {reason[:300]}")
    if refusal_reasons:
        print(f"\nRefused by Lathe ({sum(refusal_reasons.values())} case-variants), by reason:")
        for reason, n in refusal_reasons.most_common():
            print(f"  {n:4}  {reason[:300]}")
    ran = counts["pass"] + counts["wrong"] + counts["error"] + counts["refused"] + counts["known"]
    print(f"\n{len(by_label)} op-versions, {len(cases)} cases x static/dynamic; "
          f"ONNX Runtime {t_ort:.0f} s, {lathe_runs} Lathe runs, {time.time() - start:.0f} s")
    print(f"case-variants run by Lathe: {ran}; passed {counts['pass']}; failed "
          f"{counts['wrong'] + counts['error']} (wrong {counts['wrong']}, other errors "
          f"{counts['error']}); known wrong {counts['known']}; refused by Lathe "
          f"{counts['refused']}; skipped (ONNX Runtime rejects) {counts['skipped']}")
    failed = counts["wrong"] + counts["error"]
    print(f"{counts['pass']} passed, {failed} failed")
    return 1 if failed or not counts["pass"] else 0


if __name__ == "__main__":
    sys.exit(main())
