#!/usr/bin/python3
"""The TFLite importer against an independent TFLite runtime: Arm NN's TFLite parser and its
reference CPU backend (Debian's python3-pyarmnn), on the project's generated models and on
a model someone else exported.

  tfl_cnn, tfl_cnn_int8   Lathe and Arm NN on the same .tflite file and inputs
  tfl_more                the operators of it Arm NN 22 reads the way TFLite does: the VALID
                          TRANSPOSE_CONV (with a row past the last input's reach), SPLIT,
                          SPLIT_V. (Arm NN 22 reads no MIRROR_PAD or ARG_MAX, no TRANSPOSE_CONV
                          bias input, and pads a SAME TRANSPOSE_CONV as a convolution of its
                          input, where TFLite pads it as the convolution of its output: they
                          differ when the two give different padding, as in tfl_more's.)
  selfie_segmentation     MediaPipe's selfie segmentation (npm @mediapipe/selfie_segmentation,
                          fetched into the corpus by packaging/install-npm.sh; float16 weights
                          behind DEQUANTIZE). Lathe runs the whole model, custom operator
                          Convolution2DTransposeBias included; Arm NN does not read that
                          operator, so the last two operators are checked against numpy on
                          the values Lathe feeds them, and the part before the first
                          half-pixel RESIZE_BILINEAR is compared with Arm NN (Arm NN 22
                          computes that resize without half-pixel centres, and reads weights
                          only as constants, so its copy has the float16 weights widened in
                          the file).

Usage: tflite_armnn.py LATHE MODEL_DIR CORPUS_DIR WORKDIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "models"))
from compare_with_ort import compare_arrays  # noqa: E402
import gen_tflite  # noqa: E402

SELFIE = "mediapipe-selfie_segmentation/selfie_segmentation.tflite"


def run_armnn(path, feeds):
    import pyarmnn as ann
    parser = ann.ITfLiteParser()
    net = parser.CreateNetworkFromBinaryFile(path)
    runtime = ann.IRuntime(ann.CreationOptions())
    opt, _ = ann.Optimize(net, [ann.BackendId("CpuRef")], runtime.GetDeviceSpec(), ann.OptimizerOptions())
    net_id, _ = runtime.LoadNetwork(opt)
    in_names = parser.GetSubgraphInputTensorNames(0)
    out_names = parser.GetSubgraphOutputTensorNames(0)
    inputs = ann.make_input_tensors([parser.GetNetworkInputBindingInfo(0, n) for n in in_names],
                                    [feeds[n] for n in in_names])
    outputs = ann.make_output_tensors([parser.GetNetworkOutputBindingInfo(0, n) for n in out_names])
    runtime.EnqueueWorkload(net_id, inputs, outputs)
    return dict(zip(out_names, ann.workload_tensors_to_ndarray(outputs)))


def run_lathe(lathe, path, feeds, work):
    inputs, out = os.path.join(work, "in.npz"), os.path.join(work, "lathe.npz")
    np.savez(inputs, **feeds)
    r = subprocess.run([lathe, "run", path, "--inputs", inputs, "--outputs", out, "--threads", "2"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"lathe run {os.path.basename(path)} failed:\n{r.stderr}")
    return dict(np.load(out))


def compare(label, got, ref, atol, rtol):
    ok = True
    for name, r in ref.items():
        g = got[name].reshape(r.shape)
        worst, bad, nans = compare_arrays(g, r, atol, rtol)
        print(f"{label}: {name} {list(r.shape)}: max abs error {worst:.3g} (|ref| up to "
              f"{float(np.abs(r).max()):.3g})" + (f", {bad} out of tolerance" if bad else "")
              + (f", NaN: {nans}" if nans else ""))
        ok = ok and bad == 0
    return ok


def code_of(fb, model, op):
    c = model.operatorCodes[op.opcodeIndex]
    return max(c.deprecatedBuiltinCode, c.builtinCode)


def rewrite(fb, src, dst, keep_ops, output, widen_float16=False, drop=()):
    """`src` with operators [0, keep_ops) but those writing a tensor named in `drop`, and
    `output` (a tensor index, or a list of them) as its outputs; with widen_float16, DEQUANTIZE
    of a float16 constant becomes a float32 constant."""
    import flatbuffers
    model = fb["Model"].ModelT.InitFromObj(fb["Model"].Model.GetRootAs(open(src, "rb").read(), 0))
    sg = model.subgraphs[0]
    ops = []
    for op in sg.operators[:keep_ops]:
        if sg.tensors[int(op.outputs[0])].name.decode() in drop:
            continue
        if widen_float16 and code_of(fb, model, op) == fb["BuiltinOperator"].BuiltinOperator.DEQUANTIZE:
            t_in, t_out = sg.tensors[int(op.inputs[0])], sg.tensors[int(op.outputs[0])]
            data = model.buffers[t_in.buffer].data
            if t_in.type == fb["TensorType"].TensorType.FLOAT16 and data is not None:
                buf = fb["Buffer"].BufferT()
                buf.data = list(np.frombuffer(bytes(bytearray(data)), np.float16).astype(np.float32).tobytes())
                model.buffers.append(buf)
                t_out.buffer = len(model.buffers) - 1
                continue
        ops.append(op)
    sg.operators = ops
    sg.outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    with open(dst, "wb") as f:
        f.write(bytes(b.Output()))


def main():
    lathe, model_dir, corpus, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    ok = True
    rng = np.random.RandomState(0)
    feeds = {"image": rng.uniform(-1, 1, (1, 16, 16, 3)).astype(np.float32)}
    for name, atol in (("tfl_cnn", 1e-4), ("tfl_cnn_int8", 0.02)):
        path = os.path.join(model_dir, name + ".tflite")
        # int8: the two runtimes requantize differently (fixed point vs float): a few codes.
        ok &= compare(f"{name} vs Arm NN", run_lathe(lathe, path, feeds, work), run_armnn(path, feeds),
                      atol, 0.0 if "int8" in name else 1e-3)

    tmp = tempfile.mkdtemp(prefix="lathe_tflite_armnn_")
    try:
        fb = gen_tflite.load_schema(tmp)
        more = os.path.join(model_dir, "tfl_more.tflite")
        model = fb["Model"].ModelT.InitFromObj(fb["Model"].Model.GetRootAs(open(more, "rb").read(), 0))
        names = [t.name.decode() for t in model.subgraphs[0].tensors]
        kept = ["tconv_valid", "split_0", "split_2", "splitv_1", "splitv_2"]
        subset = os.path.join(work, "tfl_more_armnn.tflite")
        rewrite(fb, more, subset, len(model.subgraphs[0].operators), [names.index(k) for k in kept],
                drop=("tconv_same", "mirror_reflect", "mirror_symmetric", "best", "best_f",
                      "tconv_bias_relu", "tconv_bias"))
        feeds_more = {"image": rng.uniform(-1, 1, (1, 6, 5, 3)).astype(np.float32)}
        ok &= compare("tfl_more (VALID TRANSPOSE_CONV, SPLIT, SPLIT_V) vs Arm NN",
                      run_lathe(lathe, subset, feeds_more, work), run_armnn(subset, feeds_more), 1e-4, 1e-3)

        selfie = os.path.join(corpus, SELFIE)
        model = fb["Model"].ModelT.InitFromObj(fb["Model"].Model.GetRootAs(open(selfie, "rb").read(), 0))
        ops = model.subgraphs[0].operators
        B = fb["BuiltinOperator"].BuiltinOperator
        custom = next(i for i, op in enumerate(ops) if code_of(fb, model, op) == B.CUSTOM)
        half = next(i for i, op in enumerate(ops) if code_of(fb, model, op) == B.RESIZE_BILINEAR
                    and op.builtinOptions.halfPixelCenters)
        image = {"input_1": np.random.RandomState(1).uniform(0, 1, (1, 256, 256, 3)).astype(np.float32)}

        # The whole model, and the values that reach its custom operator: numpy's transposed
        # convolution (tests/models/gen_tflite.py) of those, with the file's weights and bias,
        # must give what Lathe computes there (the logits: the mask is their LOGISTIC, which
        # saturates and would hide errors).
        whole = next(iter(run_lathe(lathe, selfie, image, work).values()))
        through_custom = os.path.join(work, "selfie_through_custom.tflite")
        rewrite(fb, selfie, through_custom, custom + 1, int(ops[custom].outputs[0]))
        logits = next(iter(run_lathe(lathe, through_custom, image, work).values()))
        before_custom = os.path.join(work, "selfie_before_custom.tflite")
        rewrite(fb, selfie, before_custom, custom, int(ops[custom].inputs[0]))
        feature = next(iter(run_lathe(lathe, before_custom, image, work).values()))
        sg = model.subgraphs[0]

        def dequantized_constant(tensor):
            producer = next(op for op in ops if int(op.outputs[0]) == tensor)
            source = sg.tensors[int(producer.inputs[0])]
            data = bytes(bytearray(model.buffers[source.buffer].data))
            return np.frombuffer(data, np.float16).astype(np.float64).reshape(list(source.shape))

        weights = dequantized_constant(int(ops[custom].inputs[1]))
        bias = dequantized_constant(int(ops[custom].inputs[2]))
        params = np.frombuffer(bytes(bytearray(ops[custom].customOptions)), "<i4")
        out_shape = list(sg.tensors[int(ops[custom].outputs[0])].shape)
        expected = gen_tflite.np_transpose_conv(feature.astype(np.float64), weights, bias, int(params[1]),
                                                "SAME" if params[0] == 1 else "VALID", out_shape[1:3])
        got = logits.reshape(expected.shape)
        worst = float(np.abs(got - expected).max())
        sigmoid = 1 / (1 + np.exp(-got.astype(np.float64)))
        mask_error = float(np.abs(whole.reshape(sigmoid.shape) - sigmoid).max())
        print(f"selfie_segmentation: whole model ({len(ops)} operators) runs. Its custom "
              f"operator's logits {list(expected.shape)} in [{float(expected.min()):.3g}, "
              f"{float(expected.max()):.3g}] against numpy's Convolution2DTransposeBias on Lathe's "
              f"features: max abs error {worst:.3g}; the mask against their LOGISTIC: {mask_error:.3g}")
        ok &= worst < 1e-4 * max(1.0, float(np.abs(expected).max())) and mask_error < 1e-6
        ok &= len(ops) == custom + 2

        ours = os.path.join(work, "selfie_before_resize.tflite")
        theirs = os.path.join(work, "selfie_before_resize_f32.tflite")
        last = int(ops[half - 1].outputs[0])
        rewrite(fb, selfie, ours, half, last)
        rewrite(fb, selfie, theirs, half, last, widen_float16=True)
        ok &= compare(f"selfie_segmentation, its first {half} operators, vs Arm NN",
                      run_lathe(lathe, ours, image, work), run_armnn(theirs, image), 1e-4, 1e-3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
