#!/usr/bin/python3
"""End-to-end checks of the `lathe` command line, one CTest test per check.

Usage: cli_checks.py LATHE MODEL_DIR CHECK
Each check runs lathe as a user would and asserts on its exit status and output.
"""
import json
import os
import platform
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
    expect('"Conv+Relu"' in final or '"ConvNCHWc+Relu"' in final,
           "a Conv+Relu group in the final IR", final)
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
    # An op Lathe does not know: the model is shown (inspect), and refused to run.
    rc, out, err = run(lathe, "inspect", f"{models}/bad/unknown_op.onnx", "--print-topology")
    expect(rc == 0 and "FancyNewOp (fancy)" in err and "looked at, not compiled" in err,
           "inspect shows a model with an unknown op and says what it cannot do", out + err)
    rc, out, err = run(lathe, "run", f"{models}/bad/unknown_op.onnx")
    expect(rc == 1 and "node 'fancy' (FancyNewOp)" in err and "is not supported" in err,
           "run refuses the unknown op by node", err)


def check_tflite(lathe, models):
    """TFLite files are recognised by content, inspected, compiled, run and refused with
    file, operator and reason (tests/models/gen_tflite.py writes them)."""
    import shutil
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_tflite_")
    model = f"{models}/tflite/tfl_cnn.tflite"
    rc, out, err = run(lathe, "inspect", model, "--print-topology")
    expect(rc == 0, "inspect a .tflite file", out + err)
    lines = [l.split() for l in out.splitlines()]
    expect("(TFLite)" in out, "inspect names the format", out)
    expect(["image", "f32", "[1,16,16,3]"] in lines and ["probs", "f32", "[1,10]"] in lines,
           "NHWC input and the output as the file declares them", out)
    rc, out, err = run(lathe, "inspect", model, "--print-ir-after-all")
    imported = out.split("// ----- IR after ")[1]
    expect(rc == 0 and imported.count("= Conv(") == 4 and "QLinearConv" not in imported,
           "four float convolutions after import", imported)
    # As authored: the file's 13 operators, each with its options and what it became.
    rc, out, err = run(lathe, "inspect", model, "--authored", "--json")
    ops = json.loads(out)["authored"] if rc == 0 else []
    expect([o["op"] for o in ops[:3]] == ["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D"] and len(ops) == 13,
           "inspect --authored lists the file's 13 operators in order", out + err)
    expect(ops and ops[0]["options"].get("padding") == "SAME"
           and ops[0]["options"].get("fused_activation_function") == "RELU6"
           and "Conv" in ops[0]["imported_as"] and ops[0]["source"] == "operator 0",
           "the first CONV_2D: its options, its source and what it became", json.dumps(ops[:1]))
    rc, out, err = run(lathe, "inspect", model, "--authored")
    expect(rc == 0 and "as authored (TFLite): 13 operators" in out and "imported as: Transpose Conv" in out,
           "inspect --authored as text", out + err)
    rc, out, err = run(lathe, "inspect", f"{models}/sample_cnn.onnx", "--authored")
    expect(rc == 0 and "file's own nodes are the imported graph" in out,
           "an ONNX file is its own graph as authored", out + err)
    # Chosen by content, not by name: the same bytes under another extension.
    renamed = f"{work}/model.bin"
    shutil.copy(model, renamed)
    rc, out, err = run(lathe, "inspect", renamed)
    expect(rc == 0 and "(TFLite)" in out, "a TFLite file named .bin is read as TFLite", out + err)
    # The int8 model keeps integer convolutions and fully connected layers.
    rc, out, err = run(lathe, "inspect", f"{models}/tflite/tfl_cnn_int8.tflite", "--print-ir-after-all")
    out = out.split("// ----- IR after ")[1]
    expect(rc == 0 and out.count("= QLinearConv(") == 4 and "= MatMulInteger(" in out,
           "int8 convolutions become QLinearConv, the fully connected layer MatMulInteger", out + err)
    # Compiled to a bundle and run from it.
    bundle = f"{work}/cnn.tar"
    rc, out, err = run(lathe, "compile", model, "--target", "llvm", "-o", bundle)
    expect(rc == 0, "compile a .tflite file", out + err)
    rc, out, err = run(lathe, "run", bundle, "--outputs", f"{work}/out.npz", "--fill", "random")
    expect(rc == 0, "run its bundle", out + err)
    probs = np.load(f"{work}/out.npz")["probs"]
    expect(probs.shape == (1, 10) and abs(float(probs.sum()) - 1) < 1e-4, "softmax output", str(probs))
    # lathe compare: the reference interpreter reads the imported graph; ONNX Runtime only ONNX.
    rc, out, err = run(lathe, "compare", model)
    expect(rc == 0 and "no node diverges" in out, "compare a .tflite with the reference", out + err)
    rc, out, err = run(lathe, "compare", model, "--reference", "onnxruntime")
    expect(rc != 0 and "ONNX Runtime reads ONNX models only" in err and "--reference-model" in err,
           "ONNX Runtime as the reference of a .tflite is refused with what to do", err)
    cases = {
        "tfl_bad_truncated.tflite": "corrupt",
        "tfl_bad_offsets.tflite": "corrupt",
        "tfl_bad_unsupported_op.tflite": "LSH_PROJECTION is not supported",
        "tfl_bad_custom_op.tflite": "custom operator 'MyFancyOp'",
        "tfl_bad_tensor_index.tflite": "refers to tensor 99",
        # Not TFLite by content (the identifier is wrong): read as ONNX, which it is not.
        "tfl_bad_identifier.tflite": "truncated or corrupt",
    }
    for name, text in cases.items():
        rc, out, err = run(lathe, "inspect", f"{models}/tflite/{name}")
        expect(rc == 1, f"{name}: exit status 1 (got {rc})", out + err)
        expect(err.startswith("lathe: error: ") and name in err and text in err,
               f"{name}: message names the file and says '{text}'", err)
    rc, out, err = run(lathe, "inspect", f"{models}/tflite/tfl_bad_unsupported_op.tflite")
    expect("node 'y' (LSH_PROJECTION)" in err, "the refusal names the operator's output", err)


def check_torchscript(lathe, models):
    """TorchScript archives: recognised by content, shapes from --input-shapes or --inputs,
    refused with file, op, reason and Python source location."""
    ts = f"{models}/torchscript"
    rc, out, err = run(lathe, "inspect", f"{ts}/ts_resnet.pt")
    expect(rc == 1 and "records no input shapes" in err and "--input-shapes" in err,
           "without shapes: says how to give them", out + err)
    rc, out, err = run(lathe, "inspect", f"{ts}/ts_resnet.pt", "--input-shapes", "x:[1,3,32,32]",
                       "--print-topology")
    lines = [l.split() for l in out.splitlines()]
    expect(rc == 0 and "(TorchScript)" in out and ["x", "f32", "[1,3,32,32]"] in lines
           and ["output0", "f32", "[1,10]"] in lines, "inspect with --input-shapes", out + err)
    rc, out, err = run(lathe, "inspect", f"{ts}/ts_bad_unsupported.pt", "--input-shapes", "x:[2,3]")
    expect(rc == 1 and "aten::cumsum is not supported" in err and "gen_torchscript.py" in err,
           "an unsupported op is refused by name with its source line", err)
    rc, out, err = run(lathe, "inspect", f"{ts}/ts_bad_loop.pt", "--input-shapes", "x:[2,3]")
    expect(rc == 1 and "prim::Loop whose trip count is computed at run time" in err
           and "gen_torchscript.py" in err, "a loop on a tensor's value is refused with its line", err)
    rc, out, err = run(lathe, "inspect", f"{ts}/ts_bad_truncated.pt", "--input-shapes", "x:[1,3,32,32]")
    expect(rc == 1 and "ts_bad_truncated.pt" in err and "cannot load the TorchScript archive" in err,
           "a damaged archive is refused", err)
    # The int64 tokens of the transformer come typed from the input file.
    rc, out, err = run(lathe, "run", f"{ts}/ts_transformer.pt", "--inputs", f"{ts}/ts_transformer_inputs.npz")
    expect(rc == 0, "run the transformer on its input file", out + err)
    # As authored: one entry per aten call, with its Python line, its options and the graph IR
    # nodes it became.
    rc, out, err = run(lathe, "inspect", f"{ts}/ts_resnet.pt", "--input-shapes", "x:[1,3,32,32]",
                       "--authored", "--json")
    expect(rc == 0, "inspect --authored --json", out + err)
    j = json.loads(out)
    ops = j["authored"]
    convs = [o for o in ops if o["op"] in ("aten::_convolution", "aten::conv2d")]
    expect(len(convs) == 6 and all("gen_torchscript.py:" in o["source"] for o in convs),
           "six convolutions, each with its Python source line", json.dumps(ops[:3], indent=1))
    expect(all("stride" in o["options"] and "Conv" in o["imported_as"] for o in convs),
           "each convolution lists its stride and was imported as a Conv", json.dumps(convs[0]))
    owned = sorted(n for o in ops for n in o["imported_nodes"])
    expect(len(owned) == len(set(owned)) and j["operators_authored"] == len(ops),
           "no graph IR node is claimed by two aten calls", str(owned))
    check_damaged_archives(lathe, ts)


def check_damaged_archives(lathe, ts):
    """TorchScript archives damaged in the ways files get damaged (bytes flipped, cut short,
    an entry missing or replaced by junk) are refused with the file's name, or import: never a
    crash, a hang or an error without the file. libtorch reads them in the helper process."""
    import io
    import random
    import tempfile
    import zipfile
    work = tempfile.mkdtemp(prefix="lathe_cli_ts_damaged_")
    good = open(f"{ts}/ts_scripted.pt", "rb").read()
    rnd = random.Random(11)
    variants = {}
    for i in range(6):
        b = bytearray(good)
        for _ in range(1 + i * 4):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        variants[f"flipped{i}.pt"] = bytes(b)
    for frac in (0.1, 0.6, 0.95):
        variants[f"cut{int(frac * 100)}.pt"] = good[:int(len(good) * frac)]
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        names = z.namelist()
        for victim in [n for n in names if n.endswith(("data.pkl", "constants.pkl", ".py"))][:4]:
            for how in ("missing", "junk"):
                out = io.BytesIO()
                with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as w:
                    for n in names:
                        if n != victim:
                            w.writestr(n, z.read(n))
                        elif how == "junk":
                            w.writestr(n, bytes(rnd.randrange(256) for _ in range(300)))
                variants[f"{how}_{victim.split('/')[-1]}.pt"] = out.getvalue()
    refused = 0
    for name, data in variants.items():
        path = f"{work}/{name}"
        with open(path, "wb") as f:
            f.write(data)
        rc, out, err = run(lathe, "inspect", path, "--input-shapes", "x:[1,3,8,8]")
        expect(rc in (0, 1), f"{name}: exit status 0 or 1 (got {rc})", out + err)
        if rc == 1:
            refused += 1
            expect(err.startswith("lathe: error: ") and name in err and "internal" not in err,
                   f"{name}: refused with the file's name", err)
    expect(refused >= len(variants) // 2, f"most damaged archives refused ({refused}/{len(variants)})")
    print(f"damaged TorchScript archives: {refused} of {len(variants)} refused, the rest imported")


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
    # All Convs run in the blocked layout, the stem reading the image's 3 channels in NCHW.
    # The 3x3 ones of stages 1 to 3 by Winograd's filtering (4x4 tiles on 56x56 and 28x28
    # planes, 2x2 on 14x14), those of stage 4 direct.
    winograd = final.count('"ConvWinogradNCHWc+Relu"')
    expect(winograd == 13, f"13 ConvWinogradNCHWc+Relu groups ({winograd})", final)
    expect(final.count('"ConvNCHWc+Relu"') + winograd >= 30, "ConvNCHWc+Relu groups", final)
    expect(final.count('"ConvNCHWc+Add+Relu"') == 16,
           "16 ConvNCHWc+Add+Relu groups (one per block)", final)
    expect(final.count("= Conv(") == 0 and "= lathe::MaxPoolNCHWc(" in final,
           "no Conv stays in NCHW; the stem's pool is blocked too", final)
    expect(final.count("= Transpose(") == 1, "one conversion, out of NCHW16c after the pool",
           final)
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
    names = {l.split()[0] for l in out.splitlines()}
    expect(rc == 0 and {"Einsum", "Gemm", "MatMul"} <= names and "Conv" not in names,
           "ops --category matmul", out)
    rc, out, err = run(lathe, "passes")
    expect(rc == 0 and "fold-batchnorm" in out and out.splitlines()[-1].split()[1] == "fuse-elementwise",
           "passes lists the pipeline in order", out)


TESTDATA = "/usr/share/libonnx-testdata/data/node"


def _expected_output(test, index=0):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(f"{TESTDATA}/{test}/test_data_set_0/output_{index}.pb", "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def _inputs_npz(test, path, names):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    arrays = {}
    for i, name in enumerate(names):
        t = onnx.TensorProto()
        with open(f"{TESTDATA}/{test}/test_data_set_0/input_{i}.pb", "rb") as f:
            t.ParseFromString(f.read())
        arrays[name] = numpy_helper.to_array(t)
    np.savez(path, **arrays)


def check_compile_and_run_bundle(lathe, models):
    import os
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = f"{TESTDATA}/test_add_bcast/model.onnx"
    bundle, dump = f"{work}/add.tar", f"{work}/dump"
    rc, out, err = run(lathe, "compile", model, "--target", "llvm", "-o", bundle, "--dump", dump)
    expect(rc == 0 and os.path.exists(bundle), "compile writes the bundle", out + err)
    names = sorted(os.listdir(dump))
    for ext in (".loop", ".ll", ".opt.ll", ".s"):
        expect(any(n.endswith(ext) for n in names), f"--dump writes {ext} files", " ".join(names))
    loop_ir = open(f"{dump}/{[n for n in names if n.endswith('.loop')][0]}").read()
    expect("kernel " in loop_ir and "for (" in loop_ir, "the loop IR dump shows a kernel", loop_ir)
    inputs, outputs = f"{work}/in.npz", f"{work}/out.npz"
    _inputs_npz("test_add_bcast", inputs, ["x", "y"])
    rc, out, err = run(lathe, "run", bundle, "--inputs", inputs, "--outputs", outputs, "--print-time",
                       "--repeat", "3")
    expect(rc == 0, "run the bundle", out + err)
    expect("mean (ms)" in out and "median (ms)" in out, "--print-time table", out)
    got = np.load(outputs)["sum"]
    expect(np.allclose(got, _expected_output("test_add_bcast"), atol=1e-6), "bundle output matches")
    rc, out, err = run(lathe, "run", bundle, "--json", "--repeat", "2")
    j = json.loads(out)
    for key in ("mean_ms", "median_ms", "min_ms", "max_ms", "std_ms"):
        expect(key in j, f"--json has {key}", out)
    expect(j["outputs"][0]["shape"] == [3, 4, 5], "--json output shape", out)
    # The same model run in memory (no bundle) gives the same numbers.
    rc, out, err = run(lathe, "run", model, "--inputs", inputs, "--outputs", f"{work}/mem.npz")
    expect(rc == 0 and np.array_equal(np.load(f"{work}/mem.npz")["sum"], got), "in-memory run", err)
    # A bundle for another machine is refused, not loaded.
    rc, out, err = run(lathe, "compile", model, "--target", "llvm -mtriple=aarch64-linux-gnu",
                       "-o", f"{work}/arm.tar")
    expect(rc == 0, "cross compile", out + err)
    rc, out, err = run(lathe, "run", f"{work}/arm.tar")
    expect(rc == 1 and "aarch64" in err and "this machine" in err, "foreign bundle refused", err)
    expect("lathe export MODEL --target" in err and "qemu-aarch64" in err,
           "the refusal says how to run it: export, and the emulator", err)


def check_run_bad_input(lathe, models):
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = f"{TESTDATA}/test_add_bcast/model.onnx"
    np.savez(f"{work}/missing.npz", x=np.zeros((3, 4, 5), np.float32))
    rc, out, err = run(lathe, "run", model, "--inputs", f"{work}/missing.npz")
    expect(rc == 1 and "input 'y'" in err and "missing.npz" in err, "a missing input is named", err)
    np.savez(f"{work}/shape.npz", x=np.zeros((3, 4, 6), np.float32), y=np.zeros(5, np.float32))
    rc, out, err = run(lathe, "run", model, "--inputs", f"{work}/shape.npz")
    expect(rc == 1 and "input 'x' must be f32[3,4,5]" in err, "a wrong shape is named", err)
    np.savez(f"{work}/dtype.npz", x=np.zeros((3, 4, 5), np.float64), y=np.zeros(5, np.float32))
    rc, out, err = run(lathe, "run", model, "--inputs", f"{work}/dtype.npz")
    expect(rc == 1 and "got f64" in err, "a wrong dtype is named", err)
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/ok.tar")
    data = open(f"{work}/ok.tar", "rb").read()
    open(f"{work}/cut.tar", "wb").write(data[: len(data) // 2])
    rc, out, err = run(lathe, "run", f"{work}/cut.tar")
    expect(rc == 1 and "cut.tar" in err and ("truncated" in err or "past the end" in err),
           "a truncated bundle", err)
    open(f"{work}/junk.tar", "wb").write(b"not a tar" * 100)
    rc, out, err = run(lathe, "run", f"{work}/junk.tar")
    expect(rc == 1 and "junk.tar" in err, "a corrupt bundle", err)
    rc, out, err = run(lathe, "run", model, "--input-shapes", "x:[3,4,zz]")
    expect(rc == 2 and "'zz' is not a dimension" in err, "bad --input-shapes", err)


def check_symbolic_shapes(lathe, models):
    model = f"{models}/symbolic_batch.onnx"
    rc, out, err = run(lathe, "run", model)
    expect(rc == 1 and "x f32[N,3,8,8]" in err and '--input-shapes "x:[N,3,8,8]"' in err
           and "--inputs" in err and "[1,3,8,8]" not in err,
           "the symbolic dims are listed with a fix that proposes no made-up dims", err)
    # The inputs a run is given fix the symbolic dims.
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    np.savez(f"{work}/in.npz", x=np.ones((3, 3, 8, 8), np.float32))
    rc, out, err = run(lathe, "run", model, "--inputs", f"{work}/in.npz", "--json")
    expect(rc == 0 and json.loads(out)["outputs"][0]["shape"] == [3, 4, 8, 8],
           "the input file's shapes specialise the model", out + err)
    np.savez(f"{work}/bad.npz", x=np.ones((3, 4, 8, 8), np.float32))
    rc, out, err = run(lathe, "run", model, "--inputs", f"{work}/bad.npz")
    expect(rc == 1 and "bad.npz' gives 'x' dim 1 = 4 but the model fixes it to 3" in err,
           "an input file that contradicts the model names the file and the dim", err)
    rc, out, err = run(lathe, "run", model, "--input-shapes", "x:[2,3,8,8]", "--json")
    expect(rc == 0 and json.loads(out)["outputs"][0]["shape"] == [2, 4, 8, 8], "fixed shapes run",
           out + err)
    rc, out, err = run(lathe, "run", model, "--input-shapes", "nope:[1]")
    expect(rc == 1 and "'nope', which is not an input" in err, "unknown input in --input-shapes", err)
    # A bundle is compiled for the shapes of the inputs it is given, and then runs on them.
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/b.tar")
    expect(rc == 1 and "lathe compile take the shapes" in err and "--inputs" in err,
           "compile says how to fix the dims", err)
    rc, out, err = run(lathe, "compile", model, "--inputs", f"{work}/in.npz", "-o", f"{work}/b.tar")
    expect(rc == 0, "compile --inputs specialises the model", out + err)
    rc, out, err = run(lathe, "run", f"{work}/b.tar", "--inputs", f"{work}/in.npz", "--json")
    expect(rc == 0 and json.loads(out)["outputs"][0]["shape"] == [3, 4, 8, 8],
           "the bundle runs on inputs of those shapes", out + err)


def check_fold_constant_subgraph(lathe, models):
    """Constant subgraphs too big for the fold-constants pass are compiled and run once."""
    import tempfile
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    rng = np.random.RandomState(0)
    w = rng.uniform(-1, 1, (300, 300)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
             helper.make_node("Mul", ["wt", "two"], ["w2"]),
             helper.make_node("Sin", ["w2"], ["ws"]),
             helper.make_node("MatMul", ["x", "ws"], ["y"])]
    graph = helper.make_graph(
        nodes, "constsub", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 300])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 300])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    model = f"{work}/constsub.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/c.tar")
    expect(rc == 0 and "folded 3 constant nodes" in out and "1 kernels" in out,
           "the 90,000-element constant chain is folded at compile time", out + err)
    x = rng.uniform(-1, 1, (4, 300)).astype(np.float32)
    np.savez(f"{work}/in.npz", x=x)
    rc, out, err = run(lathe, "run", f"{work}/c.tar", "--inputs", f"{work}/in.npz", "--outputs",
                       f"{work}/out.npz")
    expect(rc == 0, "run the folded bundle", err)
    want = x.astype(np.float64) @ np.sin(2.0 * w.T.astype(np.float64))
    got = np.load(f"{work}/out.npz")["y"]
    expect(np.abs(got - want).max() < 1e-3, f"folded result matches numpy ({np.abs(got - want).max()})")


def check_control_flow(lathe, models):
    """If, Loop and Scan run their subgraphs, which read values of the main graph."""
    import tempfile
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    f32 = TensorProto.FLOAT
    # Loop: acc += x * scale (scale is computed in the main graph and read by the body), with
    # every iteration's acc as a scan output; the trip count is an input.
    body = helper.make_graph(
        [helper.make_node("Mul", ["x", "scale"], ["xs"]),
         helper.make_node("Add", ["acc_in", "xs"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", f32, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", f32, [3]),
         helper.make_tensor_value_info("scan_out", f32, [3])])
    then_g = helper.make_graph([helper.make_node("Add", ["final", "scale"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", f32, [3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["final"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", f32, [3])])
    # Scan (reverse): running sum of the rows of m, from the last row.
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "row"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["rows_out"])],
        "scan_body",
        [helper.make_tensor_value_info("s_in", f32, [3]),
         helper.make_tensor_value_info("row", f32, [3])],
        [helper.make_tensor_value_info("s_out", f32, [3]),
         helper.make_tensor_value_info("rows_out", f32, [3])])
    nodes = [helper.make_node("Mul", ["x", "x"], ["scale"]),
             helper.make_node("Loop", ["trips", "", "acc0"], ["final", "history"], body=body),
             helper.make_node("If", ["flag"], ["chosen"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Scan", ["acc0", "m"], ["total", "partial"], body=scan_body,
                              num_scan_inputs=1, scan_input_directions=[1])]
    graph = helper.make_graph(
        nodes, "control_flow",
        [helper.make_tensor_value_info("x", f32, [3]),
         helper.make_tensor_value_info("trips", TensorProto.INT64, []),
         helper.make_tensor_value_info("acc0", f32, [3]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
         helper.make_tensor_value_info("m", f32, [4, 3])],
        [helper.make_tensor_value_info("history", f32, ["trips", 3]),
         helper.make_tensor_value_info("chosen", f32, [3]),
         helper.make_tensor_value_info("total", f32, [3]),
         helper.make_tensor_value_info("partial", f32, [4, 3])])
    model = f"{work}/cf.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), model)
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, 3).astype(np.float32)
    acc0 = rng.uniform(-1, 1, 3).astype(np.float32)
    m = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    for trips, flag in ((5, True), (2, False)):
        np.savez(f"{work}/in.npz", x=x, trips=np.array(trips, np.int64), acc0=acc0,
                 flag=np.array(flag), m=m)
        rc, out, err = run(lathe, "run", model, "--inputs", f"{work}/in.npz", "--outputs",
                           f"{work}/out.npz")
        expect(rc == 0, f"run the control-flow model ({trips} trips)", out + err)
        got = np.load(f"{work}/out.npz")
        history = acc0 + np.outer(np.arange(1, trips + 1), x * x * x)
        expect(got["history"].shape == (trips, 3) and np.allclose(got["history"], history, atol=1e-5),
               f"Loop scan output has one row per trip ({trips})", str(got["history"]))
        chosen = history[-1] + x * x if flag else -history[-1]
        expect(np.allclose(got["chosen"], chosen, atol=1e-5), "If ran the right branch")
        # Rows are read from the last; outputs are written in iteration order.
        partial = acc0 + np.cumsum(m[::-1], axis=0)
        expect(np.allclose(got["partial"], partial, atol=1e-5) and
               np.allclose(got["total"], partial[-1], atol=1e-5), "reverse Scan", str(got["partial"]))
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/cf.tar")
    expect(rc == 1 and "control flow" in err and "Loop" in err, "bundles refuse control flow", err)


def check_profile(lathe, models):
    """--profile: the per-kernel table, CSV, JSON and a Chrome trace of the timed runs."""
    import csv
    import io
    import os
    import tempfile
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = f"{models}/sample_cnn.onnx"
    base = ["run", model, "--threads", "2", "--repeat", "3", "--profile"]

    rc, out, err = run(lathe, *base)
    expect(rc == 0, "run --profile exits 0", out + err)
    lines = out.splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith("kernel ")]
    expect(len(head) == 1, "one table header", out)
    for column in ("ONNX nodes", "calls", "total (ms)", "mean (ms)", "% total", "GFLOP/s", "% peak"):
        expect(column in lines[head[0]], f"the table has '{column}'", out)
    expect("Kernel profile: 3 runs, 2 threads" in out, "the table says what it measured", out)
    rows = [l.split() for l in lines[head[0] + 1:] if l.strip()]
    expect(rows and all(r[-5].replace(".", "").isdigit() for r in rows), "table rows", out)
    totals = [float(r[-5]) for r in rows]
    expect(totals == sorted(totals, reverse=True), "the table is sorted by total time", out)
    expect(any("conv" in r[0] and r[-2] != "-" for r in rows), "conv kernels have GFLOP/s", out)
    expect(any(r[-2] == "-" for r in rows), "kernels without FLOPs show '-'", out)

    rc, out, err = run(lathe, *base, "--report", "csv")
    expect(rc == 0, "--report csv exits 0", out + err)
    table = list(csv.DictReader(io.StringIO(out)))
    expect(table and list(table[0]) == ["kernel", "nodes", "calls", "total_ms", "mean_ms", "percent",
                                        "flops_per_call", "gflops", "percent_of_peak"],
           "the CSV header", out)
    expect(all(int(r["calls"]) % 3 == 0 for r in table), "3 calls per kernel and run", out)
    expect(abs(sum(float(r["percent"]) for r in table) - 100) < 0.01, "percents add up to 100", out)
    expect(all(r["gflops"] == "" or float(r["gflops"]) > 0 for r in table), "CSV GFLOP/s", out)

    trace = f"{work}/trace.json"
    rc, out, err = run(lathe, *base, "--report", "json", "--trace", trace)
    expect(rc == 0 and os.path.exists(trace), "--report json --trace exits 0 and writes", out + err)
    j = json.loads(out)
    expect(j["runs"] == 3 and j["threads"] == 2 and j["peak_gflops"] > 0, "JSON header", out)
    total = sum(k["total_ms"] for k in j["kernels"])
    expect(0 < total <= j["wall_ms"], f"kernel time {total} within the runs' wall time", out)
    expect(any(k["gflops"] is not None for k in j["kernels"]), "JSON GFLOP/s", out)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    calls = sum(k["calls"] for k in j["kernels"])
    kernel_events = [e for e in events if e["ph"] == "X" and e.get("cat") == "kernel"]
    expect(len(kernel_events) == calls, f"one X event per kernel call ({len(kernel_events)} vs {calls})")
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    expect(set(names) == {0, 1}, "a thread_name per thread", str(names))
    chunk_threads = {e["tid"] for e in events if e["ph"] == "X" and e.get("cat") == "chunk"}
    # Pieces go to the lane of the thread that ran them; on a model this small the caller may
    # run them all before the worker wakes.
    expect(0 in chunk_threads and chunk_threads <= {0, 1}, "chunks on the threads' lanes",
           str(chunk_threads))
    expect(all(e["dur"] >= 0 and e["ts"] >= 0 for e in events if e["ph"] == "X"), "ts and dur")
    expect(sum(1 for e in events if e.get("cat") == "run") == 3, "one run event per timed run")
    for e in kernel_events:
        expect(isinstance(e["args"]["nodes"], list) and e["args"]["nodes"], "events name their nodes")

    rc, out, err = run(lathe, *base, "--json")
    expect(rc == 0 and json.loads(out)["profile"]["kernels"], "--json embeds the profile", out + err)
    rc, out, err = run(lathe, "run", model, "--report", "csv")
    expect(rc != 0 and "--profile" in err, "--report needs --profile", out + err)
    rc, out, err = run(lathe, "run", model, "--profile", "--trace", f"{work}/no/such/dir/t.json")
    expect(rc == 1 and "cannot write" in err, "an unwritable trace is an error", out + err)

    # A bundle has no graph; its manifest carries each call's FLOPs for the GFLOP/s column.
    bundle = f"{work}/sample.tar"
    rc, out, err = run(lathe, "compile", model, "-o", bundle)
    expect(rc == 0, "compile the sample to a bundle", out + err)
    rc, out, err = run(lathe, "run", bundle, "--threads", "2", "--repeat", "2", "--profile",
                       "--report", "json")
    kernels = json.loads(out)["kernels"] if rc == 0 else []
    conv = [k for k in kernels if any("Conv" in n for n in k["nodes"])]
    expect(conv and all(k["flops_per_call"] > 0 and k["gflops"] is not None for k in conv),
           "a bundle's Conv kernels have FLOPs and GFLOP/s", out + err)


def check_schedule(lathe, models):
    """--schedule replays a hand-written trace; the outputs stay those of the default."""
    import os
    import re
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = f"{models}/sample_cnn.onnx"
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/plain.tar", "--dump", f"{work}/d0")
    expect(rc == 0, "compile the sample", out + err)
    # The elementwise tail kernel: channel blocks, rows, columns and the channels of a block
    # ([4, 16, 16, 16] in the blocked layout).
    name = [n[:-5] for n in os.listdir(f"{work}/d0") if n.startswith("fused_add_mul")
            and n.endswith(".loop")][0]
    loops = re.findall(r"for \((\w+), 0, (\d+)\)", open(f"{work}/d0/{name}.loop").read())
    expect(len(loops) >= 3, "the tail kernel is a nest of three loops or more", str(loops))
    (c, c_extent), (y, y_extent), (x, _) = loops[0], loops[1], loops[-1]
    text = f"{work}/s.txt"
    with open(text, "w") as f:
        f.write(f"# the tail of the sample\nkernel {name}:\n  fuse({c}, {y})\n"
                f"  parallel({c}.{y}.fused)\n  split({x}, 8)\n  vectorize({x}.i)\n")
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/s.tar", "--schedule", text,
                       "--dump", f"{work}/d1")
    expect(rc == 0 and f"scheduled 1 kernel: {name} (4 steps)" in out, "compile --schedule",
           out + err)
    dumped = open(f"{work}/d1/{name}.loop").read()
    expect(dumped.startswith("# trace replayed") and f"#   vectorize({x}.i)" in dumped
           and f"parallel for ({c}.{y}.fused, 0, {int(c_extent) * int(y_extent)})" in dumped
           and "ramp(" in dumped,
           "--dump shows the trace next to the scheduled loop IR", dumped)
    # --dump also writes a template: every kernel, its loops, and no steps (changes nothing).
    template = open(f"{work}/d0/schedule_template.txt").read()
    expect(f"kernel {name}:" in template and f"# loops: {c} ({c_extent})" in template,
           "--dump writes schedule_template.txt with the kernels and their loops", template)
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/t.tar", "--schedule",
                       f"{work}/d0/schedule_template.txt")
    expect(rc == 0 and "scheduled" not in out, "the untouched template replays as the default",
           out + err)
    # The same schedule as JSON.
    steps = [{"primitive": "fuse", "loops": [c, y]},
             {"primitive": "parallel", "loops": [f"{c}.{y}.fused"]},
             {"primitive": "split", "loops": [x], "factors": [8]},
             {"primitive": "vectorize", "loops": [f"{x}.i"]}]
    with open(f"{work}/s.json", "w") as f:
        json.dump({"schedules": [{"kernel": name, "steps": steps}]}, f)
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/j.tar", "--schedule",
                       f"{work}/s.json")
    expect(rc == 0, "compile --schedule with JSON", out + err)
    results = {}
    for tag in ("plain", "s", "j"):
        rc, out, err = run(lathe, "run", f"{work}/{tag}.tar", "--fill", "ones", "--threads", "2",
                           "--outputs", f"{work}/{tag}.npz")
        expect(rc == 0, f"run the {tag} bundle", out + err)
        results[tag] = np.load(f"{work}/{tag}.npz")["logits"]
    for tag in ("s", "j"):
        expect(np.allclose(results[tag], results["plain"], atol=1e-5), f"{tag} matches the default",
               f"{results[tag]} vs {results['plain']}")
    # Refusals name the file, line, kernel and step, and exit 1.
    bad = f"{work}/bad.txt"
    with open(bad, "w") as f:
        f.write(f"kernel {name}:\n  split({x}, 8)\n  vectorize({y})\n")
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/b.tar", "--schedule", bad)
    expect(rc == 1 and f"bad.txt:3: kernel {name}, step 2 vectorize({y})" in err
           and "innermost" in err, "an illegal vectorize is refused", err)
    with open(bad, "w") as f:
        f.write("kernel no_such_kernel:\n  parallel(i)\n")
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/b.tar", "--schedule", bad)
    expect(rc == 1 and "no kernel named 'no_such_kernel'" in err, "an unknown kernel is refused",
           err)
    with open(bad, "w") as f:
        f.write(f"kernel {name}:\n  spilt({x}, 8)\n")
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/b.tar", "--schedule", bad)
    expect(rc == 1 and "bad.txt:2: unknown primitive 'spilt'" in err, "a typo is refused", err)
    # Factors above the loop's extent are refused, not wrapped: split by 2^63 - 1 once deleted
    # the kernel's body (exit 0, wrong outputs), split by 10^12 made a kernel that spun.
    for step in (f"split({x}, 9223372036854775807)", f"split({x}, 1000000000000)",
                 f"tile({y}, {x}, 4, 1000000000000)"):
        with open(bad, "w") as f:
            f.write(f"kernel {name}:\n  {step}\n")
        rc, out, err = run(lathe, "compile", model, "-o", f"{work}/b.tar", "--schedule", bad)
        expect(rc == 1 and f"bad.txt:2: kernel {name}, step 1 {step}: the factor" in err
               and f"is larger than the extent of '{x}' (16)" in err, f"{step} is refused", err)


def hostile_names_model(path):
    """Relu -> Sigmoid whose input name is invalid UTF-8, whose output name and node name
    carry ANSI escape sequences (protobuf's Python API refuses such strings, so the bytes are
    patched in place, keeping every length prefix)."""
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Relu", ["XMARKX"], ["r"], name="NMARKN"),
                           helper.make_node("Sigmoid", ["r"], ["YMARKY"], name="sig")], "g",
                          [helper.make_tensor_value_info("XMARKX", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("YMARKY", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    data = m.SerializeToString().replace(b"XMARKX", b"x\xff\xfe\x80zz")
    data = data.replace(b"YMARKY", b"y\x1b[31m").replace(b"NMARKN", b"n\x1b[2Jq")
    open(path, "wb").write(data)


def check_hostile_names(lathe, models):
    """Names are bytes from an untrusted file: no abort, no raw control sequences or invalid
    UTF-8 on the terminal, JSON that parses, an npz numpy opens (names escaped as \\xNN)."""
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = f"{work}/names.onnx"
    hostile_names_model(model)

    def lathe_bytes(*args):
        p = subprocess.run([lathe, *args], capture_output=True, timeout=600)
        for stream in (p.stdout, p.stderr):
            stream.decode("utf-8")  # raises on invalid UTF-8
            expect(b"\x1b" not in stream, "no raw escape byte is printed", repr(stream))
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    rc, out, err = lathe_bytes("inspect", model, "--json")
    expect(rc == 0 and json.loads(out)["inputs"], "inspect --json", out + err)
    rc, out, err = lathe_bytes("inspect", model, "--print-topology", "--print-ir-after-all")
    expect(rc == 0 and "x\\xFF\\xFE\\x80zz" in out and "y\\x1B[31m" in out,
           "names are printed escaped", out + err)
    rc, out, err = lathe_bytes("run", model, "--json", "--outputs", f"{work}/out.npz")
    expect(rc == 0 and json.loads(out), "run --json", out + err)
    expect(list(np.load(f"{work}/out.npz").keys()) == ["y\\x1B[31m"],
           "--outputs writes an npz numpy opens, the name escaped")
    np.savez(f"{work}/in.npz", **{"x\\xFF\\xFE\\x80zz": np.ones((2, 3), np.float32)})
    rc, out, err = lathe_bytes("run", model, "--inputs", f"{work}/in.npz", "--outputs",
                               f"{work}/out2.npz")
    expect(rc == 0 and abs(float(np.load(f"{work}/out2.npz")["y\\x1B[31m"][0, 0]) - 0.7310586) < 1e-5,
           "an input is found under its escaped name", out + err)
    rc, out, err = lathe_bytes("run", model, "--profile", "--report", "json")
    expect(rc == 0 and json.loads(out), "--profile --report json", out + err)
    rc, out, err = lathe_bytes("run", model, "--profile", "--trace", f"{work}/trace.json")
    expect(rc == 0 and json.load(open(f"{work}/trace.json"))["traceEvents"], "--trace", out + err)
    rc, out, err = lathe_bytes("run", model, "--inputs", f"{work}/missing.npz")
    expect(rc == 1 and "missing.npz" in err, "errors go through the same escaping", err)


def check_files_written_safely(lathe, models):
    """An output that is one of the inputs is refused; a bundle or trace that cannot be
    written whole (a full disk, here RLIMIT_FSIZE) leaves the previous file as it was."""
    import hashlib
    import resource
    import shutil
    import signal
    import tempfile
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = f"{work}/m.onnx"
    shutil.copy(f"{models}/sample_cnn.onnx", model)
    digest = hashlib.sha256(open(model, "rb").read()).hexdigest()
    rc, out, err = run(lathe, "compile", model, "-o", model)
    expect(rc == 2 and "would destroy it" in err, "compile -o MODEL is refused", err)
    expect(hashlib.sha256(open(model, "rb").read()).hexdigest() == digest, "the model is intact")
    rc, out, err = run(lathe, "run", model, "--outputs", model)
    expect(rc == 2 and "would destroy the input" in err, "run --outputs MODEL is refused", err)
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/b.tar")
    expect(rc == 0, "a first bundle", err)
    before = open(f"{work}/b.tar", "rb").read()

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    p = subprocess.run([lathe, "compile", model, "-o", f"{work}/b.tar"], capture_output=True,
                       text=True, preexec_fn=limited, timeout=600)
    expect(p.returncode == 1 and "b.tar" in p.stderr and "previous file" in p.stderr,
           "a bundle that cannot be written whole is an error", p.stderr)
    expect(open(f"{work}/b.tar", "rb").read() == before, "the previous bundle is unchanged")
    leftovers = [f for f in os.listdir(work) if f.startswith(".b.tar")]
    expect(not leftovers, "no temporary file is left", str(leftovers))


def check_resource_bounds(lathe, models):
    """Inputs that would make Lathe read forever, inflate gigabytes, recurse without bound or
    accept nonsense counts are refused with a message (issue 15, item 7)."""
    import tempfile
    import zipfile
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = f"{models}/conv_bn_relu.onnx"
    # An npz member whose header declares 64 MiB (deflated to ~64 KiB) for a 768-byte input.
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.float32))
    header["shape"] = (16 << 20,)
    with zipfile.ZipFile(f"{work}/bomb.npz", "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w", force_zip64=True) as f:
            import io
            h = io.BytesIO()
            np.lib.format.write_array_header_1_0(h, header)
            f.write(h.getvalue())
            for _ in range(64):
                f.write(bytes(1 << 20))
    rc, out, err = run(lathe, "run", model, "--inputs", f"{work}/bomb.npz")
    expect(rc == 1 and "more than the 1536 bytes expected" in err, "an npz bomb is refused", err)
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/a.tar", "--schedule", "/dev/zero")
    expect(rc == 1 and "not a regular file" in err, "--schedule /dev/zero", err)
    os.mkfifo(f"{work}/fifo.tar")
    rc, out, err = run(lathe, "run", f"{work}/fifo.tar")
    expect(rc == 1 and "not a regular file" in err, "a FIFO named .tar does not block", err)
    open(f"{work}/deep.json", "w").write('{"a":' * 100000 + "1" + "}" * 100000)
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/a.tar", "--schedule", f"{work}/deep.json")
    expect(rc == 1 and "nested more than 32 levels deep" in err, "a deep JSON schedule", err)
    # Found by the fuzzer: a number out of double's range aborted the JSON schedule parser.
    open(f"{work}/overflow.json", "w").write(
        '{"schedules": [{"kernel": "k", "steps": [{"primitive": "split", "loops": ["x"], '
        '"factors": [6e3333]}]}]}')
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/a.tar", "--schedule", f"{work}/overflow.json")
    expect(rc == 1 and "not valid JSON" in err, "a JSON number out of range", err)
    for flag, value, message in (("--threads", "-1", "must be 0 (one per core) or more"),
                                 ("--threads", "10000", "at most 4096"),
                                 ("--repeat", "-1", "must be at least 1")):
        rc, out, err = run(lathe, "run", model, flag, value)
        expect(rc != 0 and message in err and len(err) < 300, f"{flag} {value}", err)
    rc, out, err = run(lathe, "run", model, "--threads", "4096")
    expect(rc == 0 and "cores of this machine; using" in err, "more threads than cores", err)
    # A model without nodes compiles to a bundle that runs; one without outputs is refused.
    g = helper.make_graph([], "empty", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, f"{work}/empty.onnx")
    rc, out, err = run(lathe, "compile", f"{work}/empty.onnx", "-o", f"{work}/e.tar")
    expect(rc == 0, "a model without nodes compiles", err)
    rc, out, err = run(lathe, "run", f"{work}/e.tar")
    expect(rc == 0 and "x  f32[2]" in out, "and its bundle runs", out + err)
    del m.graph.output[:]
    onnx.save(m, f"{work}/none.onnx")
    rc, out, err = run(lathe, "compile", f"{work}/none.onnx", "-o", f"{work}/n.tar")
    expect(rc == 1 and "no outputs" in err, "a model without outputs is refused", err)
    # A Conv to no output channels over one position (it crashed: a division by the channel
    # count) runs and gives its empty output.
    from onnx import numpy_helper
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "noch",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 1, 1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 0, 1, 1])],
                          [numpy_helper.from_array(np.zeros([0, 4, 3, 3], np.float32), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, f"{work}/no_channels.onnx")
    rc, out, err = run(lathe, "run", f"{work}/no_channels.onnx")
    expect(rc == 0 and "y  f32[1,0,1,1]" in out, "a Conv to no output channels runs", out + err)
    # The same over a window that covers the whole input (layout-weights leaves it a Conv).
    m.graph.node[0].ClearField("attribute")
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 3
    m.graph.input[0].type.tensor_type.shape.dim[3].dim_value = 3
    onnx.save(m, f"{work}/no_channels_whole.onnx")
    rc, out, err = run(lathe, "run", f"{work}/no_channels_whole.onnx")
    expect(rc == 0 and "y  f32[1,0,1,1]" in out, "a whole-window Conv to no channels runs", out + err)

    # If nested beyond protobuf's depth limit is named as such, not as corrupt data.
    def leaf(name):
        return helper.make_graph([helper.make_node("Identity", ["x"], [name])], "l" + name, [],
                                 [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2])])
    sub = leaf("o0")
    for d in range(1, 40):
        sub = helper.make_graph([helper.make_node("If", ["c"], [f"o{d}"], then_branch=sub,
                                                  else_branch=leaf(f"e{d}"))], f"g{d}", [],
                                [helper.make_tensor_value_info(f"o{d}", TensorProto.FLOAT, [2])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=sub, else_branch=leaf("e"))],
                          "deep", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                   helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    open(f"{work}/deep_if.onnx", "wb").write(m.SerializeToString())
    rc, out, err = run(lathe, "inspect", f"{work}/deep_if.onnx")
    expect(rc == 1 and "nested too deep" in err, "deeply nested If", err)


def check_large_chain_import(lathe, models):
    """A 20,000-node opset-13 model imports and runs its pipeline (the ONNX library's
    converter took 33-43 s on it; the test's TIMEOUT bounds it, nothing here times it)."""
    import tempfile
    import onnx
    from onnx import TensorProto, helper
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    nodes, prev = [], "x"
    for i in range(20000):
        nodes.append(helper.make_node(["Relu", "Sigmoid", "Neg", "Abs"][i % 4], [prev], [f"v{i}"]))
        prev = f"v{i}"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, f"{work}/chain.onnx")
    rc, out, err = run(lathe, "inspect", f"{work}/chain.onnx", "--print-topology")
    expect(rc == 0 and "converted from 13" in out and "20000 nodes" in out, "the chain imports", out + err)


def _tar_files(path):
    import tarfile
    with tarfile.open(path) as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers()}


def _write_tar(path, files):
    import io
    import tarfile
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))


def _planted_library(work, marker, size):
    """A shared object whose constructor creates `marker`, padded with zeros to `size` bytes
    (when it is smaller) so that only its hash tells it from the real kernels."""
    import shutil
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang-19")
    expect(compiler is not None, "a C compiler to build the planted library")
    src, lib = f"{work}/planted.c", f"{work}/planted.so"
    open(src, "w").write('#include <stdio.h>\n'
                         '__attribute__((constructor)) static void planted(void) {\n'
                         f'  FILE* f = fopen("{marker}", "w");\n'
                         '  if (f) { fputs("the planted constructor ran", f); fclose(f); }\n}\n')
    p = subprocess.run([compiler, "-shared", "-fPIC", "-o", lib, src], capture_output=True,
                       text=True)
    expect(p.returncode == 0, "build the planted library", p.stdout + p.stderr)
    data = open(lib, "rb").read()
    return data + b"\0" * max(0, size - len(data))


def check_hostile_bundles(lathe, models):
    """A bundle's manifest and files are checked before anything is loaded: each tampered
    bundle is refused with exit 1, naming the bundle, the manifest field and the problem,
    without a signal and without running a planted library's constructor."""
    import os
    import tempfile
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    good = f"{work}/good.tar"
    rc, out, err = run(lathe, "compile", f"{models}/sample_cnn.onnx", "-o", good)
    expect(rc == 0, "compile the sample to a bundle", out + err)
    files = _tar_files(good)
    manifest = json.loads(files["manifest.json"])
    library = files["kernels.so"]
    marker = f"{work}/constructor_ran"

    def tampered(name, edit_manifest=None, replaced_files=None):
        m = json.loads(json.dumps(manifest))
        if edit_manifest:
            edit_manifest(m)
        changed = dict(files, **{"manifest.json": json.dumps(m, indent=1).encode()})
        changed.update(replaced_files or {})
        path = f"{work}/{name}.tar"
        _write_tar(path, changed)
        return path

    def first_slot(m, role):
        return next(s for s in m["slots"] if s["role"] == role)

    constant = manifest["slots"].index(first_slot(manifest, "constant"))

    def wrap_offset(m):  # offset + bytes wraps around 2^64 to 0
        s = m["slots"][constant]
        s["weights_offset"] = 2**64 - s["bytes"]

    def shrink_intermediate(m):  # consistent shape and bytes, too small for the kernel
        s = first_slot(m, "intermediate")
        s["shape"], s["bytes"] = [1] * len(s["shape"]), 4

    def too_few_args(m):
        m["calls"][0]["args"] = m["calls"][0]["args"][:1]

    def no_inputs(m):
        m["inputs"] = []

    def old_format(m):
        m["format"] = "lathe-bundle-1"

    weights = bytearray(files["weights.bin"])
    weights[0] ^= 1
    cases = [
        ("wrapped_offset", tampered("wrapped_offset", wrap_offset),
         f"slots[{constant}].weights_offset", "lies outside weights.bin"),
        ("no_inputs", tampered("no_inputs", no_inputs), "inputs", "is not listed"),
        ("shrunk_slot", tampered("shrunk_slot", shrink_intermediate), ".args[", "does not fit"),
        ("too_few_args", tampered("too_few_args", too_few_args), "calls[0].args",
         "which takes"),
        ("truncated_library",
         tampered("truncated_library", None, {"kernels.so": library[: len(library) // 2]}),
         "library_bytes", "truncated"),
        ("changed_weights", tampered("changed_weights", None, {"weights.bin": bytes(weights)}),
         "weights_sha256", "SHA-256"),
        ("planted_library",
         tampered("planted_library", None,
                  {"kernels.so": _planted_library(work, marker, len(library))}),
         "library_sha256", "SHA-256"),
        ("old_format", tampered("old_format", old_format), "format", "compile the model again"),
    ]
    rc, out, err = run(lathe, "run", tampered("untouched"))
    expect(rc == 0 and "logits" in out, "a rewritten but untouched bundle runs", out + err)
    for name, path, field, problem in cases:
        rc, out, err = run(lathe, "run", path)
        expect(rc >= 0, f"{name}: no signal (got {-rc})", out + err)
        expect(rc == 1, f"{name}: exit status 1 (got {rc})", out + err)
        expect(err.startswith(f"lathe: error: {path}: manifest.json: ") and field in err and
               problem in err, f"{name}: the message names the bundle, '{field}' and '{problem}'",
               err)
        expect(not os.path.exists(marker), f"{name}: the planted constructor did not run", err)
    rc, out, err = run(lathe, "run", "--help")
    expect("open only bundles you trust" in out, "run --help warns that bundles are code", out)


def check_integer_division(lathe, models):
    """Integer Div and Mod on data never trap (SIGFPE killed the process on a zero divisor,
    and would on INT_MIN / -1): x / 0 and x % 0 give 0, as numpy does; MIN / -1 wraps."""
    import tempfile
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    info = lambda n: helper.make_tensor_value_info(n, TensorProto.INT32, [5])
    g = helper.make_graph([helper.make_node("Div", ["a", "b"], ["q"]),
                           helper.make_node("Mod", ["a", "b"], ["r"], fmod=0),
                           helper.make_node("Mod", ["a", "b"], ["f"], fmod=1)],
                          "div", [info("a"), info("b")], [info("q"), info("r"), info("f")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, f"{work}/div.onnx")
    lo = np.iinfo(np.int32).min
    np.savez(f"{work}/in.npz", a=np.array([7, lo, -7, 9, 0], np.int32),
             b=np.array([0, -1, 2, -4, 0], np.int32))
    rc, out, err = run(lathe, "run", f"{work}/div.onnx", "--inputs", f"{work}/in.npz",
                       "--outputs", f"{work}/out.npz")
    expect(rc == 0, "integer division by zero does not crash", out + err)
    got = np.load(f"{work}/out.npz")
    expect(got["q"].tolist() == [0, lo, -3, -2, 0], "quotients", str(got["q"]))
    expect(got["r"].tolist() == [0, 0, 1, -3, 0], "Python-style remainders", str(got["r"]))
    expect(got["f"].tolist() == [0, 0, -1, 1, 0], "C-style remainders", str(got["f"]))


def check_long_sums(lathe, models):
    """Sums of many f32 elements are accurate: a running f32 sum of 10^6 values of 0.1 is
    about 1% off, and one of 2^25 ones stops at 2^24. Along the last axis (one accumulator)
    and along the first (a row of them), for ReduceSum, ReduceMean and ReduceSumSquare."""
    import tempfile
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    n = 1 << 20
    info = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    nodes = [helper.make_node("ReduceSum", ["x", "last"], ["sum_last"], keepdims=0),
             helper.make_node("ReduceMean", ["x"], ["mean_last"], axes=[1], keepdims=0),
             helper.make_node("ReduceSumSquare", ["x"], ["squares_last"], axes=[1], keepdims=0),
             helper.make_node("Reshape", ["x", "columns"], ["xc"]),
             helper.make_node("ReduceSum", ["xc", "first"], ["sum_first"], keepdims=0)]
    inits = [helper.make_tensor("last", TensorProto.INT64, [1], [1]),
             helper.make_tensor("first", TensorProto.INT64, [1], [0]),
             helper.make_tensor("columns", TensorProto.INT64, [2], [n // 8, 8])]
    g = helper.make_graph(nodes, "sums", [info("x", [1, n])],
                          [info("sum_last", [1]), info("mean_last", [1]),
                           info("squares_last", [1]), info("sum_first", [8])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              f"{work}/sums.onnx")
    x = np.full((1, n), 0.1, np.float32)
    np.savez(f"{work}/in.npz", x=x)
    rc, out, err = run(lathe, "run", f"{work}/sums.onnx", "--inputs", f"{work}/in.npz",
                       "--outputs", f"{work}/out.npz")
    expect(rc == 0, "the sums run", out + err)
    got = np.load(f"{work}/out.npz")
    exact = x.astype(np.float64)
    for name, want in (("sum_last", exact.sum()), ("mean_last", exact.mean()),
                       ("squares_last", (exact * exact).sum()),
                       ("sum_first", exact.reshape(n // 8, 8).sum(axis=0))):
        rel = np.max(np.abs(got[name].astype(np.float64) - want) / np.abs(want))
        expect(rel < 1e-6, f"{name} is within 1e-6 of the exact sum (relative error {rel:.2e})",
               f"{got[name]} vs {want}")

def check_fill_every_type(lathe, models):
    """Random, zero and one inputs are made for every element type the runtime has (f16,
    i8, u16, u64... were refused before), and the same seed gives the same inputs."""
    import tempfile
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    types = {"f16": TensorProto.FLOAT16, "i8": TensorProto.INT8, "i16": TensorProto.INT16,
             "u16": TensorProto.UINT16, "u32": TensorProto.UINT32, "u64": TensorProto.UINT64,
             "f64": TensorProto.DOUBLE, "b": TensorProto.BOOL}
    nodes = [helper.make_node("Cast", [n], [n + "_f"], to=TensorProto.FLOAT) for n in types]
    g = helper.make_graph(nodes, "types",
                          [helper.make_tensor_value_info(n, t, [64]) for n, t in types.items()],
                          [helper.make_tensor_value_info(n + "_f", TensorProto.FLOAT, [64])
                           for n in types])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
              f"{work}/types.onnx")
    for fill, want in (("zeros", 0.0), ("ones", 1.0)):
        rc, out, err = run(lathe, "run", f"{work}/types.onnx", "--fill", fill,
                           "--outputs", f"{work}/{fill}.npz")
        expect(rc == 0, f"--fill {fill} fills every element type", out + err)
        got = np.load(f"{work}/{fill}.npz")
        expect(all(np.all(got[n + "_f"] == want) for n in types), f"{fill} are {want}",
               str({n: got[n + "_f"][:4] for n in types}))
    outs = []
    for i in range(2):
        rc, out, err = run(lathe, "run", f"{work}/types.onnx", "--outputs", f"{work}/r{i}.npz")
        expect(rc == 0, "random inputs of every element type", out + err)
        outs.append(np.load(f"{work}/r{i}.npz"))
    expect(all(np.array_equal(outs[0][n + "_f"], outs[1][n + "_f"]) for n in types),
           "the same seed gives the same inputs", "")
    expect(np.any(outs[0]["f16_f"] != 0) and np.all(np.abs(outs[0]["f16_f"]) <= 1),
           "f16 inputs are uniform in [-1, 1]", str(outs[0]["f16_f"][:8]))

def trials_in(records):
    """The trials of a records file: every record but the vetoes the check in the model
    appends after a search (how many depends on timing)."""
    return [r for r in (json.loads(line) for line in open(records).read().splitlines())
            if not r.get("error", "").startswith("slower in the model")]


def check_tune(lathe, models):
    """lathe tune measures candidates in child processes and appends a record per trial;
    --resume continues without measuring a trace twice; compile and run apply records only
    for their CPU and thread count; lathe records summarises a file."""
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = f"{models}/sample_cnn.onnx"
    records = f"{work}/r.jsonl"
    rc, out, err = run(lathe, "tune", model, "--records", records, "--trials", "8", "--repeat",
                       "3", "--threads", "1")
    expect(rc == 0 and "round 1:" in out and "8 trials" in out, "lathe tune", out + err)
    import re
    check = re.search(r"in the model \((\d+) runs each, in turns, in this process\): default "
                      r"([0-9.]+) ms, with the records ([0-9.]+) ms", out)
    expect(check and int(check.group(1)) == 40 and float(check.group(2)) > 0
           and float(check.group(3)) > 0,
           "lathe tune checks the records in the whole model (4 turns of 10 runs each)", out)
    lines = trials_in(records)
    expect(len(lines) == 8, "one record per trial", str(len(lines)))
    expect(all(r["threads"] == 1 and r["target"] == "llvm" and len(r["workload"]) == 16
               and ("median_ms" in r) != ("error" in r) for r in lines),
           "records carry workload, machine and a time or an error", str(lines[0]))
    rc, out, err = run(lathe, "tune", model, "--records", records, "--trials", "2")
    expect(rc == 2 and "--resume" in err, "an existing records file is not overwritten",
           out + err)
    rc, out, err = run(lathe, "tune", model, "--records", records, "--trials", "4", "--repeat",
                       "3", "--threads", "1", "--resume")
    expect(rc == 0, "tune --resume", out + err)
    lines = trials_in(records)
    keys = [(r["workload"], r["trace"]) for r in lines]
    expect(len(lines) == 12 and len(set(keys)) == 12, "resumed: 4 more, none measured twice",
           str(len(lines)))
    # --trials 0 measures nothing: it only checks an existing file's records in the model.
    rc, out, err = run(lathe, "tune", model, "--records", f"{work}/none.jsonl", "--trials", "0")
    expect(rc == 2 and "--trials 0" in err and not os.path.exists(f"{work}/none.jsonl"),
           "tune --trials 0 needs a file to check", out + err)
    rc, out, err = run(lathe, "tune", model, "--records", records, "--trials", "0", "--resume",
                       "--threads", "1", "--check-rounds", "1")
    expect(rc == 0 and " 0 trials" in out and "in the model (10 runs each" in out
           and len(trials_in(records)) == 12,
           "tune --trials 0 --resume checks the records in the model and measures nothing",
           out + err)
    rc, out, err = run(lathe, "records", records)
    expect(rc == 0 and "workloads in" in out, "lathe records", out + err)
    # The default a summary shows is the median of its timings, not the first (taken
    # while the machine was busy, say).
    busy = f"{work}/busy.jsonl"
    with open(busy, "w") as f:
        for i, default in enumerate((0.9, 0.3, 0.31)):
            f.write(json.dumps({"cpu": "test-cpu", "default_median_ms": default,
                                "kernel": "k0_add", "median_ms": 0.5, "p10_ms": 0.5,
                                "p90_ms": 0.5, "target": "llvm", "threads": 1,
                                "time": "2026-12-05T21:00:00Z", "trace": f"split(i, {2 + i})\n",
                                "version": "0.1.0", "workload": "00000000000000aa"}) + "\n")
    rc, out, err = run(lathe, "records", busy)
    expect(rc == 0 and "0.3100 ms" in out and "0.9000" not in out,
           "the default is the median of its timings", out + err)
    # --kernels: only the elementwise tail.
    rc, out, err = run(lathe, "tune", model, "--records", records, "--trials", "1", "--repeat",
                       "3", "--threads", "1", "--resume", "--kernels", "fused_add_mul")
    expect(rc == 0, "tune --kernels", out + err)
    lines = trials_in(records)

    # A record said to help, for the tail kernel, with a trace the search never draws (split
    # by 2): it must be applied, and the bundle must compute what the default does.
    tail = [r for r in lines if r["kernel"].startswith("fused_add_mul")]
    expect(len(tail) == 1 and len(lines) == 13, "--kernels tuned the tail kernel only",
           str([r["kernel"] for r in lines]))
    rc, out, err = run(lathe, "compile", model, "-o", f"{work}/plain.tar", "--dump", f"{work}/d")
    expect(rc == 0, "compile the default", out + err)
    import re
    name = [n[:-5] for n in os.listdir(f"{work}/d") if n.startswith("fused_add_mul")
            and n.endswith(".loop")][0]
    loops = re.findall(r"for \((\w+), 0, (\d+)\)", open(f"{work}/d/{name}.loop").read())
    x = loops[-1][0]  # the innermost loop
    some = lines[0]
    import shutil
    shutil.copy(records, f"{work}/before.jsonl")
    with open(records, "a") as f:
        f.write(json.dumps({"workload": tail[0]["workload"],
                            "kernel": name, "target": "llvm", "cpu": some["cpu"],
                            "threads": 1, "trace": f"split({x}, 2)\nunroll({x}.i)\n",
                            "median_ms": 1e-6, "default_median_ms": 1.0}) + "\n")
    rc, out, err = run(lathe, "compile", model, "--tuning-records", records, "--threads", "1",
                       "-o", f"{work}/tuned.tar", "--dump", f"{work}/t")
    expect(rc == 0 and "tuning records:" in out and " 0 of " not in out,
           "compile --tuning-records applies the records of this machine", out + err)
    expect(f"unroll({x}.i)" in open(f"{work}/t/{name}.loop").read(),
           "the tail kernel got the tuned trace", out)
    for tag in ("plain", "tuned"):
        rc, out, err = run(lathe, "run", f"{work}/{tag}.tar", "--fill", "ones", "--outputs",
                           f"{work}/{tag}.npz")
        expect(rc == 0, f"run the {tag} bundle", out + err)
    a = np.load(f"{work}/plain.npz")["logits"]
    b = np.load(f"{work}/tuned.npz")["logits"]
    expect(np.allclose(a, b, atol=1e-5), "the tuned bundle computes what the default does")
    # Two files side by side: the hand-made record wins its workload, with its trace as a diff.
    rc, out, err = run(lathe, "records", f"{work}/before.jsonl", records)
    row = [line for line in out.splitlines() if line.startswith(name)]
    expect(rc == 0 and row and row[0].split()[-2] == "B" and f"    + unroll({x}.i)" in out
           and "B faster on 1" in out, "lathe records A B compares two files", out + err)
    rc, out, err = run(lathe, "records", records, records)
    expect(rc == 0 and "A faster on 0, B faster on 0" in out and "    + " not in out,
           "a file compared with itself has no winners and no diffs", out + err)
    # Records for 1 thread do not apply to a compile for 2, and the message says so.
    rc, out, err = run(lathe, "compile", model, "--tuning-records", records, "--threads", "2",
                       "-o", f"{work}/t2.tar")
    expect(rc == 0 and re.search(r"\b0 of \d+ kernels tuned", out) and "do not apply here" in out,
           "records of another thread count are not applied", out + err)
    rc, out, err = run(lathe, "run", model, "--tuning-records", records, "--threads", "1",
                       "--fill", "ones")
    expect(rc == 0 and "tuning records:" in err, "run --tuning-records", out + err)
    # A record that claims a huge win but only copies the padded input in vectors and leaves
    # the convolution a plain nest: the check in the model finds it far slower there and
    # vetoes it, and the next compile keeps that kernel's default.
    lines = trials_in(records)
    conv = [r for r in lines if r["kernel"].startswith("fused_convnchwc_relu")
            and r.get("trace", "").startswith("vectorize(c)\n")]
    expect(bool(conv), "the tuned records include a blocked conv", str([r["kernel"] for r in lines]))
    fake = dict(conv[0], trace="vectorize(c)\n", median_ms=1e-6, default_median_ms=1.0)
    fake.pop("error", None)
    with open(records, "a") as f:
        f.write(json.dumps(fake) + "\n")
    rc, out, err = run(lathe, "tune", model, "--records", records, "--trials", "1", "--repeat",
                       "3", "--threads", "1", "--resume", "--kernels", fake["kernel"])
    vetoes = [json.loads(line) for line in open(records).read().splitlines()
              if "slower in the model" in line]
    expect(rc == 0 and "vetoed in" in out and any(v["kernel"] == fake["kernel"]
                                                  and v["trace"] == fake["trace"] for v in vetoes),
           "the check in the model vetoes a record that is slower there", out + err)
    rc, out, err = run(lathe, "compile", model, "--tuning-records", records, "--threads", "1",
                       "-o", f"{work}/vetoed.tar", "--dump", f"{work}/v")
    expect(rc == 0 and "register_tile" in open(f"{work}/v/{fake['kernel']}.loop").read(),
           "after the veto the kernel compiles with its default trace", out + err)


def check_export_refusals(lathe, models):
    """lathe export refuses what the C runtime cannot run, naming the file, node and reason,
    and lathe targets lists every target with its triple."""
    import tempfile
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    rc, out, err = run(lathe, "export", os.path.join(models, "if_subgraph.onnx"), "-o",
                       os.path.join(work, "if"))
    expect(rc == 1 and "if_subgraph.onnx" in err and "node 'if' (If)" in err
           and "control flow" in err, "control flow is refused by node", out + err)
    rc, out, err = run(lathe, "export", os.path.join(models, "symbolic_batch.onnx"), "-o",
                       os.path.join(work, "sym"))
    expect(rc == 1 and "--input-shapes" in err, "symbolic dims ask for --input-shapes", out + err)
    rc, out, err = run(lathe, "export", os.path.join(models, "symbolic_batch.onnx"), "-o",
                       os.path.join(work, "sym"), "--input-shapes", "x:[2,3,8,8]")
    expect(rc == 0 and "model.h" in out, "fixed shapes export", out + err)
    header = open(os.path.join(work, "sym", "model.h")).read()
    expect("f32 [2, 3, 8, 8]" in header, "model.h gives the fixed input shape", header)
    rc, out, err = run(lathe, "export", os.path.join(models, "sample_cnn.onnx"), "--target",
                       "cuda -arch=sm_90", "-o", os.path.join(work, "cuda"))
    expect(rc == 1 and "not a CPU target" in err, "a GPU target is refused", out + err)
    blocker = os.path.join(work, "a_file")
    open(blocker, "w").close()
    rc, out, err = run(lathe, "export", os.path.join(models, "sample_cnn.onnx"), "-o", blocker)
    expect(rc == 1 and blocker in err and "folder" in err, "a file in the way is named",
           out + err)
    # The sample CNN's 320 KiB arena does not fit a micro:bit: written, but said (exit 1).
    rc, out, err = run(lathe, "export", os.path.join(models, "sample_cnn.onnx"), "--target",
                       "llvm -mtriple=thumbv6m-none-eabi -mcpu=cortex-m0", "-o",
                       os.path.join(work, "m0"))
    expect(rc == 1 and "will not fit microbit" in err and "of RAM" in err
           and os.path.exists(os.path.join(work, "m0", "link.ld")),
           "an export too large for its board is written and refused", out + err)
    rc, out, err = run(lathe, "export", os.path.join(models, "kws_cnn.onnx"), "--target",
                       "llvm -mtriple=thumbv6m-none-eabi -mcpu=cortex-m0", "-o",
                       os.path.join(work, "kws"))
    expect(rc == 0 and "of 16.0 KiB" in out and "board microbit" in out,
           "the keyword spotter fits the micro:bit and the RAM budget is printed", out + err)
    # A CPU or feature LLVM does not know is refused by name (LLVM itself only warns, then
    # generated code without an FPU and aborted the process).
    for bad, word in (("-mcpu=foo", 'no CPU "foo"'), ("-mattr=+nosuch", 'no feature "nosuch"')):
        rc, out, err = run(lathe, "export", os.path.join(models, "kws_cnn.onnx"), "--target",
                           "llvm -mtriple=aarch64-linux-gnu " + bad, "-o",
                           os.path.join(work, "badcpu"))
        expect(rc == 1 and word in err and "some it knows" in err,
               "an unknown " + bad + " is refused with what LLVM knows", out + err)
    rc, out, err = run(lathe, "targets")
    expect(rc == 0, "lathe targets exits 0", out + err)
    for triple in ("aarch64-linux-gnu", "riscv64-linux-gnu", "thumbv8m.main-none-eabihf",
                   "thumbv6m-none-eabi", "wasm32-unknown-unknown", "(runs here)"):
        expect(triple in out, "lathe targets lists " + triple, out)


def check_run_on_target(lathe, models):
    """lathe run --target for another machine exports the model, builds it with that target's
    toolchain and runs it under the emulator (or Node): its outputs are the host's; with a tool
    missing it says which and its Debian package, and exits 1."""
    import shutil
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = os.path.join(models, "kws_cnn.onnx")
    host = os.path.join(work, "host.npz")
    rc, out, err = run(lathe, "run", model, "--outputs", host, "--threads", "1")
    expect(rc == 0, "the host run", out + err)
    want = np.load(host)
    targets = [("aarch64", "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", "qemu-aarch64"),
               ("m33", "llvm -mtriple=thumbv8m.main-none-eabihf -mcpu=cortex-m33",
                "qemu-system-arm"),
               ("wasm", "llvm -mtriple=wasm32-unknown-unknown -mattr=+simd128", "node")]
    ran = 0
    for name, target, tool in targets:
        if not shutil.which(tool):
            print(f"skipped {name}: {tool} is not installed")
            continue
        got_path = os.path.join(work, name + ".npz")
        rc, out, err = run(lathe, "run", model, "--target", target, "--outputs", got_path,
                           "--repeat", "3")
        expect(rc == 0 and "ran the export for" in err and tool in err,
               f"{name}: runs under {tool} and says so", out + err)
        got = np.load(got_path)
        for key in want.files:
            err_max = float(np.max(np.abs(got[key].astype(np.float64) - want[key])))
            print(f"{name}: {key} max error vs host {err_max:.3g}")
            expect(got[key].shape == want[key].shape and err_max < 1e-5,
                   f"{name}: output {key} matches the host's", str(err_max))
        ran += 1
    expect(ran > 0, "at least one cross target could run here")
    # --profile needs code in this process.
    rc, out, err = run(lathe, "run", model, "--target", targets[0][1], "--profile")
    expect(rc == 2 and "--profile" in err and "emulator" in err,
           "a profile of emulated code is refused", out + err)
    # Without the emulator on PATH: what is missing, and where to get it.
    bare = os.path.join(work, "bin")
    os.makedirs(bare)
    for tool in ("make", "aarch64-linux-gnu-gcc"):
        if shutil.which(tool):
            os.symlink(shutil.which(tool), os.path.join(bare, tool))
    p = subprocess.run([lathe, "run", model, "--target", targets[0][1]], capture_output=True,
                       text=True, timeout=600, env=dict(os.environ, PATH=bare))
    expect(p.returncode == 1 and "qemu-aarch64" in p.stderr and "qemu-user" in p.stderr
           and "kws_cnn.onnx" in p.stderr, "a missing emulator is named with its package",
           p.stdout + p.stderr)
    # The conformance suite runs each model in this process: only targets that run here.
    rc, out, err = run(lathe, "conformance", "--target", targets[0][1], models)
    expect(rc == 2 and "does not run in this process" in err and "lathe targets" in err,
           "conformance refuses a target that runs elsewhere", out + err)
    # A target that runs here is the one every model is compiled for: the header says what
    # LLVM made of it, and a model compiled for anything else would FAIL.
    relu = "/usr/share/libonnx-testdata/data/node/test_relu"
    if platform.machine() == "x86_64" and os.path.isdir(relu):
        rc, out, err = run(lathe, "conformance", "--target", "llvm -mcpu=x86-64",
                           os.path.dirname(relu), "--filter", "node/test_relu")
        expect(rc == 0 and "cpu x86-64, 128-bit vectors" in out and "1 passed, 0 failed" in out,
               "conformance compiles for the --target it is given", out + err)


def check_session(lathe, models):
    """lathe run/compile --session FILE take the model, target, inputs and kept schedules of a
    workbench session (.lathe), paths relative to the file; options given win; a bad session
    is refused naming the field."""
    import shutil
    import tempfile
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    shutil.copy(os.path.join(models, "sample_cnn.onnx"), os.path.join(work, "model.onnx"))
    session = os.path.join(work, "work.lathe")
    with open(session, "w") as f:
        json.dump({"format": "lathe-session", "version": 1, "model": "model.onnx",
                   "target": "llvm", "fill": "ones",
                   "schedules": "kernel k1_maxpoolnchwc:\n  split(ow, 8)\n"}, f)
    rc, want, err = run(lathe, "run", os.path.join(models, "sample_cnn.onnx"), "--fill", "ones",
                        "--print-top", "3")
    expect(rc == 0, "the plain run", want + err)
    rc, out, err = run(lathe, "run", "--session", session, "--print-top", "3")
    expect(rc == 0 and out == want, "run --session uses its model and its inputs (ones)",
           out + err)
    rc, out, err = run(lathe, "run", "--session", session, "--fill", "zeros", "--print-top", "3")
    expect(rc == 0 and out != want, "an option given wins over the session", out + err)
    rc, out, err = run(lathe, "compile", "--session", session, "-o", os.path.join(work, "b.tar"))
    expect(rc == 0 and "scheduled 1 kernel: k1_maxpoolnchwc (1 step)" in out,
           "compile --session applies the kept schedules", out + err)
    # The model changed since: said, not refused (the hash is of other bytes).
    with open(session) as f:
        data = json.load(f)
    data["model_sha256"] = "0" * 64
    with open(session, "w") as f:
        json.dump(data, f)
    rc, out, err = run(lathe, "run", "--session", session)
    expect(rc == 0 and "has changed since the session was saved" in err,
           "a changed model is said", out + err)
    with open(session, "w") as f:
        json.dump({"format": "lathe-session", "version": 1, "model": "model.onnx",
                   "threads": "two"}, f)
    rc, out, err = run(lathe, "run", "--session", session)
    expect(rc == 1 and "work.lathe" in err and '"threads" must be a number' in err,
           "a malformed session is refused naming the field", out + err)
    rc, out, err = run(lathe, "run")
    expect(rc == 2 and "--session" in err, "run without a model says what it needs", out + err)


def check_explain(lathe, models):
    """lathe explain lists the stages, passes and primitives and prints one by name; every pass
    lathe passes lists is explained; an unknown name exits 1 with the names it knows."""
    rc, out, err = run(lathe, "explain")
    expect(rc == 0 and out.index("Compile stages") < out.index("Graph passes") <
           out.index("Schedule primitives"), "the list, stages first", out + err)
    rc, passes, err = run(lathe, "passes")
    for line in passes.splitlines():
        name = line.split()[1]
        expect(name in out, "lathe explain lists the pass " + name, out)
    rc, out, err = run(lathe, "explain", "vectorize")
    expect(rc == 0 and out.startswith("# vectorize:") and "**Why it exists.**" in out,
           "one explanation in full", out + err)
    rc, out, err = run(lathe, "explain", "vectorise")
    expect(rc == 1 and "vectorize" in err and "nothing is called" in err,
           "an unknown name lists the known ones", out + err)


def check_disable_pass(lathe, models):
    """--disable-pass leaves a pass out (here Winograd's 3x3 Convs stay direct, and the run
    gives the same numbers up to rounding); an unknown name fails with the passes listed."""
    import tempfile
    import numpy as np
    model = os.path.join(models, "winograd_zoo.onnx")
    rc, out, err = run(lathe, "inspect", model, "--print-ir-after-all")
    final = out.split("// ----- IR after ")[-1]
    expect(rc == 0 and final.count("= lathe::ConvWinogradNCHWc(") == 4,
           "four 3x3 Convs go to Winograd by default", final + err)
    rc, out, err = run(lathe, "inspect", model, "--print-ir-after-all", "--disable-pass",
                       "winograd-nchwc")
    final = out.split("// ----- IR after ")[-1]
    expect(rc == 0 and "ConvWinogradNCHWc" not in out and final.count("= lathe::ConvNCHWc(") == 6,
           "--disable-pass winograd-nchwc keeps them direct", final + err)
    rc, out, err = run(lathe, "inspect", model, "--disable-pass", "winograd")
    expect(rc != 0 and "cannot disable pass 'winograd'" in err and "winograd-nchwc" in err,
           "an unknown pass is refused with the list", out + err)
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    outs = []
    for extra in ([], ["--disable-pass", "winograd-nchwc"]):
        path = os.path.join(work, f"out{len(outs)}.npz")
        rc, out, err = run(lathe, "run", model, "--fill", "random", "--outputs", path,
                           "--threads", "1", *extra)
        expect(rc == 0, "run " + " ".join(extra), out + err)
        outs.append(path)
    a, b = (np.load(p)["y"] for p in outs)
    diff = float(np.max(np.abs(a - b)))
    expect(diff <= 1e-4 * max(1.0, float(np.max(np.abs(b)))),
           f"Winograd and direct agree (max difference {diff})")


def ptxas_found():
    import shutil
    for path in (os.environ.get("LATHE_PTXAS", ""),
                 os.path.join(os.environ.get("CUDA_PATH", "/nonexistent"), "bin", "ptxas"),
                 "/usr/local/cuda/bin/ptxas"):
        if path and os.access(path, os.X_OK):
            return True
    return shutil.which("ptxas") is not None


def gpu_table(out):
    """The rows of lathe compile's CUDA launch table: kernel -> (launches, threads, registers,
    stack, spills), with '-' where ptxas did not run."""
    lines = out.split("CUDA launches")[1].splitlines()[2:]
    rows = {}
    for line in lines:
        cells = line.split()
        if len(cells) < 6 or not cells[1].isdigit():
            break
        rows[cells[0]] = cells[1:6]
    return rows


def check_cuda_ptx(lathe, models):
    """A CUDA target compiles to one PTX module (a launch per top-level nest), which ptxas
    assembles for sm_80 and sm_90; the table, the dump and the bundle say what each kernel
    became. Running needs a CUDA driver: without one, a clear message and exit 1."""
    import tarfile
    import tempfile
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    model = os.path.join(models, "sample_cnn.onnx")
    for arch in ("sm_80", "sm_90"):
        bundle = os.path.join(work, arch + ".tar")
        dump = os.path.join(work, "dump_" + arch)
        rc, out, err = run(lathe, "compile", model, "--target", "cuda -arch=" + arch, "-o",
                           bundle, "--dump", dump)
        expect(rc == 0, f"compile for {arch}", out + err)
        rows = gpu_table(out)
        # Opened for a GPU: plain NCHW Convs (no blocked layout), one thread per output.
        expect(len(rows) == 13, f"13 kernels in the launch table ({len(rows)})", out)
        expect(not any("nchwc" in k for k in rows), "no blocked Convs for a GPU", out)
        expect(rows["fused_conv_relu_0"][1] == "65536",
               "fused_conv_relu_0 runs a thread per output (65536)", out)
        if ptxas_found():
            expect(all(r[2] != "-" and int(r[2]) > 0 for r in rows.values()),
                   "ptxas reported registers for every kernel", out)
        ptx = open(os.path.join(dump, "fused_add_mul_7.ptx")).read()
        expect(".entry fused_add_mul_7(" in ptx and "%tid.x" in ptx and "%ctaid.x" in ptx,
               "the dump has each kernel's PTX entry, indexed by block and thread", ptx[:2000])
        report = open(os.path.join(dump, "fused_add_mul_7.ptxas.txt")).read()
        expect("registers" in report and "fused_add_mul_7" in report, "the ptxas report", report)
        with tarfile.open(bundle) as tar:
            manifest = json.load(tar.extractfile("manifest.json"))
            library = tar.extractfile("kernels.ptx").read().decode()
            if ptxas_found():
                expect(manifest.get("cubin") == f"kernels.{arch}.cubin",
                       "the bundle holds the cubin ptxas made", json.dumps(manifest)[:500])
                cubin = tar.extractfile(manifest["cubin"]).read()
                expect(cubin[:4] == b"\x7fELF" and len(cubin) == manifest["cubin_bytes"],
                       "the cubin is an ELF file of the size the manifest says", str(cubin[:16]))
            else:
                expect("cubin" not in manifest, "no cubin without ptxas", json.dumps(manifest)[:500])
        expect(manifest["library"] == "kernels.ptx" and manifest["triple"] == "nvptx64-nvidia-cuda",
               "the bundle holds PTX", json.dumps(manifest)[:500])
        expect(f".target {arch}" in library, f"the PTX targets {arch}", library[:400])
        launches = {k["name"]: k["launches"] for k in manifest["kernels"]}
        expect(len(launches) == 13 and all(
            l and all(len(x["grid"]) == 3 and len(x["block"]) == 3 for x in l)
            for l in launches.values()), "each kernel lists its launches", str(launches))
        expect(launches["fused_conv_relu_0"] == [{"name": "fused_conv_relu_0", "grid": [256, 1, 1],
                                                  "block": [256, 1, 1]}],
               "fused_conv_relu_0: 256 blocks of 256 threads", str(launches["fused_conv_relu_0"]))
    # Running: without a driver (every machine CI has), a message that says so, and exit 1.
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        driver = True
    except OSError:
        driver = False
    rc, out, err = run(lathe, "run", model, "--target", "cuda -arch=sm_90")
    if not driver:
        expect(rc == 1 and "no CUDA driver found: libcuda.so.1" in err,
               "run on CUDA without a driver", out + err)
    else:
        print("libcuda.so.1 is here: the run's own outcome is the GPU script's to judge")
    rc, out, err = run(lathe, "run", os.path.join(work, "sm_90.tar"))
    expect(rc == 1 and "holds PTX" in err, "a CUDA bundle is not run on the CPU", out + err)
    rc, out, err = run(lathe, "compile", model, "--target", "cuda -arch=sm_70", "-o",
                       os.path.join(work, "old.tar"))
    expect(rc == 1 and "sm_75 and newer" in err, "sm_70 is refused", out + err)
    rc, out, err = run(lathe, "targets")
    expect(rc == 0 and "unavailable" not in [l for l in out.splitlines() if "cuda" in l][0],
           "lathe targets offers CUDA", out)


def check_cuda_big_models(lathe, models):
    """Every kernel of ResNet-50, MobileNetV2 and BERT becomes PTX that ptxas assembles for
    sm_80 and sm_90 without errors."""
    import tempfile
    if not ptxas_found():
        print("skipped: no ptxas (CUDA Toolkit) on this machine")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    for name in ("resnet50", "mobilenetv2", "bert"):
        for arch in ("sm_80", "sm_90"):
            rc, out, err = run(lathe, "compile", f"{models}/big/{name}.onnx", "--target",
                               "cuda -arch=" + arch, "-o", os.path.join(work, f"{name}.tar"))
            expect(rc == 0, f"{name} for {arch}", out + err)
            rows = gpu_table(out)
            expect(rows and all(r[2] != "-" for r in rows.values()),
                   f"{name} {arch}: ptxas assembled every kernel", out)
            spills = sum(1 for r in rows.values() if r[4] != "0")
            print(f"{name} {arch}: {len(rows)} kernels, "
                  f"{sum(int(r[0]) for r in rows.values())} launches, "
                  f"most registers {max(int(r[2]) for r in rows.values())}, "
                  f"{spills} kernels spill")


def check_gpu_schedules_big_models(lathe, models):
    """The GPU lowering of ResNet-50, MobileNetV2 and BERT (plain nests, default GPU traces)
    spreads every Conv, pooling and product over many threads, and computes what the CPU
    path computes: run block by block on this CPU (--gpu-schedules-on-host)."""
    import tempfile
    import numpy as np
    work = tempfile.mkdtemp(prefix="lathe_cli_")
    for name in ("resnet50", "mobilenetv2", "bert"):
        model = f"{models}/big/{name}.onnx"
        rc, out, err = run(lathe, "compile", model, "--target", "cuda -arch=sm_90", "-o",
                           os.path.join(work, f"{name}.tar"))
        expect(rc == 0, f"{name} for CUDA", out + err)
        rows = gpu_table(out)
        anchors = {k: int(r[1]) for k, r in rows.items()
                   if any(op in k for op in ("conv", "gemm", "matmul", "pool", "softmax"))}
        expect(anchors and min(anchors.values()) >= 256,
               f"{name}: every Conv, product, pooling and softmax runs >= 256 threads "
               "(BERT's pooler has 256 outputs)", str(anchors))
        outputs = {}
        for mode in ("cpu", "gpu"):
            path = os.path.join(work, f"{name}_{mode}.npz")
            extra = ["--gpu-schedules-on-host"] if mode == "gpu" else []
            rc, out, err = run(lathe, "run", model, "--fill", "random", "--outputs", path, *extra)
            expect(rc == 0, f"{name} run ({mode})", out + err)
            outputs[mode] = np.load(path)
        for key in outputs["cpu"].files:
            a, b = outputs["cpu"][key], outputs["gpu"][key]
            expect(np.isfinite(b).all(), f"{name} {key}: finite on the GPU path")
            diff = float(np.abs(a.astype(np.float64) - b).max())
            scale = float(np.abs(a).max())
            print(f"{name} {key}: max |gpu - cpu| {diff:.3g} (largest |value| {scale:.3g}); "
                  f"fewest threads of an anchor kernel {min(anchors.values())}")
            expect(diff <= 1e-4 * max(scale, 1.0), f"{name} {key}: GPU path within 1e-4", str(diff))


CHECKS = {name[len("check_"):]: fn for name, fn in globals().items() if name.startswith("check_")}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in CHECKS:
        print(__doc__, "checks:", " ".join(CHECKS))
        sys.exit(2)
    CHECKS[sys.argv[3]](sys.argv[1], sys.argv[2])
    print("ok")
