"""Writes the expected statistics of a few sample_cnn.onnx initializers, computed with
numpy straight from the ONNX file, for tst_properties_panel to compare with
Session::constantStats. One line per tensor:

    name count min max mean std bin0 bin1 ...

Binning matches the engine's definition: equal-width bins over [min, max], value v in
bin min(bins - 1, floor((v - min) * (bins / (max - min)))).
"""
import argparse

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--bins", type=int, default=48)
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(args.model).graph.initializer}
    with open(args.out, "w") as out:
        for name in args.names:
            v = inits[name].astype(np.float64).ravel()
            lo, hi = v.min(), v.max()
            scale = args.bins / (hi - lo)
            bins = np.minimum(args.bins - 1, ((v - lo) * scale).astype(np.int64))
            hist = np.bincount(bins, minlength=args.bins)
            fields = [name, str(v.size)] + [repr(float(x)) for x in (lo, hi, v.mean(), v.std())]
            out.write(" ".join(fields + [str(int(c)) for c in hist]) + "\n")


if __name__ == "__main__":
    main()
