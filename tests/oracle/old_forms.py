#!/usr/bin/python3
"""Runs every model of tests/models/gen_old_forms.py through Lathe and ONNX Runtime, with
static shapes and with dynamic ones (where the ONNX library's version converter would give
up; Lathe converts node by node either way). Each must match.

Usage: old_forms.py LATHE NODE_MODULES MODEL_DIR WORKDIR [--only NAME]
MODEL_DIR holds the generator's output. Prints one line per case and 'N passed, M failed'.
"""
import argparse
import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import compare_with_ort  # noqa: E402
import gen_old_forms  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lathe")
    ap.add_argument("node_modules")
    ap.add_argument("model_dir")
    ap.add_argument("workdir")
    ap.add_argument("--only", help="run only this model")
    a = ap.parse_args()
    passed, failed = 0, []
    for name in gen_old_forms.CATALOGUE:
        if a.only and name != a.only:
            continue
        static = os.path.join(a.model_dir, name + ".onnx")
        dynamic = os.path.join(a.model_dir, name + "_dynamic.onnx")
        for variant, model in (("static", static), ("dynamic", dynamic)):
            log = io.StringIO()
            with contextlib.redirect_stdout(log):
                rc = compare_with_ort.main([a.lathe, model, a.node_modules,
                                            os.path.join(a.workdir, name + "_" + variant),
                                            "--shapes-from", static])
            case = f"{name} ({variant})"
            if rc == 0:
                passed += 1
                print(f"ok    {case}")
            else:
                failed.append(case)
                print(f"FAIL  {case}\n" + "".join("      " + line + "\n"
                                                 for line in log.getvalue().splitlines()))
    print(f"{passed} passed, {len(failed)} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
