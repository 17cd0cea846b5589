#!/usr/bin/python3
"""End-to-end checks of the `lathe` command line, one CTest test per check.

Usage: cli_checks.py LATHE MODEL_DIR CHECK
Each check runs lathe as a user would and asserts on its exit status and output.
"""
import json
import subprocess
import sys


def run(lathe, *args):
    p = subprocess.run([lathe, *args], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def expect(cond, message, output=""):
    if not cond:
        print("FAILED:", message)
        if output:
            print("----- output -----")
            print(output[-4000:])
        sys.exit(1)


def check_help(lathe, models):
    rc, out, err = run(lathe, "--help")
    expect(rc == 0, "lathe --help exits 0", out + err)
    for word in ("inspect", "conformance", "ops", "passes"):
        expect(word in out, f"--help lists '{word}'", out)
    rc, out, err = run(lathe, "inspect", "--help")
    expect(rc == 0, "inspect --help exits 0", out + err)
    for flag in ("--print-topology", "--print-ir-after-all", "--pass-times", "--json",
                 "fold-batchnorm", "fuse-elementwise"):
        expect(flag in out, f"inspect --help mentions {flag}", out)
    rc, out, err = run(lathe, "conformance", "--help")
    expect(rc == 0 and "--import-only" in out, "conformance --help documents --import-only", out)
    rc, out, err = run(lathe, "frobnicate")
    expect(rc != 0, "an unknown subcommand fails", out + err)


def check_topology_sample(lathe, models):
    rc, out, err = run(lathe, "inspect", f"{models}/sample_cnn.onnx", "--print-topology")
    expect(rc == 0, "inspect exits 0", out + err)
    lines = [l.split() for l in out.splitlines()]
    expect(["image", "f32", "[1,3,64,64]"] in lines, "input image f32 [1,3,64,64] listed", out)
    expect(["logits", "f32", "[1,10]"] in lines, "output logits f32 [1,10] listed", out)


def check_ir_after_all_sample(lathe, models):
    rc, out, err = run(lathe, "inspect", f"{models}/sample_cnn.onnx", "--print-ir-after-all")
    expect(rc == 0, "inspect exits 0", out + err)
    sections = out.split("// ----- IR after ")
    names = [s.split(" ")[0].split("\n")[0] for s in sections[1:]]
    expect(names[0] == "import", "the first section is the imported IR", out)
    expect("fold-batchnorm" in names and "fuse-elementwise" in names, "every pass printed", out)
    final = sections[-1]
    expect("= BatchNormalization(" not in final, "no BatchNormalization after the pipeline", final)
    expect('"Conv+Relu"' in final, "a Conv+Relu group in the final IR", final)
    expect("= BatchNormalization(" in sections[1], "the imported IR has BatchNormalization")


def check_json_sample(lathe, models):
    rc, out, err = run(lathe, "inspect", f"{models}/sample_cnn.onnx", "--json")
    expect(rc == 0, "inspect --json exits 0", out + err)
    j = json.loads(out)
    expect(j["inputs"][0]["name"] == "image" and j["inputs"][0]["shape"] == ["1", "3", "64", "64"],
           "JSON input shape", out)
    expect(len(j["passes"]) >= 7 and all("ms" in p for p in j["passes"]), "JSON pass list", out)
    expect(j["nodes_final"] < j["nodes_imported"], "the pipeline removed nodes", out)


def check_pass_times(lathe, models):
    rc, out, err = run(lathe, "inspect", f"{models}/residual_add.onnx", "--pass-times")
    expect(rc == 0, "exits 0", out + err)
    expect("total (import + passes)" in out and "fuse-elementwise" in out, "pass table", out)


def check_bad_models(lathe, models):
    cases = {
        "bad/truncated.onnx": "truncated or corrupt",
        "bad/garbage.onnx": "truncated or corrupt",
        "bad/empty.onnx": "empty",
        "bad/unknown_op.onnx": "op 'FancyNewOp' is not supported",
        "bad/absurd_shape.onnx": "absurd",
        "bad/missing_input.onnx": "missing_input.onnx",
        "bad/bad_raw_size.onnx": "raw_data holds 16 bytes",
        "bad/escape_abs.onnx": "absolute path",
        "bad/escape_dotdot.onnx": "escapes the model's folder",
        "does_not_exist.onnx": "no such file",
    }
    for name, text in cases.items():
        rc, out, err = run(lathe, "inspect", f"{models}/{name}")
        expect(rc == 1, f"{name}: exit status 1 (got {rc})", out + err)
        expect(err.startswith("lathe: error: ") and name in err and text in err,
               f"{name}: message names the file and says '{text}'", err)


def check_resnet50(lathe, models):
    model = f"{models}/big/resnet50.onnx"
    rc, out, err = run(lathe, "inspect", model, "--print-topology")
    expect(rc == 0, "inspect resnet50 exits 0", out + err)
    lines = [l.split() for l in out.splitlines()]
    expect(["data", "f32", "[1,3,224,224]"] in lines, "input data f32 [1,3,224,224]", out)
    expect(["resnetv17_dense0_fwd", "f32", "[1,1000]"] in lines, "output [1,1000]", out)
    rc, out, err = run(lathe, "inspect", model, "--print-ir-after-all")
    expect(rc == 0, "--print-ir-after-all exits 0", err)
    final = out.split("// ----- IR after ")[-1]
    expect(final.startswith("fuse-elementwise"), "the last section is fusion", final[:200])
    expect("= BatchNormalization(" not in final, "every BatchNormalization folded")
    expect(final.count('"Conv+Relu"') >= 30, "Conv+Relu groups", final)
    expect(final.count('"Conv+Add+Relu"') == 16, "16 Conv+Add+Relu groups (one per block)", final)
    rc, out, err = run(lathe, "inspect", model, "--json")
    j = json.loads(out)
    print(f"resnet50: import {j['import_ms']:.1f} ms, passes {j['pipeline_ms']:.1f} ms, "
          f"peak RSS {j['peak_rss_bytes'] / 2**20:.0f} MiB")


def check_big_models(lathe, models):
    for name, inputs in (("mobilenetv2", ["input"]),
                         ("bert", ["input_ids", "attention_mask", "token_type_ids"])):
        rc, out, err = run(lathe, "inspect", f"{models}/big/{name}.onnx", "--json")
        expect(rc == 0, f"{name} imports", out + err)
        j = json.loads(out)
        expect([i["name"] for i in j["inputs"]] == inputs, f"{name} inputs", out)
        expect(j["fused_groups"], f"{name} has fused groups", out)


def check_ops_and_passes(lathe, models):
    import os
    rc, out, err = run(lathe, "ops", "--markdown")
    expect(rc == 0 and "| Conv | convolution | anchor |" in out, "ops --markdown lists Conv", out)
    with open(os.path.join(os.environ["LATHE_SOURCE_DIR"], "docs", "ops.md")) as f:
        expect(f.read() == out, "docs/ops.md is current (regenerate: lathe ops --markdown > docs/ops.md)")
    rc, out, err = run(lathe, "ops", "--category", "matmul")
    expect(rc == 0 and sorted(l.split()[0] for l in out.splitlines()) == ["Einsum", "Gemm", "MatMul"],
           "ops --category matmul", out)
    rc, out, err = run(lathe, "passes")
    expect(rc == 0 and "fold-batchnorm" in out and out.splitlines()[-1].split()[1] == "fuse-elementwise",
           "passes lists the pipeline in order", out)


CHECKS = {name[len("check_"):]: fn for name, fn in globals().items() if name.startswith("check_")}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in CHECKS:
        print(__doc__, "checks:", " ".join(CHECKS))
        sys.exit(2)
    CHECKS[sys.argv[3]](sys.argv[1], sys.argv[2])
    print("ok")
